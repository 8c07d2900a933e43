/* core/nonfinite.c — is there a NaN or an Inf in this range of floats?
 *
 * The numerics check's fast pass (debug/) and the fused optimizer updates
 * that scan their new values while still in cache (optim/) share it. It
 * tests exponent fields only: a NaN or an Inf is an exponent of all ones,
 * so the largest exponent field tells, and that max reduction vectorizes,
 * so a clean range costs one read of its memory.
 */
#include "core/internal.h"

bool gb__nonfinite_in(gb_dtype dt, const void *data, int64_t begin, int64_t end) {
    if (dt == GB_F32) {
        const uint32_t *u = data, mask = 0x7f800000u;
        uint32_t m = 0;
        for (int64_t i = begin; i < end; i++) {
            uint32_t x = u[i] & mask;
            m = x > m ? x : m;
        }
        return m == mask;
    }
    const uint64_t *u = data, mask = 0x7ff0000000000000ull;
    uint64_t m = 0;
    for (int64_t i = begin; i < end; i++) {
        uint64_t x = u[i] & mask;
        m = x > m ? x : m;
    }
    return m == mask;
}
