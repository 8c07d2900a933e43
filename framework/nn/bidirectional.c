/* nn/bidirectional.c — Bidirectional (keras.layers.Bidirectional): one
 * recurrent layer read forwards and a copy of it read backwards, their
 * outputs merged (gb_bidirectional_options in gb_nn.h).
 *
 * As Keras, both directions are recreated from the given layer's config:
 * "forward_<name>" as it was, "backward_<name>" with go_backwards flipped
 * and a seed of its own (the same seed would start both directions with
 * the same weights). The backward layer's sequence comes out in the
 * order it was read, so it is reversed back in time before merging; with
 * a mask both layers output zeros at masked steps (Keras forces
 * zero_output_for_mask on them when they return sequences), so merged
 * outputs never mix in a stale step.
 *
 * Inputs: x, an optional bool mask [batch, time], and an optional
 * initial state: the forward layer's states then the backward one's
 * (Keras splits initial_state in half). Outputs: the merged output (or,
 * merge_mode none, the forward and the backward outputs), then with
 * return_state the forward states and the backward states.
 */
#include <stdio.h>
#include <stdlib.h>

#include "nn/config_internal.h"
#include "nn/internal.h"

typedef struct bidi_state {
    gb_merge_mode merge;
    gb_module *fwd, *bwd;
} bidi_state;

static const char *const MERGE_NAMES[] = {"concat", "sum", "mul", "ave", "none"};

/* ---- configs of the two directions --------------------------------------------------- */

/* The inner "config" dict's value under key (it must be there: every
 * recurrent layer writes name, seed and go_backwards). */
static gb_config *inner(gb_config *serialized, const char *key) {
    gb_config *c = (gb_config *)gb_config_get(serialized, "config");
    return (gb_config *)gb_config_get(c, key);
}

/* A copy of the layer from its config, renamed "<prefix>_<name>"; the
 * backward one reads in the other direction, from its own seed. */
static gb_module *recreate(gb_module *layer, const char *prefix, bool backward) {
    gb_config *c = gb_module_get_config(layer);
    gb_config *name = inner(c, "name"), *seed = inner(c, "seed"), *back = inner(c, "go_backwards");
    if (!c || !name || !seed || !back) {
        gb_config_free(c);
        return NULL;
    }
    size_t n = strlen(prefix) + strlen(name->str) + 2;
    char *renamed = malloc(n);
    if (!renamed) {
        gb_config_free(c);
        gb__nn_error(layer, GB_ERR_MEMORY, "out of memory");
        return NULL;
    }
    snprintf(renamed, n, "%s_%s", prefix, name->str);
    free(name->str);
    name->str = renamed;
    if (backward) {
        back->b = !back->b;
        seed->i = (int64_t)gb__nn_mix_seed((uint64_t)seed->i, 1);
    }
    gb_module *m = gb_module_from_config(c);
    gb_config_free(c);
    return m;
}

/* ---- shapes and build ----------------------------------------------------------------- */

static int64_t merged_width(const bidi_state *s, int64_t units) {
    return s->merge == GB_MERGE_CONCAT ? 2 * units : units;
}

static bool bidi_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                              int64_t *out) {
    const bidi_state *s = gb_module_state(m);
    if (!gb_module_get_type(s->fwd)->output_shape(s->fwd, rank, in, out_rank, out)) return false;
    out[*out_rank - 1] = merged_width(s, out[*out_rank - 1]);
    return true;
}

static bool bidi_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    bidi_state *s = gb_module_state(m);
    return gb_module_build(s->fwd, dt, rank, shape) && gb_module_build(s->bwd, dt, rank, shape);
}

/* ---- the call ------------------------------------------------------------------------- */

static gb_tensor *merge(gb_merge_mode mode, gb_tensor *a, gb_tensor *b) {
    switch (mode) {
    case GB_MERGE_CONCAT: return gb_concat((gb_tensor *[]){a, b}, 2, gb_rank(a) - 1);
    case GB_MERGE_SUM: return gb_add(a, b);
    case GB_MERGE_MUL: return gb_mul(a, b);
    case GB_MERGE_AVE: return gb_mul(gb_add(a, b), gb_scalar(gb_tensor_dtype(a), 0.5));
    default: return NULL;
    }
}

static int bidi_call(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out, bool training) {
    const bidi_state *s = gb_module_state(m);
    int lead = nin > 1 && gb_tensor_dtype(in[1]) == GB_BOOL ? 2 : 1; /* x and the mask */
    int nstates = nin - lead;
    if (nstates % 2) {
        gb__nn_error(m, GB_ERR_VALUE,
                     "the initial state must hold the forward layer's states then the backward "
                     "layer's (as many of each), got %d state inputs",
                     nstates);
        return -1;
    }
    gb_tensor *args[GB_NN_MAX_IO], *fo[GB_NN_MAX_IO], *bo[GB_NN_MAX_IO];
    for (int i = 0; i < lead; i++) args[i] = in[i];
    for (int i = 0; i < nstates / 2; i++) args[lead + i] = in[lead + i];
    int nf = gb_module_call_n(s->fwd, lead + nstates / 2, args, fo, training);
    for (int i = 0; i < nstates / 2; i++) args[lead + i] = in[lead + nstates / 2 + i];
    int nb = nf > 0 ? gb_module_call_n(s->bwd, lead + nstates / 2, args, bo, training) : -1;
    if (nb < 0) return -1;
    gb_tensor *yb = gb_rank(bo[0]) == 3 ? gb__reverse_time(bo[0]) : bo[0];
    int n = 0;
    if (s->merge == GB_MERGE_NONE) {
        out[n++] = fo[0];
        out[n++] = yb;
    } else {
        out[n++] = merge(s->merge, fo[0], yb);
    }
    for (int i = 1; i < nf; i++) out[n++] = fo[i];
    for (int i = 1; i < nb; i++) out[n++] = bo[i];
    return gb_ok() ? n : -1;
}

