/* ops/fused.c — FusedElementwise: a chain of elementwise ops run as one
 * pass over memory.
 *
 * Eagerly, GELU written from primitives is nine ops and nine passes over
 * its tensors, each writing a fresh buffer the next one reads back. The
 * fusion pass (graph/passes/fuse_elementwise.c) replaces such a chain by
 * one node holding a small program; this kernel runs it block by block:
 * for 1024 elements at a time, every step computes into a register block
 * that stays in L1 (blocks are shared between steps once their last
 * reader has run), using the very kernels the unfused ops use (so the
 * results are bitwise those of the unfused graph), and only the last step
 * writes the output. Inputs broadcast to the output: one that covers it is
 * read in place, a single element is spread once, any other broadcast is
 * gathered per block. A large output's blocks are shared by the workers
 * of the pool (core/parallel.h), each with registers of its own, as the
 * eager elementwise kernels share theirs.
 *
 * With numerics checks on, a NaN or Inf is blamed on the step that made
 * it, by the name of the node that step replaced: alerts name "gelu/Tanh"
 * (type Tanh) and the fused node that holds it, the node a graph shows,
 * and count that step's NaN and Inf, as the unfused op's alert would.
 */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "core/parallel.h"
#include "ops/elementwise_types.h"

/* Elements per block. With the register blocks shared between steps
 * (assign_slots) GELU's working set at 1024 is a few blocks of 4 KB, in
 * L1; at 256 the per-step calls and interpretation cost more than the
 * arithmetic of a multiply step (measured by instruction counts: 30 %
 * fewer for the fused GELU than at 256 with a block per step). */
enum { BLOCK = 1024 };

bool gb__fused_kind_of(gb_op_id op, gb_dtype dt, gb_fused_kind *kind) {
    if (dt != GB_F32 && dt != GB_F64) return false;
    if (gb__ew_map_kernel(op, dt)) *kind = GB_FUSED_MAP;
    else if (gb__ew_pair_kernel(op, dt)) *kind = GB_FUSED_PAIR;
    else if (op == GB_OP_ADD || op == GB_OP_SUB || op == GB_OP_MUL || op == GB_OP_DIV ||
             op == GB_OP_POW || op == GB_OP_MAXIMUM || op == GB_OP_MINIMUM)
        *kind = GB_FUSED_BINARY; /* comparisons change the dtype: not fused */
    else
        return false;
    return true;
}

/* ---- shapes ---------------------------------------------------------------------------- */

/* The output: every input broadcast together (the steps' shapes are all
 * the output's, by construction of the chain). */
static int infer_fused(const gb_op_call *c, gb_out_desc *out) {
    const gb_fused_program *p = c->payload;
    if (!p) {
        gb__op_error(c, GB_ERR_STATE,
                     "%s exists only in traced graphs; it cannot run eagerly", c->def->name);
        return -1;
    }
    out->dtype = p->dtype;
    out->rank = 0;
    for (int i = 0; i < c->nin; i++) {
        const gb_tensor *x = c->in[i];
        if (x->dtype != p->dtype) {
            gb__op_error(c, GB_ERR_DTYPE, "%s: input %d is %s, the program computes in %s",
                         c->def->name, i, gb_dtype_name(x->dtype), gb_dtype_name(p->dtype));
            return -1;
        }
        if (!gb__broadcast_shapes(c, out->rank, out->shape, x->rank, x->shape, &out->rank,
                                  out->shape))
            return -1;
    }
    return 1;
}

/* ---- inputs, per block ----------------------------------------------------------------- */

/* How input x is read for the output y: in place (same size), spread once
 * (one element), tiled (x is y's trailing dims, as a per-channel [C]
 * against [N, H, W, C]: element i of y reads x[i mod size], no division
 * per element), or gathered per block (any other broadcast, through the
 * strides of x over y's dims: 0 along a broadcast dim). */
typedef struct input_view {
    const char *data;
    enum { IN_PLACE, SPREAD, TILE, GATHER } mode;
    int64_t period;           /* TILE: x's size */
    int64_t stride[GB_MAX_RANK];
} input_view;

