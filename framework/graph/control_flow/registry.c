/* graph/control_flow/registry.c — the records of If and While nodes, by id.
 *
 * A node's attributes are plain data, so an If or While node names its
 * sub-graphs through the id of a record (attrs.i[0]), as graphs name
 * variables (core/handles.c). A record belongs to the concrete function
 * whose trace made it — a gradient or a nested construct makes its own —
 * and is freed with it, sub-graphs and all; an id that outlived it
 * resolves to nothing, so a stale node fails with an error, never a
 * dangling pointer.
 */
#include <stdlib.h>

#include "graph/control_flow/internal.h"

static gb_handles records;

static void record_free(gb_cf_record *r) {
    for (int s = 0; s < 2; s++) {
        gb__concrete_free(r->sub[s].cf);
        free(r->sub[s].function.arena); /* its runs' (executor.c) */
        for (int i = 0; i < GB_MAX_OUTPUTS; i++) free(r->sub[s].input_names[i]);
    }
    free(r);
}

gb_cf_record *gb__cf_record_new(gb_op_id op) {
    gb_concrete_function *owner = gb__tl_trace->cf;
    int64_t *ids = realloc(owner->cf_records, (size_t)(owner->ncf_records + 1) * sizeof *ids);
    gb_cf_record *r = ids ? calloc(1, sizeof *r) : NULL;
    if (ids) owner->cf_records = ids;
    if (!r) {
        gb__error(GB_ERR_MEMORY, gb_op_type_name(op), "out of memory tracing control flow");
        return NULL;
    }
    r->op = op;
    r->id = gb__handle_add(&records, r, "a control-flow node");
    if (!r->id) {
        free(r);
        return NULL;
    }
    owner->cf_records[owner->ncf_records++] = r->id;
    return r;
}

gb_cf_record *gb__cf_record_of(const gb_op_call *c) {
    gb_cf_record *r = c->attrs->ni >= 1 ? gb__handle_get(&records, c->attrs->i[0]) : NULL;
    if (r && r->op == c->op) return r;
    gb__op_error(c, GB_ERR_STATE,
                 "%s: its sub-graphs (record %lld) no longer exist: an If or While node runs "
                 "only in the graph that traced it",
                 c->def->name, c->attrs->ni >= 1 ? (long long)c->attrs->i[0] : 0LL);
    return NULL;
}

void gb__cf_records_free(gb_concrete_function *cf) {
    for (int i = 0; i < cf->ncf_records; i++) {
        gb_cf_record *r = gb__handle_get(&records, cf->cf_records[i]);
        gb__handle_remove(&records, cf->cf_records[i]);
        if (r) record_free(r);
    }
    free(cf->cf_records);
    cf->cf_records = NULL;
    cf->ncf_records = 0;
}
