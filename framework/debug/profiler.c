/* debug/profiler.c — gb_profiler_start / stop and the record of an op.
 *
 * The capture itself (per-thread buffers) is core's (core/profiler.c), so
 * the data pipeline, the optimizer and collectives record into it too;
 * this file turns the op-log hook's profiler bit on and off and fills an
 * op's record: name, type, function, backward, input shapes, bytes out,
 * and the FLOPs of the ops whose count is known from shapes alone
 * (MatMul, Conv2D). Stopping emits the profile to observers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debug/internal.h"

static const char *const START = "gb_profiler_start", *const STOP = "gb_profiler_stop";
static double peak_flops;
static bool all_ranks;   /* of the capture running (one at a time) */

/* A shape's leading dims times its last two (of a MatMul's a): 2*M*N*K. */
static double matmul_flops(const gb_op_call *c, const gb_tensor *out) {
    const gb_tensor *a = c->in[0];
    if (a->rank < 2) return 0;
    bool transpose_a = c->attrs->i[0];
    int64_t k = a->shape[a->rank - (transpose_a ? 2 : 1)];
    return 2.0 * (double)out->size * (double)k;
}

/* Conv2D (filter [kh, kw, cin, cout]): 2 * outputs * kh*kw*cin. */
static double conv_flops(const gb_op_call *c, const gb_tensor *out) {
    const gb_tensor *f = c->in[1];
    if (f->rank != 4) return 0;
    return 2.0 * (double)out->size * (double)(f->shape[0] * f->shape[1] * f->shape[2]);
}

static double op_flops(const gb_op_call *c, gb_tensor *const *out, int nout) {
    if (nout < 1 || !out[0]) return 0;
    switch (c->op) {
    case GB_OP_MATMUL: return matmul_flops(c, out[0]);
    case GB_OP_CONV2D: return conv_flops(c, out[0]);
    default: return 0;
    }
}

static void keep_shapes(const gb_op_call *c, gb_profile_record *r) {
    int n = c->nin < GB_PROFILE_MAX_SHAPES ? c->nin : GB_PROFILE_MAX_SHAPES;
    for (int i = 0; i < n; i++) {
        const gb_tensor *t = c->in[i];
        if (t->rank > GB_PROFILE_MAX_RANK) {
            r->rank[i] = -1;
            continue;
        }
        r->rank[i] = (int8_t)t->rank;
        for (int d = 0; d < t->rank; d++) r->dims[i][d] = t->shape[d];
    }
    r->nshapes = (int8_t)n;
}

/* parts joined into buf (n > 0), cut to fit: snprintf's formatting cost
 * a tiny op more than its kernel. */
static const char *join(char *buf, size_t n, const char *const *parts, int nparts) {
    size_t len = 0;
    for (int i = 0; i < nparts; i++) {
        size_t k = strlen(parts[i]);
        if (k > n - 1 - len) k = n - 1 - len;
        memcpy(buf + len, parts[i], k);
        len += k;
    }
    buf[len] = '\0';
    return buf;
}

/* The op's name as errors and logs give it (gb__op_display_name). */
static const char *op_name(const gb_op_call *c, char *buf, size_t n) {
    if (gb__tl_node_name) return gb__tl_node_name;
    if (gb__tl_backward_of)
        return join(buf, n, (const char *[]){"gradients/", gb__tl_backward_of, "_grad/",
                                             gb__tl_backward_label ? gb__tl_backward_label
                                                                   : c->def->name}, 4);
    const char *path = gb_name_scope_path();
    return join(buf, n, (const char *[]){path, *path ? "/" : "", c->def->name}, 3);
}

