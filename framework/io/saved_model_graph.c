/* io/saved_model_graph.c — one SavedModel signature's graph as JSON, and
 * back, checked node by node.
 *
 * A signature is saved as its concrete function's graph *as traced*
 * (before the passes), live nodes only: the passes run again when the
 * loaded graph is traced, so the file holds only ops that have kernels
 * and gradients, never the passes' private forms (FusedElementwise
 * programs), and a loader built with better passes gets them for free.
 *
 *   {"name": "serving_default",
 *    "inputs":  [{"name": "images", "dtype": "float32", "shape": [-1, 28, 28, 1]}],
 *    "outputs": [{"name": "logits", "dtype": "float32", "shape": [-1, 10]}],
 *    "nodes": [{"op": "Placeholder", "name": "images", "in": [],
 *               "out": [{"dtype": "float32", "shape": [-1, 28, 28, 1]}], "attrs": {"index": 0}},
 *              {"op": "ReadVariableOp", "name": "cnn/conv2d/ReadVariableOp", "in": [],
 *               "out": [...], "attrs": {"variable": 0}},
 *              {"op": "Conv2D", ..., "attrs": {"strides": [1, 1], "dilations": [1, 1],
 *                                            "padding": "SAME"}}, ...],
 *    "output_edges": [[17, 0]]}
 *
 * Version 2: a node's "attrs" are its op's attributes by name, as ops.def
 * declares them, written and read by the one printer and parser of
 * ops/attr_text.c: every attribute of the schema, nothing else. Doubles
 * are exact (%.17g; NaN and infinities as "nan", "inf", "-inf"), variables
 * are indices into the model's variable list (engine ids mean nothing in
 * another process). Version 1 files kept gb_attrs' slots ("i", "f_bits"
 * the doubles' bit patterns, "s", "vars") and still load. A Const names
 * its value by index in constants.ckpt ("const"). Inputs are [node,
 * output] pairs, and a node reads only nodes before it: the list is a
 * topological order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "graph/control_flow/internal.h"
#include "io/internal.h"
#include "ops/strings_internal.h"
#include "nn/config_internal.h"

bool gb__dtype_from_name(const char *name, gb_dtype *out) {
    for (int d = 0; name && d < GB_DTYPE_COUNT; d++)
        if (strcmp(gb_dtype_name((gb_dtype)d), name) == 0) return *out = (gb_dtype)d, true;
    return false;
}

void gb__saved_tables_free(gb__saved_tables *t) {
    free(t->var_ids);
    free(t->consts);
    for (int k = 0; k < t->nowned; k++) free(t->owned[k]);
    free(t->owned);
    *t = (gb__saved_tables){0};
}

/* ---- writing ---------------------------------------------------------------------------------- */

static bool grow(void **p, int *cap, int n, size_t size) {
    if (n < *cap) return true;
    int c = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return gb__error(GB_ERR_MEMORY, NULL, "SavedModel: out of memory"), false;
    *p = q, *cap = c;
    return true;
}

static int var_index(gb__saved_tables *t, int64_t id) {
    for (int k = 0; k < t->nvars; k++)
        if (t->var_ids[k] == id) return k;
    if (!grow((void **)&t->var_ids, &t->capvars, t->nvars, sizeof *t->var_ids)) return -1;
    t->var_ids[t->nvars] = id;
    return t->nvars++;
}

static bool own(gb__saved_tables *t, unsigned char *p);

/* A Const node's value as an entry "<signature>/<node name>" of the
 * constants file; the entry views the graph's bytes. */
static int const_index(gb__saved_tables *t, const gb_node *nd, const char *sig) {
    if (!grow((void **)&t->consts, &t->capconsts, t->nconsts, sizeof *t->consts)) return -1;
    gb__ckpt_entry *e = &t->consts[t->nconsts];
    *e = (gb__ckpt_entry){.dtype = nd->out[0].dtype, .rank = nd->out[0].rank, .data = nd->payload};
    snprintf(e->path, sizeof e->path, "%s/%s", sig, nd->name);
    /* Names are unique in a graph, not across a branch and its parent. */
    for (int k = 0; k < t->nconsts; k++)
        if (strcmp(t->consts[k].path, e->path) == 0) {
            snprintf(e->path, sizeof e->path, "%s/%s_%d", sig, nd->name, t->nconsts);
            break;
        }
    uint64_t count = 1;
    for (int d = 0; d < e->rank; d++) count *= (uint64_t)(e->dims[d] = nd->out[0].shape[d]);
    e->nbytes = count * gb_dtype_size(e->dtype);
    if (e->dtype == GB_STRING) { /* the node says "strings"; its shape is the node's */
        unsigned char *blob;
        if (!own(t, NULL) || !gb__strings_encode(nd->payload, (int64_t)count, &blob, &e->nbytes))
            return -1;
        t->owned[t->nowned++] = blob;
        *e = (gb__ckpt_entry){.dtype = GB_U8, .rank = 1, .dims = {(int64_t)e->nbytes},
                              .data = blob, .nbytes = e->nbytes, .path = {0}};
        snprintf(e->path, sizeof e->path, "%s/%s_strings_%d", sig, nd->name, t->nconsts);
    }
    return t->nconsts++;
}

