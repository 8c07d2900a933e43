/* io/saved_model_load.c — loading a SavedModel directory and running its
 * signatures with none of the C code that made them (tf.saved_model.load).
 *
 * Everything is read and checked before anything is made: the files
 * against the fingerprint, the JSON's format and version, every
 * variable's entry (dtype, shape, CRC), every constant, every node of
 * every graph. Only then are the variables created and the signatures
 * wrapped as functions.
 *
 * A signature's function replays its saved graph: each node becomes the
 * same op call through the dispatcher, with its attributes' variable
 * indices turned into the loaded variables' ids. Tracing the function
 * therefore rebuilds the graph node for node (the nodes keep their saved
 * names) and runs the passes on it; and a tape around a call records
 * ordinary ops, so the loaded graph is differentiable and its variables
 * train like any others.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gb_control_flow.h"
#include "io/internal.h"
#include "ops/strings_internal.h"

typedef struct loaded_signature {
    gb__saved_graph g;
    gb_function *fn;
    struct gb_saved_model *model;
} loaded_signature;

struct gb_saved_model {
    char dir[1024];
    gb_variable **vars;
    int nvars;
    gb__ckpt_file consts;        /* kept: Const nodes read their values from it */
    const void **const_data;
    loaded_signature *sigs;
    int nsigs;
    gb_lookup_table **tables;    /* made from the file for LookupTableFindV2 nodes */
    int ntables;
    char fingerprint[17];
};

/* ---- replaying a graph ------------------------------------------------------------------------ */

static int replay_graph(const gb_saved_model *m, const gb__saved_graph *g, gb_tensor *const *in,
                        gb_tensor **out);

/* A branch, loop cond or loop body: user is the node whose sub-graph it
 * replays. */
static int replay_sub0(void *user, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)nin;
    const gb__saved_node *nd = user;
    return replay_graph(nd->model, nd->sub[0], in, out);
}

static int replay_sub1(void *user, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)nin;
    const gb__saved_node *nd = user;
    return replay_graph(nd->model, nd->sub[1], in, out);
}

/* An If or While node: gb_cond or gb_while_loop over its sub-graphs, so
 * tracing makes the same node and a tape records it as the user's code
 * would be recorded. A loop's variables keep the shapes its body was
 * traced for (-1 where they may change). */
static int replay_control_flow(const gb__saved_node *nd, gb_tensor **in, gb_tensor **out) {
    void *user = (void *)nd;   /* read only, by replay_sub0/1 */
    if (nd->op == GB_OP_IF)
        return gb_cond(in[0], replay_sub0, replay_sub1, in + 1, nd->nin - 1,
                       &(gb_cond_options){.user = user, .name = nd->name}, out);
    gb_shape_invariant inv[GB_MAX_OUTPUTS];
    for (int k = 0; k < nd->nin && k < GB_MAX_OUTPUTS; k++) {
        inv[k] = (gb_shape_invariant){.rank = nd->sub[1]->inputs[k].rank};
        memcpy(inv[k].shape, nd->sub[1]->inputs[k].shape, sizeof inv[k].shape);
    }
    return gb_while_loop(replay_sub0, replay_sub1, in, nd->nin,
                         &(gb_while_options){.user = user, .name = nd->name, .max_iterations = nd->max_iterations,
                                             .shape_invariants = inv, .nshape_invariants = nd->nin},
                         out);
}

/* A node's outputs number at most GB_MAX_OUTPUTS (the parser checks it,
 * and a sub-graph's against its node's). */
