/* ops/op_error.c — how an op call names itself in errors and logs.
 *
 * An op's name is the name-scope path and its type ("model/dense/MatMul");
 * ops run by a gradient function are named as TensorFlow names them,
 * "gradients/<forward op>_grad/<Type>", so an error in a backward pass
 * points at the forward op it differentiates. Traced, the forward op is
 * its node ("attention/MatMul_3"), so every node has a gradient scope of
 * its own.
 */
#include <stdio.h>

#include "ops/internal.h"

const char *gb__op_display_name(const gb_op_call *c, char *buf, size_t n) {
    const char *path = gb_name_scope_path();
    if (gb__tl_node_name) /* a graph node running: its name from the trace */
        snprintf(buf, n, "%s", gb__tl_node_name);
    else if (gb__tl_backward_of)
        snprintf(buf, n, "gradients/%s_grad/%s", gb__tl_backward_of,
                 gb__tl_backward_label ? gb__tl_backward_label : c->def->name);
    else
        snprintf(buf, n, "%s%s%s", path, path[0] ? "/" : "", c->def->name);
    return buf;
}

void gb__op_error(const gb_op_call *c, gb_status code, const char *fmt, ...) {
    if (!gb_ok()) return; /* the first error stands; skip naming the op */
    char name[160];
    va_list ap;
    va_start(ap, fmt);
    gb__verror(code, c->def->name, gb__op_display_name(c, name, sizeof name), fmt, ap);
    va_end(ap);
}
