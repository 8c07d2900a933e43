/* store/tfevents_hparams.c — the data of TensorBoard's HParams plugin in
 * event files (gb_tfevents.h): what hp.hparams_config, hp.hparams and
 * PyTorch's SummaryWriter.add_hparams write, decoded by hand like the
 * rest of the file (field numbers of tensorboard/plugins/hparams/
 * plugin_data.proto and api.proto, google/protobuf/struct.proto).
 *
 *   HParamsPluginData   version 1, experiment 2 | session_start_info 3 |
 *                       session_end_info 4
 *   Experiment          hparam_infos 4, metric_infos 5
 *   HParamInfo          name 1, display_name 2, description 3, type 4,
 *                       domain_discrete 5 (ListValue), domain_interval 6
 *   Interval            min_value 1, max_value 2
 *   MetricInfo          name 1 (MetricName: group 1, tag 2), display_name 3
 *   SessionStartInfo    hparams 1 (map entries: key 1, value 2)
 *   SessionEndInfo      status 1
 *   Value               number_value 2, string_value 3, bool_value 4
 *   ListValue           values 1
 *
 * Written the same way for an exported run (gb_tf_put_hparams_*): its
 * values as a session's start, its status as the session's end, and the
 * store's experiment, in the run's own file (TensorBoard finds the
 * experiment in whichever run holds it).
 */
#include <stdio.h>
#include <stdlib.h>

#include "gb_tfevents.h"
#include "store/json_parse.h"
#include "store/pb_wire.h"

typedef struct hp_ctx {
    gb_tf_hparams *h;
    gb_tf_bytes message;     /* the one of the three the data holds */
    bool too_many;
} hp_ctx;

static bool value_field(void *ctx, const pb_field *f) {
    gb_tf_hp_value *v = ctx;
    if (f->number == 2 && f->wire == WIRE_I64) v->kind = GB_TF_HP_NUMBER, v->number = as_double(f->v);
    else if (f->number == 3 && f->wire == WIRE_LEN) v->kind = GB_TF_HP_STRING, v->string = f->bytes;
    else if (f->number == 4 && f->wire == WIRE_VARINT) v->kind = GB_TF_HP_BOOL, v->number = f->v != 0;
    return true;
}

static bool parse_value(gb_tf_bytes msg, gb_tf_hp_value *v) {
    *v = (gb_tf_hp_value){GB_TF_HP_NONE, 0, {NULL, 0}};
    return walk(msg, value_field, v);
}

/* ---- a session's start and end ---------------------------------------------------- */

typedef struct entry {
    gb_tf_bytes key, value;
} entry;

static bool entry_field(void *ctx, const pb_field *f) {
    entry *e = ctx;
    if (f->number == 1 && f->wire == WIRE_LEN) e->key = f->bytes;
    else if (f->number == 2 && f->wire == WIRE_LEN) e->value = f->bytes;
    return true;
}

static bool start_field(void *ctx, const pb_field *f) {
    hp_ctx *c = ctx;
    gb_tf_hparams *h = c->h;
    if (f->number != 1 || f->wire != WIRE_LEN) return true;
    if (h->count == GB_TF_MAX_HPARAMS) return (c->too_many = true, false);
    entry e = {{NULL, 0}, {NULL, 0}};
    if (!walk(f->bytes, entry_field, &e) || !parse_value(e.value, &h->values[h->count])) return false;
    h->names[h->count++] = e.key;
    return true;
}

static bool end_field(void *ctx, const pb_field *f) {
    gb_tf_hparams *h = ctx;
    if (f->number == 1 && f->wire == WIRE_VARINT) h->status = f->v <= 3 ? (int)f->v : 0;
    return true;
}

/* ---- the experiment -------------------------------------------------------------------- */

static bool interval_field(void *ctx, const pb_field *f) {
    gb_tf_hp_info *i = ctx;
    if (f->number == 1 && f->wire == WIRE_I64) i->min = as_double(f->v);
    else if (f->number == 2 && f->wire == WIRE_I64) i->max = as_double(f->v);
    return true;
}

static bool list_field(void *ctx, const pb_field *f) {
    hp_ctx *c = ctx;
    gb_tf_hparams *h = c->h;
    if (f->number != 1 || f->wire != WIRE_LEN) return true;
    if (h->domain_value_count == GB_TF_MAX_HP_VALUES) return (c->too_many = true, false);
    return parse_value(f->bytes, &h->domain_values[h->domain_value_count++]);
}

typedef struct info_ctx {
    hp_ctx *c;
    gb_tf_hp_info *info;
} info_ctx;