static int replay_op(const gb_saved_model *m, const gb__saved_graph *g, const gb__saved_node *nd,
                     gb_tensor **val, gb_tensor **in) {
    gb_tensor *out[GB_MAX_OUTPUTS] = {0};
    int n;
    if (nd->op == GB_OP_IF || nd->op == GB_OP_WHILE) {
        n = replay_control_flow(nd, in, out);
    } else {
        gb_attrs a = nd->attrs;
        for (int k = 0; k < a.nvars; k++) a.vars[k] = gb__variable_id(m->vars[a.vars[k]]);
        if (gb__tl_trace) gb__tl_trace->next_node_name = nd->name;
        n = gb__dispatch(nd->op, in, nd->nin, &a, out);
        if (gb__tl_trace) gb__tl_trace->next_node_name = NULL;
    }
    if (n < 0) return -1;
    for (int k = 0; k < n && k < nd->nout; k++) {
        if (gb_tensor_dtype(out[k]) != nd->out[k].dtype) n = -2;
        val[nd->value0 + k] = out[k];
    }
    if (n == nd->nout) return n;
    gb__error(GB_ERR_VALUE, NULL,
              "SavedModel '%s', graph '%s': node '%s' (%s) gave outputs other than the file "
              "says (%d%s%s)",
              m->dir, g->name, nd->name, gb_op_type_name(nd->op), nd->nout,
              nd->nout ? " of dtype " : "", nd->nout ? gb_dtype_name(nd->out[0].dtype) : "");
    return -1;
}

/* A node's inputs, gathered on the heap when they are many (a replay
 * recurses into the sub-graphs of If and While nodes). */
static int replay_node(const gb_saved_model *m, const gb__saved_graph *g, const gb__saved_node *nd,
                       gb_tensor **val) {
    gb_tensor *few[8], **in = nd->nin <= 8 ? few : malloc((size_t)nd->nin * sizeof *in);
    if (!in) return gb__error(GB_ERR_MEMORY, NULL, "SavedModel: out of memory"), -1;
    for (int j = 0; j < nd->nin; j++) in[j] = val[g->nodes[nd->in[j].node].value0 + nd->in[j].out];
    int n = replay_op(m, g, nd, val, in);
    if (in != few) free(in);
    return n;
}

/* Runs g's nodes in order on in; writes its outputs, returns how many or -1. */
static int replay_graph(const gb_saved_model *m, const gb__saved_graph *g, gb_tensor *const *in,
                        gb_tensor **out) {
    gb_tensor **val = calloc((size_t)g->nvalues + 1, sizeof *val);
    if (!val) return gb__error(GB_ERR_MEMORY, NULL, "SavedModel: out of memory"), -1;
    bool ok = true;
    for (int i = 0; ok && i < g->n; i++) {
        const gb__saved_node *nd = &g->nodes[i];
        if (nd->op == GB_OP_PLACEHOLDER) {
            val[nd->value0] = in[nd->attrs.i[0]];
        } else if (nd->op == GB_OP_CONST && nd->strings) {
            const gb__ckpt_entry *e = &m->consts.entries[nd->const_index];
            ok = (val[nd->value0] = gb__strings_decode(m->const_data[nd->const_index], e->nbytes,
                                                       nd->out[0].rank, nd->out[0].shape,
                                                       e->path)) != NULL;
        } else if (nd->op == GB_OP_CONST) {
            const gb__ckpt_entry *e = &m->consts.entries[nd->const_index];
            ok = (val[nd->value0] = gb_tensor_from(e->dtype, m->const_data[nd->const_index], e->rank,
                                                   e->dims)) != NULL;
        } else {
            ok = replay_node(m, g, nd, val) >= 0;
        }
    }
    for (int k = 0; ok && k < g->noutputs; k++)
        out[k] = val[g->nodes[g->out_edges[k].node].value0 + g->out_edges[k].out];
    free(val);
    return ok ? g->noutputs : -1;
}

/* A signature's function body. */
static int replay(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                  gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    const loaded_signature *s = user;
    return replay_graph(s->model, &s->g, in, out);
}

/* ---- loading ------------------------------------------------------------------------------------ */

static const gb__ckpt_entry *entry_named(const gb__ckpt_file *f, const char *path) {
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->entries[i].path, path) == 0) return &f->entries[i];
    return NULL;
}

