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
 */
#include <stdio.h>

#include "gb_tfevents.h"
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
