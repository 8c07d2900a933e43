/* dist/dist.c — the job: options, joining and leaving, and the
 * collectives on tensors, numbers and variables that programs call.
 *
 * Everything here goes through the transport (comm_mpi.c, or
 * comm_single.c without MPI), so a job of one runs the same code and gets
 * its input back. Arguments are checked before any communication, the
 * same way on every rank, so a bad call fails everywhere alike instead of
 * leaving the other ranks waiting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/parallel.h"
#include "dist/internal.h"

gb__dist gb__dist_state = {.size = 1, .local_size = 1};
#define J gb__dist_state

/* ---- options --------------------------------------------------------------------------- */

static double env_number(const char *name, double fallback) {
    const char *v = getenv(name);
    char *end;
    double x = v && *v ? strtod(v, &end) : 0;
    return v && *v && !*end && x > 0 ? x : fallback;
}

/* The defaults, from the environment where it says. */
static gb_dist_options defaults(void) {
    const char *overlap = getenv("GB_DIST_OVERLAP"), *thread = getenv("GB_DIST_PROGRESS_THREAD");
    return (gb_dist_options){
        .no_progress_thread = thread && !strcmp(thread, "0"),
        .timeout_seconds = env_number("GB_DIST_TIMEOUT", 60),
        .bucket_bytes = (int64_t)(env_number("GB_DIST_BUCKET_KB", 1024) * 1024),
        .no_overlap = overlap && !strcmp(overlap, "0"),
        .timing_every = 10,
    };
}

/* o's nonzero fields over base; no_overlap: o's when `set`, else either's. */
static gb_dist_options merged(gb_dist_options base, const gb_dist_options *o, bool set) {
    if (!o) return base;
    if (o->timeout_seconds > 0) base.timeout_seconds = o->timeout_seconds;
    if (o->bucket_bytes > 0) base.bucket_bytes = o->bucket_bytes;
    if (o->timing_every > 0) base.timing_every = o->timing_every;
    base.no_overlap = set ? o->no_overlap : base.no_overlap || o->no_overlap;
    base.no_progress_thread = base.no_progress_thread || o->no_progress_thread;
    return base;
}

static bool check_options(const char *who, const gb_dist_options *o) {
    if (!o || (o->timeout_seconds >= 0 && o->bucket_bytes >= 0 && o->timing_every >= 0))
        return true;
    gb__error(GB_ERR_VALUE, NULL, "%s: timeout_seconds, bucket_bytes and timing_every must be >= 0",
              who);
    return false;
}

bool gb_dist_set_options(const gb_dist_options *o) {
    if (!check_options("gb_dist_set_options", o)) return false;
    J.opt = merged(gb_dist_get_options(), o, true);
    return true;
}

gb_dist_options gb_dist_get_options(void) { return J.initialized ? J.opt : defaults(); }

/* ---- the job --------------------------------------------------------------------------------- */

/* Each rank computes on its share of the machine's cores. */
static void share_cores(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int per_rank = (int)(cores / (J.local_size > 0 ? J.local_size : 1));
    if (per_rank < 1) per_rank = 1;
    if (J.local_size > 1 && !getenv("GB_NUM_THREADS") && !gb__parallel_suggest_workers(per_rank))
        gb__warn("gb_dist_init: the compute threads started before gb_dist_init, all %ld cores "
                 "for each of the %d ranks of this machine; call gb_dist_init first, or set "
                 "GB_NUM_THREADS",
                 cores, J.local_size);
}

bool gb_dist_init_ex(int *argc, char ***argv, const gb_dist_options *o) {
    if (J.initialized) return true;
    if (!check_options("gb_dist_init", o)) return false;
    J.opt = merged(defaults(), o, false);
    if (!gb__comm_init(argc, argv, &J)) return false;
    J.initialized = true;
    if (J.size > 1) gb__dist_profile_gather_install();
    share_cores();
    return true;
}

bool gb_dist_init(int *argc, char ***argv) { return gb_dist_init_ex(argc, argv, NULL); }

void gb_dist_finalize(void) {
    if (!J.initialized) return;
    if (!gb__comm_broken()) gb__timing_flush();
    gb__comm_finalize();
    J = (gb__dist){.size = 1, .local_size = 1};
}

bool gb_dist_available(void) { return gb__comm_available(); }
int gb_dist_rank(void) { return J.rank; }
int gb_dist_size(void) { return J.size; }
void gb_dist_abort(int code) { gb__comm_abort(code); }

/* ---- collectives on tensors and numbers ---------------------------------------------------- */