/* The value of the k-th variable of list, checked against the checkpoint. */
static gb_variable *load_variable(const gb_config *c, const gb__ckpt_file *ck, const char *what) {
    char who[1200];
    snprintf(who, sizeof who, "%s: variable", what);
    const char *name = gb_config_read_string(c, who, "name", NULL);
    bool trainable = true;
    if (!name || !gb_config_read_bool(c, who, "trainable", true, &trainable)) return NULL;
    const gb__ckpt_entry *e = entry_named(ck, name);
    if (!e) {
        gb__error(GB_ERR_IO, NULL, "%s: variable '%s' is not in %s", what, name, ck->path);
        return NULL;
    }
    gb_dtype dt;
    int rank;
    int64_t shape[GB_MAX_RANK];
    if (!gb__saved_spec_read(c, what, &dt, &rank, shape)) return NULL;
    if (dt != e->dtype || rank != e->rank || (rank && memcmp(shape, e->dims, (size_t)rank * sizeof *shape))) {
        gb__error(GB_ERR_IO, NULL, "%s: variable '%s' is not the dtype and shape of its value in %s", what,
                  name, ck->path);
        return NULL;
    }
    const void *data = gb__ckpt_data(ck, e);
    if (!data) return NULL;
    gb_tensor *t = gb_tensor_from(e->dtype, data, e->rank, e->dims);
    return t ? gb_variable_new(name, t, trainable) : NULL;
}

static bool load_variables(gb_saved_model *m, const gb_config *root, const gb__ckpt_file *ck,
                           const char *what) {
    const gb_config *list = gb_config_get(root, "variables");   /* a list: load_signatures checked */
    m->vars = calloc((size_t)gb_config_len(list) + 1, sizeof *m->vars);
    bool ok = m->vars != NULL;
    gb_scope_begin();
    for (int i = 0; ok && i < gb_config_len(list); i++) {
        ok = (m->vars[i] = load_variable(gb_config_at(list, i), ck, what)) != NULL;
        m->nvars += ok;
    }
    gb_scope_end();
    return ok;
}

/* Every constant's bytes, CRC-checked once. */
static bool load_constants(gb_saved_model *m) {
    m->const_data = calloc((size_t)m->consts.count + 1, sizeof *m->const_data);
    if (!m->const_data) return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", m->consts.path), false;
    for (int i = 0; i < m->consts.count; i++)
        if (!(m->const_data[i] = gb__ckpt_data(&m->consts, &m->consts.entries[i]))) return false;
    return true;
}

/* Points g's control-flow nodes (and theirs) at the model. */
static void adopt(const gb_saved_model *m, gb__saved_graph *g) {
    for (int i = 0; i < g->n; i++) {
        g->nodes[i].model = m;
        for (int k = 0; k < 2; k++)
            if (g->nodes[i].sub[k]) adopt(m, g->nodes[i].sub[k]);
    }
}

/* The table of a LookupTableFindV2 node from its two entries, owned by
 * the model; the node then names it by its id. */
static bool make_table(gb_saved_model *m, gb__saved_node *nd, const char *what) {
    const gb__ckpt_entry *ke = &m->consts.entries[nd->table[0]], *ve = &m->consts.entries[nd->table[1]];
    if (ke->dtype != GB_U8 || ke->rank != 1 || ve->dtype != GB_I64 || ve->rank != 1) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the table of node '%s' needs a uint8 and an int64 "
                  "entry, got '%s' and '%s'", what, nd->name, ke->path, ve->path);
        return false;
    }
    gb_lookup_table **grown = realloc(m->tables, (size_t)(m->ntables + 1) * sizeof *grown);
    if (!grown) return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", what), false;
    m->tables = grown;
    gb_scope_begin();
    gb_tensor *keys = gb__strings_decode(m->const_data[nd->table[0]], ke->nbytes, 1, ve->dims, ke->path);
    gb_lookup_table *t = keys ? gb__lookup_table_make(ke->path, gb_data_strings(keys),
                                                      m->const_data[nd->table[1]], ve->dims[0],
                                                      nd->table[2])
                              : NULL;
    gb_scope_end();
    if (!t) return false;
    m->tables[m->ntables++] = t;
    nd->attrs.i[0] = gb__lookup_table_id(t);
    return true;
}

