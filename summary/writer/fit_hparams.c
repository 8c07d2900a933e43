/* writer/fit_hparams.c — the run's hyperparameters as fit's summary
 * callback records them when training begins, without a line of the
 * user's: the optimizer (its class, and every number of its config:
 * learning_rate, beta_1, momentum...), the loss, batch size and epochs,
 * and the sizes of the model's layers from its config (every layer's
 * units, filters and dropout rate, as "dense0.units", "dropout0.rate":
 * the class and its count in the model, the same in every run of one
 * architecture, unlike the layers' unique names). What a model
 * cannot describe (a custom module without a config) is left out rather
 * than failing the fit.
 */
#include <stdio.h>
#include <string.h>

#include "gb_summary_callback.h"
#include "glassbox.h"
#include "writer/internal.h"

static void record_number(gb_summary_writer *w, const char *prefix, const char *key, double v) {
    char name[192];
    snprintf(name, sizeof name, "%s%s", prefix, key);
    gb_summary_hparam_num(w, name, v);
}

/* Every numeric entry of the optimizer's config, as "optimizer.<key>". */
static void record_optimizer(gb_summary_writer *w, const gb_optimizer *opt) {
    gb_config *c = gb_optimizer_get_config(opt);
    if (!c) return;
    const gb_config *cls = gb_config_get(c, "class_name"), *conf = gb_config_get(c, "config");
    if (cls && gb_config_string(cls)) gb_summary_hparam_str(w, "optimizer", gb_config_string(cls));
    for (int i = 0; conf && i < gb_config_len(conf); i++) {
        const gb_config *v = gb_config_at(conf, i);
        if (gb_config_is_number(v) && gb_config_kind_of(v) != GB_CONFIG_BOOL)
            record_number(w, "optimizer.", gb_config_key_at(conf, i), gb_config_number(v));
    }
    gb_config_free(c);
}

/* How many layers of each class the walk has met, to name the next one
 * "<class><k>" ("dense0", "dense1", "dropout0"): the same in every run of
 * one architecture, whatever unique names the layers were given. */
typedef struct layer_counts {
    int n;
    char cls[32][32];
    int count[32];
} layer_counts;

static int next_of_class(layer_counts *lc, const char *cls) {
    for (int i = 0; i < lc->n; i++)
        if (!strcmp(lc->cls[i], cls)) return lc->count[i]++;
    if (lc->n == 32) return -1;
    snprintf(lc->cls[lc->n], sizeof lc->cls[lc->n], "%s", cls);
    lc->count[lc->n++] = 1;
    return 0;
}

/* Walks a model config: {"class_name": C, "config": {...}} is a layer;
 * its numeric "units", "filters" or "rate" become "<c><k>.<key>" with c
 * the class in lower case. Nested models are walked in order. */
static void record_layers(gb_summary_writer *w, const gb_config *c, layer_counts *lc, int depth) {
    if (!c || depth > 32) return;
    gb_config_kind kind = gb_config_kind_of(c);
    if (kind != GB_CONFIG_DICT && kind != GB_CONFIG_LIST) return;
    const gb_config *cls = kind == GB_CONFIG_DICT ? gb_config_get(c, "class_name") : NULL;
    const gb_config *conf = kind == GB_CONFIG_DICT ? gb_config_get(c, "config") : NULL;
    if (cls && gb_config_string(cls) && conf && gb_config_kind_of(conf) == GB_CONFIG_DICT) {
        static const char *const sizes[] = {"units", "filters", "rate"};
        char prefix[48] = "";
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            const gb_config *v = gb_config_get(conf, sizes[k]);
            if (!v || !gb_config_is_number(v)) continue;
            if (!*prefix) {
                int n = next_of_class(lc, gb_config_string(cls));
                if (n < 0) return;
                snprintf(prefix, sizeof prefix, "%.30s%d.", gb_config_string(cls), n);
                for (char *p = prefix; *p; p++)
                    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
            }
            record_number(w, prefix, sizes[k], gb_config_number(v));
        }
    }
    for (int i = 0; i < gb_config_len(c); i++) record_layers(w, gb_config_at(c, i), lc, depth + 1);
}

void gb__fit_record_hparams(gb_summary_writer *w, gb_train_state *s) {
    bool clean = gb_ok();   /* an error of ours is cleared; one of the caller's is kept */
    if (s->optimizer) record_optimizer(w, s->optimizer);
    if (s->loss && *s->loss) gb_summary_hparam_str(w, "loss", s->loss);
    if (s->batch_size > 0) gb_summary_hparam_num(w, "batch_size", (double)s->batch_size);
    gb_summary_hparam_num(w, "epochs", s->epochs);
    gb_config *model = gb_module_get_config(s->model);
    layer_counts lc = {0};
    record_layers(w, model, &lc, 0);
    gb_config_free(model);
    if (clean && !gb_ok()) gb_clear_error();
}