/* x, its leading 1s dropped, is exactly the trailing dims of y. */
static bool is_trailing(const gb_tensor *x, const gb_tensor *y) {
    int k = 0;
    while (k < x->rank && x->shape[k] == 1) k++;
    int n = x->rank - k;
    if (n > y->rank) return false;
    for (int i = 0; i < n; i++)
        if (x->shape[k + i] != y->shape[y->rank - n + i]) return false;
    return true;
}

static void view_of(const gb_tensor *x, const gb_tensor *y, input_view *v) {
    v->data = x->data;
    v->mode = x->size == y->size ? IN_PLACE : x->size == 1 ? SPREAD
              : is_trailing(x, y) ? TILE : GATHER;
    v->period = x->size;
    int64_t s = 1;
    for (int d = y->rank - 1, k = x->rank - 1; d >= 0; d--, k--) {
        int64_t dim = k >= 0 ? x->shape[k] : 1;
        v->stride[d] = dim == 1 ? 0 : s;
        s *= dim;
    }
}

/* A run of n elements of x along y's last dim from x's offset off:
 * one value repeated (stride 0: a per-row statistic against its row) or
 * consecutive values. */
static void gather_run(const char *x, int64_t off, int64_t stride, int64_t n, size_t es, char *dst) {
    if (stride == 0 && es == sizeof(float)) {
        const float v = *(const float *)(x + (size_t)off * es);
        for (int64_t j = 0; j < n; j++) ((float *)dst)[j] = v;
    } else if (stride == 0) {
        for (int64_t j = 0; j < n; j++) memcpy(dst + (size_t)j * es, x + (size_t)off * es, es);
    } else {
        memcpy(dst, x + (size_t)off * es, (size_t)n * es);   /* stride 1: x's last dim is y's */
    }
}

/* Elements [i0, i0+m) of x broadcast to y, into buf: y's index of i0
 * decomposed once, then runs along the last dim and an odometer over the
 * others (a division per element cost more than the fused ops it fed). */
static void gather(const input_view *v, const gb_tensor *y, int64_t i0, int64_t m, size_t es,
                   char *buf) {
    const int last = y->rank - 1;
    int64_t idx[GB_MAX_RANK], rem = i0, off = 0;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % y->shape[d];
        rem /= y->shape[d];
        off += idx[d] * v->stride[d];
    }
    for (int64_t j = 0; j < m;) {
        int64_t n = y->shape[last] - idx[last];
        n = n < m - j ? n : m - j;
        gather_run(v->data, off, v->stride[last], n, es, buf + (size_t)j * es);
        j += n;
        off += n * v->stride[last];
        idx[last] += n;
        for (int d = last; d > 0 && idx[d] == y->shape[d]; d--) {   /* carry */
            off -= idx[d] * v->stride[d];
            idx[d] = 0;
            idx[d - 1]++;
            off += v->stride[d - 1];
        }
    }
}

/* Elements [i0, i0+m) of a tiled x: x[(i0 + j) mod period]. */
static void tile(const input_view *v, int64_t i0, int64_t m, size_t es, char *buf) {
    int64_t k = i0 % v->period;
    if (es == sizeof(float)) {
        const float *src = (const float *)v->data;
        float *dst = (float *)buf;
        for (int64_t j = 0; j < m; j++) {
            dst[j] = src[k];
            if (++k == v->period) k = 0;
        }
        return;
    }
    const double *src = (const double *)v->data;
    double *dst = (double *)buf;
    for (int64_t j = 0; j < m; j++) {
        dst[j] = src[k];
        if (++k == v->period) k = 0;
    }
}

static void spread(const char *one, size_t es, int64_t len, char *buf) {
    for (int64_t j = 0; j < len; j++) memcpy(buf + (size_t)j * es, one, es);
}

/* ---- the program ----------------------------------------------------------------------- */

/* The kernels of the steps, looked up once per call. */
typedef struct step_fns {
    gb_ew_map_fn map;
    gb_ew_pair_fn pair;
    gb_ew_run_fn run;
} step_fns;

static void lookup(const gb_fused_program *p, step_fns *fns) {
    for (int s = 0; s < p->nsteps; s++) {
        const gb_fused_step *st = &p->steps[s];
        fns[s] = (step_fns){gb__ew_map_kernel(st->op, p->dtype), gb__ew_pair_kernel(st->op, p->dtype),
                            gb__ew_run_kernel(st->op, p->dtype)};
    }
}

