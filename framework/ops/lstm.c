/* ops/lstm.c — BlockLSTM and BlockLSTMGrad: an LSTM's whole time loop as
 * one op and its backward pass through time as another, as TensorFlow's
 * ops of those names (Keras' default cell: sigmoid gates, tanh).
 *
 *   BlockLSTM(xw [B, T, 4u], R [u, 4u] [, h0 [B, u], c0 [B, u]])
 *     -> hs [B, T, u], cs [B, T, u], gates [B, T, 4u]
 *   BlockLSTMGrad(R, cs, gates, dhs, dcs [, c0]) -> dxw, dh0, dc0
 *
 * xw is the input projection of every step (x W + b, one product over the
 * whole sequence, made by the layer); R the recurrent kernel, its columns
 * the gates i, f, g, o. gates is what the backward pass reads: every
 * step's activations (sigmoid of i, f, o; tanh of g). Without h0 and c0
 * the state starts at zero and no gradient leaves for it.
 *
 * Why one op: as ops, one step is a product, an add, the activations,
 * four slices and the cell update — about a dozen dispatches and as many
 * passes over [B, 4u] per step forward and twice that backward, which at
 * batch 32 cost more than the step's product. Here each step is one
 * product straight into the gates tensor (h_prev read in place from hs,
 * no stack or slice) and one pass of the cell's arithmetic
 * (ops/isa/lstm_cell.c). The backward pass runs per step one product,
 * dh_prev = dz R^T, and one pass of the gates' derivatives; R's gradient
 * over all steps is one product after the loop (in the gradient function,
 * so it is a MatMul with MatMul's threading), as is the projection's.
 *
 * Threads: each step splits the units among the workers: a part computes
 * its units' columns of all four gates (four products on column blocks of
 * R) and then their cell update, which needs nothing from other units;
 * backward, a part computes its units' dh_prev and then their gates'
 * derivatives. The join at the end of each step is the only
 * synchronisation, because the next step's product reads every unit.
 *
 * BlockLSTMGrad has no gradient of its own (second derivatives of an LSTM
 * are not supported), as TensorFlow's.
 */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "ops/internal.h"
#include "ops/lstm_kernels.h"

/* Units go to parts in blocks of 16 (a float32 AVX-512 vector), and a
 * step's products below this many multiply-adds stay on one thread. */
enum { UNIT_BLOCK = 16, PARALLEL_MIN_MACS = 1 << 17 };

/* ---- shapes -------------------------------------------------------------------- */

static const char *fmt(const gb_tensor *t, char *buf, size_t n) {
    return gb__shape_fmt(t->rank, t->shape, buf, n);
}

/* t is [d0, d1] or [d0, d1, d2] (rank by the count), dims -1 matching anything. */
static bool has_shape(const gb_tensor *t, int rank, const int64_t *dims) {
    if (t->rank != rank) return false;
    for (int d = 0; d < rank; d++)
        if (!gb__dims_match(t->shape[d], dims[d])) return false;
    return true;
}

/* Every input a float tensor of one dtype. */
static bool same_float(const gb_op_call *c) {
    gb_dtype dt = c->in[0]->dtype;
    for (int i = 0; i < c->nin; i++)
        if (c->in[i]->dtype != dt || !gb_dtype_is_float(dt)) {
            gb__op_error(c, GB_ERR_DTYPE, "%s: inputs must all be float32 or all float64, got %s as input %d",
                         c->def->name, gb_dtype_name(c->in[i]->dtype), i);
            return false;
        }
    return true;
}

/* The sizes every input must agree with: B, T, u from xw and R. */
typedef struct lstm_dims {
    int64_t batch, steps, units;
} lstm_dims;

