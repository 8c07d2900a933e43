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
/* The live state (not the scratch copy an update runs on) and its size:
 * plain data, which fit's backups save and put back. */
void *gb__metric_state(gb_metric *m);
size_t gb__metric_state_size(const gb_metric *m);
/* The class in errors and model files: class_name, else default_name, else "Metric". */
const char *gb__metric_class_name(const gb_metric *m);
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
/* Where the sequence is, and back there: a loader that makes modules
 * from configs (which carry the seeds that matter) leaves the program's
 * own sequence as it found it. */
uint64_t gb__nn_seed_position(void);
void gb__nn_seed_rewind(uint64_t position);

/* The initializer with GB_INIT_DEFAULT replaced by the layer's default. */
static inline gb_initializer gb__nn_init_or(gb_initializer init, gb_init_kind dflt) {
    if (init.kind == GB_INIT_DEFAULT) init.kind = dflt;
    return init;
}

/* Layers with weights take float inputs; false (with an error) otherwise. */
bool gb__nn_require_float(const gb_module *m, gb_dtype dt);

/* Called when a module has been built (after its type's build made its
 * weights), in an init scope; false fails the build (an error is set).
 * io/ installs it with its first restore that finds values for weights
 * not made yet, and assigns them here (delayed restoration): nn never
 * calls io by name. */
typedef bool (*gb_module_built_fn)(gb_module *m);
extern _Atomic(gb_module_built_fn) gb__module_built_hook;

/* A watcher of module outputs on this thread: while set, fn(m, out, user)
 * runs after each successful call of a module m with its first output
 * (train's health checks read each layer's activations from the train
 * step's own forward pass, traced or eager). Sets w, returns the watcher
 * it replaces, to be put back. */
typedef void (*gb_module_output_fn)(gb_module *m, gb_tensor *out, void *user);
typedef struct gb__output_watch {
    gb_module_output_fn fn;
    void *user;
} gb__output_watch;
gb__output_watch gb__module_watch_outputs(gb__output_watch w);

/* After a change of structure (a layer added to a built model), learns
 * m's output shape again, building what is new, for the input it was
 * built for. */
bool gb__module_rebuild(gb_module *m);

/* The creation reference of m for a new owner: the first owner (a model
 * it is added to, the first symbolic call) takes it over, later ones get
 * a reference of their own. Returns m. */
gb_module *gb__module_take(gb_module *m);

/* Records m as built for inputs of dtype dt and the given first input and
 * output shapes (batch as -1): models whose layers were built before them. */
void gb__module_mark_built(gb_module *m, gb_dtype dt, int in_rank, const int64_t *in,
                           int out_rank, const int64_t *out);

/* The next Keras-style auto name for prefix ("input_layer", "input_layer_1"). */
bool gb__nn_auto_name(const char *prefix, char *out, size_t n);

/* A weight and its regularizer (kernel_regularizer, bias_regularizer). */
typedef struct gb__weight_penalty {
    gb_variable *v;
    gb_regularizer r;
} gb__weight_penalty;
/* m's own weight penalties (not its submodules'). */
const gb__weight_penalty *gb__module_penalties(const gb_module *m, int *n);
/* Factors finite and >= 0; else false with an error naming `who`. */
bool gb__regularizer_valid(gb_regularizer r, const char *who);
/* A layer's kernel and bias regularizers (bias may be NULL); false after an error. */
bool gb__nn_regularize(gb_module *m, gb_variable *kernel, gb_regularizer kr, gb_variable *bias,
                       gb_regularizer br);
/* m with its activity regularizer set; NULL (m freed) when r is invalid. */
gb_module *gb__nn_with_activity(gb_module *m, gb_regularizer r);
/* penalty(y) / batch into the current loss collection (activity_regularizer). */
bool gb__add_activity_loss(gb_regularizer r, gb_tensor *y);
/* The sum of the losses added so far in the innermost collection (NULL:
 * none, or no collection open), without ending it. */
gb_tensor *gb__losses_so_far(void);

/* ---- configs (serialize.c) ---- */

/* The built-in module types, for the registry of class names. */
extern const gb_module_type gb__dense_type, gb__conv2d_type, gb__max_pool_type, gb__avg_pool_type,
    gb__flatten_type, gb__dropout_type, gb__activation_type, gb__relu_type, gb__add_type,
    gb__concatenate_type, gb__sequential_type, gb__functional_type, gb__batch_norm_type,
    gb__layer_norm_type, gb__embedding_type, gb__global_avg_pool_type, gb__global_avg_pool1d_type,
    gb__simple_rnn_type, gb__lstm_type, gb__gru_type, gb__mha_type, gb__text_vectorization_type,
    gb__string_lookup_type, gb__bidirectional_type, gb__position_embedding_type,
    gb__sine_position_encoding_type;

/* ---- recurrent layers (recurrent.c), for Bidirectional ---- */

bool gb__is_rnn(const gb_module *m);   /* a SimpleRNN, LSTM or GRU */
bool gb__rnn_returns_sequences(gb_module *m);
/* Keras' zero_output_for_mask: masked steps output zeros instead of the
 * last output (the state still carries through). */
void gb__rnn_set_zero_output_for_mask(gb_module *m, bool on);
/* y [batch, T, ...] with its steps in reverse order (one gather of the
 * steps T-1 .. 0: one op, differentiable). */
gb_tensor *gb__reverse_time(gb_tensor *y);

/* TextVectorization's adapt, one batch of strings at a time, then the
 * vocabulary built from the counts (ok false: the counts are dropped). */
bool gb__tv_adapt_batch(gb_module *m, gb_tensor *x);
bool gb__tv_adapt_finish(gb_module *m, bool ok);

/* m's serialized form ({"class_name", "config"}) into dict c. */
bool gb__module_config_into(gb_module *m, gb_config *c);
/* The "name" of a layer config ("" when absent: an auto name). */
const char *gb__config_name(const gb_config *c, const char *who);
bool gb__config_put_init(gb_config *c, const char *key, gb_initializer init);
bool gb__config_read_init(const gb_config *c, const char *who, const char *key,
                          gb_initializer *out);
bool gb__config_put_regularizer(gb_config *c, const char *key, gb_regularizer r);
bool gb__config_read_regularizer(const gb_config *c, const char *who, const char *key,
                                 gb_regularizer *out);
bool gb__config_read_activation(const gb_config *c, const char *who, gb_activation *out);
bool gb__config_put_padding(gb_config *c, gb_padding p);
bool gb__config_read_padding(const gb_config *c, const char *who, gb_padding *out);
bool gb__config_read_pair(const gb_config *c, const char *who, const char *key, int64_t dflt,
                          int64_t out[2]);

bool gb__config_read_dtype(const gb_config *c, const char *who, const char *key, gb_dtype *out);

/* What Dense and Conv2D share in their configs. */
typedef struct gb__weighted_config {
    gb_activation activation;
    bool use_bias;
    gb_initializer kernel_init, bias_init;
    gb_regularizer kernel_reg, bias_reg, activity_reg;
    uint64_t seed;
} gb__weighted_config;
bool gb__config_put_weighted(gb_config *c, const gb__weighted_config *w);
bool gb__config_read_weighted(const gb_config *c, const char *who, gb__weighted_config *w);
/* m's activity regularizer ({0, 0}: none). */
gb_regularizer gb__module_activity(const gb_module *m);

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
