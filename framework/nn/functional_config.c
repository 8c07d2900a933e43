/* nn/functional_config.c — a functional model's config and its rebuild.
 *
 *   {"name": "towers", "trainable": true,
 *    "inputs":  [{"name": "a", "dtype": "float32", "shape": [-1, 4]}, ...],
 *    "layers":  [{"class_name": "Dense", "config": {...}}, ...],   each layer once
 *    "calls":   [{"layer": "shared", "args": [["a", 0, 0]]}, ...],  in the order they run
 *    "outputs": [["main", 0, 0], ...]}
 *
 * A value is named [producer, call, output]: the input or layer that
 * makes it, which call of that layer (a shared layer has several), which
 * of the call's outputs. Rebuilding makes the inputs, the layers from
 * their configs, then replays the calls in order on symbols — the same
 * path a user's code takes, so every check runs again on the file's data.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nn/functional_internal.h"

static bool put_ref(gb_config *list, const gb_sym *x, const functional_state *s) {
    gb_config *ref = gb_config_put_list(list, NULL);
    int call = x->node->layer ? gb__functional_call_number(s, x->node) : 0;
    return ref && gb_config_put_string(ref, NULL, x->node->name) && gb_config_put_int(ref, NULL, call) &&
           gb_config_put_int(ref, NULL, x->index);
}

static bool put_inputs(gb_config *c, const functional_state *s) {
    gb_config *inputs = gb_config_put_list(c, "inputs");
    for (int i = 0; inputs && i < s->nin; i++) {
        const gb_tensor_spec *sp = &s->inputs[i]->spec;
        gb_config *d = gb_config_put_dict(inputs, NULL);
        if (!d || !gb_config_put_string(d, "name", s->inputs[i]->node->name) ||
            !gb_config_put_string(d, "dtype", gb_dtype_name(sp->dtype)) ||
            !gb_config_put_ints(d, "shape", sp->rank, sp->shape))
            return false;
    }
    return inputs != NULL;
}

bool gb__functional_get_config(gb_module *m, gb_config *c) {
    const functional_state *s = gb_module_state(m);
    if (!put_inputs(c, s)) return false;
    gb_config *layers = gb_config_put_list(c, "layers");
    for (int i = 0; layers && i < gb_module_num_submodules(m); i++) {
        gb_config *item = gb_config_put_dict(layers, NULL);
        if (!item || !gb__module_config_into(gb_module_submodule(m, i), item)) return false;
    }
    gb_config *calls = gb_config_put_list(c, "calls");
    for (int i = 0; calls && i < s->nsteps; i++) {
        const gb__fnode *n = s->steps[i].node;
        gb_config *call = gb_config_put_dict(calls, NULL);
        gb_config *args = call && gb_config_put_string(call, "layer", n->name)
                              ? gb_config_put_list(call, "args")
                              : NULL;
        for (int k = 0; args && k < n->nin; k++)
            if (!put_ref(args, n->in[k], s)) return false;
        if (!args) return false;
    }
    gb_config *outputs = gb_config_put_list(c, "outputs");
    for (int i = 0; outputs && i < s->nout; i++)
        if (!put_ref(outputs, s->outputs[i], s)) return false;
    return layers && calls && outputs;
}

/* ---- rebuilding ----------------------------------------------------------------------------- */

enum { MAX_LAYERS = 1024 };

/* What is made so far: the inputs, the layers, the symbols of each call. */
typedef struct rebuild {
    gb_sym *inputs[GB_NN_MAX_IO];
    int nin;
    gb_module **layers;
    int *calls_made;          /* per layer: calls replayed so far */
    bool *applied;            /* per layer: a call took its reference */
    int nlayers;
    gb_sym **made;            /* per replayed call: its first output */
    int *made_layer, *made_call;
    int nmade;
} rebuild;

static const char *const WHO = "Functional";

static int layer_index(const rebuild *r, const char *name) {
    for (int i = 0; i < r->nlayers; i++)
        if (strcmp(gb_module_name(r->layers[i]), name) == 0) return i;
    return -1;
}

/* The symbol a [producer, call, output] reference names, or NULL with an error. */
static gb_sym *resolve(const rebuild *r, const gb_config *ref) {
    const char *name = gb_config_string(gb_config_at(ref, 0));
    const gb_config *call = gb_config_at(ref, 1), *out = gb_config_at(ref, 2);
    if (gb_config_len(ref) != 3 || !name || gb_config_kind_of(call) != GB_CONFIG_INT ||
        gb_config_kind_of(out) != GB_CONFIG_INT) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: a value reference must be [name, call, output]", WHO);
        return NULL;
    }
    for (int i = 0; i < r->nin; i++)
        if (strcmp(gb_sym_name(r->inputs[i]), name) == 0 && gb_config_int(call) == 0 &&
            gb_config_int(out) == 0)
            return r->inputs[i];
    int l = layer_index(r, name);
    for (int i = 0; l >= 0 && i < r->nmade; i++) {
        if (r->made_layer[i] != l || r->made_call[i] != gb_config_int(call)) continue;
        int64_t k = gb_config_int(out);
        if (k >= 0 && k < gb_sym_num_outputs(r->made[i])) return gb_sym_output(r->made[i], (int)k);
    }
    gb__error(GB_ERR_VALUE, NULL, "%s config: [\"%s\", %lld, %lld] names no value made before it",
              WHO, name, (long long)gb_config_int(call), (long long)gb_config_int(out));
    return NULL;
}