/* A Const node's saved shape and dtype are its value's (in sub-graphs too). */
static bool consts_match(gb_saved_model *m, const gb__saved_graph *g, const char *what) {
    for (int i = 0; i < g->n; i++) {
        const gb__saved_node *nd = &g->nodes[i];
        for (int k = 0; k < 2; k++)
            if (nd->sub[k] && !consts_match(m, nd->sub[k], what)) return false;
        if (nd->op == GB_OP_LOOKUP_TABLE_FIND && !make_table(m, (gb__saved_node *)nd, what)) return false;
        if (nd->op != GB_OP_CONST) continue;
        const gb__ckpt_entry *e = &m->consts.entries[nd->const_index];
        if (nd->strings) { /* gb__strings_decode checks the rest when the node runs */
            if (e->dtype == GB_U8 && e->rank == 1) continue;
            gb__error(GB_ERR_VALUE, NULL, "%s: graph '%s': string Const '%s' has the entry '%s' "
                      "of dtype %s rank %d, not uint8 rank 1", what, g->name, nd->name, e->path,
                      gb_dtype_name(e->dtype), e->rank);
            return false;
        }
        bool same = e->dtype == nd->out[0].dtype && e->rank == nd->out[0].rank &&
                    (e->rank == 0 || !memcmp(e->dims, nd->out[0].shape, (size_t)e->rank * sizeof *e->dims));
        if (!same) {
            gb__error(GB_ERR_VALUE, NULL, "%s: graph '%s': Const '%s' is not the shape or dtype of its value '%s'",
                      what, g->name, nd->name, e->path);
            return false;
        }
    }
    return true;
}

static bool load_signatures(gb_saved_model *m, const gb_config *root, const char *what) {
    const gb_config *vars = gb_config_get(root, "variables");
    if (!vars || gb_config_kind_of(vars) != GB_CONFIG_LIST) {
        gb__error(GB_ERR_IO, NULL, "%s: 'variables' must be a list", what);
        return false;
    }
    int nvars = gb_config_len(vars);
    const gb_config *list = gb_config_get(root, "signatures");
    if (!list || gb_config_kind_of(list) != GB_CONFIG_LIST || gb_config_len(list) < 1 ||
        gb_config_len(list) > 64) {
        gb__error(GB_ERR_IO, NULL, "%s: 'signatures' must be a list of 1 to 64 signatures", what);
        return false;
    }
    m->sigs = calloc((size_t)gb_config_len(list), sizeof *m->sigs);
    if (!m->sigs) return gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", what), false;
    for (int i = 0; i < gb_config_len(list); i++) {
        loaded_signature *s = &m->sigs[m->nsigs++];
        s->model = m;
        if (!gb__saved_graph_parse(gb_config_at(list, i), (int)gb_config_int(gb_config_get(root, "version")),
                                   nvars, m->consts.count, what, &s->g) ||
            !consts_match(m, &s->g, what))
            return false;
        adopt(m, &s->g);
        for (int k = 0; k < i; k++)
            if (strcmp(m->sigs[k].g.name, s->g.name) == 0) {
                gb__error(GB_ERR_IO, NULL, "%s: two signatures are named '%s'", what, s->g.name);
                return false;
            }
    }
    return true;
}