static bool dims_of(const gb_op_call *c, const gb_tensor *seq4, const gb_tensor *rec, const char *seq_name,
                    lstm_dims *d) {
    char a[96], b[96];
    bool ok = seq4->rank == 3 && rec->rank == 2 && rec->shape[0] > 0 &&
              gb__dims_match(rec->shape[1], 4 * rec->shape[0]) && gb__dims_match(seq4->shape[2], 4 * rec->shape[0]) &&
              seq4->shape[1] != 0;
    if (!ok) {
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: %s must be [batch, time, 4 * units] and R [units, 4 * units] with time and units "
                     "positive, got %s and %s",
                     c->def->name, seq_name, fmt(seq4, a, sizeof a), fmt(rec, b, sizeof b));
        return false;
    }
    *d = (lstm_dims){seq4->shape[0], seq4->shape[1], rec->shape[0]};
    return true;
}

/* Input `i` (named `name`) must be `rank` dims of d: [B, u] or [B, T, u] or [B, T, 4u]. */
static bool check_input(const gb_op_call *c, int i, const char *name, int rank, int64_t last, const lstm_dims *d) {
    int64_t want[3] = {d->batch, rank == 3 ? d->steps : last, last};
    if (has_shape(c->in[i], rank, want)) return true;
    char got[96], exp[96];
    int64_t show[3] = {d->batch, d->steps, last};
    if (rank == 2) show[1] = last;
    gb__op_error(c, GB_ERR_SHAPE, "%s: %s must be %s, got %s", c->def->name, name, gb__shape_fmt(rank, show, exp, sizeof exp),
                 fmt(c->in[i], got, sizeof got));
    return false;
}

static void describe(gb_out_desc *o, gb_dtype dt, int rank, int64_t d0, int64_t d1, int64_t d2) {
    *o = (gb_out_desc){.dtype = dt, .rank = rank, .shape = {d0, d1, d2}};
}

static int infer_block_lstm(const gb_op_call *c, gb_out_desc *out) {
    if (c->nin != 2 && c->nin != 4) {
        gb__op_error(c, GB_ERR_VALUE, "BlockLSTM: takes xw and R, then h0 and c0 or neither, got %d inputs", c->nin);
        return -1;
    }
    lstm_dims d;
    if (!same_float(c) || !dims_of(c, c->in[0], c->in[1], "xw", &d)) return -1;
    if (c->nin == 4 && !(check_input(c, 2, "h0", 2, d.units, &d) && check_input(c, 3, "c0", 2, d.units, &d)))
        return -1;
    gb_dtype dt = c->in[0]->dtype;
    describe(&out[0], dt, 3, d.batch, d.steps, d.units);
    describe(&out[1], dt, 3, d.batch, d.steps, d.units);
    describe(&out[2], dt, 3, d.batch, d.steps, 4 * d.units);
    return 3;
}

enum { G_R, G_CS, G_GATES, G_DHS, G_DCS, G_C0 };

static int infer_block_lstm_grad(const gb_op_call *c, gb_out_desc *out) {
    if (c->nin != 5 && c->nin != 6) {
        gb__op_error(c, GB_ERR_VALUE, "BlockLSTMGrad: takes R, cs, gates, dhs, dcs and c0 or not, got %d inputs",
                     c->nin);
        return -1;
    }
    lstm_dims d;
    if (!same_float(c) || !dims_of(c, c->in[G_GATES], c->in[G_R], "gates", &d)) return -1;
    if (!check_input(c, G_CS, "cs", 3, d.units, &d) || !check_input(c, G_DHS, "dhs", 3, d.units, &d) ||
        !check_input(c, G_DCS, "dcs", 3, d.units, &d) || (c->nin == 6 && !check_input(c, G_C0, "c0", 2, d.units, &d)))
        return -1;
    gb_dtype dt = c->in[0]->dtype;
    describe(&out[0], dt, 3, d.batch, d.steps, 4 * d.units);
    describe(&out[1], dt, 2, d.batch, d.units, 0);
    describe(&out[2], dt, 2, d.batch, d.units, 0);
    return 3;
}

/* ---- the per-step work ----------------------------------------------------------- */

