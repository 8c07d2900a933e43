/* dist/reducer.c — gradients averaged over the ranks, communication
 * overlapping backward (Horovod's DistributedGradientTape, DDP's reducer).
 *
 * gb_dist_tape_gradient runs the tape's backward with a hook
 * (autodiff/internal.h): each variable's gradient is reported the moment
 * it is final, packed into its bucket (buckets.c), and a bucket whose
 * last gradient arrived starts its allreduce at once — in bucket order,
 * so every rank issues its collectives in the same sequence whatever the
 * order gradients arrive in. Between the ops of the backward walk the hook
 * calls the transport's progress (MPI moves nonblocking collectives only
 * inside its calls). After backward, the call waits for every bucket,
 * divides the sums by the number of ranks in place, and hands back views
 * of the buckets.
 *
 * With no_overlap the same buckets are packed and sent after backward
 * ends: the benchmark's baseline, and gb_dist_average_gradients for
 * gradients a traced step computed (a graph cannot talk to other
 * processes). A job of one skips the buckets: the tape's gradients are
 * already the average.
 */
#include <stdlib.h>

#include "autodiff/internal.h"
#include "dist/internal.h"

/* ---- plans per list of variables ------------------------------------------------------ */

/* A few lists (a GAN's two models) keep their plans; the least recently
 * used goes when another comes. */
enum { MAX_PLANS = 4 };
static gb__buckets *plans[MAX_PLANS];

static gb__buckets *plan_for(gb_variable *const *vars, int n) {
    int64_t cap = gb__dist_job()->opt.bucket_bytes;
    int hit = -1;
    for (int i = 0; i < MAX_PLANS && hit < 0; i++)
        if (gb__buckets_fits(plans[i], vars, n, cap)) hit = i;
    gb__buckets *p = hit >= 0 ? plans[hit] : gb__buckets_new(vars, n, cap);
    if (!p) return NULL;
    if (hit < 0) {
        hit = MAX_PLANS - 1;
        gb__buckets_free(plans[hit]);
    }
    memmove(plans + 1, plans, (size_t)hit * sizeof *plans);   /* most recent first */
    plans[0] = p;
    return p;
}

/* ---- one step --------------------------------------------------------------------------------- */

typedef struct step {
    gb__buckets *p;
    int started;              /* buckets [0, started) are on their way */
    bool overlap;
    bool failed;
} step;

/* Starts the buckets that are complete, in order. */
static void start_complete(step *s) {
    gb__buckets *p = s->p;
    while (!s->failed && s->started < p->nbuckets && p->buckets[s->started].pending == 0) {
        gb__bucket *b = &p->buckets[s->started];
        b->ticket = gb__comm_iallreduce(b->buf->data, b->elements, b->dtype, GB_DIST_SUM,
                                        p->what[s->started]);
        s->failed = b->ticket < 0;
        s->started++;
    }
}

/* The tape's hook: a variable's gradient is final. */
static void on_ready(void *user, int v, gb_tensor *grad) {
    step *s = user;
    if (s->failed) return;
    int b = gb__buckets_pack(s->p, v, grad);
    s->failed = b == -2;
    if (b >= 0 && s->overlap) start_complete(s);
}

static void between_ops(void *user) {
    (void)user;
    gb__comm_progress();
}

/* Sends what is left, waits for every bucket, and writes the averaged
 * gradients (views of the buckets) into grads. */
static bool finish(step *s, gb_tensor **grads) {
    gb__timing_wait_begin();
    start_complete(s);
    gb__buckets *p = s->p;
    int *tickets = malloc((size_t)p->nbuckets * sizeof *tickets + 1), n = 0;
    if (!tickets) {
        gb__error(GB_ERR_MEMORY, NULL, "averaging gradients: out of memory");
        return false;
    }
    for (int b = 0; b < s->started; b++)
        if (p->buckets[b].ticket >= 0) tickets[n++] = p->buckets[b].ticket;
    bool ok = gb__comm_wait(tickets, n) && !s->failed && gb_ok();
    free(tickets);
    if (ok && s->started < p->nbuckets)
        gb__error(GB_ERR_INTERNAL, NULL, "averaging gradients: bucket %d never filled",
                  s->started + 1);
    ok = ok && s->started == p->nbuckets;
    for (int b = 0; ok && b < p->nbuckets; b++)
        gb__divide_by_size(p->buckets[b].buf->data, p->buckets[b].elements, p->buckets[b].dtype);
    for (int v = 0; ok && v < p->nvars; v++) ok = (grads[v] = gb__buckets_view(p, v)) != NULL;
    return gb__timing_step_end() && ok;
}

