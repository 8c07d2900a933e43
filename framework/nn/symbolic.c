/* nn/symbolic.c — symbolic tensors and symbolic layer calls (Keras'
 * KerasTensor and layer(x) on one).
 *
 * Each layer call on symbols is a node: the layer, the symbols it was
 * called on, and the symbols it made (embedded in the node, so a symbol
 * is a node plus an output index). Nodes are reference counted: a symbol
 * keeps its node alive, a node keeps its input symbols and its layer
 * alive, so a model that keeps its output symbols keeps the whole graph
 * between inputs and outputs. The caller's reference to a new symbol
 * belongs to the current memory scope, as a tensor would.
 *
 * A call's output dtypes and shapes come from running the layer once on
 * zeros (unknown dims as 1: cheap, and it builds the layer as Keras'
 * first call does), with the shapes then taken from the layer's shape
 * function where it has one, so unknown dims stay unknown.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nn/functional_internal.h"

static gb__fnode *node_new(gb_module *layer, const char *name, int nin, gb_sym *const *in,
                           int nout) {
    gb__fnode *n = calloc(1, sizeof *n + (size_t)nout * sizeof(gb_sym));
    if (!n) {
        gb__error(GB_ERR_MEMORY, "Functional", "out of memory recording a layer call");
        return NULL;
    }
    n->refs = 1;
    n->layer = layer;
    snprintf(n->name, sizeof n->name, "%s", name);
    n->nin = nin;
    for (int i = 0; i < nin; i++) {
        n->in[i] = in[i];
        gb__sym_retain(in[i]);
    }
    n->nout = nout;
    for (int i = 0; i < nout; i++) {
        n->out[i].node = n;
        n->out[i].index = i;
    }
    return n;
}

gb_sym *gb__sym_retain(gb_sym *s) {
    if (s) s->node->refs++;
    return s;
}

void gb__sym_release(gb_sym *s) {
    if (!s) return;
    gb__fnode *n = s->node;
    if (--n->refs > 0) return;
    for (int i = 0; i < n->nin; i++) gb__sym_release(n->in[i]);
    gb_module_free(n->layer);
    free(n);
}

static void release_deferred(void *s) { gb__sym_release(s); }

/* Hands the caller's reference to the current memory scope. */
static gb_sym *scope_owned(gb__fnode *n) {
    if (!gb__scope_defer(release_deferred, &n->out[0])) {
        gb__sym_release(&n->out[0]);
        return NULL;
    }
    return &n->out[0];
}

gb_sym *gb_input(gb_dtype dt, int rank, const int64_t *shape, const char *name) {
    if (!gb_ok()) return NULL;
    if ((unsigned)dt >= GB_DTYPE_COUNT || rank < 0 || rank >= GB_MAX_RANK || (rank && !shape)) {
        gb__error(GB_ERR_VALUE, "Input",
                  "Input: %s", (unsigned)dt >= GB_DTYPE_COUNT ? "unknown dtype"
                               : rank < 0 || rank >= GB_MAX_RANK
                                   ? "rank must be in 0..7 (the batch dim comes on top)"
                                   : "shape is NULL");
        return NULL;
    }
    for (int i = 0; i < rank; i++) {
        if (shape[i] >= -1 && shape[i] != 0) continue;
        gb__error(GB_ERR_VALUE, "Input", "Input: dim %d is %lld; dims are positive or -1 (unknown)",
                  i, (long long)shape[i]);
        return NULL;
    }
    char auto_name[64];
    if ((!name || !name[0]) && !gb__nn_auto_name("input_layer", auto_name, sizeof auto_name)) {
        gb__error(GB_ERR_MEMORY, "Input", "Input: out of memory");
        return NULL;
    }
    if (name && strlen(name) >= sizeof auto_name) {
        gb__error(GB_ERR_VALUE, "Input", "Input: name '%s' is longer than 63 characters", name);
        return NULL;
    }
    gb__fnode *n = node_new(NULL, name && name[0] ? name : auto_name, 0, NULL, 1);
    if (!n) return NULL;
    gb_tensor_spec *spec = &n->out[0].spec;
    spec->name = n->name;
    spec->dtype = dt;
    spec->rank = rank + 1;
    spec->shape[0] = -1;
    for (int i = 0; i < rank; i++) spec->shape[i + 1] = shape[i];
    return scope_owned(n);
}

/* Runs layer once on zeros shaped as the inputs (unknown dims as 1) and
 * records its outputs' dtypes and shapes; the batch dim becomes -1 again.
 * Builds the layer on its first call. */
