/* helpers.c — small pieces shared by op families: axes, broadcasting,
 * undoing broadcasting in gradients, and counter-based random numbers. */
#include <stdio.h>

#include "internal.h"

int gb__norm_axis(const gb_op_call *c, int axis, int rank) {
    int a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
        gb__op_error(c, GB_ERR_VALUE, "%s: axis %d is out of range for a rank-%d tensor",
                     c->def->name, axis, rank);
        return -1;
    }
    return a;
}

bool gb__broadcast_shapes(const gb_op_call *c, int ra, const int64_t *sa, int rb,
                          const int64_t *sb, int *rout, int64_t *sout) {
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        int64_t da = i < r - ra ? 1 : sa[i - (r - ra)];
        int64_t db = i < r - rb ? 1 : sb[i - (r - rb)];
        if (da != db && da != 1 && db != 1) {
            char a[128], b[128];
            gb__op_error(c, GB_ERR_SHAPE, "%s: incompatible shapes %s and %s (dimension %d: %lld vs %lld)",
                         c->def->name, gb__shape_fmt(ra, sa, a, sizeof a),
                         gb__shape_fmt(rb, sb, b, sizeof b), i, (long long)da, (long long)db);
            return false;
        }
        sout[i] = da == 1 ? db : da;
    }
    *rout = r;
    return true;
}

gb_tensor *gb__sum_to_shape(gb_tensor *g, int rank, const int64_t *shape) {
    if (!g) return NULL;
    if (g->rank == rank && memcmp(g->shape, shape, (size_t)rank * sizeof *shape) == 0) return g;
    int axes[GB_MAX_RANK], n = 0, lead = g->rank - rank;
    for (int i = 0; i < g->rank; i++)
        if (i < lead || (shape[i - lead] == 1 && g->shape[i] != 1)) axes[n++] = i;
    gb_tensor *s = n ? gb_reduce_sum(g, axes, n, false) : g;
    return gb_reshape(s, rank, shape);
}

gb_tensor *gb__sum_to(gb_tensor *g, const gb_tensor *like) {
    return like ? gb__sum_to_shape(g, like->rank, like->shape) : NULL;
}

uint64_t gb__splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double gb__uniform01(uint64_t seed, uint64_t i) {
    /* Hash (seed, i): element i is independent of how many came before. */
    uint64_t s = seed * 0xD1B54A32D192ED03ull + i;
    uint64_t z = gb__splitmix64(&s);
    return (double)(z >> 11) * 0x1.0p-53;
}
