/* ops/print.c — the Print op (tf.print): prints at every execution.
 *
 * Under a traced function plain printf runs once, while tracing; Print is
 * a stateful op, so it stays in the graph, in program order, and prints
 * each time the graph runs. Values print as tf.print prints them: a
 * scalar as its value, a tensor as nested brackets, long axes elided.
 */
#include <stdio.h>

#include "ops/internal.h"

static int infer_print(const gb_op_call *c, gb_out_desc *out) {
    (void)c, (void)out;
    return 0;
}

/* Prints the elements of t along axis `axis` starting at flat offset
 * base, with at most 3 from each end of an axis longer than 6. */
static void print_axis(const gb_tensor *t, int axis, int64_t base, int64_t stride) {
    if (axis == t->rank) {
        double v = gb__load(t->dtype, t->data, base);
        if (gb_dtype_is_float(t->dtype))
            printf("%g", v);
        else
            printf("%lld", (long long)v);
        return;
    }
    int64_t n = t->shape[axis], inner = stride / (n ? n : 1);
    putchar('[');
    for (int64_t i = 0; i < n; i++) {
        if (n > 6 && i == 3) {
            printf(" ...");
            i = n - 3;
        }
        if (i) putchar(' ');
        print_axis(t, axis + 1, base + i * inner, inner);
    }
    putchar(']');
}

static bool kernel_print(const gb_op_call *c, gb_tensor **out) {
    (void)out;
    fputs(c->attrs->s, stdout);
    if (c->nin == 1) {
        if (c->attrs->s[0]) putchar(' ');
        print_axis(c->in[0], 0, 0, c->in[0]->size);
    }
    putchar('\n');
    fflush(stdout);
    return true;
}

const gb_op_def gb_opdef_print = {
    .name = "Print",
    .arity = -1,
    .flags = GB_OPF_STATEFUL,
    .inputs_doc = "input 0 (optional): the tensor printed after the message",
    .infer = infer_print,
    .kernel = kernel_print,
};

bool gb_print(const char *message, gb_tensor *x) {
    if (!gb_ok()) return false; /* x may be NULL because of it: print nothing */
    gb_attrs a = {0};
    snprintf(a.s, sizeof a.s, "%s", message ? message : "");
    gb_tensor *out[1];
    return gb__dispatch(GB_OP_PRINT, &x, x ? 1 : 0, &a, out) == 0;
}