static bool check_format(const gb_config *root, const char *what) {
    const char *format = gb_config_string(gb_config_get(root, "format"));
    const gb_config *v = gb_config_get(root, "version");
    if (!format || strcmp(format, GB__SAVED_MODEL_FORMAT) != 0 || !v || gb_config_kind_of(v) != GB_CONFIG_INT) {
        gb__error(GB_ERR_IO, NULL, "%s: not a glassbox SavedModel (no \"format\": \"%s\" and version)",
                  what, GB__SAVED_MODEL_FORMAT);
        return false;
    }
    if (gb_config_int(v) >= 1 && gb_config_int(v) <= GB_SAVED_MODEL_VERSION) return true;
    gb__error(GB_ERR_IO, NULL, "%s: format version %lld is not one this glassbox reads (1 to %d)%s", what,
              (long long)gb_config_int(v), GB_SAVED_MODEL_VERSION,
              gb_config_int(v) > GB_SAVED_MODEL_VERSION ? "; it was written by a newer glassbox" : "");
    return false;
}

static bool make_functions(gb_saved_model *m) {
    for (int i = 0; i < m->nsigs; i++) {
        loaded_signature *s = &m->sigs[i];
        gb_function_options o = {.user = s, .input_signature = s->g.inputs, .ninput_signature = s->g.ninputs};
        if (!(s->fn = gb__function_new_owned(s->g.name, replay, &o))) return false;
    }
    return true;
}

gb_saved_model *gb__saved_model_assemble(const char *dir, const char *json, size_t size,
                                         const gb__ckpt_file *vars, gb__ckpt_file *consts) {
    gb_saved_model *m = calloc(1, sizeof *m);
    if (!m) {
        gb__ckpt_close(consts);
        return gb__error(GB_ERR_MEMORY, NULL, "gb_saved_model_load: out of memory"), NULL;
    }
    m->consts = *consts;
    snprintf(m->dir, sizeof m->dir, "%s", dir);
    char what[1100];
    snprintf(what, sizeof what, "%s/" GB__SAVED_MODEL_JSON, dir);
    gb_config *root = gb_config_from_json(json, size, what);
    bool ok = root && check_format(root, what) && load_constants(m) &&
              load_signatures(m, root, what) && load_variables(m, root, vars, what) && make_functions(m);
    gb_config_free(root);
    if (ok) return m;
    gb_saved_model_free(m);
    return NULL;
}

/* The three files, read whole and checked against the fingerprint first
 * (a changed file is reported as changed, whatever its bytes now say),
 * then the checkpoints parsed. */
static bool read_files(const char *dir, char **json, size_t *size, gb__ckpt_file *vars,
                       gb__ckpt_file *consts, char hex[17]) {
    char path[GB__SAVED_MODEL_NFILES][1100];
    unsigned char *bytes[GB__SAVED_MODEL_NFILES] = {0};
    size_t sizes[GB__SAVED_MODEL_NFILES] = {0};
    uint64_t h[GB__SAVED_MODEL_NFILES];
    bool ok = true;
    for (int i = 0; ok && i < GB__SAVED_MODEL_NFILES; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", dir, gb__saved_model_files[i]);
        ok = (bytes[i] = gb__file_read(path[i], "a SavedModel file", &sizes[i])) != NULL;
        if (ok) h[i] = gb__fnv1a64(bytes[i], sizes[i]);
    }
    ok = ok && gb__fingerprint_check(dir, h, hex);
    if (!ok) {
        for (int i = 0; i < GB__SAVED_MODEL_NFILES; i++) free(bytes[i]);
        return false;
    }
    *json = (char *)bytes[0], *size = sizes[0];
    /* Each parse takes its bytes over, also when it fails. */
    bool v = gb__ckpt_parse(path[1], bytes[1], sizes[1], vars);
    return gb__ckpt_parse(path[2], bytes[2], sizes[2], consts) && v;
}

