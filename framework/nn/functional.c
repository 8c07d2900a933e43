/* nn/functional.c — functional models: keras.Model(inputs, outputs).
 *
 * At construction the graph of symbolic calls between the inputs and the
 * outputs is walked once, depth first from the outputs, into a list of
 * steps in an order that computes every value before its use. Values are
 * numbered: the model's inputs first, then each step's outputs. A call
 * is then a loop over the steps with an array of tensor pointers in the
 * current memory scope — nothing is looked up by name or hashed per call.
 *
 * The model keeps its input and output symbols (so the nodes and layers
 * between them stay alive) and holds each distinct layer once as a
 * submodule, so variables, get_layer, trainable and freeing work as for
 * any module. A layer called twice (shared) is one submodule and two
 * steps; a model used as a layer is one step that runs its own steps.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nn/functional_internal.h"

static int functional_call(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out,
                           bool training);
static int functional_specs(gb_module *m, int nin, const gb_tensor_spec *in, gb_tensor_spec *out);
static void functional_free(gb_module *m);

const gb_module_type gb__functional_type = {
    .class_name = "Functional",
    .default_name = "functional",
    .state_size = sizeof(functional_state),
    .call_n = functional_call,
    .output_specs = functional_specs,
    .free = functional_free,
    .get_config = gb__functional_get_config,
    .from_config = gb__functional_from_config,
};

bool gb_is_functional(const gb_module *m) { return gb_module_get_type(m) == &gb__functional_type; }

static functional_state *state_of(const gb_module *m) {
    return gb_is_functional(m) ? gb_module_state((gb_module *)m) : NULL;
}

/* ---- construction ------------------------------------------------------------------------ */

static int value_index(const functional_state *s, const gb_sym *x) {
    for (int i = 0; i < s->nvalues; i++)
        if (s->values[i] == x) return i;
    return -1;
}

static bool push_value(gb_module *m, functional_state *s, gb_sym *x) {
    if (s->nvalues == s->capvalues) {
        int cap = s->capvalues ? 2 * s->capvalues : 16;
        gb_sym **grown = realloc(s->values, (size_t)cap * sizeof *grown);
        if (!grown) {
            gb__nn_error(m, GB_ERR_MEMORY, "out of memory");
            return false;
        }
        s->values = grown;
        s->capvalues = cap;
    }
    s->values[s->nvalues++] = x;
    return true;
}

static bool push_step(gb_module *m, functional_state *s, fstep step) {
    if (s->nsteps == s->capsteps) {
        int cap = s->capsteps ? 2 * s->capsteps : 8;
        fstep *grown = realloc(s->steps, (size_t)cap * sizeof *grown);
        if (!grown) {
            gb__nn_error(m, GB_ERR_MEMORY, "out of memory");
            return false;
        }
        s->steps = grown;
        s->capsteps = cap;
    }
    s->steps[s->nsteps++] = step;
    return true;
}

/* Makes x computable: its node's inputs first, then the node as a step.
 * `user` names who needs x, for the disconnected-graph error. */
static bool visit(gb_module *m, functional_state *s, gb_sym *x, const char *user) {
    if (value_index(s, x) >= 0) return true;
    gb__fnode *n = x->node;
    if (!n->layer) {
        gb__nn_error(m, GB_ERR_VALUE,
                     "graph disconnected: %s needs input '%s', which is not one of the model's "
                     "inputs",
                     user, n->name);
        return false;
    }
    char who[96];
    snprintf(who, sizeof who, "layer '%s'", n->name);
    fstep step = {.node = n};
    for (int i = 0; i < n->nin; i++) {
        if (!visit(m, s, n->in[i], who)) return false;
        step.in[i] = value_index(s, n->in[i]);
    }
    step.out0 = s->nvalues;
    for (int i = 0; i < n->nout; i++)
        if (!push_value(m, s, &n->out[i])) return false;
    return push_step(m, s, step);
}

/* Each distinct layer once as a submodule; the names of a model's own
 * layers are unique, as Keras asks. */
static bool adopt_layers(gb_module *m, functional_state *s) {
    for (int i = 0; i < s->nsteps; i++) {
        gb_module *layer = s->steps[i].node->layer;
        bool held = false;
        for (int k = 0; !held && k < gb_module_num_submodules(m); k++) {
            gb_module *sub = gb_module_submodule(m, k);
            held = sub == layer;
            if (held || strcmp(gb_module_name(sub), gb_module_name(layer)) != 0) continue;
            gb__nn_error(m, GB_ERR_VALUE,
                         "two different layers are named '%s'; layer names must be unique in a "
                         "model",
                         gb_module_name(layer));
            return false;
        }
        if (!held && !gb_module_add_submodule(m, gb_module_retain(layer))) return false;
    }
    return true;
}