/* C[m, n] = A[m, k] op(B) in row-major storage with leading dimensions. */
static void gemm(bool f64, bool tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t lda, const void *b,
                 int64_t ldb, void *c, int64_t ldc) {
    CBLAS_TRANSPOSE t = tb ? CblasTrans : CblasNoTrans;
    if (f64)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, t, (int)m, (int)n, (int)k, 1, a, (int)lda, b, (int)ldb, 0, c,
                    (int)ldc);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, t, (int)m, (int)n, (int)k, 1, a, (int)lda, b, (int)ldb, 0, c,
                    (int)ldc);
}

/* One step's shared state: the job the cell kernel gets, plus the product's operands. */
typedef struct step_ctx {
    gb_lstm_cell_job job;
    gb_lstm_cell_fn cell;
    bool f64;
    size_t es;          /* element size */
    const char *h_prev; /* forward: the state the product reads (NULL: zero); backward: unused */
    int64_t h_prev_ld;
    const char *rec;    /* R [u, 4u] */
    const char *dz_next; /* backward: the gates' gradient of the step after (NULL at the last) */
    char *dh;           /* backward: the running dh [B, u] the product writes */
} step_ctx;

static void units_of(const step_ctx *s, int64_t q0, int64_t q1, int64_t *j0, int64_t *j1) {
    int64_t u = s->job.units;
    *j0 = q0 * UNIT_BLOCK;
    *j1 = q1 * UNIT_BLOCK < u ? q1 * UNIT_BLOCK : u;
}

/* Forward, units [j0, j1): their gates' columns of h_prev R, then their cell. */
static void forward_part(void *ctx, int64_t q0, int64_t q1, int worker) {
    (void)worker;
    const step_ctx *s = ctx;
    const gb_lstm_cell_job *j = &s->job;
    int64_t j0, j1, u = j->units;
    units_of(s, q0, q1, &j0, &j1);
    for (int g = 0; g < 4; g++) {
        char *z = (char *)j->gates + (size_t)(g * u + j0) * s->es;
        if (!s->h_prev) {
            for (int64_t b = 0; b < j->batch; b++) memset(z + (size_t)(b * j->row_4u) * s->es, 0, (size_t)(j1 - j0) * s->es);
        } else if (j0 == 0 && j1 == u) { /* the whole row: one product for all gates */
            gemm(s->f64, false, j->batch, 4 * u, u, s->h_prev, s->h_prev_ld, s->rec, 4 * u, z, j->row_4u);
            break;
        } else {
            gemm(s->f64, false, j->batch, j1 - j0, u, s->h_prev, s->h_prev_ld, s->rec + (size_t)(g * u + j0) * s->es,
                 4 * u, z, j->row_4u);
        }
    }
    s->cell(j, j0, j1);
}

/* Backward, units [j0, j1): their dh from the step after (dz_next R^T,
 * R's rows j0..j1), then their gates' derivatives at this step; with no
 * cell (after step 0), only the product: dh0. */
static void backward_part(void *ctx, int64_t q0, int64_t q1, int worker) {
    (void)worker;
    const step_ctx *s = ctx;
    const gb_lstm_cell_job *j = &s->job;
    int64_t j0, j1, u = j->units;
    units_of(s, q0, q1, &j0, &j1);
    char *dh = s->dh + (size_t)j0 * s->es;
    if (s->dz_next)
        gemm(s->f64, true, j->batch, j1 - j0, 4 * u, s->dz_next, j->row_4u, s->rec + (size_t)(j0 * 4 * u) * s->es, 4 * u,
             dh, u);
    else
        for (int64_t b = 0; b < j->batch; b++) memset(dh + (size_t)(b * u) * s->es, 0, (size_t)(j1 - j0) * s->es);
    if (s->cell) s->cell(j, j0, j1);
}

/* Runs fn over the unit blocks of one step: one part per worker when the
 * step's product is big enough to share, else inline. */
static void run_step(step_ctx *s, gb__range_fn fn) {
    int64_t blocks = (s->job.units + UNIT_BLOCK - 1) / UNIT_BLOCK;
    int64_t macs = s->job.batch * 4 * s->job.units * s->job.units;
    int workers = gb__parallel_workers();
    int64_t grain = macs < PARALLEL_MIN_MACS || workers < 2 ? blocks : blocks / workers;
    gb__parallel_for(blocks, grain > 0 ? grain : 1, fn, s);
}