static bool info_field(void *ctx, const pb_field *f) {
    info_ctx *x = ctx;
    gb_tf_hp_info *i = x->info;
    if (f->number == 4 && f->wire == WIRE_VARINT) i->type = f->v <= 3 ? (int)f->v : 0;
    if (f->wire != WIRE_LEN) return true;
    switch (f->number) {
    case 1: i->name = f->bytes; break;
    case 2: i->display_name = f->bytes; break;
    case 3: i->description = f->bytes; break;
    case 5:
        i->domain = 1;
        i->first = x->c->h->domain_value_count;
        if (!walk(f->bytes, list_field, x->c)) return false;
        i->count = x->c->h->domain_value_count - i->first;
        break;
    case 6:
        i->domain = 2;
        return walk(f->bytes, interval_field, i);
    }
    return true;
}

static bool metric_name_field(void *ctx, const pb_field *f) {
    gb_tf_bytes *tag = ctx;
    if (f->number == 2 && f->wire == WIRE_LEN) *tag = f->bytes;
    return true;
}

static bool metric_field(void *ctx, const pb_field *f) {
    gb_tf_hparams *h = ctx;
    size_t m = h->metric_count;
    if (f->number == 1 && f->wire == WIRE_LEN) return walk(f->bytes, metric_name_field, &h->metric_tags[m]);
    if (f->number == 3 && f->wire == WIRE_LEN) h->metric_display_names[m] = f->bytes;
    return true;
}

static bool experiment_field(void *ctx, const pb_field *f) {
    hp_ctx *c = ctx;
    gb_tf_hparams *h = c->h;
    if (f->wire != WIRE_LEN) return true;
    if (f->number == 4) {
        if (h->info_count == GB_TF_MAX_HPARAMS) return (c->too_many = true, false);
        gb_tf_hp_info *i = &h->infos[h->info_count++];
        *i = (gb_tf_hp_info){0};
        return walk(f->bytes, info_field, &(info_ctx){c, i});
    } else if (f->number == 5) {
        if (h->metric_count == GB_TF_MAX_HPARAMS) return (c->too_many = true, false);
        h->metric_tags[h->metric_count] = h->metric_display_names[h->metric_count] = (gb_tf_bytes){NULL, 0};
        if (!walk(f->bytes, metric_field, h)) return false;
        h->metric_count++;
    }
    return true;
}

/* ---- the plugin data ------------------------------------------------------------------ */

static bool data_field(void *ctx, const pb_field *f) {
    hp_ctx *c = ctx;
    if (f->wire == WIRE_LEN && f->number >= 2 && f->number <= 4) {
        c->h->kind = (gb_tf_hparams_kind)(f->number - 1);
        c->message = f->bytes;
    }
    return true;
}

bool gb_tf_hparams_decode(gb_tf_bytes content, gb_tf_hparams *h, char *why, size_t why_size) {
    h->kind = 0;
    h->count = h->info_count = h->metric_count = h->domain_value_count = 0;
    h->status = 0;
    hp_ctx c = {h, {NULL, 0}, false};
    bool ok = walk(content, data_field, &c);
    if (ok && h->kind == GB_TF_HP_EXPERIMENT) ok = walk(c.message, experiment_field, &c);
    else if (ok && h->kind == GB_TF_HP_SESSION_START) ok = walk(c.message, start_field, &c);
    else if (ok && h->kind == GB_TF_HP_SESSION_END) ok = walk(c.message, end_field, h);
    if (ok && !h->kind) {
        snprintf(why, why_size, "the hparams plugin data holds no experiment and no session");
        return false;
    }
    if (!ok)
        snprintf(why, why_size, c.too_many ? "the hparams plugin data holds more than %d hparams, "
                                             "metrics or values (%d domain values in all)"
                                           : "the hparams plugin data is malformed",
                 GB_TF_MAX_HPARAMS, GB_TF_MAX_HP_VALUES);
    return ok;
}

/* ---- writing -------------------------------------------------------------------------- */

enum { STATUS_SUCCESS = 1, STATUS_FAILURE = 2, STATUS_RUNNING = 3 };

/* A value of the hparams plugin: tag, plugin data { version 0, field: message } and
 * the empty tensor the plugin's summaries carry. */
static void put_hparams_value(gb_tf_buf *b, double wall_time, const char *tag, uint32_t field,
                              gb_tf_buf *message) {
    gb_tf_buf v = {0}, data = {0}, t = {0};
    gb__pb_len(&v, 1, tag, strlen(tag));
    gb__pb_message(&data, field, message);
    gb__tf_plugin(&v, "hparams", &data);
    gb__pb_key(&t, 1, WIRE_VARINT);
    gb__pb_varint(&t, 1);   /* DT_FLOAT, no elements */
    gb__pb_message(&v, 8, &t);
    gb__tf_event(b, wall_time, 0, &v);
}

static void put_number_value(gb_tf_buf *b, uint32_t field, double x) {
    gb_tf_buf v = {0};
    gb__pb_fixed64(&v, 2, x);
    gb__pb_message(b, field, &v);
}