static bool check_io(gb_module *m, int nin, gb_sym *const *inputs, int nout,
                     gb_sym *const *outputs) {
    const char *bad = nin < 1 || nin > GB_NN_MAX_IO     ? "the number of inputs is outside 1..16"
                      : nout < 1 || nout > GB_NN_MAX_IO ? "the number of outputs is outside 1..16"
                      : !inputs || !outputs             ? "NULL input or output array"
                                                        : NULL;
    for (int i = 0; !bad && i < nin; i++) {
        if (!inputs[i]) bad = "an input symbol is NULL";
        for (int j = 0; !bad && j < i; j++)
            if (inputs[j] == inputs[i]) bad = "the same symbol is given twice as an input";
    }
    for (int i = 0; !bad && i < nout; i++)
        if (!outputs[i]) bad = "an output symbol is NULL";
    if (bad) gb__nn_error(m, GB_ERR_VALUE, "%s", bad);
    return !bad;
}

static bool wire(gb_module *m, functional_state *s, int nin, gb_sym *const *inputs, int nout,
                 gb_sym *const *outputs) {
    if (!check_io(m, nin, inputs, nout, outputs)) return false;
    for (int i = 0; i < nin; i++) {
        s->inputs[s->nin++] = gb__sym_retain(inputs[i]);
        if (!push_value(m, s, inputs[i])) return false;
    }
    for (int i = 0; i < nout; i++) {
        char who[96];
        snprintf(who, sizeof who, "output %d ('%s')", i, outputs[i]->node->name);
        if (!visit(m, s, outputs[i], who)) return false;
        s->outputs[s->nout++] = gb__sym_retain(outputs[i]);
        s->out_value[i] = value_index(s, outputs[i]);
    }
    return adopt_layers(m, s);
}

gb_module *gb_functional_new(int nin, gb_sym *const *inputs, int nout, gb_sym *const *outputs,
                             const char *name) {
    if (!gb_ok()) return NULL;
    gb_module *m = gb_module_new(&gb__functional_type, name, 0);
    if (!m) return NULL;
    functional_state *s = gb_module_state(m);
    bool ok = wire(m, s, nin, inputs, nout, outputs);
    free(s->values);
    s->values = NULL;
    if (!ok) {
        gb_module_free(m);
        return NULL;
    }
    const gb_tensor_spec *in = &inputs[0]->spec, *out = &outputs[0]->spec;
    gb__module_mark_built(m, in->dtype, in->rank, in->shape, out->rank, out->shape);
    return m;
}

static void functional_free(gb_module *m) {
    functional_state *s = gb_module_state(m);
    for (int i = 0; i < s->nin; i++) gb__sym_release(s->inputs[i]);
    for (int i = 0; i < s->nout; i++) gb__sym_release(s->outputs[i]);
    free(s->steps);
    free(s->values);
}

/* ---- calls --------------------------------------------------------------------------------- */

/* An input against the model's input i: same dtype and rank, equal dims
 * wherever the model's are known. */
static bool input_fits(gb_module *m, const functional_state *s, int i, gb_dtype dt, int rank,
                       const int64_t *dims) {
    const gb_tensor_spec *want = &s->inputs[i]->spec;
    bool ok = dt == want->dtype && rank == want->rank;
    for (int d = 1; ok && d < rank; d++) ok = want->shape[d] < 0 || dims[d] < 0 || dims[d] == want->shape[d];
    if (ok) return true;
    char a[128], b[128];
    gb__nn_error(m, GB_ERR_SHAPE, "input '%s' expects %s %s, got %s %s",
                 s->inputs[i]->node->name, gb_dtype_name(want->dtype),
                 gb__nn_shape_text(want->rank, want->shape, a, sizeof a), gb_dtype_name(dt),
                 gb__shape_fmt(rank, dims, b, sizeof b));
    return false;
}

static bool arity_fits(gb_module *m, const functional_state *s, int nin) {
    if (nin == s->nin) return true;
    gb__nn_error(m, GB_ERR_VALUE, "the model has %d input%s, called with %d", s->nin,
                 s->nin == 1 ? "" : "s", nin);
    return false;
}

static int functional_specs(gb_module *m, int nin, const gb_tensor_spec *in, gb_tensor_spec *out) {
    const functional_state *s = gb_module_state(m);
    if (!arity_fits(m, s, nin)) return -1;
    for (int i = 0; i < nin; i++)
        if (!input_fits(m, s, i, in[i].dtype, in[i].rank, in[i].shape)) return -1;
    for (int i = 0; i < s->nout; i++) {
        out[i] = s->outputs[i]->spec;
        if (out[i].rank > 0 && in[0].rank > 0) out[i].shape[0] = in[0].shape[0];
    }
    return s->nout;
}

static int functional_call(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out,
                           bool training) {
    const functional_state *s = gb_module_state(m);
    if (!arity_fits(m, s, nin)) return -1;
    for (int i = 0; i < nin; i++)
        if (!input_fits(m, s, i, gb_tensor_dtype(in[i]), gb_rank(in[i]), gb_shape(in[i]))) return -1;
    int nvalues = nin;
    for (int i = 0; i < s->nsteps; i++) nvalues += s->steps[i].node->nout;
    gb_tensor **v = gb__scope_alloc((size_t)nvalues * sizeof *v);
    if (!v) return -1;
    memcpy(v, in, (size_t)nin * sizeof *v);
    for (int i = 0; i < s->nsteps; i++) {
        const fstep *st = &s->steps[i];
        gb_tensor *args[GB_NN_MAX_IO];
        for (int k = 0; k < st->node->nin; k++) args[k] = v[st->in[k]];
        int got = gb_module_call_n(st->node->layer, st->node->nin, args, v + st->out0, training);
        if (got == st->node->nout) continue;
        if (got >= 0)
            gb__nn_error(m, GB_ERR_STATE, "layer '%s' returned %d outputs, %d when it was called "
                         "on symbols", st->node->name, got, st->node->nout);
        return -1;
    }
    for (int i = 0; i < s->nout; i++) out[i] = v[s->out_value[i]];
    return s->nout;
}