static bool make_inputs(rebuild *r, const gb_config *inputs) {
    if (gb_config_kind_of(inputs) != GB_CONFIG_LIST || gb_config_len(inputs) < 1 ||
        gb_config_len(inputs) > GB_NN_MAX_IO) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: 'inputs' must be a list of 1 to %d inputs", WHO,
                  GB_NN_MAX_IO);
        return false;
    }
    for (int i = 0; i < gb_config_len(inputs); i++) {
        const gb_config *in = gb_config_at(inputs, i);
        int64_t shape[GB_MAX_RANK];
        gb_dtype dt = GB_F32;
        const char *name = gb_config_read_string(in, WHO, "name", NULL);
        int rank = gb_config_read_ints(in, WHO, "shape", GB_MAX_RANK, shape);
        if (!name || rank < 1 || !gb__config_read_dtype(in, WHO, "dtype", &dt)) {
            if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s config: input %d needs a shape", WHO, i);
            return false;
        }
        if (!(r->inputs[r->nin++] = gb_input(dt, rank - 1, shape + 1, name))) return false;
    }
    return true;
}

static bool make_layers(rebuild *r, const gb_config *layers) {
    int n = gb_config_len(layers);
    if (gb_config_kind_of(layers) != GB_CONFIG_LIST || n > MAX_LAYERS) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: 'layers' must be a list of at most %d layers",
                  WHO, MAX_LAYERS);
        return false;
    }
    r->layers = calloc((size_t)n + 1, sizeof *r->layers);
    r->calls_made = calloc((size_t)n + 1, sizeof *r->calls_made);
    r->applied = calloc((size_t)n + 1, sizeof *r->applied);
    if (!r->layers || !r->calls_made || !r->applied) {
        gb__error(GB_ERR_MEMORY, NULL, "%s config: out of memory", WHO);
        return false;
    }
    for (int i = 0; i < n; i++) {
        gb_module *layer = gb_module_from_config(gb_config_at(layers, i));
        if (!layer) return false;
        r->layers[r->nlayers++] = layer;
        if (layer_index(r, gb_module_name(layer)) != r->nlayers - 1) {
            gb__error(GB_ERR_VALUE, NULL, "%s config: two layers are named '%s'", WHO,
                      gb_module_name(layer));
            return false;
        }
    }
    return true;
}

static bool replay_call(rebuild *r, const gb_config *call) {
    const char *name = gb_config_read_string(call, WHO, "layer", NULL);
    const gb_config *args = gb_config_get(call, "args");
    int l = name ? layer_index(r, name) : -1;
    int nargs = gb_config_len(args);
    if (l < 0 || gb_config_kind_of(args) != GB_CONFIG_LIST || nargs < 1 || nargs > GB_NN_MAX_IO) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, NULL,
                      l < 0 ? "%s config: a call names layer '%s', which is not in 'layers'"
                            : "%s config: the call of '%s' needs 1 to 16 args",
                      WHO, name);
        return false;
    }
    gb_sym *in[GB_NN_MAX_IO];
    for (int k = 0; k < nargs; k++)
        if (!(in[k] = resolve(r, gb_config_at(args, k)))) return false;
    gb_sym *out = gb_apply_n(r->layers[l], nargs, in);
    r->applied[l] = true;   /* the call took over the layer's reference, even failing */
    if (!out) return false;
    r->made[r->nmade] = out;
    r->made_layer[r->nmade] = l;
    r->made_call[r->nmade++] = r->calls_made[l]++;
    return true;
}

static bool replay_calls(rebuild *r, const gb_config *calls) {
    int n = gb_config_len(calls);
    if (gb_config_kind_of(calls) != GB_CONFIG_LIST) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: 'calls' is missing or not a list", WHO);
        return false;
    }
    r->made = calloc((size_t)n + 1, sizeof *r->made);
    r->made_layer = calloc((size_t)n + 1, sizeof *r->made_layer);
    r->made_call = calloc((size_t)n + 1, sizeof *r->made_call);
    if (!r->made || !r->made_layer || !r->made_call) {
        gb__error(GB_ERR_MEMORY, NULL, "%s config: out of memory", WHO);
        return false;
    }
    for (int i = 0; i < n; i++)
        if (!replay_call(r, gb_config_at(calls, i))) return false;
    return true;
}

static gb_module *assemble(rebuild *r, const gb_config *c) {
    const gb_config *outputs = gb_config_get(c, "outputs");
    int n = gb_config_len(outputs);
    if (gb_config_kind_of(outputs) != GB_CONFIG_LIST || n < 1 || n > GB_NN_MAX_IO) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: 'outputs' must be a list of 1 to %d values", WHO,
                  GB_NN_MAX_IO);
        return NULL;
    }
    gb_sym *out[GB_NN_MAX_IO];
    for (int i = 0; i < n; i++)
        if (!(out[i] = resolve(r, gb_config_at(outputs, i)))) return NULL;
    return gb_functional_new(r->nin, r->inputs, n, out, gb__config_name(c, WHO));
}

gb_module *gb__functional_from_config(const gb_config *c) {
    rebuild r = {0};
    gb_module *m = NULL;
    /* Symbols die with this scope; the model keeps what it needs. */
    gb_scope_begin();
    if (make_inputs(&r, gb_config_get(c, "inputs")) && make_layers(&r, gb_config_get(c, "layers")) &&
        replay_calls(&r, gb_config_get(c, "calls")))
        m = assemble(&r, c);
    gb_scope_end();
    for (int i = 0; i < r.nlayers; i++)
        if (!r.applied[i]) gb_module_free(r.layers[i]);   /* never called: still ours */
    free(r.layers);
    free(r.calls_made);
    free(r.applied);
    free(r.made);
    free(r.made_layer);
    free(r.made_call);
    return m;
}