static gb_lstm_cell_fn cell_fn(bool backward, bool f64) {
    const gb_lstm_cell_table *t = GB_ISA_TABLE(gb__lstm_cell_kernels);
    return backward ? t->backward[f64] : t->forward[f64];
}

/* A zero [B, u] state for a call without h0 and c0; NULL after an error. */
static void *zero_state(const gb_op_call *c, int64_t batch, int64_t units, size_t es) {
    void *z = calloc((size_t)(batch * units) > 0 ? (size_t)(batch * units) : 1, es);
    if (!z) gb__op_error(c, GB_ERR_MEMORY, "%s: out of memory", c->def->name);
    return z;
}

static bool kernel_block_lstm(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *xw = c->in[0], *rec = c->in[1];
    int64_t batch = xw->shape[0], steps = xw->shape[1], u = rec->shape[0];
    bool f64 = xw->dtype == GB_F64;
    size_t es = f64 ? sizeof(double) : sizeof(float);
    void *zeros = NULL;
    if (c->nin == 2 && !(zeros = zero_state(c, batch, u, es))) return false;
    const char *h0 = c->nin == 4 ? c->in[2]->data : NULL, *c0 = c->nin == 4 ? c->in[3]->data : zeros;
    char *hs = out[0]->data, *cs = out[1]->data, *gates = out[2]->data;
    step_ctx s = {.cell = cell_fn(false, f64), .f64 = f64, .es = es, .rec = rec->data};
    for (int64_t k = 0; k < steps; k++) {
        size_t at_u = (size_t)(k * u) * es, at_4u = (size_t)(k * 4 * u) * es;
        s.job = (gb_lstm_cell_job){.batch = batch, .units = u, .row_4u = steps * 4 * u, .row_u = steps * u,
                                   .c_prev = k ? (const void *)(cs + at_u - (size_t)u * es) : c0,
                                   .c_prev_ld = k ? steps * u : u,
                                   .gates = gates + at_4u, .xw = (const char *)xw->data + at_4u,
                                   .c = cs + at_u, .h = hs + at_u};
        s.h_prev = k ? hs + at_u - (size_t)u * es : h0;
        s.h_prev_ld = k ? steps * u : u;
        run_step(&s, forward_part);
    }
    free(zeros);
    return true;
}

static bool kernel_block_lstm_grad(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *rec = c->in[G_R], *gates = c->in[G_GATES];
    int64_t batch = gates->shape[0], steps = gates->shape[1], u = rec->shape[0];
    bool f64 = gates->dtype == GB_F64;
    size_t es = f64 ? sizeof(double) : sizeof(float);
    void *zeros = NULL;
    if (c->nin == 5 && !(zeros = zero_state(c, batch, u, es))) return false;
    const char *c0 = c->nin == 6 ? c->in[G_C0]->data : zeros, *cs = c->in[G_CS]->data;
    char *dxw = out[0]->data, *dh = out[1]->data, *dc = out[2]->data;
    memset(dc, 0, (size_t)(batch * u) * es); /* nothing flows back into the last step's c */
    step_ctx s = {.cell = cell_fn(true, f64), .f64 = f64, .es = es, .rec = rec->data, .dh = dh};
    for (int64_t k = steps - 1; k >= -1; k--) {
        s.dz_next = k + 1 < steps ? dxw + (size_t)((k + 1) * 4 * u) * es : NULL;
        if (k < 0) { /* the loop's last product: dh0 = dz_0 R^T */
            s.cell = NULL;
            run_step(&s, backward_part);
            break;
        }
        size_t at_u = (size_t)(k * u) * es, at_4u = (size_t)(k * 4 * u) * es;
        s.job = (gb_lstm_cell_job){.batch = batch, .units = u, .row_4u = steps * 4 * u, .row_u = steps * u,
                                   .c_prev = k ? (const void *)(cs + at_u - (size_t)u * es) : c0,
                                   .c_prev_ld = k ? steps * u : u,
                                   .gates = (char *)gates->data + at_4u, .c = (char *)cs + at_u,
                                   .dh_seq = (const char *)c->in[G_DHS]->data + at_u,
                                   .dc_seq = (const char *)c->in[G_DCS]->data + at_u,
                                   .dh_next = dh, .dc = dc, .dxw = dxw + at_4u};
        run_step(&s, backward_part);
    }
    free(zeros);
    return true;
}