/* ---- inspection ---------------------------------------------------------------------------- */

int gb_model_num_inputs(const gb_module *m) {
    const functional_state *s = state_of(m);
    return s ? s->nin : m ? 1 : 0;
}

int gb_model_num_outputs(const gb_module *m) {
    const functional_state *s = state_of(m);
    return s ? s->nout : m ? 1 : 0;
}

/* s's symbol list entry i, or NULL with an error naming what is wrong. */
static gb_sym *sym_at(const gb_module *m, gb_sym *const *list, int n, int i, const char *what) {
    if (!state_of(m)) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, "Functional", "model %ss: '%s' is not a functional model",
                      what, gb_module_name(m));
        return NULL;
    }
    if (i >= 0 && i < n) return list[i];
    gb__nn_error(m, GB_ERR_VALUE, "the model has %d %ss; there is no %s %d", n, what, what, i);
    return NULL;
}

gb_sym *gb_model_input(const gb_module *m, int i) {
    const functional_state *s = state_of(m);
    return sym_at(m, s ? s->inputs : NULL, s ? s->nin : 0, i, "input");
}

gb_sym *gb_model_output(const gb_module *m, int i) {
    const functional_state *s = state_of(m);
    return sym_at(m, s ? s->outputs : NULL, s ? s->nout : 0, i, "output");
}

const char *gb_model_output_name(const gb_module *m, int i) {
    const functional_state *s = state_of(m);
    if (!s) return m && i == 0 ? gb_module_name(m) : "";
    return i >= 0 && i < s->nout ? s->outputs[i]->node->name : "";
}

gb_sym *gb_model_layer_output(const gb_module *m, const char *layer, int call) {
    const functional_state *s = state_of(m);
    if (!s || !layer) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, "Functional", "gb_model_layer_output: %s",
                      !layer ? "the layer name is NULL" : "not a functional model");
        return NULL;
    }
    int seen = 0;
    for (int i = 0; i < s->nsteps; i++) {
        gb__fnode *n = s->steps[i].node;
        if (strcmp(gb_module_name(n->layer), layer) == 0 && seen++ == call) return &n->out[0];
    }
    gb__nn_error((gb_module *)m, GB_ERR_VALUE, "layer '%s' %s", layer,
                 seen ? "is not called that many times in the model"
                      : "is not in the model");
    return NULL;
}

/* ---- summary rows ------------------------------------------------------------------------------ */

int gb__functional_num_rows(const gb_module *m) {
    const functional_state *s = state_of(m);
    return s ? s->nin + gb_module_num_submodules(m) : 0;
}

int gb__functional_call_number(const functional_state *s, const gb__fnode *n) {
    int k = 0;
    for (int i = 0; i < s->nsteps && s->steps[i].node != n; i++)
        k += s->steps[i].node->layer == n->layer;
    return k;
}

/* "producer[call][output]" for every input of every call of layer. */
static void connections(const functional_state *s, const gb_module *layer, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->nsteps; i++) {
        const gb__fnode *node = s->steps[i].node;
        if (node->layer != layer) continue;
        for (int k = 0; k < node->nin && used < n; k++) {
            const gb_sym *x = node->in[k];
            int call = x->node->layer ? gb__functional_call_number(s, x->node) : 0;
            used += (size_t)snprintf(buf + used, n - used, "%s%s[%d][%d]", used ? "\n" : "",
                                     x->node->name, call, x->index);
        }
    }
}

void gb__functional_row(gb_module *m, int i, gb__summary_row *row) {
    const functional_state *s = state_of(m);
    if (i < s->nin) {
        const gb_sym *x = s->inputs[i];
        snprintf(row->name, sizeof row->name, "%s (InputLayer)", x->node->name);
        gb__nn_shape_text(x->spec.rank, x->spec.shape, row->shape, sizeof row->shape);
        row->params = 0;
        snprintf(row->connected, sizeof row->connected, "-");
        return;
    }
    gb_module *layer = gb_module_submodule(m, i - s->nin);
    snprintf(row->name, sizeof row->name, "%s (%s)", gb_module_name(layer),
             gb_module_class_name(layer));
    for (int k = 0; k < s->nsteps; k++) {
        if (s->steps[k].node->layer != layer) continue;
        const gb_tensor_spec *o = &s->steps[k].node->out[0].spec;
        gb__nn_shape_text(o->rank, o->shape, row->shape, sizeof row->shape);
        break;
    }
    row->params = gb_module_count_params(layer);
    connections(s, layer, row->connected, sizeof row->connected);
}
