/* autodiff/jacobian.c — jacobian and batch_jacobian, as tf.GradientTape's.
 *
 * One backward pass per element (or per element of a batch row) of the
 * target, seeded with a unit output gradient; the rows are stacked into
 * the Jacobian's shape.
 */
#include <stdio.h>
#include <stdlib.h>

#include "autodiff/internal.h"

/* ---- Jacobians ---------------------------------------------------------------------- */

/* One backward pass per unit output gradient: rows[i] = d(dys[i] . y)/dx,
 * NULL where x is unconnected. */
static bool gradient_rows(gb_tape *t, gb_tensor *y, gb_tensor *x, gb_tensor **dys, int64_t n,
                          gb_tensor **rows) {
    gb_source s = GB_SRC(x);
    for (int64_t i = 0; i < n; i++) {
        grad_request q = {&y, 1, &dys[i], &s, 1, GB_UNCONNECTED_NONE, NULL};
        if (!gb__tape_run_gradient(t, &q, &rows[i])) return false;
    }
    return true;
}

/* A tensor of y's dtype and shape with ones at flat positions
 * first, first + stride, ... (count of them). */
static gb_tensor *unit_tensor(const gb_tensor *y, int64_t first, int64_t stride, int64_t count) {
    gb_tensor *e = gb_zeros(y->dtype, y->rank, y->shape);
    if (!e) return NULL;
    for (int64_t b = 0; b < count; b++) gb__store(e->dtype, e->data, first + b * stride, 1.0);
    return e;
}

/* Stacks the rows along stack_axis and reshapes to the Jacobian's shape;
 * NULL (unconnected) when every row is and the caller asked for NONE. */
static gb_tensor *assemble(gb_tensor **rows, int64_t n, const gb_tensor *x, int stack_axis,
                           int rank, const int64_t *shape, gb_unconnected unconnected) {
    bool any = false;
    for (int64_t i = 0; i < n; i++) any |= rows[i] != NULL;
    if (!any && unconnected == GB_UNCONNECTED_NONE) return NULL;
    for (int64_t i = 0; i < n; i++)
        if (!rows[i]) rows[i] = gb_zeros(x->dtype, x->rank, x->shape);
    return gb_reshape(gb_stack(rows, (int)n, stack_axis), rank, shape);
}

/* Shared driver: n backward passes with the unit gradients unit(i). */
typedef struct jac_plan {
    int64_t n;           /* number of backward passes */
    int64_t first_mul;   /* unit i has ones at i * first_mul + b * stride, b < count */
    int64_t stride, count;
    int stack_axis;
    int rank;
    int64_t shape[GB_MAX_RANK];
} jac_plan;

static gb_tensor *run_jacobian(gb_tape *t, gb_tensor *y, gb_tensor *x, const jac_plan *p,
                               gb_unconnected unconnected) {
    if (p->n == 0) return gb_zeros(x->dtype, p->rank, p->shape);
    gb_tensor **buf = malloc((size_t)p->n * 2 * sizeof *buf);
    if (!buf) {
        gb__error(GB_ERR_MEMORY, NULL, "jacobian: out of memory");
        return NULL;
    }
    gb_tensor **dys = buf, **rows = buf + p->n;
    bool ok = true;
    for (int64_t i = 0; ok && i < p->n; i++)
        ok = (dys[i] = unit_tensor(y, i * p->first_mul, p->stride, p->count)) != NULL;
    gb_tensor *result = NULL;
    if (ok && gradient_rows(t, y, x, dys, p->n, rows))
        result = assemble(rows, p->n, x, p->stack_axis, p->rank, p->shape, unconnected);
    free(buf);
    if (!t->persistent) gb__tape_drop_records(t);
    return result;
}

static bool jacobian_args(gb_tape *t, gb_tensor *y, gb_tensor *x, const char *fn) {
    if (!y || !x) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: target or source is NULL", fn);
        return false;
    }
    return gb__tape_claim_use(t);
}

static bool result_shape(jac_plan *p, const int64_t *a, int ra, const int64_t *b, int rb,
                         const char *fn) {
    p->rank = ra + rb;
    if (p->rank > GB_MAX_RANK) {
        gb__error(GB_ERR_SHAPE, NULL, "%s: result rank %d exceeds %d", fn, p->rank, GB_MAX_RANK);
        return false;
    }
    memcpy(p->shape, a, (size_t)ra * sizeof *a);
    memcpy(p->shape + ra, b, (size_t)rb * sizeof *b);
    return true;
}

gb_tensor *gb_tape_jacobian(gb_tape *t, gb_tensor *y, gb_tensor *x, gb_unconnected unconnected) {
    if (!jacobian_args(t, y, x, "jacobian")) return NULL;
    jac_plan p = {.n = y->size, .first_mul = 1, .stride = 1, .count = 1, .stack_axis = 0};
    if (!result_shape(&p, y->shape, y->rank, x->shape, x->rank, "jacobian")) return NULL;
    return run_jacobian(t, y, x, &p, unconnected);
}

gb_tensor *gb_tape_batch_jacobian(gb_tape *t, gb_tensor *y, gb_tensor *x,
                                  gb_unconnected unconnected) {
    if (!jacobian_args(t, y, x, "batch_jacobian")) return NULL;
    if (y->rank < 1 || x->rank < 1 || y->shape[0] != x->shape[0]) {
        char a[96], b[96];
        gb__error(GB_ERR_SHAPE, NULL,
                  "batch_jacobian: need first dimension of target shape %s and source shape "
                  "%s to match",
                  gb_shape_str(y, a, sizeof a), gb_shape_str(x, b, sizeof b));
        return NULL;
    }
    int64_t batch = y->shape[0];
    int64_t inner = batch ? y->size / batch : 0;
    jac_plan p = {.n = inner, .first_mul = 1, .stride = inner, .count = batch, .stack_axis = 1};
    int64_t head[GB_MAX_RANK];
    memcpy(head, y->shape, (size_t)y->rank * sizeof *head);
    if (!result_shape(&p, head, y->rank, x->shape + 1, x->rank - 1, "batch_jacobian"))
        return NULL;
    return run_jacobian(t, y, x, &p, unconnected);
}