static void put_string_value(gb_tf_buf *b, uint32_t field, const char *s, size_t n) {
    gb_tf_buf v = {0};
    gb__pb_len(&v, 3, s, n);
    gb__pb_message(b, field, &v);
}

static void put_bool_value(gb_tf_buf *b, uint32_t field, bool x) {
    gb_tf_buf v = {0};
    gb__pb_key(&v, 4, WIRE_VARINT);
    gb__pb_varint(&v, x);
    gb__pb_message(b, field, &v);
}

void gb_tf_put_hparams_session(gb_tf_buf *b, double wall_time, const gb_hparam *hparams,
                               size_t count, const char *status) {
    gb_tf_buf start = {0};
    for (size_t i = 0; i < count; i++) {
        gb_tf_buf item = {0};
        gb__pb_len(&item, 1, hparams[i].key, strlen(hparams[i].key));
        if (hparams[i].is_number) put_number_value(&item, 2, hparams[i].number);
        else put_string_value(&item, 2, hparams[i].value, strlen(hparams[i].value));
        gb__pb_message(&start, 1, &item);
    }
    put_hparams_value(b, wall_time, "_hparams_/session_start_info", 3, &start);
    int code = !strcmp(status, "done")      ? STATUS_SUCCESS
               : !strcmp(status, "running") ? STATUS_RUNNING
               : *status                    ? STATUS_FAILURE   /* failed, killed */
                                            : 0;
    if (!code) return;
    gb_tf_buf end = {0};
    gb__pb_key(&end, 1, WIRE_VARINT);
    gb__pb_varint(&end, (uint64_t)code);
    put_hparams_value(b, wall_time, "_hparams_/session_end_info", 4, &end);
}

/* A discrete domain's JSON array (as the store keeps it) as a ListValue. */
typedef struct list_ctx {
    gb_tf_buf *list;
} list_ctx;

static bool list_element(gb__jp *ps, size_t i, void *ctx) {
    (void)i;
    gb_tf_buf *list = ((list_ctx *)ctx)->list;
    char text[1024];
    double x;
    gb_tristate flag;
    gb__jp_ws(ps);
    if (*ps->p == '"') {
        long n = gb__jp_string(ps, text, sizeof text);
        if (n < 0 || (size_t)n >= sizeof text) return false;
        put_string_value(list, 1, text, (size_t)n);
    } else if (*ps->p == 't' || *ps->p == 'f') {
        if (!gb__jp_boolean(ps, &flag)) return false;
        put_bool_value(list, 1, flag == GB_TRISTATE_YES);
    } else {
        if (!gb__jp_number(ps, &x, false)) return false;
        put_number_value(list, 1, x);
    }
    return true;
}

static void put_info(gb_tf_buf *e, const gb_hparam_info *h) {
    static const int types[] = {[GB_HPARAM_REAL] = 3, [GB_HPARAM_INT] = 3, [GB_HPARAM_STRING] = 1,
                                [GB_HPARAM_BOOL] = 2};
    gb_tf_buf info = {0}, domain = {0};
    gb__pb_len(&info, 1, h->name, strlen(h->name));
    if (*h->display_name) gb__pb_len(&info, 2, h->display_name, strlen(h->display_name));
    if (*h->description) gb__pb_len(&info, 3, h->description, strlen(h->description));
    gb__pb_key(&info, 4, WIRE_VARINT);
    gb__pb_varint(&info, (uint64_t)types[h->type]);
    if (h->domain == GB_DOMAIN_INTERVAL) {
        gb__pb_fixed64(&domain, 1, h->min);
        gb__pb_fixed64(&domain, 2, h->max);
        gb__pb_message(&info, 6, &domain);
    } else if (h->domain == GB_DOMAIN_DISCRETE) {
        gb__jp ps = {h->values_json, 0};
        if (gb__jp_array(&ps, list_element, &(list_ctx){&domain})) gb__pb_message(&info, 5, &domain);
        else gb_tf_buf_free(&domain);   /* not a list the store wrote: no domain */
    }
    gb__pb_message(e, 4, &info);
}

void gb_tf_put_hparams_experiment(gb_tf_buf *b, double wall_time, const gb_hparams_config *c) {
    gb_tf_buf e = {0};
    for (size_t i = 0; i < c->hparam_count; i++) put_info(&e, &c->hparams[i]);
    for (size_t i = 0; i < c->metric_count; i++) {
        const gb_metric_info *m = &c->metrics[i];
        gb_tf_buf metric = {0}, name = {0};
        gb__pb_len(&name, 2, m->tag, strlen(m->tag));
        gb__pb_message(&metric, 1, &name);
        if (*m->display_name) gb__pb_len(&metric, 3, m->display_name, strlen(m->display_name));
        gb__pb_message(&e, 5, &metric);
    }
    put_hparams_value(b, wall_time, "_hparams_/experiment", 2, &e);
}
