/* store/profile_analysis.c — what a capture says: the ops table and the
 * steps' breakdown.
 *
 * Self time: an op nested in another on the same thread (a node of a
 * traced call inside the call, an op run inside another's kernel) is
 * taken out of its parent's time, so self times add up to the thread's
 * busy time once. Steps run from one step mark to the next on the thread
 * that set them (the last to the end of the capture); their parts are
 * that thread's input waits, ops (forward, backward, optimizer),
 * collective waits, and what is left (other). The sentence naming what
 * bounds the steps follows TensorBoard's input-pipeline analyzer: more
 * than 20 % waiting for data is input-bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

enum { BOUND_PERCENT = 20 };

static bool is_kind(const gb_profile_event_row *e, const char *kind) { return !strcmp(e->kind, kind); }

/* Self time of every event (ops only; others get their duration). */
static double *self_times(const gb_profile_events *ev) {
    double *self = malloc((ev->count + 1) * sizeof *self);
    size_t *stack = malloc((ev->count + 1) * sizeof *stack);
    if (!self || !stack) {
        free(self);
        free(stack);
        return NULL;
    }
    size_t depth = 0;
    int32_t thread = -1;
    for (size_t i = 0; i < ev->count; i++) {
        const gb_profile_event_row *e = &ev->rows[i];
        self[i] = e->dur_us;
        if (!is_kind(e, "op")) continue;
        if (e->thread != thread) depth = 0, thread = e->thread;
        while (depth) {
            const gb_profile_event_row *top = &ev->rows[stack[depth - 1]];
            if (top->start_us + top->dur_us > e->start_us) break;
            depth--;
        }
        if (depth) {
            size_t parent = stack[depth - 1];
            self[parent] -= e->dur_us;
            if (self[parent] < 0) self[parent] = 0;
        }
        stack[depth++] = i;
    }
    free(stack);
    return self;
}

typedef struct keyed {
    const char *key;
    size_t index;
} keyed;

