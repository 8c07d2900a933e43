/* nn/internal.h — what the nn_*.c files share and users do not see.
 *
 * Error reporting that names the layer, seed mixing, and the output-size
 * arithmetic that convolution and pooling layers have in common.
 */
#ifndef GB_NN_INTERNAL_H
#define GB_NN_INTERNAL_H

#include "gb_nn.h"
#include "ops/internal.h"

/* Records a sticky error "<Class> layer '<name>': <message>". */
void gb__nn_error(const gb_module *m, gb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Data a higher layer keeps on a module (fit's compiled state), freed
 * with free_fn when replaced or when the module is freed. */
void gb__module_attach(gb_module *m, void *data, void (*free_fn)(void *));
void *gb__module_attached(const gb_module *m);

/* ---- metrics (metrics*.c) ---- */

/* A metric whose state has state_size bytes (built-in types whose state
 * grows with an option, as AUC's thresholds) and whose user pointer is a
 * copy of config (config_size bytes) kept inside the metric. */
gb_metric *gb__metric_create(const gb_metric_type *type, const char *name, size_t state_size,
                             const void *config, size_t config_size);
/* The live state (not the scratch copy an update runs on). */
void *gb__metric_state(gb_metric *m);
/* Sample weights: NULL, a scalar, or one per sample (`rows` of them);
 * false with an error naming the shapes otherwise. */
bool gb__metric_weights_fit(const gb_metric *m, gb_tensor *w, int64_t rows);
/* Weight of sample i under that rule. */
static inline double gb__metric_weight_at(gb_tensor *w, int64_t i) {
    return w ? gb_get(w, gb_size(w) == 1 ? 0 : i) : 1.0;
}

/* A well-mixed seed from two values (weight seeds from the layer seed,
 * dropout seeds from the layer seed and the call count). */
uint64_t gb__nn_mix_seed(uint64_t a, uint64_t b);
/* The next seed of the global sequence gb_nn_set_seed() restarts. */
uint64_t gb__nn_next_seed(void);

/* The initializer with GB_INIT_DEFAULT replaced by the layer's default. */
static inline gb_initializer gb__nn_init_or(gb_initializer init, gb_init_kind dflt) {
    if (init.kind == GB_INIT_DEFAULT) init.kind = dflt;
    return init;
}

/* Layers with weights take float inputs; false (with an error) otherwise. */
bool gb__nn_require_float(const gb_module *m, gb_dtype dt);

/* After a change of structure (a layer added to a built model), learns
 * m's output shape again, building what is new, for the input it was
 * built for. */
bool gb__module_rebuild(gb_module *m);

/* Keras-style shape text: "(None, 28, 28, 32)" (-1 prints as None). */
const char *gb__nn_shape_text(int rank, const int64_t *dims, char *buf, size_t n);

/* Output size of a sliding window along one axis; -1 (unknown) stays -1.
 * valid: floor((in - effective_k) / stride) + 1; same: ceil(in / stride).
 * Can be <= 0 for a window larger than the input (the caller reports). */
static inline int64_t gb__nn_window_out(int64_t in, int64_t k, int64_t stride, int64_t dilation,
                                        gb_padding padding) {
    if (in < 0) return -1;
    if (padding == GB_PADDING_SAME) return (in + stride - 1) / stride;
    int64_t eff = (k - 1) * dilation + 1;
    return in < eff ? 0 : (in - eff) / stride + 1;
}

/* A {h, w} pair with 0 meaning `dflt`; false when negative. */
static inline bool gb__nn_pair(const int64_t *in, int64_t dflt, int64_t out[2]) {
    for (int i = 0; i < 2; i++) {
        out[i] = in && in[i] ? in[i] : dflt;
        if (out[i] < 0) return false;
    }
    return true;
}

#endif