/* As the layers it wraps: a sequence output keeps the input's mask. */
static gb_tensor *bidi_compute_mask(gb_module *m, gb_tensor *x, gb_tensor *mask) {
    (void)x;
    const bidi_state *s = gb_module_state(m);
    return gb__rnn_returns_sequences(s->fwd) ? mask : NULL;
}

/* ---- configs -------------------------------------------------------------------------- */

static bool bidi_get_config(gb_module *m, gb_config *c) {
    const bidi_state *s = gb_module_state(m);
    gb_config *f = gb_config_put_dict(c, "layer"), *b = f ? gb_config_put_dict(c, "backward_layer") : NULL;
    return b && gb_config_put_string(c, "merge_mode", MERGE_NAMES[s->merge]) &&
           gb__module_config_into(s->fwd, f) && gb__module_config_into(s->bwd, b);
}

static gb_module *make(const char *name, gb_merge_mode merge, gb_module *fwd, gb_module *bwd);

static gb_module *bidi_from_config(const gb_config *c) {
    static const char who[] = "Bidirectional";
    const char *mode = gb_config_read_string(c, who, "merge_mode", "concat");
    const gb_config *f = gb_config_get(c, "layer"), *b = gb_config_get(c, "backward_layer");
    if (!mode) return NULL;
    if (!f || !b) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: 'layer' and 'backward_layer' are required", who);
        return NULL;
    }
    int merge = 0;
    while (merge <= GB_MERGE_NONE && strcmp(MERGE_NAMES[merge], mode) != 0) merge++;
    if (merge > GB_MERGE_NONE) {
        gb__error(GB_ERR_VALUE, NULL,
                  "%s config: merge_mode '%s' is not one of concat, sum, mul, ave, none", who, mode);
        return NULL;
    }
    const char *name = gb__config_name(c, who);
    gb_module *fwd = gb_module_from_config(f);
    gb_module *bwd = fwd ? gb_module_from_config(b) : NULL;
    if (!bwd) {
        gb_module_free(fwd);
        return NULL;
    }
    return make(name, (gb_merge_mode)merge, fwd, bwd);
}

const gb_module_type gb__bidirectional_type = {
    .class_name = "Bidirectional",
    .default_name = "bidirectional",
    .state_size = sizeof(bidi_state),
    .build = bidi_build,
    .output_shape = bidi_output_shape,
    .call_n = bidi_call,
    .call_n_takes_mask = true,
    .compute_mask = bidi_compute_mask,
    .get_config = bidi_get_config,
    .from_config = bidi_from_config,
};

/* ---- constructors --------------------------------------------------------------------- */

/* The wrapper around two ready layers (taken over, also on failure). */
static gb_module *make(const char *name, gb_merge_mode merge, gb_module *fwd, gb_module *bwd) {
    gb_module *m = gb_module_new(&gb__bidirectional_type, name, 0);
    if (!m) {
        gb_module_free(fwd);
        gb_module_free(bwd);
        return NULL;
    }
    bidi_state *s = gb_module_state(m);
    s->merge = merge;
    s->fwd = fwd;
    s->bwd = bwd;
    if (!gb_module_add_submodule(m, fwd) || !gb_module_add_submodule(m, bwd)) {
        gb_module_free(m);
        return NULL;
    }
    return m;
}

gb_module *gb_bidirectional_new(gb_module *layer, const gb_bidirectional_options *opts) {
    static const gb_bidirectional_options defaults;
    if (!opts) opts = &defaults;
    if (!layer) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, "Bidirectional", "Bidirectional: the layer is NULL");
        return NULL;
    }
    if (!gb__is_rnn(layer) || (unsigned)opts->merge_mode > GB_MERGE_NONE) {
        if (!gb__is_rnn(layer))
            gb__error(GB_ERR_VALUE, "Bidirectional",
                      "Bidirectional: the layer must be a SimpleRNN, LSTM or GRU, got %s",
                      gb_module_class_name(layer));
        else
            gb__error(GB_ERR_VALUE, "Bidirectional", "Bidirectional: merge_mode %d is out of range",
                      (int)opts->merge_mode);
        gb_module_free(layer);
        return NULL;
    }
    gb_module *fwd = recreate(layer, "forward", false);
    gb_module *bwd = fwd ? recreate(layer, "backward", true) : NULL;
    gb_module_free(layer);
    if (!bwd) {
        gb_module_free(fwd);
        return NULL;
    }
    /* Keras: a masked step outputs zeros in both directions when they return sequences. */
    bool seqs = gb__rnn_returns_sequences(fwd);
    gb__rnn_set_zero_output_for_mask(fwd, seqs);
    gb__rnn_set_zero_output_for_mask(bwd, seqs);
    return make(opts->name, opts->merge_mode, fwd, bwd);
}