typedef struct fused_run { /* one worker's */
    const gb_fused_program *p;
    int64_t len;                                 /* elements per block */
    step_fns fns[GB_FUSED_MAX_STEPS];
    input_view in[GB_FUSED_MAX_INPUTS];
    const char *in_block[GB_FUSED_MAX_INPUTS];   /* this block's slice of each input */
    char *spread[GB_FUSED_MAX_INPUTS];           /* a block of a broadcast input */
    char *regs[GB_FUSED_MAX_STEPS];              /* each step's result block */
    int layout[GB_FUSED_MAX_STEPS];              /* binary steps: GB_EW_RUN_VV, _SV or _VS */
} fused_run;

static const void *operand(const fused_run *r, int k) {
    return k >= 0 ? (const void *)r->regs[k] : (const void *)r->in_block[-1 - k];
}

/* One block: every step into its register block, the last one into dst
 * (the output's slice; see run_blocks). */
static void run_block(fused_run *r, int64_t m, void *dst) {
    const gb_fused_program *p = r->p;
    for (int s = 0; s < p->nsteps; s++) {
        const gb_fused_step *st = &p->steps[s];
        const void *a = operand(r, st->a);
        void *to = s == p->nsteps - 1 ? dst : r->regs[s];
        switch (st->kind) {
        case GB_FUSED_MAP: r->fns[s].map(m, a, to, &st->attrs); break;
        case GB_FUSED_PAIR: r->fns[s].pair(m, a, operand(r, st->b), to); break;
        case GB_FUSED_BINARY: {
            const int lay = r->layout[s];
            const void *pa = lay == GB_EW_RUN_SV ? (const void *)r->in[-1 - st->a].data : a;
            const void *pb = lay == GB_EW_RUN_VS ? (const void *)r->in[-1 - st->b].data
                                                 : operand(r, st->b);
            r->fns[s].run(lay, m, pa, pb, to);
            break;
        }
        }
    }
}

/* With numerics checks on: the node replaced by the first step of this
 * block whose result is not finite, or NULL. */
static const char *blame_step(const fused_run *r, int64_t m, size_t es) {
    const gb_fused_program *p = r->p;
    for (int s = 0; s < p->nsteps; s++)
        for (int64_t j = 0; j < m; j++) {
            double v = es == 4 ? ((const float *)r->regs[s])[j] : ((const double *)r->regs[s])[j];
            if (v - v != 0) return p->steps[s].name; /* NaN or Inf */
        }
    return NULL;
}

/* With numerics checks on: each step's NaN, +Inf and -Inf in this block,
 * added to bad[step]. */
static void count_bad(const fused_run *r, int64_t m, size_t es, int64_t (*bad)[3]) {
    for (int s = 0; s < r->p->nsteps; s++)
        for (int64_t j = 0; j < m; j++) {
            double v = es == 4 ? ((const float *)r->regs[s])[j] : ((const double *)r->regs[s])[j];
            if (v - v != 0) bad[s][v != v ? 0 : v > 0 ? 1 : 2]++;
        }
}

/* Which register block holds each step's result. With numerics checks on,
 * every step keeps its own: the blame scan reads them all after the
 * block. Otherwise a block is reused once the last step that reads it
 * has run (a result never shares the block of an operand it reads), and
 * the last step writes the output itself: GELU's nine steps need two
 * blocks instead of nine, so a longer block still stays in L1 and each
 * element pays a ninth of the calls and of the interpretation. Returns
 * the number of blocks. */
static int assign_slots(const gb_fused_program *p, bool every_step, int *slot) {
    if (every_step) {
        for (int s = 0; s < p->nsteps; s++) slot[s] = s;
        return p->nsteps;
    }
    int last_read[GB_FUSED_MAX_STEPS];
    for (int s = 0; s < p->nsteps; s++) {
        last_read[s] = s;
        const gb_fused_step *st = &p->steps[s];
        if (st->a >= 0) last_read[st->a] = s;
        if (st->kind != GB_FUSED_MAP && st->b >= 0) last_read[st->b] = s;
    }
    bool busy[GB_FUSED_MAX_STEPS] = {0};
    int nslots = 0;
    for (int s = 0; s < p->nsteps - 1; s++) {
        int k = 0;
        while (busy[k]) k++;
        slot[s] = k;
        busy[k] = true;
        nslots = k + 1 > nslots ? k + 1 : nslots;
        const gb_fused_step *st = &p->steps[s];
        if (st->a >= 0 && last_read[st->a] == s) busy[slot[st->a]] = false;
        if (st->kind != GB_FUSED_MAP && st->b >= 0 && last_read[st->b] == s) busy[slot[st->b]] = false;
    }
    slot[p->nsteps - 1] = 0; /* writes the output */
    return nslots ? nslots : 1;
}

