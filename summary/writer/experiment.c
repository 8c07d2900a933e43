/* writer/experiment.c — the experiment's hyperparameters and metrics
 * (hp.hparams_config) and a run's status.
 *
 * The declaration is checked whole on the caller's thread and queued as
 * one JSON text, which the background thread turns into rows with SQLite's
 * json_each (commit.c): one event, whatever the number of entries.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

static const char what_config[] = "gb_summary_hparams_config";

static gb_status bad(const char *name, const char *msg) {
    char full[512];
    snprintf(full, sizeof full, "hparam '%.200s': %s", name, msg);
    return gb__writer_fail(GB_ERR_VALUE, what_config, NULL, full);
}

static gb_status check_discrete(const gb_hparam_domain *h) {
    if (!h->value_count) return bad(h->name, "a discrete domain needs at least one value");
    if (h->type == GB_HPARAM_STRING) {
        if (!h->strings) return bad(h->name, "a discrete string domain needs strings");
        for (size_t i = 0; i < h->value_count; i++)
            if (!h->strings[i]) return bad(h->name, "a string value is NULL");
        return GB_OK;
    }
    if (!h->values) return bad(h->name, "a discrete domain of numbers needs values");
    for (size_t i = 0; i < h->value_count; i++) {
        double v = h->values[i];
        if (!isfinite(v)) return bad(h->name, "a value is not finite");
        if (h->type == GB_HPARAM_INT && v != floor(v))
            return bad(h->name, "a value of an int domain is not a whole number");
        if (h->type == GB_HPARAM_BOOL && v != 0 && v != 1)
            return bad(h->name, "a value of a bool domain is neither 0 nor 1");
    }
    return GB_OK;
}

static gb_status check_domain(const gb_hparam_domain *h) {
    if (!h->name || !*h->name)
        return gb__writer_fail(GB_ERR_VALUE, what_config, NULL, "an hparam's name is NULL or empty");
    if ((unsigned)h->type > GB_HPARAM_BOOL) return bad(h->name, "unknown type");
    switch (h->domain) {
    case GB_DOMAIN_NONE: return GB_OK;
    case GB_DOMAIN_INTERVAL:
        if (h->type != GB_HPARAM_REAL && h->type != GB_HPARAM_INT)
            return bad(h->name, "an interval needs a real or int hparam");
        if (!isfinite(h->min) || !isfinite(h->max) || h->min > h->max)
            return bad(h->name, "an interval needs finite min <= max");
        return GB_OK;
    case GB_DOMAIN_DISCRETE: return check_discrete(h);
    }
    return bad(h->name, "unknown domain kind");
}

static void put_domain(gb__jtext *t, const gb_hparam_domain *h) {
    gb__jtext_put(t, "{\"name\":");
    gb__jtext_string(t, h->name);
    gb__jtext_put(t, ",\"display_name\":");
    gb__jtext_string(t, h->display_name ? h->display_name : "");
    gb__jtext_put(t, ",\"description\":");
    gb__jtext_string(t, h->description ? h->description : "");
    gb__jtext_put(t, ",\"type\":\"%s\",\"domain\":\"%s\"", gb_hparam_type_name(h->type),
                  h->domain == GB_DOMAIN_NONE ? "" : gb_hparam_domain_name(h->domain));
    if (h->domain == GB_DOMAIN_INTERVAL) {
        gb__jtext_put(t, ",\"min\":");
        gb__jtext_shortest(t, h->min);
        gb__jtext_put(t, ",\"max\":");
        gb__jtext_shortest(t, h->max);
    }
    gb__jtext_put(t, ",\"values\":[");
    for (size_t i = 0; h->domain == GB_DOMAIN_DISCRETE && i < h->value_count; i++) {
        if (i) gb__jtext_put(t, ",");
        if (h->type == GB_HPARAM_STRING) gb__jtext_string(t, h->strings[i]);
        else if (h->type == GB_HPARAM_BOOL) gb__jtext_put(t, h->values[i] ? "true" : "false");
        else gb__jtext_shortest(t, h->values[i]);
    }
    gb__jtext_put(t, "]}");
}

/* The whole declaration as {"hparams":[...],"metrics":[...]} (malloc'd),
 * or NULL when memory ran out. */
