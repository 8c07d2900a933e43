/* ops/masked_softmax.c — MaskedSoftmax: softmax over the unmasked entries
 * of the last axis (attention masks), exact at both ends, as one op.
 *
 * A masked entry contributes exactly nothing and comes out exactly 0; the
 * unmasked ones come out as the softmax over them alone. A row with no
 * unmasked entry is 0, where PyTorch gives NaN and Keras a uniform row
 * that attends to padding. One pass per row (ops/softmax_rows.h) instead
 * of a select, a softmax and a product over the whole score tensor: in
 * the char LM the scores are the largest tensors of the step.
 *
 * Inputs: logits [.., Tv] float, mask bool broadcasting to them (a causal
 * [Tq, Tv], a padding mask [B, 1, 1, Tv], ...). The gradient is one
 * SoftmaxGrad, which gives a masked entry 0 (its y is 0); the mask takes
 * none.
 */
#include <stdio.h>

#include "core/parallel.h"
#include "ops/internal.h"
#include "ops/softmax_rows.h"

static int infer_masked_softmax(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0], *mask = c->in[1];
    char a[96], b[96];
    if (!gb_dtype_is_float(x->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: logits must be float32 or float64, got %s", c->def->name,
                     gb_dtype_name(x->dtype));
        return -1;
    }
    if (mask->dtype != GB_BOOL) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: the mask must be bool, got %s", c->def->name,
                     gb_dtype_name(mask->dtype));
        return -1;
    }
    bool fits = x->rank >= 1 && mask->rank <= x->rank;
    for (int d = 1; fits && d <= mask->rank; d++) {
        int64_t md = mask->shape[mask->rank - d], xd = x->shape[x->rank - d];
        fits = md == 1 || gb__dims_match(md, xd);
    }
    if (!fits) {
        gb__op_error(c, GB_ERR_SHAPE, "%s: the mask %s does not broadcast to the logits %s", c->def->name,
                     gb__shape_fmt(mask->rank, mask->shape, a, sizeof a),
                     gb__shape_fmt(x->rank, x->shape, b, sizeof b));
        return -1;
    }
    out[0].dtype = x->dtype;
    out[0].rank = x->rank;
    memcpy(out[0].shape, x->shape, (size_t)x->rank * sizeof(int64_t));
    return 1;
}

/* Rows of the logits ([rows, n]) and where each reads its mask: the mask's
 * strides over the logits' leading dims (0 where it broadcasts), and
 * whether its last axis is the logits' (else one flag serves the row). */
typedef struct masked_job {
    const void *x;
    const bool *mask;
    void *y;
    int64_t n;
    int lead;                            /* the logits' rank - 1 */
    int64_t dims[GB_MAX_RANK], mstride[GB_MAX_RANK];
    bool per_entry, f32;
} masked_job;

static const bool *mask_row(const masked_job *j, int64_t r) {
    int64_t off = 0;
    for (int d = j->lead - 1; d >= 0; d--) {
        off += r % j->dims[d] * j->mstride[d];
        r /= j->dims[d];
    }
    return j->mask + off * (j->per_entry ? j->n : 1);
}

static void masked_part(void *ctx, int64_t r0, int64_t r1, int worker) {
    (void)worker;
    const masked_job *j = ctx;
    for (int64_t r = r0; r < r1; r++) {
        const bool *allow = mask_row(j, r);
        if (!j->per_entry) { /* a broadcast last axis: the row is all allowed or all not */
            size_t es = j->f32 ? sizeof(float) : sizeof(double);
            if (!*allow) {
                memset((char *)j->y + (size_t)(r * j->n) * es, 0, (size_t)j->n * es);
                continue;
            }
            allow = NULL;
        }
        if (j->f32)
            gb__softmax_row_f32((const float *)j->x + r * j->n, allow, (float *)j->y + r * j->n, j->n);
        else
            gb__softmax_row_f64((const double *)j->x + r * j->n, allow, (double *)j->y + r * j->n, j->n);
    }
}

enum { PARALLEL_MIN_VALUES = 1 << 15 };

static bool kernel_masked_softmax(const gb_op_call *c, gb_tensor **out) {
    const gb_tensor *x = c->in[0], *mask = c->in[1];
    int64_t n = x->shape[x->rank - 1], rows = n ? x->size / n : 0;
    masked_job j = {.x = x->data, .mask = mask->data, .y = out[0]->data, .n = n, .lead = x->rank - 1,
                    .per_entry = mask->rank >= 1 && mask->shape[mask->rank - 1] == n && n > 1,
                    .f32 = x->dtype == GB_F32};
    /* the mask's strides in rows of its own (its last axis counted apart) */
    int64_t stride = 1;
    for (int d = x->rank - 2; d >= 0; d--) {
        int md = mask->rank - (x->rank - d);
        int64_t dim = md >= 0 ? mask->shape[md] : 1;
        j.dims[d] = x->shape[d];
        j.mstride[d] = dim == 1 ? 0 : stride;
        stride *= dim;
    }
    if (rows > 0) gb__parallel_for(rows, PARALLEL_MIN_VALUES / 2 / n + 1, masked_part, &j);
    return true;
}

static bool grad_masked_softmax(const gb_grad_ctx *ctx, gb_tensor **dx) {
    dx[0] = gb__softmax_grad(ctx->outputs[0], ctx->dys[0]);
    dx[1] = NULL;
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_masked_softmax = {
    .name = "MaskedSoftmax",
    .arity = 2,
    .inputs_doc = "logits [.., Tv], mask bool broadcasting to them",
    .infer = infer_masked_softmax,
    .kernel = kernel_masked_softmax,
    .grad = grad_masked_softmax,
};

gb_tensor *gb_masked_softmax(gb_tensor *logits, gb_tensor *mask) {
    gb_tensor *in[2] = {logits, mask};
    return gb__op1(GB_OP_MASKED_SOFTMAX, in, 2, NULL);
}
