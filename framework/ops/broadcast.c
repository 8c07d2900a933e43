/* ops/broadcast.c — what op families share about shapes: axes, unknown
 * (-1) dims, NumPy broadcasting, and undoing broadcasting in gradients. */
#include <stdio.h>

#include "ops/internal.h"

int gb__norm_axis(const gb_op_call *c, int64_t axis, int rank) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
        gb__op_error(c, GB_ERR_VALUE, "%s: axis %lld is out of range for a rank-%d tensor",
                     c->def->name, (long long)axis, rank);
        return -1;
    }
    return (int)a;
}

bool gb__shapes_match(int ra, const int64_t *a, int rb, const int64_t *b) {
    if (ra != rb) return false;
    for (int i = 0; i < ra; i++)
        if (!gb__dims_match(a[i], b[i])) return false;
    return true;
}

bool gb__broadcast_dim(int64_t a, int64_t b, int64_t *out) {
    if (a == b || b == 1) {
        *out = a;
    } else if (a == 1) {
        *out = b;
    } else if (a < 0 || b < 0) { /* the unknown one must turn out 1 or the other */
        *out = a < 0 ? b : a;
    } else {
        return false;
    }
    return true;
}

bool gb__broadcast_shapes(const gb_op_call *c, int ra, const int64_t *sa, int rb,
                          const int64_t *sb, int *rout, int64_t *sout) {
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : sa[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : sb[i - (r - rb)];
        if (!gb__broadcast_dim(da, db, &sout[i])) {
            char a[128], b[128];
            gb__op_error(c, GB_ERR_SHAPE, "%s: incompatible shapes %s and %s (dimension %d: %lld vs %lld)",
                         c->def->name, gb__shape_fmt(ra, sa, a, sizeof a),
                         gb__shape_fmt(rb, sb, b, sizeof b), i, (long long)da, (long long)db);
            return false;
        }
    }
    *rout = r;
    return true;
}

gb_tensor *gb__sum_to_shape(gb_tensor *g, int rank, const int64_t *shape) {
    if (!g) return NULL;
    if (g->rank == rank && memcmp(g->shape, shape, (size_t)rank * sizeof *shape) == 0) return g;
    int64_t axes[GB_MAX_RANK];
    int n = 0, lead = g->rank - rank;
    for (int i = 0; i < g->rank; i++)
        if (i < lead || (shape[i - lead] == 1 && g->shape[i] != 1)) axes[n++] = i;
    gb_tensor *s = n ? gb_reduce_sum(g, axes, n, false) : g;
    return gb_reshape(s, rank, shape);
}

gb_tensor *gb__sum_to(gb_tensor *g, const gb_tensor *like) {
    return like ? gb__sum_to_shape(g, like->rank, like->shape) : NULL;
}