/* Room for one more owned block (p NULL) or p kept as one. */
static bool own(gb__saved_tables *t, unsigned char *p) {
    if (!grow((void **)&t->owned, &t->capowned, t->nowned, sizeof *t->owned)) {
        free(p);
        return false;
    }
    if (p) t->owned[t->nowned++] = p;
    return true;
}

/* An entry of the constants file over bytes the tables own. */
static int add_entry(gb__saved_tables *t, const char *path, gb_dtype dt, int64_t count,
                     unsigned char *data, uint64_t nbytes) {
    if (!own(t, data) || !grow((void **)&t->consts, &t->capconsts, t->nconsts, sizeof *t->consts))
        return -1;
    gb__ckpt_entry *e = &t->consts[t->nconsts];
    *e = (gb__ckpt_entry){.dtype = dt, .rank = 1, .dims = {count}, .data = data, .nbytes = nbytes};
    snprintf(e->path, sizeof e->path, "%s_%d", path, t->nconsts);
    return t->nconsts++;
}

/* A LookupTableFindV2's table, which the graph names by an id that means
 * nothing in a file: its keys and values as two entries, and its default. */
static bool put_table(gb_config *c, const gb_node *nd, gb__saved_tables *t, const char *sig) {
    gb_lookup_table *table = gb__lookup_table_by_id(nd->attrs.i[0]);
    if (!table) {
        gb__error(GB_ERR_STATE, NULL, "gb_saved_model_save: the lookup table of node '%s' was "
                  "freed", nd->name);
        return false;
    }
    int64_t n = gb_lookup_table_size(table), dflt;
    gb_string *keys = malloc((size_t)(n ? n : 1) * sizeof *keys);
    int64_t *values = malloc((size_t)(n ? n : 1) * sizeof *values);
    unsigned char *blob = NULL;
    uint64_t nbytes = 0;
    bool ok = keys && values && gb__lookup_table_export(table, keys, values, &dflt) &&
              gb__strings_encode(keys, n, &blob, &nbytes);
    free(keys);
    if (!ok) {
        free(values);
        return gb_ok() ? (gb__error(GB_ERR_MEMORY, NULL, "gb_saved_model_save: out of memory"), false)
                       : false;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/%s_keys", sig, nd->name);
    int kk = add_entry(t, path, GB_U8, (int64_t)nbytes, blob, nbytes);
    snprintf(path, sizeof path, "%s/%s_values", sig, nd->name);
    int kv = kk < 0 ? -1 : add_entry(t, path, GB_I64, n, (unsigned char *)values, (uint64_t)n * 8);
    if (kk < 0) free(values);
    return kv >= 0 && gb_config_put_ints(c, "table", 3, (int64_t[]){kk, kv, dflt}) != NULL;
}

/* What makes a signature's input or output name other than a plain name
 * (NULL when it is one): one path component (no '/', not "." or ".."),
 * UTF-8, no control characters. Tools write an output to
 * <dir>/<name>.npy, so a name from a file is never a path (an output
 * named "../../x" wrote outside the directory). */
static const char *name_problem(const char *name, char *buf, size_t n) {
    char why[160];
    if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/'))
        snprintf(buf, n, "the signature name '%s' is not a plain name (one path component: no "
                 "'/', not '.' or '..')", name);
    else if (gb__name_problem(name, 63, why, sizeof why))
        snprintf(buf, n, "the signature name '%.64s': %s", name, why);
    else
        return NULL;
    return buf;
}

static bool put_spec(gb_config *list, const char *name, gb_dtype dt, int rank, const int64_t *shape) {
    char why[320];
    if (name && name_problem(name, why, sizeof why)) {
        gb__error(GB_ERR_VALUE, NULL, "gb_saved_model_save: %s", why);
        return false;
    }
    gb_config *d = gb_config_put_dict(list, NULL);
    return d && (!name || gb_config_put_string(d, "name", name)) &&
           gb_config_put_string(d, "dtype", gb_dtype_name(dt)) &&
           gb_config_put_ints(d, "shape", rank, shape);
}

/* A variable attribute in a file: its index in the model's list. */
static bool var_as_index(void *user, int64_t id, char *buf, size_t n) {
    int k = var_index(user, id);
    return k >= 0 && snprintf(buf, n, "%d", k) > 0;
}

/* "attrs": the node's attributes by name, as ops.def declares them (the
 * printer of ops/attr_text.c, JSON style, variables by index). */
static bool put_attrs(gb_config *c, gb_op_id op, const gb_attrs *a, gb__saved_tables *t) {
    gb_attrs_style st = {.json = true, .var = var_as_index, .user = t};
    char buf[2048];
    int n = gb__attrs_print(op, a, &st, buf, sizeof buf);
    if (n < 0) return false;
    if ((size_t)n >= sizeof buf) {
        gb__error(GB_ERR_VALUE, NULL, "SavedModel: the attributes of a %s node are too long",
                  gb_op_type_name(op));
        return false;
    }
    return gb__config_attach(c, "attrs", gb_config_from_json(buf, (size_t)n, "SavedModel attributes")) != NULL;
}

static bool put_body(gb_config *d, const gb_concrete_function *cf, gb__saved_tables *t,
                     const char *sig, int depth);

/* An If's branches or a While's cond and body, each as a nested graph
 * with its inputs ("sub"); a While's iteration limit. A loop traced under
 * a tape outputs its per-iteration stacks for the gradient, a form the
 * replay (gb_while_loop) makes only under a tape of its own: refused. */
static bool put_control_flow(gb_config *c, const gb_node *nd, gb__saved_tables *t, const char *sig,
                             int depth) {
    gb_op_call call = {.op = nd->op, .def = gb_op_table[nd->op], .attrs = &nd->attrs};
    gb_cf_record *r = gb__cf_record_of(&call);
    if (!r) return false;
    if (nd->op == GB_OP_WHILE && r->stacks) {
        gb__error(GB_ERR_VALUE, NULL,
                  "SavedModel: signature '%s': loop '%s' was traced under a GradientTape (it keeps "
                  "every iteration for the gradient), which SavedModel files do not hold; save a "
                  "function that computes no gradient through the loop",
                  sig, nd->name);
        return false;
    }
    gb_config *subs = gb_config_put_list(c, "sub");
    bool ok = subs && (nd->op != GB_OP_WHILE || gb_config_put_int(c, "max_iterations", r->max_iterations));
    for (int k = 0; ok && k < 2; k++) {
        gb_config *g = gb_config_put_dict(subs, NULL), *in = g ? gb_config_put_list(g, "inputs") : NULL;
        const gb_concrete_function *b = r->sub[k].cf;
        ok = in != NULL;
        for (int i = 0; ok && i < b->nin; i++)
            ok = put_spec(in, r->sub[k].input_names[i] ? r->sub[k].input_names[i] : "x", b->sig.in[i].dtype,
                          b->sig.in[i].rank, b->sig.in[i].shape);
        ok = ok && put_body(g, b, t, sig, depth + 1);
    }
    return ok;
}

static bool put_node(gb_config *nodes, const gb_graph *g, int i, const int32_t *renum,
                     gb__saved_tables *t, const char *sig, int depth) {
    const gb_node *nd = &g->nodes[i];
    bool cf = nd->op == GB_OP_IF || nd->op == GB_OP_WHILE;
    gb_config *c = gb_config_put_dict(nodes, NULL);
    bool ok = c && gb_config_put_string(c, "op", gb_op_type_name(nd->op)) &&
              gb_config_put_string(c, "name", nd->name);
    gb_config *in = ok ? gb_config_put_list(c, "in") : NULL;
    ok = in != NULL;
    for (int j = 0; ok && j < nd->nin; j++)
        ok = gb_config_put_ints(in, NULL, 2, (int64_t[]){renum[nd->in[j].node], nd->in[j].out});
    gb_config *out = ok ? gb_config_put_list(c, "out") : NULL;
    ok = out != NULL;
    for (int k = 0; ok && k < nd->nout; k++)
        ok = put_spec(out, NULL, nd->out[k].dtype, nd->out[k].rank, nd->out[k].shape);
    /* A control-flow node's attributes hold only its record's id, which
     * means nothing in a file: its sub-graphs stand there instead. */
    ok = ok && (cf ? put_control_flow(c, nd, t, sig, depth) : put_attrs(c, nd->op, &nd->attrs, t));
    if (ok && nd->op == GB_OP_CONST) {
        int k = const_index(t, nd, sig);
        ok = k >= 0 && gb_config_put_int(c, "const", k);
        if (ok && nd->out[0].dtype == GB_STRING) ok = gb_config_put_bool(c, "strings", true) != NULL;
    }
    if (ok && nd->op == GB_OP_LOOKUP_TABLE_FIND) ok = put_table(c, nd, t, sig);
    return ok;
}

static bool put_signature_specs(gb_config *s, const gb_concrete_function *cf, const gb_graph *g,
                                const gb_edge *outs, const gb_saved_model_signature *sig) {
    gb_config *in = gb_config_put_list(s, "inputs"), *out = gb_config_put_list(s, "outputs");
    bool ok = in && out;
    for (int i = 0; ok && i < cf->nin; i++) {
        char buf[64];
        const gb_tensor_spec *sp = &cf->sig.in[i];
        const char *name = sig->inputs && sig->inputs[i].name ? sig->inputs[i].name
                                                              : gb__input_name(cf->owner, i, buf, sizeof buf);
        ok = put_spec(in, name, sp->dtype, sp->rank, sp->shape);
    }
    for (int k = 0; ok && k < cf->nout; k++) {
        char buf[64];
        if (sig->output_names && sig->output_names[k]) snprintf(buf, sizeof buf, "%s", sig->output_names[k]);
        else snprintf(buf, sizeof buf, "output_%d", k);
        const gb_out_desc *d = gb__graph_desc(g, outs[k]);
        ok = put_spec(out, buf, d->dtype, d->rank, d->shape);
    }
    return ok;
}

/* "nodes" (the live nodes of cf's graph as traced, and its Placeholders)
 * and "output_edges" into dict d. */
static bool put_body(gb_config *d, const gb_concrete_function *cf, gb__saved_tables *t,
                     const char *sig, int depth) {
    if (depth > GB__SAVED_MAX_DEPTH) {
        gb__error(GB_ERR_VALUE, NULL, "SavedModel: signature '%s': control flow nested deeper than %d",
                  sig, GB__SAVED_MAX_DEPTH);
        return false;
    }
    bool traced = cf->traced.n > 0;
    const gb_graph *g = traced ? &cf->traced : &cf->graph;
    const gb_edge *outs = traced ? cf->traced_outputs : cf->outputs;
    bool *live = calloc((size_t)g->n + 1, sizeof *live);
    int32_t *renum = calloc((size_t)g->n + 1, sizeof *renum);
    gb_config *nodes = live && renum ? gb_config_put_list(d, "nodes") : NULL;
    if (!live || !renum) gb__error(GB_ERR_MEMORY, NULL, "SavedModel: out of memory");
    bool ok = nodes != NULL;
    if (ok) gb__graph_live(g, outs, cf->nout, live);
    int n = 0;
    for (int i = 0; ok && i < g->n; i++) {
        if (!live[i] && g->nodes[i].op != GB_OP_PLACEHOLDER) continue;
        renum[i] = n++;
        ok = put_node(nodes, g, i, renum, t, sig, depth);
    }
    gb_config *edges = ok ? gb_config_put_list(d, "output_edges") : NULL;
    ok = ok && edges;
    for (int k = 0; ok && k < cf->nout; k++)
        ok = gb_config_put_ints(edges, NULL, 2, (int64_t[]){renum[outs[k].node], outs[k].out});
    free(live);
    free(renum);
    return ok;
}

bool gb__saved_graph_put(gb_config *sigs, const char *name, const gb_concrete_function *cf,
                         const gb_saved_model_signature *sig, gb__saved_tables *t) {
    bool traced = cf->traced.n > 0;
    gb_config *s = gb_config_put_dict(sigs, NULL);
    return s && gb_config_put_string(s, "name", name) &&
           put_signature_specs(s, cf, traced ? &cf->traced : &cf->graph,
                               traced ? cf->traced_outputs : cf->outputs, sig) &&
           put_body(s, cf, t, name, 0);
}

/* ---- reading --------------------------------------------------------------------------------- */

typedef struct reader {
    const char *what;            /* the file, in errors */
    int version;                 /* of the file's format */
    gb__saved_graph *g;
    int node;                    /* the node being read, -1: the signature itself */
    int nvars, nconsts;
    int depth;                   /* of nested sub-graphs */
} reader;

__attribute__((format(printf, 2, 3)))
static bool bad(const reader *r, const char *fmt, ...) {
    char msg[384], where[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->node >= 0)
        snprintf(where, sizeof where, "signature '%s', node %d ('%s')", r->g->name, r->node,
                 r->g->nodes[r->node].name);
    else
        snprintf(where, sizeof where, "signature '%s'", r->g->name);
    gb__error(GB_ERR_VALUE, NULL, "%s: %s: %s", r->what, where, msg);
    return false;
}

static bool read_string(const reader *r, const gb_config *c, const char *key, char *buf, size_t n) {
    const char *s = gb_config_string(gb_config_get(c, key));
    if (!s) return bad(r, "'%s' must be a string", key);
    if (strlen(s) >= n) return bad(r, "'%s' is longer than %zu bytes", key, n - 1);
    snprintf(buf, n, "%s", s);
    return true;
}

/* {"dtype": ..., "shape": [...]} (and "name" when name is not NULL). */
static bool read_spec(const reader *r, const gb_config *c, char *name, size_t name_n,
                      gb_dtype *dt, int *rank, int64_t *shape) {
    char dtype[16];
    if (gb_config_kind_of(c) != GB_CONFIG_DICT) return bad(r, "a tensor spec must be a dict");
    if (name && !read_string(r, c, "name", name, name_n)) return false;
    char why[320];
    if (name && name_problem(name, why, sizeof why)) return bad(r, "%s", why);
    if (!read_string(r, c, "dtype", dtype, sizeof dtype)) return false;
    if (!gb__dtype_from_name(dtype, dt)) return bad(r, "unknown dtype '%s'", dtype);
    const gb_config *s = gb_config_get(c, "shape");
    if (!s || gb_config_kind_of(s) != GB_CONFIG_LIST) return bad(r, "'shape' must be a list");
    if (gb_config_len(s) > GB_MAX_RANK) return bad(r, "rank %d is more than %d", gb_config_len(s), GB_MAX_RANK);
    *rank = gb_config_len(s);
    for (int d = 0; d < *rank; d++) {
        const gb_config *x = gb_config_at(s, d);
        if (gb_config_kind_of(x) != GB_CONFIG_INT || gb_config_int(x) < -1 || gb_config_int(x) > (INT64_C(1) << 40))
            return bad(r, "dim %d of a shape must be an integer in -1..2^40", d);
        shape[d] = gb_config_int(x);
    }
    return true;
}

bool gb__saved_spec_read(const gb_config *c, const char *what, gb_dtype *dt, int *rank, int64_t *shape) {
    gb__saved_graph g = {.name = "(variables)"};
    reader r = {.what = what, .g = &g, .node = -1};
    return read_spec(&r, c, NULL, 0, dt, rank, shape);
}

/* Room for n specs and their names; false after an error. */
static bool alloc_specs(const reader *r, int n, gb_tensor_spec **specs, char (**names)[64]) {
    *specs = calloc((size_t)n + 1, sizeof **specs);
    *names = calloc((size_t)n + 1, sizeof **names);
    if (*specs && *names) return true;
    return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", r->what), false;
}

static bool read_specs(reader *r, const gb_config *sig, const char *key, int max,
                       gb_tensor_spec **specs_out, char (**names_out)[64], int *n) {
    const gb_config *list = gb_config_get(sig, key);
    if (!list || gb_config_kind_of(list) != GB_CONFIG_LIST) return bad(r, "'%s' must be a list", key);
    if (gb_config_len(list) > max)
        return bad(r, "%d %s are more than %d", gb_config_len(list), key, max);
    if (!alloc_specs(r, gb_config_len(list), specs_out, names_out)) return false;
    gb_tensor_spec *specs = *specs_out;
    char (*names)[64] = *names_out;
    *n = gb_config_len(list);
    for (int i = 0; i < *n; i++) {
        gb_tensor_spec *s = &specs[i];
        *s = (gb_tensor_spec){0};
        if (!read_spec(r, gb_config_at(list, i), names[i], 64, &s->dtype, &s->rank, s->shape)) return false;
        s->name = names[i];
    }
    return true;
}

/* A [node, output] pair naming an output of a node before `before`. */
static bool read_edge(const reader *r, const gb_config *c, int before, gb_edge *e) {
    if (gb_config_kind_of(c) != GB_CONFIG_LIST || gb_config_len(c) != 2 ||
        gb_config_kind_of(gb_config_at(c, 0)) != GB_CONFIG_INT ||
        gb_config_kind_of(gb_config_at(c, 1)) != GB_CONFIG_INT)
        return bad(r, "an edge must be a [node, output] pair of integers");
    int64_t node = gb_config_int(gb_config_at(c, 0)), out = gb_config_int(gb_config_at(c, 1));
    if (node < 0 || node >= before)
        return bad(r, "an edge reads node %lld, which is not a node before it", (long long)node);
    if (out < 0 || out >= r->g->nodes[node].nout)
        return bad(r, "an edge reads output %lld of node %lld, which has %d", (long long)out,
                   (long long)node, r->g->nodes[node].nout);
    *e = (gb_edge){(int32_t)node, (int32_t)out};
    return true;
}

/* Version 2: "attrs" by name, through the schema's parser. */
static bool read_named_attrs(const reader *r, const gb_config *c, gb_op_id op, gb_attrs *a) {
    const gb_config *d = gb_config_get(c, "attrs");
    if (!d || gb_config_kind_of(d) != GB_CONFIG_DICT) return bad(r, "'attrs' must be a dict");
    char *json = gb_config_to_json(d, 0), where[384];
    if (!json) return false;
    snprintf(where, sizeof where, "%s: signature '%s', node %d ('%s')", r->what, r->g->name, r->node,
             r->g->nodes[r->node].name);
    bool ok = gb__attrs_parse(op, json, a, where);
    free(json);
    for (int k = 0; ok && k < a->nvars; k++)
        if (a->vars[k] >= r->nvars)
            return bad(r, "variable %lld is not one of the model's %d", (long long)a->vars[k], r->nvars);
    return ok;
}

/* Version 1: gb_attrs' slots. */
static bool read_attrs(const reader *r, const gb_config *c, gb_attrs *a) {
    char who[96];
    snprintf(who, sizeof who, "%s node %d", r->g->name, r->node);
    int64_t bits[4] = {0}, vars[4];
    a->ni = gb_config_read_ints(c, who, "i", GB_MAX_ATTR_INTS, a->i);
    int nf = gb_config_read_ints(c, who, "f_bits", 4, bits);
    a->nvars = gb_config_read_ints(c, who, "vars", 4, vars);
    if (a->ni < 0 || nf < 0 || a->nvars < 0) {
        gb_clear_error();
        return bad(r, "'i' (at most %d), 'f_bits' and 'vars' (at most 4) must be lists of integers",
                   GB_MAX_ATTR_INTS);
    }
    for (int k = 0; k < 4; k++) memcpy(&a->f[k], &bits[k], sizeof bits[k]);
    if (gb_config_get(c, "s") && !read_string(r, c, "s", a->s, sizeof a->s)) return false;
    for (int k = 0; k < a->nvars; k++) {
        if (vars[k] < 0 || vars[k] >= r->nvars)
            return bad(r, "variable %lld is not one of the model's %d", (long long)vars[k], r->nvars);
        a->vars[k] = vars[k];
    }
    return true;
}

static bool read_outputs(const reader *r, const gb_config *c, gb__saved_node *nd) {
    const gb_config *out = gb_config_get(c, "out");
    /* Print has no output: an empty list is a node run for its effect. */
    if (!out || gb_config_kind_of(out) != GB_CONFIG_LIST || gb_config_len(out) > GB_MAX_OUTPUTS)
        return bad(r, "'out' must be a list of 0 to %d tensor specs", GB_MAX_OUTPUTS);
    nd->nout = gb_config_len(out);
    for (int k = 0; k < nd->nout; k++)
        if (!read_spec(r, gb_config_at(out, k), NULL, 0, &nd->out[k].dtype, &nd->out[k].rank,
                       nd->out[k].shape))
            return false;
    return true;
}

static bool parse_body(reader *r, const gb_config *d, bool outputs_given);

/* Sub-graph k of node nd, named "<sig>/<node>/<part>" in errors. */
static bool read_sub(const reader *r, const gb_config *c, gb__saved_node *nd, int k) {
    static const char *const parts[2][2] = {{"true", "false"}, {"cond", "body"}};
    gb__saved_graph *g = nd->sub[k] = calloc(1, sizeof *g);
    if (!g) return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", r->what), false;
    snprintf(g->name, sizeof g->name, "%.24s/%.24s/%s", r->g->name, nd->name, parts[nd->op == GB_OP_WHILE][k]);
    reader sub = {.what = r->what, .version = r->version, .g = g, .node = -1, .nvars = r->nvars,
                  .nconsts = r->nconsts, .depth = r->depth + 1};
    if (sub.depth > GB__SAVED_MAX_DEPTH) return bad(r, "control flow nested deeper than %d", GB__SAVED_MAX_DEPTH);
    return read_specs(&sub, c, "inputs", GB_FUNCTION_MAX_INPUTS, &g->inputs, &g->input_names, &g->ninputs) &&
           parse_body(&sub, c, false);
}

/* The sub-graphs' inputs and outputs against the node's. */
static bool check_sub_io(const reader *r, const gb__saved_node *nd, int k, int nin, int nout,
                         const gb_out_desc *outs) {
    const gb__saved_graph *g = nd->sub[k];
    if (g->ninputs != nin || g->noutputs != nout)
        return bad(r, "sub-graph %d takes %d inputs and gives %d outputs; the node needs %d and %d", k,
                   g->ninputs, g->noutputs, nin, nout);
    for (int i = 0; i < nin; i++)
        if (g->inputs[i].dtype != r->g->nodes[nd->in[nd->op == GB_OP_IF ? i + 1 : i].node]
                                      .out[nd->in[nd->op == GB_OP_IF ? i + 1 : i].out].dtype)
            return bad(r, "sub-graph %d's input %d is not the dtype the node passes it", k, i);
    for (int i = 0; i < nout; i++)
        if (g->outputs[i].dtype != outs[i].dtype || g->outputs[i].rank != outs[i].rank)
            return bad(r, "sub-graph %d's output %d is not the dtype and rank the node gives", k, i);
    return true;
}

/* An If: a bool scalar then the branches' inputs; a While: its loop
 * variables in and out. Both: "sub", two nested graphs. */
static bool read_control_flow(const reader *r, const gb_config *c, gb__saved_node *nd) {
    const gb_config *subs = gb_config_get(c, "sub");
    if (!subs || gb_config_kind_of(subs) != GB_CONFIG_LIST || gb_config_len(subs) != 2)
        return bad(r, "an %s needs 'sub': a list of its two sub-graphs", gb_op_type_name(nd->op));
    for (int k = 0; k < 2; k++)
        if (!read_sub(r, gb_config_at(subs, k), nd, k)) return false;
    if (nd->op == GB_OP_IF) {
        const gb_out_desc *p = nd->nin ? &r->g->nodes[nd->in[0].node].out[nd->in[0].out] : NULL;
        if (!p || p->dtype != GB_BOOL || p->rank != 0) return bad(r, "an If's first input must be a bool scalar");
        return check_sub_io(r, nd, 0, nd->nin - 1, nd->nout, nd->out) &&
               check_sub_io(r, nd, 1, nd->nin - 1, nd->nout, nd->out);
    }
    const gb_config *m = gb_config_get(c, "max_iterations");
    if (!m || gb_config_kind_of(m) != GB_CONFIG_INT || gb_config_int(m) < 0)
        return bad(r, "a While needs 'max_iterations', an integer >= 0");
    nd->max_iterations = gb_config_int(m);
    gb_out_desc pred = {.dtype = GB_BOOL, .rank = 0};
    if (nd->nin != nd->nout) return bad(r, "a While gives as many outputs as it takes loop variables");
    return check_sub_io(r, nd, 0, nd->nin, 1, &pred) && check_sub_io(r, nd, 1, nd->nin, nd->nout, nd->out);
}

/* What a node of its kind must have beyond the common fields. */
static bool check_kind(const reader *r, const gb_config *c, gb__saved_node *nd) {
    nd->const_index = -1;
    if (nd->op == GB_OP_PLACEHOLDER) {
        if (nd->attrs.ni < 1 || nd->attrs.i[0] < 0 || nd->attrs.i[0] >= r->g->ninputs)
            return bad(r, "a Placeholder's 'i' must hold an input index below %d", r->g->ninputs);
        if (nd->out[0].dtype != r->g->inputs[nd->attrs.i[0]].dtype)
            return bad(r, "the Placeholder's dtype is not its input's");
        return true;
    }
    if (nd->op == GB_OP_IF || nd->op == GB_OP_WHILE) return read_control_flow(r, c, nd);
    if (nd->op == GB_OP_LOOKUP_TABLE_FIND) {
        const gb_config *tb = gb_config_get(c, "table");
        int64_t v[3];
        bool ok = tb && gb_config_kind_of(tb) == GB_CONFIG_LIST && gb_config_len(tb) == 3;
        for (int k = 0; ok && k < 3; k++) {
            const gb_config *x = gb_config_at(tb, k);
            ok = gb_config_kind_of(x) == GB_CONFIG_INT;
            v[k] = ok ? gb_config_int(x) : 0;
            ok = ok && (k == 2 || (v[k] >= 0 && v[k] < r->nconsts));
        }
        if (!ok)
            return bad(r, "a LookupTableFindV2 needs 'table': [keys entry, values entry, default], "
                       "entries below %d", r->nconsts);
        memcpy(nd->table, v, sizeof v);
        return true;
    }
    if (nd->op != GB_OP_CONST) return true;
    const gb_config *k = gb_config_get(c, "const");
    if (!k || gb_config_kind_of(k) != GB_CONFIG_INT || gb_config_int(k) < 0 || gb_config_int(k) >= r->nconsts)
        return bad(r, "a Const's 'const' must be an index below %d", r->nconsts);
    nd->const_index = (int)gb_config_int(k);
    const gb_config *st = gb_config_get(c, "strings");
    nd->strings = st && gb_config_kind_of(st) == GB_CONFIG_BOOL && gb_config_bool(st);
    if (nd->strings != (nd->out[0].dtype == GB_STRING))
        return bad(r, "a Const of dtype %s %s 'strings': true", gb_dtype_name(nd->out[0].dtype),
                   nd->strings ? "has" : "lacks");
    return true;
}

static bool read_node(reader *r, const gb_config *c, int i) {
    gb__saved_node *nd = &r->g->nodes[i];
    r->node = i;
    char op[64];
    if (gb_config_kind_of(c) != GB_CONFIG_DICT) return bad(r, "a node must be a dict");
    if (!read_string(r, c, "name", nd->name, sizeof nd->name) || !read_string(r, c, "op", op, sizeof op))
        return false;
    int id = gb_op_lookup(op);
    if (id < 0) return bad(r, "unknown op type '%s'", op);
    nd->op = (gb_op_id)id;
    if (nd->op == GB_OP_FUSED_ELEMENTWISE) return bad(r, "op type '%s' cannot be loaded", op);
    const gb_config *in = gb_config_get(c, "in");
    if (!in || gb_config_kind_of(in) != GB_CONFIG_LIST || gb_config_len(in) > GB_FUNCTION_MAX_INPUTS)
        return bad(r, "'in' must be a list of at most %d edges", GB_FUNCTION_MAX_INPUTS);
    nd->nin = gb_config_len(in);
    int arity = gb_op_table[nd->op]->arity;
    if (arity >= 0 && nd->nin != arity) return bad(r, "%s takes %d inputs, not %d", op, arity, nd->nin);
    nd->in = calloc((size_t)nd->nin + 1, sizeof *nd->in);
    nd->out = calloc(GB_MAX_OUTPUTS, sizeof *nd->out);
    if (!nd->in || !nd->out) return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", r->what), false;
    for (int j = 0; j < nd->nin; j++)
        if (!read_edge(r, gb_config_at(in, j), i, &nd->in[j])) return false;
    bool cf = nd->op == GB_OP_IF || nd->op == GB_OP_WHILE;   /* attributes: its sub-graphs */
    bool attrs = cf || (r->version >= 2 ? read_named_attrs(r, c, nd->op, &nd->attrs)
                                         : read_attrs(r, c, &nd->attrs));
    if (!read_outputs(r, c, nd) || !attrs || !check_kind(r, c, nd)) return false;
    nd->value0 = r->g->nvalues;
    r->g->nvalues += nd->nout;
    return true;
}

/* "output_edges": one per output of a signature (outputs_given), or as
 * many as a sub-graph has, which then take their specs from the nodes. */
static bool read_output_edges(reader *r, const gb_config *d, bool outputs_given) {
    r->node = -1;
    const gb_config *e = gb_config_get(d, "output_edges");
    if (!outputs_given && e && gb_config_kind_of(e) == GB_CONFIG_LIST && gb_config_len(e) <= GB_FUNCTION_MAX_OUTPUTS) {
        r->g->noutputs = gb_config_len(e);
        if (!alloc_specs(r, r->g->noutputs, &r->g->outputs, &r->g->output_names)) return false;
    }
    if (!e || gb_config_kind_of(e) != GB_CONFIG_LIST || gb_config_len(e) != r->g->noutputs)
        return bad(r, "'output_edges' must be a list of %d edges, one per output", r->g->noutputs);
    if (!(r->g->out_edges = calloc((size_t)r->g->noutputs + 1, sizeof *r->g->out_edges)))
        return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", r->what), false;
    for (int k = 0; k < r->g->noutputs; k++) {
        if (!read_edge(r, gb_config_at(e, k), r->g->n, &r->g->out_edges[k])) return false;
        const gb_out_desc *o = &r->g->nodes[r->g->out_edges[k].node].out[r->g->out_edges[k].out];
        gb_tensor_spec *s = &r->g->outputs[k];
        if (!outputs_given) {
            *s = (gb_tensor_spec){.name = r->g->output_names[k], .dtype = o->dtype, .rank = o->rank};
            memcpy(s->shape, o->shape, sizeof s->shape);
        }
        if (o->dtype != s->dtype) return bad(r, "output %d's dtype is not its node's", k);
    }
    return true;
}

/* "nodes" and "output_edges" of dict d into r->g. */
static bool parse_body(reader *r, const gb_config *d, bool outputs_given) {
    gb__saved_graph *g = r->g;
    const gb_config *nodes = gb_config_get(d, "nodes");
    if (!nodes || gb_config_kind_of(nodes) != GB_CONFIG_LIST) return bad(r, "'nodes' must be a list");
    int n = gb_config_len(nodes);
    g->nodes = calloc((size_t)n + 1, sizeof *g->nodes);
    if (!g->nodes) return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", r->what), false;
    for (int i = 0; i < n; i++) {
        g->n = i + 1;   /* the node being read is freed with the others on failure */
        if (!read_node(r, gb_config_at(nodes, i), i)) return false;
    }
    g->n = n;
    return read_output_edges(r, d, outputs_given);
}

bool gb__saved_graph_parse(const gb_config *sig, int version, int nvars, int nconsts,
                           const char *what, gb__saved_graph *g) {
    *g = (gb__saved_graph){0};
    reader r = {.what = what, .version = version, .g = g, .node = -1, .nvars = nvars, .nconsts = nconsts};
    snprintf(g->name, sizeof g->name, "?");
    if (gb_config_kind_of(sig) != GB_CONFIG_DICT) return bad(&r, "a signature must be a dict");
    return read_string(&r, sig, "name", g->name, sizeof g->name) &&
           read_specs(&r, sig, "inputs", GB_FUNCTION_MAX_INPUTS, &g->inputs, &g->input_names, &g->ninputs) &&
           read_specs(&r, sig, "outputs", GB_FUNCTION_MAX_OUTPUTS, &g->outputs, &g->output_names, &g->noutputs) &&
           parse_body(&r, sig, true);
}

void gb__saved_graph_free(gb__saved_graph *g) {
    for (int i = 0; i < g->n; i++) {
        free(g->nodes[i].in), free(g->nodes[i].out);
        for (int k = 0; k < 2; k++)
            if (g->nodes[i].sub[k]) gb__saved_graph_free(g->nodes[i].sub[k]), free(g->nodes[i].sub[k]);
    }
    free(g->nodes);
    free(g->inputs), free(g->input_names);
    free(g->outputs), free(g->output_names);
    free(g->out_edges);
    *g = (gb__saved_graph){0};
}
