/* writer/tfevents_import_hparams.c — TensorBoard's HParams data of
 * imported event files (hp.hparams_config, hp.hparams, PyTorch's
 * add_hparams) into the store's own experiment and run records, so the
 * HParams page compares imported sessions as it compares glassbox runs:
 *
 *   experiment      the hyperparameters' types and domains and the metrics,
 *                   through gb_summary_hparams_config (a metric's MetricName
 *                   group is dropped: a glassbox metric is a tag of the run;
 *                   TensorBoard says nothing of which way is better, so
 *                   higher_is_better is false);
 *   session start   each value, through gb_summary_hparam_num / _str (a bool
 *                   as 0 or 1, as glassbox records bools);
 *   session end     the run's status: success done, failure failed,
 *                   running running (unknown leaves it).
 */
#include <stdlib.h>

#include "writer/internal.h"

static gb_status session_start(gb_summary_writer *w, const gb_tf_hparams *h) {
    gb_status st = GB_OK;
    for (size_t i = 0; st == GB_OK && i < h->count; i++) {
        const gb_tf_hp_value *v = &h->values[i];
        char *name = gb__tf_text(h->names[i]), *text = NULL;
        if (!name || !*name || v->kind == GB_TF_HP_NONE) {
            /* nothing a run can record */
        } else if (v->kind == GB_TF_HP_STRING) {
            text = gb__tf_text(v->string);
            st = text ? gb_summary_hparam_str(w, name, text) : GB_OK;
        } else {
            st = gb_summary_hparam_num(w, name, v->number);
        }
        free(name);
        free(text);
    }
    return st;
}

static gb_status session_end(gb_summary_writer *w, int status) {
    static const int to_run[] = {[1] = GB_RUN_DONE, [2] = GB_RUN_FAILED, [3] = GB_RUN_RUNNING};
    return status >= 1 && status <= 3 ? gb_summary_run_status(w, (gb_run_status)to_run[status]) : GB_OK;
}

/* ---- the experiment ------------------------------------------------------------------- */

/* The texts the experiment's declarations point to, freed together. */
typedef struct texts {
    char **all;
    size_t n, cap;
    bool failed;
} texts;

static const char *keep(texts *t, gb_tf_bytes b) {
    if (!b.size) return NULL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **grown = realloc(t->all, cap * sizeof *grown);
        if (!grown) return (t->failed = true, NULL);
        t->all = grown, t->cap = cap;
    }
    char *s = gb__tf_text(b);
    t->failed |= !s;
    return s ? (t->all[t->n++] = s) : NULL;
}

/* DataType (1 string, 2 bool, 3 float64), else what the listed values are. */
static gb_hparam_type type_of(const gb_tf_hparams *h, const gb_tf_hp_info *i) {
    int kind = i->type == 1 ? GB_TF_HP_STRING
               : i->type == 2 ? GB_TF_HP_BOOL
               : i->type == 3 || !i->count ? GB_TF_HP_NUMBER
                                           : (int)h->domain_values[i->first].kind;
    return kind == GB_TF_HP_STRING ? GB_HPARAM_STRING : kind == GB_TF_HP_BOOL ? GB_HPARAM_BOOL : GB_HPARAM_REAL;
}

/* info's discrete values as numbers or (strings) texts into d. */
static void discrete(const gb_tf_hparams *h, const gb_tf_hp_info *i, gb_hparam_domain *d, double *numbers,
                     const char **strings, texts *t) {
    d->domain = GB_DOMAIN_DISCRETE;
    d->value_count = i->count;
    for (size_t k = 0; k < i->count; k++) {
        const gb_tf_hp_value *v = &h->domain_values[i->first + k];
        numbers[k] = v->number;
        strings[k] = v->kind == GB_TF_HP_STRING ? keep(t, v->string) : NULL;
        if (!strings[k]) strings[k] = "";
    }
    d->values = numbers;
    d->strings = strings;
}

static gb_status experiment(gb_summary_writer *w, const gb_tf_hparams *h) {
    size_t n = h->info_count, m = h->metric_count, nv = h->domain_value_count;
    gb_hparam_domain *domains = calloc(n ? n : 1, sizeof *domains);
    gb_hparam_metric *metrics = calloc(m ? m : 1, sizeof *metrics);
    double *numbers = calloc(nv ? nv : 1, sizeof *numbers);
    const char **strings = calloc(nv ? nv : 1, sizeof *strings);
    texts t = {0};
    for (size_t k = 0; domains && numbers && strings && k < n; k++) {
        const gb_tf_hp_info *i = &h->infos[k];
        gb_hparam_domain *d = &domains[k];
        d->name = keep(&t, i->name);
        d->display_name = keep(&t, i->display_name);
        d->description = keep(&t, i->description);
        d->type = type_of(h, i);
        if (i->domain == 2) d->domain = GB_DOMAIN_INTERVAL, d->min = i->min, d->max = i->max;
        else if (i->domain == 1) discrete(h, i, d, numbers + i->first, strings + i->first, &t);
    }
    for (size_t k = 0; metrics && k < m; k++)
        metrics[k] = (gb_hparam_metric){keep(&t, h->metric_tags[k]), keep(&t, h->metric_display_names[k]), false};
    gb_status st = !domains || !metrics || !numbers || !strings || t.failed
                       ? GB_ERR_MEMORY
                       : gb_summary_hparams_config(w, domains, n, metrics, m);
    for (size_t k = 0; k < t.n; k++) free(t.all[k]);
    free(t.all);
    free(domains);
    free(metrics);
    free(numbers);
    free(strings);
    return st;
}

gb_status gb__import_hparams(gb_summary_writer *w, const gb_tf_hparams *h) {
    switch (h->kind) {
    case GB_TF_HP_EXPERIMENT: return experiment(w, h);
    case GB_TF_HP_SESSION_START: return session_start(w, h);
    case GB_TF_HP_SESSION_END: return session_end(w, h->status);
    }
    return GB_OK;
}