static bool check_args(const char *who, gb_variable *const *vars, int n, gb_tensor **grads) {
    bool ok = n >= 1 && vars && grads;
    for (int i = 0; ok && i < n; i++) {
        ok = vars[i] != NULL;
        if (ok && !gb_dtype_is_float(gb_variable_dtype(vars[i]))) {
            gb__error(GB_ERR_DTYPE, NULL, "%s: variable '%s' is %s; gradients are floating", who,
                      gb_variable_name(vars[i]), gb_dtype_name(gb_variable_dtype(vars[i])));
            return false;
        }
    }
    if (!ok) gb__error(GB_ERR_VALUE, NULL, "%s: a bad variable or gradient list (%d)", who, n);
    return ok;
}

/* A job of one: a NULL gradient becomes zeros, as with several ranks. */
static bool zeros_for_missing(gb_tensor **grads, gb_variable *const *vars, int n) {
    for (int v = 0; v < n; v++)
        if (!grads[v])
            grads[v] = gb_zeros(gb_variable_dtype(vars[v]), gb_variable_rank(vars[v]),
                                gb_variable_shape(vars[v]));
    return gb_ok();
}

/* The gradients in bucket order, the way backward would report them. */
static void pack_all(step *s, gb_tensor *const *grads) {
    for (int i = 0; i < s->p->nvars && !s->failed; i++) on_ready(s, s->p->order[i], grads[s->p->order[i]]);
}

static bool begin(step *s, gb_variable *const *vars, int n, bool overlap) {
    *s = (step){.p = plan_for(vars, n), .overlap = overlap};
    return s->p && gb__buckets_begin_step(s->p);
}

bool gb_dist_tape_gradient(gb_tape *tape, gb_tensor *target, gb_variable *const *vars, int n,
                           gb_tensor **grads) {
    static const char WHO[] = "gb_dist_tape_gradient";
    if (!gb_ok() || !check_args(WHO, vars, n, grads)) return false;
    for (int v = 0; v < n; v++) grads[v] = NULL;
    gb__timing_step_begin();
    const gb__dist *job = gb__dist_job();
    if (job->size == 1) {
        bool ok = gb_tape_gradient_vars(tape, target, vars, n, grads) &&
                  zeros_for_missing(grads, vars, n);
        gb__timing_wait_begin();
        return gb__timing_step_end() && ok;
    }
    gb_source *src = malloc((size_t)n * sizeof *src);
    gb_tensor **raw = malloc((size_t)n * sizeof *raw);
    step s;
    bool ok = src && raw && begin(&s, vars, n, !job->opt.no_overlap);
    if (!src || !raw) gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", WHO);
    for (int v = 0; ok && v < n; v++) src[v] = GB_SRC_VAR(vars[v]);
    gb__grad_hook hook = {.ready = on_ready, .between = between_ops, .user = &s};
    if (ok && s.overlap)
        ok = gb__tape_gradient_hooked(tape, target, src, n, GB_UNCONNECTED_NONE, &hook, raw);
    else if (ok) {
        ok = gb_tape_gradient_ex(tape, &target, 1, NULL, src, n, GB_UNCONNECTED_NONE, raw);
        if (ok) pack_all(&s, raw);
    }
    ok = ok && finish(&s, grads);
    free(src);
    free(raw);
    return ok && gb_ok();
}

bool gb_dist_average_gradients(gb_tensor **grads, gb_variable *const *vars, int n) {
    static const char WHO[] = "gb_dist_average_gradients";
    if (!gb_ok() || !check_args(WHO, vars, n, grads)) return false;
    gb__timing_step_begin();
    if (gb__dist_job()->size == 1) {
        bool ok = zeros_for_missing(grads, vars, n);
        gb__timing_wait_begin();
        return gb__timing_step_end() && ok;
    }
    step s;
    if (!begin(&s, vars, n, false)) return false;
    pack_all(&s, grads);
    return finish(&s, grads) && gb_ok();
}