/* The register and spread blocks of one worker, from mem (or the heap
 * when mem is NULL or too small). Blocks are as long as the output when
 * it is short: a tiny step's fused ops need no long blocks. */
static size_t scratch_bytes(int nslots, int nin, int64_t len, size_t es) {
    return (size_t)(nslots + nin) * (size_t)len * es;
}

static void carve(fused_run *r, int nin, size_t es, const int *slot, int nslots, char *mem) {
    size_t block = (size_t)r->len * es;
    for (int s = 0; s < r->p->nsteps; s++) r->regs[s] = mem + (size_t)slot[s] * block;
    for (int i = 0; i < nin; i++) r->spread[i] = mem + (size_t)(nslots + i) * block;
}

static void load_inputs(fused_run *r, const gb_op_call *c, const gb_tensor *y, int64_t i0,
                        int64_t m, size_t es) {
    for (int i = 0; i < c->nin; i++) {
        const input_view *v = &r->in[i];
        if (v->mode == IN_PLACE) {
            r->in_block[i] = v->data + (size_t)i0 * es;
        } else {
            if (v->mode == GATHER) gather(v, y, i0, m, es, r->spread[i]);
            if (v->mode == TILE) tile(v, i0, m, es, r->spread[i]);
            r->in_block[i] = r->spread[i];
        }
    }
}

/* A call's work: blocks of the output, split across the workers (each
 * with its own registers); with numerics checks on, each worker notes the
 * earliest block where a step went non-finite. */
typedef struct fused_job {
    const gb_op_call *c;
    gb_tensor *y;
    size_t es;
    bool check;
    fused_run *runs;             /* per worker */
    int64_t *blamed_block;       /* per worker: earliest bad block, or INT64_MAX */
    const char **blamed;         /* per worker: the step it blames there */
    int64_t (*bad)[GB_FUSED_MAX_STEPS][3];   /* per worker: each step's NaN, +Inf, -Inf */
} fused_job;

static void run_blocks(void *ctx, int64_t b0, int64_t b1, int worker) {
    fused_job *job = ctx;
    fused_run *r = &job->runs[worker];
    const size_t es = job->es;
    for (int64_t b = b0; b < b1; b++) {
        int64_t i0 = b * r->len, m = job->y->size - i0 < r->len ? job->y->size - i0 : r->len;
        load_inputs(r, job->c, job->y, i0, m, es);
        /* The last step writes the output's slice directly: the output may
         * take the memory of an input that dies here (the memory plan's
         * in-place reuse), which is safe because only that step writes it,
         * element j from operands' element j, as every elementwise kernel
         * runs in place. With numerics checks on, it goes through its
         * register block so the block can be searched. */
        char *dst = (char *)job->y->data + (size_t)i0 * es;
        run_block(r, m, job->check ? r->regs[r->p->nsteps - 1] : dst);
        if (job->check) {
            if (b < job->blamed_block[worker]) {
                const char *name = blame_step(r, m, es);
                if (name) job->blamed_block[worker] = b, job->blamed[worker] = name;
            }
            count_bad(r, m, es, job->bad[worker]);
            memcpy(dst, r->regs[r->p->nsteps - 1], (size_t)m * es);
        }
    }
}

/* A binary step with one operand a scalar input reads that one value
 * through the kernels' scalar layouts instead of its spread block: a load
 * per vector fewer (GELU's four constants), the multiply broadcasting the
 * value from a register. Map and pair steps keep reading the block. */
