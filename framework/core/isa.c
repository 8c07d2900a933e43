/* core/isa.c — chooses the instruction-set level of the kernels, once, at
 * start (core/isa.h says why there are levels).
 *
 * The choice is made by a constructor, before main, so the kernels'
 * lookups read a plain global and never a lock or a first-use check.
 * GB_ISA in the environment (v2, v3, v4, or the full x86-64-vN) forces a
 * level, for benchmarks and for the tests that run the suite at each
 * level; a level the CPU cannot run falls back to the best it can, with a
 * warning, never to an illegal instruction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "core/isa.h"

gb_isa_level gb__isa_level = GB_ISA_V2;

static const char *const level_names[GB_ISA_LEVELS] = {"x86-64-v2", "x86-64-v3", "x86-64-v4"};

const char *gb__isa_level_name(gb_isa_level level) {
    return level >= 0 && level < GB_ISA_LEVELS ? level_names[level] : "unknown";
}

gb_isa_level gb__isa_supported(void) {
#if defined(GB_ISA_MULTI) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
        return GB_ISA_V4;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2"))
        return GB_ISA_V3;
#endif
    return GB_ISA_V2;
}

gb_isa_level gb__isa_force(gb_isa_level level) {
    gb_isa_level best = gb__isa_supported();
    gb__isa_level = level < GB_ISA_V2 ? GB_ISA_V2 : level > best ? best : level;
    return gb__isa_level;
}

/* "v3" or "x86-64-v3" -> the level; -1 when it names none. */
static int parse_level(const char *s) {
    if (strncmp(s, "x86-64-", 7) == 0) s += 7;
    for (int l = 0; l < GB_ISA_LEVELS; l++)
        if (strcmp(s, level_names[l] + 7) == 0) return l;
    return -1;
}

/* Priority 101, the first a program may use: before any constructor of
 * the program's own that runs a kernel or asks gb_cpu_isa(). */
__attribute__((constructor(101))) static void choose_level(void) {
    gb_isa_level best = gb__isa_supported();
    const char *env = getenv("GB_ISA");
    if (!env || !*env) {
        gb__isa_level = best;
        return;
    }
    int want = parse_level(env);
    if (want < 0) {
        fprintf(stderr, "glassbox: GB_ISA=%s names no level (v2, v3, v4); using %s\n", env,
                level_names[best]);
        gb__isa_level = best;
    } else if ((gb_isa_level)want > best) {
        fprintf(stderr, "glassbox: GB_ISA=%s: this CPU (or build) runs at most %s; using it\n",
                env, level_names[best]);
        gb__isa_level = best;
    } else {
        gb__isa_level = (gb_isa_level)want;
    }
}

const char *gb_cpu_isa(void) {
#ifdef GB_ISA_MULTI
    return level_names[gb__isa_level];
#else
    return "-march=" GB_ISA_SINGLE_MARCH;
#endif
}