static char *config_json(const gb_hparam_domain *hparams, size_t nh,
                         const gb_hparam_metric *metrics, size_t nm) {
    gb__jtext t = {.grows = true};
    gb__jtext_put(&t, "{\"hparams\":[");
    for (size_t i = 0; i < nh; i++) {
        if (i) gb__jtext_put(&t, ",");
        put_domain(&t, &hparams[i]);
    }
    gb__jtext_put(&t, "],\"metrics\":[");
    for (size_t i = 0; i < nm; i++) {
        gb__jtext_put(&t, "%s{\"tag\":", i ? "," : "");
        gb__jtext_string(&t, metrics[i].tag);
        gb__jtext_put(&t, ",\"display_name\":");
        gb__jtext_string(&t, metrics[i].display_name ? metrics[i].display_name : "");
        gb__jtext_put(&t, ",\"higher_is_better\":%s}", metrics[i].higher_is_better ? "true" : "false");
    }
    gb__jtext_put(&t, "]}");
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    return t.buf;
}

gb_status gb_summary_hparams_config(gb_summary_writer *w, const gb_hparam_domain *hparams,
                                    size_t hparam_count, const gb_hparam_metric *metrics,
                                    size_t metric_count) {
    if ((hparam_count && !hparams) || (metric_count && !metrics))
        return gb__writer_fail(GB_ERR_VALUE, what_config, NULL,
                               "hparams or metrics is NULL with a nonzero count");
    if (!hparam_count && !metric_count)
        return gb__writer_fail(GB_ERR_VALUE, what_config, NULL,
                               "nothing to declare: no hparams and no metrics");
    for (size_t i = 0; i < hparam_count; i++) {
        gb_status st = check_domain(&hparams[i]);
        if (st != GB_OK) return st;
    }
    for (size_t i = 0; i < metric_count; i++)
        if (!metrics[i].tag || !*metrics[i].tag)
            return gb__writer_fail(GB_ERR_VALUE, what_config, NULL,
                                   "a metric's tag is NULL or empty");
    char *json = config_json(hparams, hparam_count, metrics, metric_count);
    if (!json) return gb__writer_fail(GB_ERR_MEMORY, what_config, NULL, "out of memory");
    gb__event ev = {.type = GB__EV_HPARAMS_CONFIG, .step = GB_STEP_NONE,
                    .wall_time = gb__wall_now(), .payload = json};
    return gb__writer_push(w, what_config, NULL, GB_KIND_ANY, ev, strlen(json) + 1);
}

/* ---- a run's status ------------------------------------------------------------------ */

gb_status gb__writer_push_status(gb_summary_writer *w, const char *status) {
    char *text = strdup(status);
    if (!text) return gb__writer_fail(GB_ERR_MEMORY, "gb_summary_run_status", NULL, "out of memory");
    gb__event ev = {.type = GB__EV_RUN_STATUS, .step = GB_STEP_NONE, .wall_time = gb__wall_now(),
                    .payload = text};
    return gb__writer_push(w, "gb_summary_run_status", NULL, GB_KIND_ANY, ev, strlen(text) + 1);
}

gb_status gb_summary_run_status(gb_summary_writer *w, gb_run_status status) {
    static const char *const names[] = {
        [GB_RUN_RUNNING] = "running", [GB_RUN_DONE] = "done", [GB_RUN_FAILED] = "failed",
        [GB_RUN_KILLED] = "killed"};
    if ((unsigned)status > GB_RUN_KILLED) {
        char msg[64];
        snprintf(msg, sizeof msg, "unknown status %d", (int)status);
        return gb__writer_fail(GB_ERR_VALUE, "gb_summary_run_status", NULL, msg);
    }
    if (!w) w = gb_summary_get_default();
    gb_status st = gb__writer_push_status(w, names[status]);
    if (st == GB_OK) {
        pthread_mutex_lock(&w->lock);
        w->status_said = true;
        pthread_mutex_unlock(&w->lock);
    }
    return st;
}