void gb__profile_op(const gb_op_call *c, gb_tensor *const *out, int nout, double t0, double us) {
    char name[160];
    gb_profile_record r = {.start_us = t0, .dur_us = us, .kind = GB_PROFILE_OP,
                           .name = op_name(c, name, sizeof name),
                           .op_type = c->def->name,
                           .function = gb__tl_function ? gb__tl_function : "",
                           .backward = gb__tl_backward_of != NULL,
                           .flops = op_flops(c, out, nout)};
    for (int k = 0; k < nout; k++)
        if (out[k]) r.bytes += out[k]->size * (int64_t)gb_dtype_size(out[k]->dtype);
    keep_shapes(c, &r);
    gb__prof_add(&r);
}

/* The rank of an MPI job, from the launcher's environment (the engine
 * below dist/ has no MPI of its own); 0 alone. */
static int launcher_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return atoi(v);
    }
    return 0;
}

static void stop_window(void) { gb_profiler_stop(); }

/* This machine's GEMM speed, the yardstick of ops' FLOP/s: the best of a
 * few 256x256 products by MatMul's own kernel, called directly so that no
 * hook (op timing, a profile) sees them; measured once (a millisecond). */
static double gemm_peak(void) {
    static double peak;
    if (peak > 0) return peak;
    enum { N = 256 };
    const gb_op_def *def = gb_op_table[GB_OP_MATMUL];
    static const gb_attrs none;
    gb_scope_begin();
    gb_tensor *a = gb_ones(GB_F32, GB_SHAPE(N, N));
    gb_tensor *c = gb__tensor_new(GB_F32, 2, (const int64_t[]){N, N}, true);
    gb_tensor *in[2] = {a, a};
    gb_op_call call = {GB_OP_MATMUL, def, in, 2, &none, NULL};
    for (int i = 0; i < 5 && a && c; i++) {
        double t0 = gb__now_us();
        bool ok = def->kernel(&call, &c);
        double us = gb__now_us() - t0;
        double flops = 2.0 * N * N * N / (us * 1e-6);
        if (ok && us > 0 && flops > peak) peak = flops;
    }
    gb_scope_end();
    return peak;
}

static gb_status already_running(void) {
    gb__error(GB_ERR_STATE, START, "%s: a capture is running already (gb_profiler_stop ends it)",
              START);
    return GB_ERR_STATE;
}

gb_status gb_profiler_start(const gb_profiler_options *options) {
    int64_t steps = options ? options->steps : 0;
    if (steps < 0) {
        gb__error(GB_ERR_VALUE, START, "%s: steps must be >= 0, got %lld", START,
                  (long long)steps);
        return GB_ERR_VALUE;
    }
    atomic_store(&gb__prof_stop_hook, stop_window);
    if (gb_profiler_active()) return already_running();
    peak_flops = gemm_peak();
    if (!gb__prof_session_begin(steps)) return already_running();   /* another thread won */
    all_ranks = options && options->all_ranks;
    gb__set_op_profiling(true);
    return GB_OK;
}

gb_status gb_profiler_stop(void) {
    gb__set_op_profiling(false);
    gb_profile *p = gb__prof_session_end(launcher_rank());
    gb_prof_merge_fn merge = atomic_load(&gb__prof_merge_hook);
    if (p && merge && all_ranks) {
        p->gemm_peak_flops = peak_flops;
        p = merge(p);   /* a collective: every rank stops alike */
        if (!p) return gb_ok() ? GB_OK : gb_last_error()->code;   /* not rank 0 */
    }
    if (!p) {
        if (!gb_ok()) return gb_last_error()->code;
        gb__error(GB_ERR_STATE, STOP, "%s: no capture is running (gb_profiler_start begins one)",
                  STOP);
        return GB_ERR_STATE;
    }
    p->gemm_peak_flops = peak_flops;
    char msg[96];
    snprintf(msg, sizeof msg, "profile of %zu records on %d threads", p->count, p->nthreads);
    gb_event ev = {.kind = GB_EVENT_PROFILE, .message = msg, .detail = p};
    gb_observer_emit(&ev);
    gb_profile_release(p);
    return GB_OK;
}

bool gb_profiler_active(void) { return atomic_load(&gb__prof_on); }
