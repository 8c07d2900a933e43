/* graph/graph.c — the graph IR: nodes in program order, unique names,
 * constants.
 *
 * A node is an op id, plain-data attributes, its inputs as (node, output)
 * edges, and the dtype and shape of each output (-1 for an unknown dim).
 * Nodes are appended as the traced code calls ops, so the node list is a
 * topological order; stateful nodes also point at the stateful node before
 * them (a control edge), which keeps assignments, prints and updates in
 * program order through every later pass. Strings, edges and constant
 * values live in one arena freed with the graph.
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

void gb__graph_init(gb_graph *g) {
    memset(g, 0, sizeof *g);
    g->mem.min_chunk = 16384;
    g->last_stateful = -1;
}

void gb__graph_free(gb_graph *g) {
    gb__bump_free(&g->mem);
    free(g->nodes);
    free(g->names);
    free(g->name_counts);
    memset(g, 0, sizeof *g);
}

void *gb__graph_alloc(gb_graph *g, size_t n) {
    return gb__bump_alloc(&g->mem, n, "building a graph");
}

const char *gb__graph_strdup(gb_graph *g, const char *s) {
    size_t n = strlen(s) + 1;
    char *p = gb__graph_alloc(g, n);
    if (p) memcpy(p, s, n);
    return p;
}

/* ---- unique names ------------------------------------------------------------------ */

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

static bool grow_names(gb_graph *g) {
    int cap = g->names_cap ? 2 * g->names_cap : 256;
    const char **names = calloc((size_t)cap, sizeof *names);
    int *counts = calloc((size_t)cap, sizeof *counts);
    if (!names || !counts) {
        free(names);
        free(counts);
        gb__error(GB_ERR_MEMORY, NULL, "out of memory naming graph nodes");
        return false;
    }
    for (int i = 0; i < g->names_cap; i++) {
        if (!g->names[i]) continue;
        size_t j = hash_str(g->names[i]) & (size_t)(cap - 1);
        while (names[j]) j = (j + 1) & (size_t)(cap - 1);
        names[j] = g->names[i];
        counts[j] = g->name_counts[i];
    }
    free(g->names);
    free(g->name_counts);
    g->names = names;
    g->name_counts = counts;
    g->names_cap = cap;
    return true;
}

/* The slot of name (inserted with count 0 when new); -1 after an error. */
static int name_slot(gb_graph *g, const char *name) {
    if (2 * (g->names_used + 1) > g->names_cap && !grow_names(g)) return -1;
    size_t mask = (size_t)g->names_cap - 1, j = hash_str(name) & mask;
    while (g->names[j] && strcmp(g->names[j], name) != 0) j = (j + 1) & mask;
    if (!g->names[j]) {
        const char *copy = gb__graph_strdup(g, name);
        if (!copy) return -1;
        g->names[j] = copy;
        g->name_counts[j] = 0;
        g->names_used++;
    }
    return (int)j;
}

/* TensorFlow's rule: the first "dense/MatMul" keeps its name, the next
 * is "dense/MatMul_1", and so on, skipping names already taken. */
static const char *unique_name(gb_graph *g, const char *base) {
    int slot = name_slot(g, base);
    if (slot < 0) return NULL;
    if (g->name_counts[slot]++ == 0) return g->names[slot];
    char buf[256];
    for (int k = g->name_counts[slot] - 1;; k++) {
        snprintf(buf, sizeof buf, "%s_%d", base, k);
        int s2 = name_slot(g, buf); /* may grow the table: slots move */
        if (s2 < 0) return NULL;
        if (g->name_counts[s2]++ == 0) {
            const char *name = g->names[s2];
            /* Looked up first: a lookup may grow the table, and the array
             * read beside it in one expression would be the old one. */
            int again = name_slot(g, base);
            if (again < 0) return NULL;
            g->name_counts[again] = k + 1;
            return name;
        }
    }
}

/* The slot of name, or -1 when it was never given (no insertion). */
static int find_slot(const gb_graph *g, const char *name) {
    if (!g->names_cap) return -1;
    size_t mask = (size_t)g->names_cap - 1, j = hash_str(name) & mask;
    while (g->names[j] && strcmp(g->names[j], name) != 0) j = (j + 1) & mask;
    return g->names[j] ? (int)j : -1;
}

const char *gb__graph_peek_name(const gb_graph *g, const char *base, char *buf, size_t n) {
    int slot = find_slot(g, base);
    if (slot < 0 || g->name_counts[slot] == 0) {
        snprintf(buf, n, "%s", base);
        return buf;
    }
    for (int k = g->name_counts[slot] - 1;; k++) { /* as unique_name() walks */
        snprintf(buf, n, "%s_%d", base, k);
        int s2 = find_slot(g, buf);
        if (s2 < 0 || g->name_counts[s2] == 0) return buf;
    }
}