/* ---- gradient -------------------------------------------------------------------- */

/* R's gradient over every step at once: the state each step read (h0, or
 * zeros, then h_0 .. h_{T-2}) against its gates' gradient. */
static gb_tensor *rec_grad(const gb_grad_ctx *ctx, gb_tensor *dxw) {
    gb_tensor *hs = ctx->outputs[0];
    int64_t steps = gb_dim(hs, 1), u = gb_dim(hs, 2);
    gb_tensor *first = ctx->nin == 4 ? gb_expand_dims(ctx->inputs[2], 1)
                                     : gb_zeros_like(gb_slice(hs, (int64_t[]){0, 0, 0}, 3, (int64_t[]){-1, 1, u}, 3));
    gb_tensor *prev = first;
    if (steps > 1) {
        gb_tensor *read = gb_slice(hs, (int64_t[]){0, 0, 0}, 3, (int64_t[]){-1, steps - 1, u}, 3);
        prev = gb_concat((gb_tensor *[]){first, read}, 2, 1);
    }
    return gb_matmul_t(gb_reshape(prev, 2, (int64_t[]){-1, u}), gb_reshape(dxw, 2, (int64_t[]){-1, 4 * u}), true,
                       false);
}

/* The gates output is the backward pass's own: no gradient flows through it. */
static bool grad_block_lstm(const gb_grad_ctx *ctx, gb_tensor **dx) {
    gb_tensor *in[6] = {ctx->inputs[1], ctx->outputs[1], ctx->outputs[2], ctx->dys[0], ctx->dys[1],
                        ctx->nin == 4 ? ctx->inputs[3] : NULL};
    gb_tensor *g[3];
    if (gb__dispatch(GB_OP_BLOCK_LSTM_GRAD, in, ctx->nin == 4 ? 6 : 5, NULL, g) != 3) return false;
    dx[0] = g[0];
    if (ctx->needs_grad[1]) dx[1] = rec_grad(ctx, g[0]);
    if (ctx->nin == 4) dx[2] = g[1], dx[3] = g[2];
    return gb_ok();
}

const gb_op_def gb_opdef_block_lstm = {
    .name = "BlockLSTM",
    .arity = -1,
    .inputs_doc = "xw [B, T, 4u] (the input projection, gates i, f, g, o), R [u, 4u], then h0 and c0 "
                  "[B, u] or neither (zero state)",
    .infer = infer_block_lstm,
    .kernel = kernel_block_lstm,
    .grad = grad_block_lstm,
};

const gb_op_def gb_opdef_block_lstm_grad = {
    .name = "BlockLSTMGrad",
    .arity = -1,
    .inputs_doc = "R [u, 4u], BlockLSTM's cs and gates [B, T, u] and [B, T, 4u], the gradients of hs and "
                  "cs [B, T, u], then c0 [B, u] when the forward call had one",
    .infer = infer_block_lstm_grad,
    .kernel = kernel_block_lstm_grad,
};

/* ---- for the layers ------------------------------------------------------------------- */

bool gb__block_lstm(gb_tensor *xw, gb_tensor *rec, gb_tensor *h0, gb_tensor *c0, gb_tensor **hs, gb_tensor **cs) {
    gb_tensor *in[4] = {xw, rec, h0, c0}, *out[3];
    if (gb__dispatch(GB_OP_BLOCK_LSTM, in, h0 ? 4 : 2, NULL, out) != 3) return false;
    *hs = out[0];
    *cs = out[1];
    return true;
}
