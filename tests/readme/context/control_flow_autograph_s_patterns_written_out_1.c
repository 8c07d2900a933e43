/* The context of README.md's while-loop example (section "Control flow"):
 * next_collatz as a cond, x = 27; its comment promises 111 steps. */
#include <stdio.h>

#include "glassbox.h"

static int halve(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    out[0] = gb_div(in[0], gb_scalar(GB_I64, 2));
    return 1;
}

static int triple_plus_one(void *u, gb_tensor *const *in, int n, gb_tensor **out) {
    out[0] = gb_add_scalar(gb_mul_scalar(in[0], 3), 1);
    return 1;
}

/* x // 2 when x is even, else 3x + 1. */
static gb_tensor *next_collatz(gb_tensor *x) {
    gb_tensor *even = gb_equal(gb_sub(x, gb_mul_scalar(gb_div(x, gb_scalar(GB_I64, 2)), 2)),
                               gb_scalar(GB_I64, 0));
    gb_tensor *y = NULL;
    return gb_cond(even, halve, triple_plus_one, &x, 1, NULL, &y) == 1 ? y : NULL;
}

/* README_DEFINITIONS */

int main(void) {
    gb_scope_begin();
    gb_tensor *x = gb_scalar(GB_I64, 27);
    /* README_STATEMENTS */
    if (!gb_ok() || gb_item(v[0]) != 1 || gb_item(v[1]) != 111) {
        fprintf(stderr, "27 -> %g in %g steps: %s\n", gb_ok() ? gb_item(v[0]) : 0.0,
                gb_ok() ? gb_item(v[1]) : 0.0, gb_ok() ? "not 1 in 111" : gb_error_string());
        return 1;
    }
    printf("27 -> 1 in %g steps\n", gb_item(v[1]));
    gb_scope_end();
    return 0;
}
