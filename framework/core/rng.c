/* core/rng.c — counter-based random numbers.
 *
 * Random ops and initializers draw element i of stream `seed` by hashing
 * (seed, i), so a tensor's values do not depend on how many threads fill
 * it or in which order.
 */
#include "core/internal.h"

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