static int by_key(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int by_self_desc(const void *a, const void *b) {
    const gb_profile_op_row *x = a, *y = b;
    if (x->self_us != y->self_us) return x->self_us < y->self_us ? 1 : -1;
    return strcmp(x->key, y->key);
}

gb_store_status gb_profile_ops_of(const gb_profile_events *ev, bool by_type, gb_profile_ops **out) {
    if (!ev || !out) return gb__store_null_args("gb_profile_ops_of");
    *out = NULL;
    gb__arena *a;
    gb_profile_ops *res = gb__result_new(sizeof *res, &a);
    double *self = self_times(ev);
    keyed *keys = malloc((ev->count + 1) * sizeof *keys);
    gb_profile_op_row *rows = res ? gb__arena_alloc(a, (ev->count + 1) * sizeof *rows) : NULL;
    if (!res || !self || !keys || !rows) {
        free(self);
        free(keys);
        gb_store_free(res);
        gb__store_fail("gb_profile_ops_of: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    size_t n = 0;
    for (size_t i = 0; i < ev->count; i++)
        if (is_kind(&ev->rows[i], "op"))
            keys[n++] = (keyed){by_type ? ev->rows[i].op_type : ev->rows[i].name, i};
    qsort(keys, n, sizeof *keys, by_key);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++) {
        const gb_profile_event_row *e = &ev->rows[keys[i].index];
        if (!i || strcmp(keys[i].key, keys[i - 1].key)) {
            /* copies: the table outlives the events */
            rows[groups++] = (gb_profile_op_row){
                .key = gb__arena_strdup(a, keys[i].key),
                .op_type = gb__arena_strdup(a, by_type ? "" : e->op_type),
                .function = gb__arena_strdup(a, by_type ? "" : e->function)};
        }
        gb_profile_op_row *r = &rows[groups - 1];
        r->calls++;
        r->total_us += e->dur_us;
        r->self_us += self[keys[i].index];
        r->flops += e->flops;
        res->self_us += self[keys[i].index];
    }
    bool copied = true;
    for (size_t g = 0; g < groups; g++) {
        rows[g].share = res->self_us > 0 ? rows[g].self_us / res->self_us : 0;
        copied &= rows[g].key && rows[g].op_type && rows[g].function;
    }
    if (!copied) {
        free(self);
        free(keys);
        gb_store_free(res);
        gb__store_fail("gb_profile_ops_of: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    qsort(rows, groups, sizeof *rows, by_self_desc);
    res->count = groups;
    res->rows = rows;
    free(self);
    free(keys);
    *out = res;
    return GB_STORE_OK;
}

/* ---- steps -------------------------------------------------------------------------- */

/* The thread that marked steps; -1 when none did. */
static int32_t step_thread(const gb_profile_events *ev) {
    for (size_t i = 0; i < ev->count; i++)
        if (is_kind(&ev->rows[i], "step")) return ev->rows[i].thread;
    return -1;
}

static bool is_optimizer_op(const gb_profile_event_row *e) {
    return !strncmp(e->op_type, "ResourceApply", 13);
}

/* Adds event i (self time self_us) to the step it starts in. */
static void attribute(gb_profile_step_row *r, const gb_profile_event_row *e, double self_us,
                      double *opt_end) {
    if (is_kind(e, "input_wait")) {
        r->input_us += e->dur_us;
    } else if (is_kind(e, "comm_wait")) {
        r->comm_us += e->dur_us;
    } else if (is_kind(e, "optimizer")) {
        r->optimizer_us += e->dur_us;   /* an eager update: its ops are inside it */
        *opt_end = e->start_us + e->dur_us;
    } else if (is_kind(e, "op") && e->start_us >= *opt_end) {
        if (is_optimizer_op(e))
            r->optimizer_us += self_us;
        else if (e->backward)
            r->backward_us += self_us;
        else
            r->forward_us += self_us;
    }
}

static const char *sentence(gb__arena *a, gb_profile_steps *res, double total, double input,
                            double compute, double comm) {
    char text[200];
    double pi = total > 0 ? 100 * input / total : 0, pc = total > 0 ? 100 * compute / total : 0,
           pm = total > 0 ? 100 * comm / total : 0;
    if (total <= 0) {
        res->bound = "";
        snprintf(text, sizeof text, "no complete step was profiled (gb_set_step marks steps)");
    } else if (pi >= BOUND_PERCENT && pi >= pm) {
        res->bound = "input", res->bound_share = pi / 100;
        snprintf(text, sizeof text, "input-bound: %.0f %% of the step waiting for data", pi);
    } else if (pm >= BOUND_PERCENT) {
        res->bound = "communication", res->bound_share = pm / 100;
        snprintf(text, sizeof text, "communication-bound: %.0f %% of the step waiting for collectives",
                 pm);
    } else if (100 - pi - pc - pm > pc) {
        double po = 100 - pi - pc - pm;
        res->bound = "other", res->bound_share = po / 100;
        snprintf(text, sizeof text,
                 "overhead-bound: %.0f %% of the step outside ops and waits (%.0f %% in ops)", po,
                 pc);
    } else {
        res->bound = "compute", res->bound_share = pc / 100;
        snprintf(text, sizeof text,
                 "compute-bound: %.0f %% of the step in ops, %.0f %% waiting for data", pc, pi);
    }
    return gb__arena_strdup(a, text);
}

gb_store_status gb_profile_steps_of(const gb_profile_events *ev, gb_profile_steps **out) {
    if (!ev || !out) return gb__store_null_args("gb_profile_steps_of");
    *out = NULL;
    gb__arena *a;
    gb_profile_steps *res = gb__result_new(sizeof *res, &a);
    double *self = self_times(ev);
    gb_profile_step_row *rows = res ? gb__arena_alloc(a, (ev->count + 1) * sizeof *rows) : NULL;
    if (!res || !self || !rows) {
        free(self);
        gb_store_free(res);
        gb__store_fail("gb_profile_steps_of: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    int32_t thread = step_thread(ev);
    size_t n = 0;
    double opt_end = -1;
    bool last_busy = false;   /* the last mark has events after it */
    for (size_t i = 0; i < ev->count; i++) {
        const gb_profile_event_row *e = &ev->rows[i];
        if (e->thread != thread) continue;
        if (is_kind(e, "step")) {
            if (n) rows[n - 1].step_us = e->start_us - rows[n - 1].start_us;
            rows[n++] = (gb_profile_step_row){.step = e->step, .start_us = e->start_us};
            last_busy = false;
        } else if (n) {
            attribute(&rows[n - 1], e, self[i], &opt_end);
            last_busy = true;
        }
    }
    /* The mark that ended a window of steps begins no step of its own;
     * a step still running at the stop ends with the capture. */
    if (n && !last_busy) n--;
    else if (n) rows[n - 1].step_us = ev->info.duration_us - rows[n - 1].start_us;
    double total = 0, input = 0, compute = 0, comm = 0;
    for (size_t i = 0; i < n; i++) {
        gb_profile_step_row *r = &rows[i];
        double parts = r->input_us + r->forward_us + r->backward_us + r->optimizer_us + r->comm_us;
        r->other_us = r->step_us > parts ? r->step_us - parts : 0;
        total += r->step_us, input += r->input_us, comm += r->comm_us;
        compute += r->forward_us + r->backward_us + r->optimizer_us;
    }
    res->count = n;
    res->rows = rows;
    res->sentence = sentence(a, res, total, input, compute, comm);
    free(self);
    if (!res->sentence) {
        gb_store_free(res);
        gb__store_fail("gb_profile_steps_of: out of memory");
        return GB_STORE_ERR_MEMORY;
    }
    *out = res;
    return GB_STORE_OK;
}