/* ---- nodes --------------------------------------------------------------------------- */

static bool has_unknown_dim(const gb_out_desc *d) {
    for (int i = 0; i < d->rank; i++)
        if (d->shape[i] < 0) return true;
    return false;
}

int gb__graph_add(gb_graph *g, gb_op_id op, const char *base_name, const gb_edge *in, int nin,
                  const gb_out_desc *out, int nout, const gb_attrs *attrs) {
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        gb_node *nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) {
            gb__error(GB_ERR_MEMORY, NULL, "out of memory building a graph");
            return -1;
        }
        g->nodes = nodes;
        g->cap = cap;
    }
    gb_node *nd = &g->nodes[g->n];
    memset(nd, 0, sizeof *nd);
    nd->op = op;
    nd->name = unique_name(g, base_name);
    nd->nin = nin;
    nd->nout = nout;
    nd->in = nin ? gb__graph_alloc(g, (size_t)nin * sizeof *in) : NULL;
    nd->out = nout ? gb__graph_alloc(g, (size_t)nout * sizeof *out) : NULL;
    if (!nd->name || (nin && !nd->in) || (nout && !nd->out)) return -1;
    if (nin) memcpy(nd->in, in, (size_t)nin * sizeof *in);
    if (nout) memcpy(nd->out, out, (size_t)nout * sizeof *out);
    if (attrs) nd->attrs = *attrs;
    nd->after = -1;
    nd->value0 = g->nvalues;
    g->nvalues += nout;
    if (gb_op_table[op]->flags & (GB_OPF_STATEFUL | GB_OPF_RANDOM)) {
        nd->flags |= GB_NODE_STATEFUL;
        nd->after = g->last_stateful;
        g->last_stateful = g->n;
    }
    /* An unknown dim in or out: the executor infers the node again at every
     * run, for its outputs' real shapes, and to check its inputs' (the
     * trace's inference skipped what it could not know: an output may be
     * static while an input is not, as [-1,3] + [5,3] is [5,3]). */
    for (int k = 0; k < nout; k++)
        if (has_unknown_dim(&out[k])) nd->flags |= GB_NODE_DYNAMIC;
    for (int i = 0; i < nin; i++)
        if (has_unknown_dim(gb__graph_desc(g, in[i]))) nd->flags |= GB_NODE_DYNAMIC;
    return g->n++;
}

bool gb__graph_set_backward_of(gb_graph *g, int32_t id, const char *of, const char *of_type) {
    gb_node *nd = &g->nodes[id];
    if (!of) return true;
    nd->backward_of = gb__graph_strdup(g, of);
    nd->backward_of_type = gb__graph_strdup(g, of_type ? of_type : "");
    return nd->backward_of && nd->backward_of_type;
}

void gb__graph_mark_stateful(gb_graph *g, int32_t id) {
    gb_node *nd = &g->nodes[id];
    if (nd->flags & GB_NODE_STATEFUL) return;
    nd->flags |= GB_NODE_STATEFUL;
    nd->after = g->last_stateful;
    g->last_stateful = id;
}

void *gb__graph_store_value(gb_graph *g, gb_dtype dt, int64_t n, const void *src) {
    size_t nbytes = (size_t)n * gb_dtype_size(dt);
    void *data = gb__graph_alloc(g, nbytes ? nbytes : 1);
    if (!data) return NULL;
    if (dt != GB_STRING) {
        if (nbytes) memcpy(data, src, nbytes);
        return data;
    }
    /* The bytes too: the graph outlives the scope (or the older graph)
     * that holds them. */
    int64_t total = gb__strings_total(src, n);
    char *blob = gb__graph_alloc(g, total ? (size_t)total : 1);
    if (!blob) return NULL;
    gb__strings_pack(data, src, n, blob);
    return data;
}

int gb__graph_add_const(gb_graph *g, const gb_tensor *t, const char *base_name) {
    gb_out_desc d = {.dtype = t->dtype, .rank = t->rank};
    memcpy(d.shape, t->shape, (size_t)t->rank * sizeof *d.shape);
    int id = gb__graph_add(g, GB_OP_CONST, base_name, NULL, 0, &d, 1, NULL);
    if (id < 0) return -1;
    void *data = gb__graph_store_value(g, t->dtype, t->size, t->data);
    if (!data) return -1;
    g->nodes[id].payload = data;
    return id;
}