static bool reducible(const char *who, gb_dtype dt, gb_dist_reduce op) {
    bool ok = dt == GB_F32 || dt == GB_F64 || ((dt == GB_I32 || dt == GB_I64) && op != GB_DIST_MEAN);
    if (!ok)
        gb__error(GB_ERR_DTYPE, NULL, "%s: cannot %s %s values", who,
                  op == GB_DIST_MEAN ? "average" : "reduce", gb_dtype_name(dt));
    if (ok && (unsigned)op > GB_DIST_MIN) {
        gb__error(GB_ERR_VALUE, NULL, "%s: unknown reduction %d", who, (int)op);
        ok = false;
    }
    return ok;
}

void gb__divide_by_size(void *data, int64_t n, gb_dtype dt) {
    if (J.size == 1) return;
    if (dt == GB_F32) {
        float *x = data, s = (float)J.size;
        for (int64_t i = 0; i < n; i++) x[i] /= s;
    } else {
        double *x = data, s = (double)J.size;
        for (int64_t i = 0; i < n; i++) x[i] /= s;
    }
}

/* A copy of t in the current scope, its data ours to overwrite. */
static gb_tensor *fresh_copy(gb_tensor *t) {
    gb_tensor *c = gb__tensor_new(t->dtype, t->rank, t->shape, true);
    if (c && t->size) memcpy(c->data, t->data, (size_t)t->size * gb_dtype_size(t->dtype));
    return c;
}

static bool concrete(const char *who, gb_tensor *t) {
    if (!t) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: the tensor is NULL", who);
        return false;
    }
    if (t->data || t->size == 0) return true;
    gb__error(GB_ERR_STATE, NULL,
              "%s: the tensor is symbolic (inside a traced function); a graph cannot talk to "
              "other processes: return it from the function and reduce the result",
              who);
    return false;
}

gb_tensor *gb_dist_allreduce(gb_tensor *t, gb_dist_reduce op) {
    static const char WHO[] = "gb_dist_allreduce";
    if (!gb_ok() || !concrete(WHO, t) || !reducible(WHO, t->dtype, op)) return NULL;
    gb_tensor *r = fresh_copy(t);
    if (!r || !gb__comm_done(gb__comm_iallreduce(r->data, r->size, r->dtype, op, WHO)))
        return NULL;
    if (op == GB_DIST_MEAN) gb__divide_by_size(r->data, r->size, r->dtype);
    return r;
}

gb_tensor *gb_dist_broadcast(gb_tensor *t, int root) {
    static const char WHO[] = "gb_dist_broadcast";
    if (!gb_ok() || !concrete(WHO, t)) return NULL;
    if (root < 0 || root >= J.size) {
        gb__error(GB_ERR_VALUE, NULL, "%s: root %d is not a rank (size %d)", WHO, root, J.size);
        return NULL;
    }
    gb_tensor *r = fresh_copy(t);
    size_t bytes = (size_t)t->size * gb_dtype_size(t->dtype);
    return r && gb__comm_done(gb__comm_ibcast(r->data, bytes, root, WHO)) ? r : NULL;
}

bool gb_dist_allreduce_doubles(double *v, int n, gb_dist_reduce op) {
    static const char WHO[] = "gb_dist_allreduce_doubles";
    if (!gb_ok() || !reducible(WHO, GB_F64, op)) return false;
    if (n < 0 || (n && !v)) {
        gb__error(GB_ERR_VALUE, NULL, "%s: a bad array (%d values)", WHO, n);
        return false;
    }
    if (!gb__comm_done(gb__comm_iallreduce(v, n, GB_F64, op, WHO))) return false;
    if (op == GB_DIST_MEAN) gb__divide_by_size(v, n, GB_F64);
    return true;
}

bool gb_dist_barrier(void) {
    double nothing = 0;
    return gb_ok() && gb__comm_done(gb__comm_iallreduce(&nothing, 1, GB_F64, GB_DIST_SUM,
                                                        "gb_dist_barrier"));
}

/* ---- variables ------------------------------------------------------------------------------- */

/* Every rank holds the same list: counts and sizes agree (compared as
 * max against min over the ranks), so a broadcast cannot overrun. */
static bool same_everywhere(const char *who, int64_t count, int64_t bytes) {
    double v[4] = {(double)count, (double)bytes, -(double)count, -(double)bytes};
    if (!gb__comm_done(gb__comm_iallreduce(v, 4, GB_F64, GB_DIST_MAX, who))) return false;
    if (v[0] == -v[2] && v[1] == -v[3]) return true;
    gb__error(GB_ERR_VALUE, NULL,
              "%s: the ranks hold different variables (%g to %g variables, %g to %g bytes): "
              "build the same model everywhere first",
              who, -v[2], v[0], -v[3], v[1]);
    return false;
}

