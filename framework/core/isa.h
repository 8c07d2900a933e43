/* core/isa.h — the instruction-set level the hot kernels run at (internal).
 *
 * One build runs fast on every x86-64 machine: the library itself is
 * compiled for a baseline every x86-64 CPU of the last fifteen years has
 * (x86-64-v2), and the files whose loops decide the speed — the kernel
 * files, each layer's isa/ folder — are compiled once more per level
 * (v3: AVX2 + FMA, v4: AVX-512), their symbols suffixed _v2, _v3, _v4.
 * Which set runs is chosen once at start from the CPU's features, as
 * OpenBLAS, PyTorch and NumPy choose theirs; GB_ISA=v2|v3|v4 forces one
 * (a level the CPU lacks falls back to the best it has, with a warning).
 *
 * A kernel file defines its table with GB_ISA_SYM(name); the op that uses
 * it reads GB_ISA_TABLE(name) at each call, one load and a compare, so a
 * test can switch levels inside one process and compare the results.
 * Every level computes the same expressions in the same order (the build
 * never contracts a*b+c into an FMA and never reassociates), so the levels
 * agree to the last bit: only the vector width differs.
 *
 * Off x86-64 (or built with GB_MARCH set), the kernel files are compiled
 * once, as _v2, and that is the only level.
 */
#ifndef GB_CORE_ISA_H
#define GB_CORE_ISA_H

typedef enum gb_isa_level { GB_ISA_V2, GB_ISA_V3, GB_ISA_V4, GB_ISA_LEVELS } gb_isa_level;

/* The level the kernels run at now. */
extern gb_isa_level gb__isa_level;

/* The best level this CPU (and this build) supports. */
gb_isa_level gb__isa_supported(void);

/* Switches the kernels to level (clamped to what is supported); returns
 * the level now in force. For tests that compare levels in one process. */
gb_isa_level gb__isa_force(gb_isa_level level);

/* "x86-64-v3" etc. */
const char *gb__isa_level_name(gb_isa_level level);

/* A kernel file's symbol at the level it is being compiled for. */
#define GB_ISA_CAT_(a, b) a##b
#define GB_ISA_CAT(a, b) GB_ISA_CAT_(a, b)
#ifndef GB_ISA_SUFFIX
#define GB_ISA_SUFFIX _v2
#endif
#define GB_ISA_SYM(name) GB_ISA_CAT(name, GB_ISA_SUFFIX)

/* The declarations of a kernel table at every level, and its pick for the
 * level in force. */
#define GB_ISA_DECLARE(type, name) extern type name##_v2, name##_v3, name##_v4
#ifdef GB_ISA_MULTI
#define GB_ISA_TABLE(name)                                                                    \
    (gb__isa_level == GB_ISA_V4 ? &name##_v4 : gb__isa_level == GB_ISA_V3 ? &name##_v3 : &name##_v2)
#else
#define GB_ISA_TABLE(name) (&name##_v2)
#endif

/* The same for a kernel function: its declaration at every level, and a
 * call of the level in force (an inline wrapper in the family's header
 * keeps the callers' code as it was). */
#define GB_ISA_DECLARE_FN(ret, name, params) ret name##_v2 params, name##_v3 params, name##_v4 params
#ifdef GB_ISA_MULTI
#define GB_ISA_CALL(name, ...)                                                                \
    (gb__isa_level == GB_ISA_V4   ? name##_v4(__VA_ARGS__)                                     \
     : gb__isa_level == GB_ISA_V3 ? name##_v3(__VA_ARGS__)                                     \
                                  : name##_v2(__VA_ARGS__))
#else
#define GB_ISA_CALL(name, ...) name##_v2(__VA_ARGS__)
#endif

#endif
