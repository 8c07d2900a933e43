/* ops/variable_registry.c — variables by id (core/handles.c).
 *
 * Variable ops carry their variable's id in attrs.vars, so a graph holds
 * no pointer, and a concrete function can tell that a variable it captured
 * was freed.
 */
#include "ops/internal.h"

static gb_handles variables;

int64_t gb__variable_register(struct gb_variable *v) {
    return gb__handle_add(&variables, v, "variable");
}

void gb__variable_unregister(int64_t id) { gb__handle_remove(&variables, id); }

struct gb_variable *gb__variable_by_id(int64_t id) { return gb__handle_get(&variables, id); }

int gb__call_variable_ids(const gb_op_call *c, int64_t *ids, int cap) {
    int n = c->attrs->nvars < cap ? c->attrs->nvars : cap;
    for (int i = 0; i < n; i++) ids[i] = c->attrs->vars[i];
    return n;
}