static int probe(gb_module *layer, int nin, gb_sym *const *xs, gb_tensor_spec *out) {
    gb_init_scope s = gb__init_scope_begin();
    gb_tensor *in[GB_NN_MAX_IO], *res[GB_NN_MAX_IO];
    for (int i = 0; i < nin; i++) {
        const gb_tensor_spec *sp = &xs[i]->spec;
        int64_t dims[GB_MAX_RANK];
        for (int d = 0; d < sp->rank; d++) dims[d] = sp->shape[d] < 0 ? 1 : sp->shape[d];
        in[i] = gb_zeros(sp->dtype, sp->rank, dims);
    }
    int nout = gb_ok() ? gb_module_call_n(layer, nin, in, res, false) : -1;
    for (int i = 0; i < nout; i++) {
        out[i] = (gb_tensor_spec){.dtype = gb_tensor_dtype(res[i]), .rank = gb_rank(res[i])};
        memcpy(out[i].shape, gb_shape(res[i]), (size_t)out[i].rank * sizeof(int64_t));
        if (out[i].rank > 0 && xs[0]->spec.rank > 0 && xs[0]->spec.shape[0] < 0)
            out[i].shape[0] = -1;
    }
    gb__init_scope_end(s);
    return nout;
}

/* Exact output shapes from the layer's shape function, which keeps
 * unknown dims unknown (the probe saw them as 1). */
static bool exact_shapes(gb_module *layer, int nin, gb_sym *const *xs, int nout,
                         gb_tensor_spec *out) {
    const gb_module_type *t = gb_module_get_type(layer);
    if (t->output_shape && nin == 1 && nout == 1)
        return t->output_shape(layer, xs[0]->spec.rank, xs[0]->spec.shape, &out[0].rank,
                               out[0].shape);
    if (!t->output_specs) return true;
    gb_tensor_spec in[GB_NN_MAX_IO], exact[GB_NN_MAX_IO];
    for (int i = 0; i < nin; i++) in[i] = xs[i]->spec;
    if (t->output_specs(layer, nin, in, exact) != nout) return false;
    for (int i = 0; i < nout; i++) {
        out[i].rank = exact[i].rank;
        memcpy(out[i].shape, exact[i].shape, sizeof out[i].shape);
    }
    return true;
}

/* The layer's own checks on the symbols' shapes, before the probe, so an
 * error shows the unknown dims as the user wrote them. */
static bool check_symbolic(gb_module *layer, int nin, gb_sym *const *xs) {
    const gb_module_type *t = gb_module_get_type(layer);
    const gb_tensor_spec *x = &xs[0]->spec;
    if (t->call) return gb_module_build(layer, x->dtype, x->rank, x->shape);
    if (!t->output_specs || (t->build && !gb_module_built(layer))) return true;
    gb_tensor_spec in[GB_NN_MAX_IO], out[GB_NN_MAX_IO];
    for (int i = 0; i < nin; i++) in[i] = xs[i]->spec;
    return t->output_specs(layer, nin, in, out) >= 0;
}

/* The call on symbols; on success the node holds the layer. */
static gb_sym *apply(gb_module *layer, int n, gb_sym *const *xs) {
    if (!gb_ok()) return NULL;
    if (!layer || !xs || n < 1 || n > GB_NN_MAX_IO) {
        gb__error(GB_ERR_VALUE, layer ? gb_module_class_name(layer) : NULL, "gb_apply: %s",
                  !layer ? "the layer is NULL"
                         : !xs ? "the inputs are NULL" : "the number of inputs is outside 1..16");
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (xs[i]) continue;
        gb__nn_error(layer, GB_ERR_VALUE, "symbolic input %d is NULL", i);
        return NULL;
    }
    gb_tensor_spec out[GB_NN_MAX_IO];
    if (!check_symbolic(layer, n, xs)) return NULL;
    int nout = probe(layer, n, xs, out);
    if (nout < 1 || !exact_shapes(layer, n, xs, nout, out)) return NULL;
    gb__fnode *node = node_new(gb__module_take(layer), gb_module_name(layer), n, xs, nout);
    if (!node) return NULL;
    for (int i = 0; i < nout; i++) {
        node->out[i].spec = out[i];
        node->out[i].spec.name = node->name;
    }
    return scope_owned(node);
}

gb_sym *gb_apply_n(gb_module *layer, int n, gb_sym *const *xs) {
    gb_sym *out = apply(layer, n, xs);
    /* The first call takes over the caller's reference also when it fails,
     * so `gb_apply(gb_dense_new(...), x)` leaks nothing on an error. */
    if (!out && layer) gb_module_free(gb__module_take(layer));
    return out;
}

gb_sym *gb_apply(gb_module *layer, gb_sym *x) { return gb_apply_n(layer, 1, &x); }

gb_sym *gb_sym_output(gb_sym *s, int i) {
    if (!s) return NULL;
    if (i < 0 || i >= s->node->nout) {
        gb__error(GB_ERR_VALUE, "Functional", "'%s' has %d outputs; there is no output %d",
                  s->node->name, s->node->nout, i);
        return NULL;
    }
    return &s->node->out[i];
}

int gb_sym_num_outputs(const gb_sym *s) { return s ? s->node->nout : 0; }
gb_tensor_spec gb_sym_spec(const gb_sym *s) { return s ? s->spec : (gb_tensor_spec){0}; }
const char *gb_sym_name(const gb_sym *s) { return s ? s->node->name : ""; }