gb_saved_model *gb_saved_model_load(const char *dir) {
    if (!gb_ok()) return NULL;
    if (!dir || !dir[0] || strlen(dir) >= 1000) {
        gb__error(GB_ERR_VALUE, NULL, "gb_saved_model_load: a directory path (under 1000 bytes) is needed");
        return NULL;
    }
    char *json = NULL, hex[17] = "";
    size_t size = 0;
    gb__ckpt_file vars = {0}, consts = {0};
    gb_saved_model *m = NULL;
    if (read_files(dir, &json, &size, &vars, &consts, hex)) {
        m = gb__saved_model_assemble(dir, json, size, &vars, &consts);
        consts = (gb__ckpt_file){0};   /* m has them, or freed them */
    }
    if (m) snprintf(m->fingerprint, sizeof m->fingerprint, "%s", hex);
    free(json);
    if (vars.bytes) gb__ckpt_close(&vars);
    if (consts.bytes) gb__ckpt_close(&consts);
    return m;
}

void gb_saved_model_free(gb_saved_model *m) {
    if (!m) return;
    for (int i = 0; i < m->nsigs; i++) {
        gb_function_free(m->sigs[i].fn);
        gb__saved_graph_free(&m->sigs[i].g);
    }
    for (int i = 0; i < m->nvars; i++) gb_variable_free(m->vars[i]);
    for (int i = 0; i < m->ntables; i++) gb_lookup_table_free(m->tables[i]);
    free(m->tables);
    free(m->sigs);
    free(m->vars);
    free(m->const_data);
    if (m->consts.bytes) gb__ckpt_close(&m->consts);
    free(m);
}

/* ---- what a loaded model offers ------------------------------------------------------------------ */

static loaded_signature *find(const gb_saved_model *m, const char *name) {
    for (int i = 0; m && name && i < m->nsigs; i++)
        if (strcmp(m->sigs[i].g.name, name) == 0) return &m->sigs[i];
    return NULL;
}

int gb_saved_model_signature_count(const gb_saved_model *m) { return m ? m->nsigs : 0; }

const char *gb_saved_model_signature_name(const gb_saved_model *m, int i) {
    return m && i >= 0 && i < m->nsigs ? m->sigs[i].g.name : NULL;
}

const gb_tensor_spec *gb_saved_model_inputs(const gb_saved_model *m, const char *signature, int *n) {
    const loaded_signature *s = find(m, signature);
    if (n) *n = s ? s->g.ninputs : 0;
    return s ? s->g.inputs : NULL;
}

const gb_tensor_spec *gb_saved_model_outputs(const gb_saved_model *m, const char *signature, int *n) {
    const loaded_signature *s = find(m, signature);
    if (n) *n = s ? s->g.noutputs : 0;
    return s ? s->g.outputs : NULL;
}

int gb_saved_model_node_count(const gb_saved_model *m, const char *signature) {
    const loaded_signature *s = find(m, signature);
    return s ? s->g.n : -1;
}

gb_function *gb_saved_model_function(gb_saved_model *m, const char *signature) {
    if (!gb_ok()) return NULL;
    loaded_signature *s = find(m, signature);
    if (s) return s->fn;
    gb__error(GB_ERR_VALUE, NULL, "SavedModel '%s' has no signature '%s'", m ? m->dir : "(NULL)",
              signature ? signature : "(NULL)");
    return NULL;
}

int gb_saved_model_call(gb_saved_model *m, const char *signature, gb_tensor *const *inputs,
                        int ninputs, gb_tensor **outputs) {
    gb_function *f = gb_saved_model_function(m, signature);
    return f ? gb_function_call(f, inputs, ninputs, NULL, 0, outputs) : -1;
}

gb_variable *const *gb_saved_model_variables(gb_saved_model *m, int *n) {
    if (n) *n = m ? m->nvars : 0;
    return m ? m->vars : NULL;
}

const char *gb_saved_model_fingerprint(const gb_saved_model *m) { return m ? m->fingerprint : ""; }