static int64_t bytes_of(gb_variable *const *vars, int n) {
    int64_t total = 0;
    for (int i = 0; i < n; i++)
        total += gb_variable_size(vars[i]) * (int64_t)gb_dtype_size(gb_variable_dtype(vars[i]));
    return total;
}

static bool check_vars(const char *who, gb_variable *const *vars, int n) {
    bool ok = n >= 0 && (n == 0 || vars);
    for (int i = 0; ok && i < n; i++) ok = vars[i] != NULL;
    if (!ok) gb__error(GB_ERR_VALUE, NULL, "%s: a bad variable list (%d, or a NULL one)", who, n);
    return ok;
}

/* Rank root's values of vars, packed in one buffer, assigned everywhere. */
static bool broadcast_packed(const char *who, gb_variable *const *vars, int n, int root) {
    int64_t total = bytes_of(vars, n);
    if (!same_everywhere(who, n, total)) return false;
    char *buf = malloc(total > 0 ? (size_t)total : 1);
    if (!buf) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory for %lld bytes", who, (long long)total);
        return false;
    }
    gb_scope_begin();
    size_t at = 0;
    for (int i = 0; i < n && J.rank == root; i++) {
        gb_tensor *v = gb_variable_value(vars[i]);
        size_t b = v ? (size_t)v->size * gb_dtype_size(v->dtype) : 0;
        if (b) memcpy(buf + at, v->data, b);
        at += b;
    }
    bool ok = gb_ok() && gb__comm_done(gb__comm_ibcast(buf, (size_t)total, root, who));
    at = 0;
    for (int i = 0; ok && i < n; i++) {
        gb_variable *v = vars[i];
        size_t b = (size_t)gb_variable_size(v) * gb_dtype_size(gb_variable_dtype(v));
        if (J.rank != root)
            ok = gb_variable_assign(v, gb_tensor_from(gb_variable_dtype(v), buf + at,
                                                      gb_variable_rank(v), gb_variable_shape(v)));
        at += b;
    }
    gb_scope_end();
    free(buf);
    return ok && gb_ok();
}

bool gb_dist_broadcast_variables(gb_variable *const *vars, int n, int root) {
    static const char WHO[] = "gb_dist_broadcast_variables";
    if (!gb_ok() || !check_vars(WHO, vars, n)) return false;
    if (root < 0 || root >= J.size) {
        gb__error(GB_ERR_VALUE, NULL, "%s: root %d is not a rank (size %d)", WHO, root, J.size);
        return false;
    }
    return broadcast_packed(WHO, vars, n, root);
}

bool gb_dist_broadcast_model(gb_module *model, gb_optimizer *opt, int root) {
    static const char WHO[] = "gb_dist_broadcast_model";
    if (!gb_ok()) return false;
    if (!model || !gb_module_built(model)) {
        gb__error(GB_ERR_STATE, NULL,
                  "%s: %s; build it first (gb_module_build, or call it once) so that its "
                  "variables exist",
                  WHO, model ? "the model is not built" : "the model is NULL");
        return false;
    }
    int nm = 0, ns = opt ? gb_optimizer_slot_variables(opt, NULL, 0) : 0;
    gb_variable *const *mv = gb_module_variables(model, &nm);
    gb_variable **all = malloc((size_t)(nm + ns + 1) * sizeof *all);
    if (!all) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", WHO);
        return false;
    }
    memcpy(all, mv, (size_t)nm * sizeof *all);
    if (opt) gb_optimizer_slot_variables(opt, all + nm, ns);
    bool ok = gb_dist_broadcast_variables(all, nm + ns, root);
    free(all);
    if (!ok || !opt) return ok;
    double it = (double)gb_optimizer_iterations(opt);   /* exact below 2^53 steps */
    gb_scope_begin();
    gb_tensor *got = gb_dist_broadcast(gb_scalar(GB_F64, it), root);
    ok = got && gb_optimizer_set_iterations(opt, (int64_t)gb_item(got));
    gb_scope_end();
    return ok;
}

bool gb_dist_average_variables(gb_variable *const *vars, int n) {
    static const char WHO[] = "gb_dist_average_variables";
    if (!gb_ok() || !check_vars(WHO, vars, n)) return false;
    if (!same_everywhere(WHO, n, bytes_of(vars, n))) return false;
    bool ok = true;
    for (int i = 0; ok && i < n; i++) {
        if (!gb_dtype_is_float(gb_variable_dtype(vars[i]))) continue;
        gb_scope_begin();
        ok = gb_variable_assign(vars[i], gb_dist_allreduce(gb_variable_value(vars[i]), GB_DIST_MEAN));
        gb_scope_end();
    }
    return ok && gb_ok();
}