static int binary_layout(const fused_run *r, const gb_fused_step *st) {
    if (st->kind != GB_FUSED_BINARY) return GB_EW_RUN_VV;
    const bool sa = st->a < 0 && r->in[-1 - st->a].mode == SPREAD;
    const bool sb = st->b < 0 && r->in[-1 - st->b].mode == SPREAD;
    return sb && !sa ? GB_EW_RUN_VS : sa && !sb ? GB_EW_RUN_SV : GB_EW_RUN_VV;
}

/* Sets up worker w's run: kernels, input views, spread scalars. */
static void init_run(fused_run *r, const gb_op_call *c, const gb_tensor *y, int64_t len,
                     size_t es, const int *slot, int nslots, char *mem) {
    r->p = c->payload;
    r->len = len;
    carve(r, c->nin, es, slot, nslots, mem);
    lookup(r->p, r->fns);
    for (int i = 0; i < c->nin; i++) {
        view_of(c->in[i], y, &r->in[i]);
        if (r->in[i].mode == SPREAD) spread(r->in[i].data, es, len, r->spread[i]);
    }
    for (int s = 0; s < r->p->nsteps; s++) r->layout[s] = binary_layout(r, &r->p->steps[s]);
}

/* Outputs up to GRAIN elements run on the calling thread; larger ones
 * share GRAIN-element chunks of blocks across the pool. */
enum { MAX_WORKERS = 16, GRAIN = 16384 };

static bool kernel_fused(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *y = out[0];
    const gb_fused_program *p = c->payload;
    const size_t es = gb_dtype_size(y->dtype);
    const bool check =
        atomic_load_explicit(&gb__hook_flags, memory_order_relaxed) & GB_HOOK_NUMERICS;
    int slot[GB_FUSED_MAX_STEPS];
    const int nslots = assign_slots(p, check, slot);
    int64_t len = y->size < BLOCK ? (y->size + 15) / 16 * 16 : BLOCK;
    int64_t nblocks = len ? (y->size + len - 1) / len : 0;
    /* Big outputs split across the pool; small ones run here, on the stack. */
    const int64_t grain_blocks = len ? (GRAIN + len - 1) / len : 1;
    int workers = nblocks > grain_blocks ? gb__parallel_workers() : 1;
    workers = workers > MAX_WORKERS ? MAX_WORKERS : workers;
    size_t per = (scratch_bytes(nslots, c->nin, len, es) + 63) / 64 * 64;
    alignas(64) char stack[16384];
    char *mem = workers * per <= sizeof stack ? stack : aligned_alloc(64, workers * per);
    if (!mem) {
        gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory", c->def->name);
        return false;
    }
    fused_run runs[MAX_WORKERS];
    int64_t blamed_block[MAX_WORKERS];
    const char *blamed[MAX_WORKERS] = {0};
    int64_t bad[MAX_WORKERS][GB_FUSED_MAX_STEPS][3];
    if (check) memset(bad, 0, (size_t)workers * sizeof *bad);
    for (int w = 0; w < workers; w++) {
        init_run(&runs[w], c, y, len, es, slot, nslots, mem + (size_t)w * per);
        blamed_block[w] = INT64_MAX;
    }
    fused_job job = {c, y, es, check, runs, blamed_block, blamed, bad};
    if (workers > 1)
        gb__parallel_for(nblocks, grain_blocks, run_blocks, &job);
    else
        run_blocks(&job, 0, nblocks, 0);
    int first = 0;
    for (int w = 1; w < workers; w++)
        if (blamed_block[w] < blamed_block[first]) first = w;
    if (blamed[first]) {
        gb__tl_fused_node = gb__tl_node_name;
        gb__tl_node_name = blamed[first];
        int s = 0;
        while (p->steps[s].name != blamed[first]) s++;
        for (int k = 0; k < 3; k++) {
            gb__tl_fused_bad[k] = 0;
            for (int w = 0; w < workers; w++) gb__tl_fused_bad[k] += bad[w][s][k];
        }
    }
    if (mem != stack) free(mem);
    return true;
}

const gb_op_def gb_opdef_fused_elementwise = {
    .name = "FusedElementwise",
    .arity = -1,
    .flags = GB_OPF_ELEMENTWISE | GB_OPF_INPLACE,
    .inputs_doc = "the program's inputs; the node holds its program (gb_fused_program): the "
                  "ops it replaced, their attributes and names",
    .infer = infer_fused,
    .kernel = kernel_fused,
};
