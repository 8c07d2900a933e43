/* gb_nn.h — Keras-style modules, layers, models, losses and metrics.
 *
 * A gb_module is a named thing that owns variables and submodules (tf.Module,
 * keras.layers.Layer and keras.Model in one): layers are modules with a
 * forward pass, a Sequential model is a module whose submodules are its
 * layers. Layers create their weights lazily, on the first call, from the
 * shape and dtype of the input (Keras' build()), inside a name scope of the
 * module's name, so weights are called "dense_1/kernel" standalone and
 * "sequential/dense_1/kernel" inside a model. Names not given are made as
 * Keras makes them: dense, dense_1, dense_2 ... per kind.
 *
 * Ownership: gb_module_free() releases a module with its variables and
 * submodules. Adding a module to a model takes over the caller's reference
 * (so `gb_sequential_add(model, gb_dense_new(...))` leaks nothing); call
 * gb_module_retain() first to share a layer between models.
 *
 * Layer calls allocate nothing on the heap: their tensors go to the current
 * memory scope and Dense is exactly ReadVariableOp x2 + MatMul + Add +
 * activation. Weights take the dtype of the input that builds them
 * (float32 or float64); later calls must use that dtype (no silent casts).
 *
 * Seeds: every layer has one (its options' seed, or else one drawn from a
 * global sequence that gb_nn_set_seed() restarts), and each weight's
 * initializer seed derives from it, so a program builds the same weights
 * on every run. Dropout derives a fresh mask seed for every call.
 *
 * Usage (this block is compiled and run as a test, so it cannot rot):
 *
 * BEGIN NN EXAMPLE
 * #include <stdio.h>
 * #include "glassbox.h"
 *
 * int main(void) {
 *     gb_module *model = gb_sequential_new(NULL);                       // "sequential"
 *     gb_sequential_add(model, gb_dense_new(16, &(gb_dense_options){.activation = GB_ACT_RELU,
 *                                                                  .seed = 1}));
 *     gb_sequential_add(model, gb_dense_new(3, &(gb_dense_options){.seed = 2}));   // logits
 *     const float xs[4 * 2] = {0, 0, 0, 1, 1, 0, 1, 1};
 *     const int32_t ys[4] = {0, 1, 1, 2};                                  // x0 + x1
 *     double first = 0, last = 0;
 *     for (int step = 0; step < 200; step++) {
 *         gb_scope_begin();                                 // a step's tensors die with it
 *         gb_tensor *x = gb_from_f32(xs, GB_SHAPE(4, 2));
 *         gb_tensor *y = gb_tensor_from(GB_I32, ys, GB_SHAPE(4));
 *         gb_tape *tape = gb_tape_begin();                  // watches the weights it sees read
 *         gb_tensor *logits = gb_module_call(model, x, true);   // builds weights on first call
 *         gb_tensor *loss = gb_loss_sparse_categorical_crossentropy(y, logits, true,
 *                                                                   GB_REDUCTION_MEAN);
 *         gb_tape_end(tape);
 *         int n = 0;
 *         gb_variable *const *vars = gb_module_trainable_variables(model, &n);
 *         gb_tensor *grads[4] = {0};
 *         gb_tape_gradient_vars(tape, loss, vars, n, grads);
 *         for (int i = 0; i < n; i++)                       // plain gradient descent
 *             gb_variable_assign_sub(vars[i], gb_mul_scalar(grads[i], 0.5));
 *         if (step == 0) first = gb_item(loss);
 *         last = gb_item(loss);
 *         gb_scope_end();
 *     }
 *     if (!gb_ok()) {                                       // errors are sticky: check once
 *         fprintf(stderr, "%s\n", gb_error_string());
 *         return 1;
 *     }
 *     printf("loss %.3f -> %.3f\n", first, last);
 *     gb_module_summary(model, stdout);                     // Keras-like table
 *     gb_module_free(model);                                // frees layers and weights
 *     return last < 0.1 * first ? 0 : 1;
 * }
 * END NN EXAMPLE
 */
#ifndef GB_NN_H
#define GB_NN_H

#include <stdio.h>

#include "gb_autodiff.h"
#include "gb_base.h"
#include "gb_function.h"
#include "gb_ops.h"
#include "gb_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- activations ------------------------------------------------------------ */

typedef enum gb_activation {
    GB_ACT_LINEAR = 0,  /* identity: no op at all */
    GB_ACT_RELU,
    GB_ACT_SIGMOID,
    GB_ACT_TANH,
    GB_ACT_SOFTMAX,     /* over the last axis */
    GB_ACT_ELU,
    GB_ACT_GELU,        /* exact (erf), Keras' default */
    GB_ACT_SOFTPLUS,
    GB_ACT_SWISH,       /* x * sigmoid(x) */
    GB_ACT_COUNT
} gb_activation;

/* Keras' name: "linear", "relu", "sigmoid", ... ("?" when out of range). */
const char *gb_activation_name(gb_activation act);
/* Parses a Keras name into *out; an unknown name is a GB_ERR_VALUE error. */
bool gb_activation_from_name(const char *name, gb_activation *out);
/* act(x); GB_ACT_LINEAR returns x itself. */
gb_tensor *gb_activation_apply(gb_activation act, gb_tensor *x);

/* ---- initializers --------------------------------------------------------------- */

typedef enum gb_init_kind {
    GB_INIT_DEFAULT = 0,      /* the layer's choice: Glorot-uniform kernels, zero biases */
    GB_INIT_ZEROS,
    GB_INIT_ONES,
    GB_INIT_CONSTANT,         /* a */
    GB_INIT_RANDOM_UNIFORM,   /* in [a, b) */
    GB_INIT_RANDOM_NORMAL,    /* mean a, stddev b */
    GB_INIT_TRUNCATED_NORMAL, /* mean a, stddev b, within 2 stddev */
    /* Variance scaling, as Keras. fan_in/fan_out: [in, out] for matrices,
     * [kh, kw, in, out] times kh*kw for conv kernels. Normal variants draw
     * a truncated normal whose stddev comes out exactly sqrt(scale / n). */
    GB_INIT_GLOROT_UNIFORM,   /* limit sqrt(6 / (fan_in + fan_out)) */
    GB_INIT_GLOROT_NORMAL,    /* stddev sqrt(2 / (fan_in + fan_out)) */
    GB_INIT_HE_UNIFORM,       /* limit sqrt(6 / fan_in) */
    GB_INIT_HE_NORMAL,        /* stddev sqrt(2 / fan_in) */
    GB_INIT_LECUN_UNIFORM,    /* limit sqrt(3 / fan_in) */
    GB_INIT_LECUN_NORMAL,     /* stddev sqrt(1 / fan_in) */
    GB_INIT_ORTHOGONAL,       /* gain a (0: 1): a random orthogonal matrix, the
                                 shape's leading dims flattened into rows
                                 (recurrent kernels' default, as Keras) */
    GB_INIT_KIND_COUNT
} gb_init_kind;

/* A value type: (gb_initializer){.kind = GB_INIT_HE_NORMAL, .seed = 7}. seed 0
 * means "derive from the layer's seed". */
typedef struct gb_initializer {
    gb_init_kind kind;
    double a, b;
    uint64_t seed;
} gb_initializer;

/* A new tensor of the given dtype and shape, in the current scope. */
gb_tensor *gb_initializer_make(gb_initializer init, gb_dtype dt, int rank, const int64_t *shape);
const char *gb_initializer_name(gb_init_kind kind);   /* "glorot_uniform" */

/* ---- modules --------------------------------------------------------------------- */

typedef struct gb_module gb_module;
typedef struct gb_config gb_config;   /* a config dict: see "configs" below */

/* The most inputs or outputs one layer call (or a model) has. */
enum { GB_NN_MAX_IO = 16 };

/* What makes one kind of module: a small vtable plus its state size, so
 * each layer keeps its own state in its own struct. Custom layers fill
 * one in and create modules with gb_module_new(). */
typedef struct gb_module_type {
    const char *class_name;     /* "Dense": shown in summaries and errors */
    const char *default_name;   /* auto-naming prefix: dense, dense_1, ... */
    size_t state_size;          /* per-type state, zeroed, at gb_module_state() */
    /* Creates weights (gb_module_add_weight) for inputs of this dtype and
     * shape (dims[0], the batch, is -1). Runs in the module's name scope,
     * once. NULL: nothing to build. */
    bool (*build)(gb_module *m, gb_dtype dtype, int rank, const int64_t *shape);
    /* Checks an input shape (any dim may be -1: unknown) and writes the
     * output shape; a bad input is an error naming the layer. Runs at build
     * and on every call. NULL: any input; the output shape is recorded
     * from the first call (gb_module_build() assumes the input's). */
    bool (*output_shape)(gb_module *m, int rank, const int64_t *in, int *out_rank,
                         int64_t *out);
    /* The forward pass, in the module's name scope, after build. */
    gb_tensor *(*call)(gb_module *m, gb_tensor *x, bool training);
    /* Layers of several inputs or outputs (Add, Concatenate, functional
     * models) give call_n instead of call: the outputs of nin inputs into
     * out (at most GB_NN_MAX_IO), returning how many, or -1 after an
     * error. build then sees the first input's dtype and shape. */
    int (*call_n)(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out, bool training);
    /* call_n's shape function: checks the inputs (-1 dims unknown) and
     * writes the outputs' dtypes and shapes, returning how many or -1.
     * NULL: learned from a call on zeros. */
    int (*output_specs)(gb_module *m, int nin, const gb_tensor_spec *in, gb_tensor_spec *out);
    /* Releases what the state holds beyond itself (NULL: nothing). The
     * module then frees its variables, submodules and state. */
    void (*free)(gb_module *m);
    /* get_config: the constructor's arguments into dict c ("name" and
     * "trainable" are written for every module). NULL: nothing more. */
    bool (*get_config)(gb_module *m, gb_config *c);
    /* from_config: a new module from such a dict. NULL: the type cannot
     * be rebuilt from a config. */
    gb_module *(*from_config)(const gb_config *c);
    /* State learned outside variables (a vocabulary), which checkpoints
     * save beside the variables (tf.train.Checkpoint saves a lookup
     * table's keys the same way). assets: their names, dtypes and ranks
     * (a dim may be -1) into specs, at most GB_MODULE_MAX_ASSETS,
     * returning how many; they may depend on the config, not on what was
     * learned. asset_value: asset i now, in the current scope; NULL when
     * nothing is learned yet (then not saved). set_assets: installs
     * values (in assets' order; NULL where the checkpoint has none),
     * false after an error naming the module. NULL: no assets. */
    int (*assets)(gb_module *m, gb_tensor_spec *specs);
    gb_tensor *(*asset_value)(gb_module *m, int i);
    bool (*set_assets)(gb_module *m, gb_tensor *const *values);
    /* Masks, as Keras passes them along padded sequences: compute_mask
     * gives the output's mask (bool, the output's shape without its last
     * axis) from the input and the input's mask (NULL: none); a type
     * without it ends the mask. call_masked is call with the input's mask
     * (NULL when there is none); a type without it runs call, the mask
     * unused. Single-input types (call) and those whose call_n takes the mask
     * after x (call_n_takes_mask) take masks. */
    gb_tensor *(*compute_mask)(gb_module *m, gb_tensor *x, gb_tensor *mask);
    gb_tensor *(*call_masked)(gb_module *m, gb_tensor *x, gb_tensor *mask, bool training);
    /* call_n takes the input's mask as its second input, after x (the
     * recurrent layers and Bidirectional, whose inputs are x, the mask,
     * then initial states): a Sequential model's mask reaches it there. */
    bool call_n_takes_mask;
} gb_module_type;
enum { GB_MODULE_MAX_ASSETS = 4 };

/* A module of `type`; name NULL or "" picks the next auto name. seed 0
 * draws one from the global sequence. NULL (with an error) on failure. */
gb_module *gb_module_new(const gb_module_type *type, const char *name, uint64_t seed);
void *gb_module_state(gb_module *m);
/* Another reference (for sharing a layer); returns m. */
gb_module *gb_module_retain(gb_module *m);
/* Drops a reference; the last one frees the module, its variables and its
 * submodules. NULL is fine. */
void gb_module_free(gb_module *m);

const char *gb_module_name(const gb_module *m);
const char *gb_module_class_name(const gb_module *m);
const gb_module_type *gb_module_get_type(const gb_module *m);
uint64_t gb_module_seed(const gb_module *m);

/* layer(x, training=...): builds on the first call, checks the input, runs
 * the forward pass inside the module's name scope. training switches
 * Dropout (and later BatchNorm) to their training behaviour. */
gb_tensor *gb_module_call(gb_module *m, gb_tensor *x, bool training);
/* layer(x, mask=mask): gb_module_call with the input's mask (NULL: none)
 * for a layer that takes one; *out_mask (out_mask may be NULL) gets the
 * output's mask, NULL when it has none. A Sequential model passes masks
 * from layer to layer this way: Embedding(mask_zero) makes one,
 * GlobalAveragePooling1D averages over the steps it keeps. */
gb_tensor *gb_module_call_masked(gb_module *m, gb_tensor *x, gb_tensor *mask, bool training,
                                 gb_tensor **out_mask);
/* layer([a, b]) for any module: nin inputs, the outputs into out (room
 * for GB_NN_MAX_IO); returns how many, or -1 after an error. A module of
 * one input and one output takes nin == 1; gb_module_call() takes a
 * several-input module's single output only when it has one. */
int gb_module_call_n(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out, bool training);
/* model.build((None, 784)): builds for an input shape without data; give
 * -1 for unknown dims. Building a built module only checks the shape. */
bool gb_module_build(gb_module *m, gb_dtype dtype, int rank, const int64_t *shape);
bool gb_module_built(const gb_module *m);
/* The dtype it was built for (GB_DTYPE_COUNT before build). */
gb_dtype gb_module_dtype(const gb_module *m);
/* Input/output shape recorded at build, batch as -1; writes dims[rank],
 * returns the rank, or -1 before build. */
int gb_module_input_shape(const gb_module *m, int64_t dims[GB_MAX_RANK]);
int gb_module_output_shape(const gb_module *m, int64_t dims[GB_MAX_RANK]);

/* A new variable owned by m, named "<m's scope>/<name>", initialized by
 * `init` (whose seed 0 derives one from m's seed and the weight's index).
 * Used by build functions; usable from constructors too. */
gb_variable *gb_module_add_weight(gb_module *m, const char *name, gb_dtype dt, int rank,
                                  const int64_t *shape, gb_initializer init, bool trainable);
/* Hands a variable to m, which frees it with itself. */
bool gb_module_add_variable(gb_module *m, gb_variable *v);
/* Makes sub a submodule of m, taking over the caller's reference (also on
 * failure, when sub is freed). */
bool gb_module_add_submodule(gb_module *m, gb_module *sub);
int gb_module_num_submodules(const gb_module *m);
gb_module *gb_module_submodule(const gb_module *m, int i);
/* Keras get_layer(name): a submodule at any depth, or NULL. */
gb_module *gb_module_find(gb_module *m, const char *name);
/* One of m's own weights by short name ("kernel"), its last components
 * ("query/kernel") or full name, or NULL. */
gb_variable *gb_module_variable(gb_module *m, const char *name);

/* Variables of m and its submodules: own first, then each submodule's
 * depth first in the order added, each once (creation order for layers
 * built by their calls). The array belongs to m and stays valid until the
 * next call of the same function on m; *n gets the count. */
gb_variable *const *gb_module_variables(gb_module *m, int *n);
gb_variable *const *gb_module_trainable_variables(gb_module *m, int *n);
gb_variable *const *gb_module_non_trainable_variables(gb_module *m, int *n);
int64_t gb_module_count_params(gb_module *m);            /* all elements of all variables */
int64_t gb_module_count_trainable_params(gb_module *m);
/* layer.trainable = false freezes every weight of m (now and later built). */
void gb_module_set_trainable(gb_module *m, bool trainable);
bool gb_module_trainable(const gb_module *m);

/* model.summary(): a Keras-like table of the submodules (or of m itself
 * when it has none) with output shapes and parameter counts. The module
 * must be built (GB_ERR_STATE otherwise). */
bool gb_module_summary(gb_module *m, FILE *out);

/* keras.backend.clear_session(): auto-naming starts again at "dense". */
void gb_nn_clear_session(void);
/* tf.random.set_seed for layers: restarts the sequence of default seeds. */
void gb_nn_set_seed(uint64_t seed);

/* ---- configs ------------------------------------------------------------------------------- */

/* Keras' config dicts as a tree of JSON values: what get_config writes,
 * from_config reads, and model files store. Children belong to their
 * parent; gb_config_free() on the root frees the tree. Integers are
 * exact int64 (seeds survive a round trip). */
typedef enum gb_config_kind {
    GB_CONFIG_NULL, GB_CONFIG_BOOL, GB_CONFIG_INT, GB_CONFIG_NUMBER, GB_CONFIG_STRING,
    GB_CONFIG_LIST, GB_CONFIG_DICT
} gb_config_kind;

gb_config *gb_config_new(void);                   /* an empty dict */
void gb_config_free(gb_config *c);
/* Adds a value under key to a dict, or (key NULL) at the end of a list;
 * returns it (NULL after an error: a key set twice, a non-finite number). */
gb_config *gb_config_put_int(gb_config *c, const char *key, int64_t v);
gb_config *gb_config_put_number(gb_config *c, const char *key, double v);
gb_config *gb_config_put_bool(gb_config *c, const char *key, bool v);
gb_config *gb_config_put_null(gb_config *c, const char *key);
gb_config *gb_config_put_string(gb_config *c, const char *key, const char *v);
gb_config *gb_config_put_dict(gb_config *c, const char *key);
gb_config *gb_config_put_list(gb_config *c, const char *key);
gb_config *gb_config_put_ints(gb_config *c, const char *key, int n, const int64_t *v);

gb_config_kind gb_config_kind_of(const gb_config *c);
int gb_config_len(const gb_config *c);                        /* items of a list or dict */
const gb_config *gb_config_at(const gb_config *c, int i);
const char *gb_config_key_at(const gb_config *c, int i);
const gb_config *gb_config_get(const gb_config *dict, const char *key);  /* NULL: absent */
bool gb_config_is_number(const gb_config *c);                 /* an integer or a number */
int64_t gb_config_int(const gb_config *c);
double gb_config_number(const gb_config *c);
bool gb_config_bool(const gb_config *c);
const char *gb_config_string(const gb_config *c);             /* NULL: not a string */
/* from_config's readers: dict[key] into *out, dflt when absent; a value
 * of the wrong kind is an error "<who> config: '<key>' must be ...".
 * read_string with dflt NULL requires the key; read_ints returns the
 * count (at most max), 0 when absent, -1 after an error. */
bool gb_config_read_int(const gb_config *c, const char *who, const char *key, int64_t dflt,
                        int64_t *out);
bool gb_config_read_number(const gb_config *c, const char *who, const char *key, double dflt,
                           double *out);
bool gb_config_read_bool(const gb_config *c, const char *who, const char *key, bool dflt,
                         bool *out);
const char *gb_config_read_string(const gb_config *c, const char *who, const char *key,
                                  const char *dflt);
int gb_config_read_ints(const gb_config *c, const char *who, const char *key, int max,
                        int64_t *out);

/* JSON text (malloc'd; indent 0: one line) and back. A malformed text is
 * a GB_ERR_VALUE error "<what>: line L, column C: ...". */
char *gb_config_to_json(const gb_config *c, int indent);
/* The same, with containers nested flat_depth or more deep on one line
 * each (a SavedModel's graph: one node per line). */
char *gb_config_to_json_flat(const gb_config *c, int indent, int flat_depth);
gb_config *gb_config_from_json(const char *text, size_t n, const char *what);

/* Keras' serialize / deserialize: {"class_name": "Dense", "config": {"name":
 * ..., "trainable": ..., units, activation, initializers, seed...}} for
 * every built-in layer and model (Sequential with its layers, Functional
 * with its inputs, calls and outputs), and for custom layer types whose
 * gb_module_type has get_config/from_config once registered. A module
 * rebuilt from its config has the same structure, names and seeds, so
 * the same initial weights; the trained values come from model files. */
gb_config *gb_module_get_config(gb_module *m);
gb_module *gb_module_from_config(const gb_config *c);
/* Makes a custom module type known to gb_module_from_config by its
 * class_name (Keras' register_keras_serializable); registering a name
 * twice with another type is an error. */
bool gb_register_module_type(const gb_module_type *type);

/* ---- regularizers and extra losses ---------------------------------------------------- */

/* keras.regularizers.L1L2: l1 * sum|w| + l2 * sum w^2; {0, 0} is none. */
typedef struct gb_regularizer {
    double l1, l2;
} gb_regularizer;

/* The penalty of t as a scalar of t's dtype in the current scope; NULL
 * (no error) for a zero regularizer. Negative or non-finite factors are
 * a GB_ERR_VALUE error. */
gb_tensor *gb_regularizer_apply(gb_regularizer r, gb_tensor *t);
/* kernel_regularizer / bias_regularizer: v's penalty joins m's
 * regularization loss (v must be one of m's weights). */
bool gb_module_regularize_weight(gb_module *m, gb_variable *v, gb_regularizer r);
/* activity_regularizer: after each call, penalty(first output) / batch
 * goes to gb_add_loss, as Keras. */
bool gb_module_set_activity_regularizer(gb_module *m, gb_regularizer r);
/* The weight penalties of m and its submodules (each variable once), as
 * a scalar in the current scope; NULL (no error) when there are none.
 * fit adds it to the loss it trains on. */
gb_tensor *gb_module_regularization_loss(gb_module *m);

/* Keras' add_loss: a layer's call adds a scalar loss (an activity
 * penalty, a KL term). Losses are collected between gb_losses_begin()
 * and gb_losses_end(), which returns their sum (NULL when none was
 * added); fit collects around every step and trains on the sum too.
 * Outside a collection an added loss is dropped, as in inference. */
void gb_losses_begin(void);
gb_tensor *gb_losses_end(void);
bool gb_add_loss(gb_tensor *loss);

/* ---- layers ---------------------------------------------------------------------- */

/* Options are zero-initialized structs; zero means the Keras default.
 * Pass NULL for all defaults. */
typedef struct gb_dense_options {
    const char *name;                  /* NULL: dense, dense_1, ... */
    gb_activation activation;          /* default linear */
    bool no_bias;                      /* Keras use_bias=False */
    gb_initializer kernel_initializer; /* default Glorot-uniform */
    gb_initializer bias_initializer;   /* default zeros */
    gb_regularizer kernel_regularizer, bias_regularizer, activity_regularizer;
    uint64_t seed;                     /* 0: next from the global sequence */
} gb_dense_options;
/* Dense(units): y = act(x @ kernel + bias); kernel [in, units] built from
 * the last axis of the first input; inputs of rank >= 2. */
gb_module *gb_dense_new(int64_t units, const gb_dense_options *opts);

typedef struct gb_conv2d_options {
    const char *name;                  /* NULL: conv2d, conv2d_1, ... */
    int64_t strides[2];                /* {0,0}: {1,1} */
    gb_padding padding;                /* default valid; SAME as gb_conv2d (gb_ops.h) */
    int64_t dilation[2];               /* {0,0}: {1,1} */
    gb_activation activation;
    bool no_bias;
    gb_initializer kernel_initializer; /* default Glorot-uniform */
    gb_initializer bias_initializer;   /* default zeros */
    gb_regularizer kernel_regularizer, bias_regularizer, activity_regularizer;
    uint64_t seed;
} gb_conv2d_options;
/* Conv2D(filters, (kh, kw)) on NHWC inputs; kernel [kh, kw, in, filters]. */
gb_module *gb_conv2d_new(int64_t filters, int64_t kh, int64_t kw, const gb_conv2d_options *opts);

typedef struct gb_pool2d_options {
    const char *name;        /* NULL: max_pooling2d / average_pooling2d, ... */
    int64_t pool_size[2];    /* {0,0}: {2,2} */
    int64_t strides[2];      /* {0,0}: pool_size */
    gb_padding padding;      /* default valid; SAME as gb_max_pool2d (gb_ops.h) */
} gb_pool2d_options;
gb_module *gb_max_pool2d_new(const gb_pool2d_options *opts);
gb_module *gb_avg_pool2d_new(const gb_pool2d_options *opts);

/* Flatten: [batch, d1, d2, ...] -> [batch, d1*d2*...]. */
gb_module *gb_flatten_new(const char *name);

/* Dropout(rate): with training, zeroes each element with probability rate
 * and scales the rest by 1/(1-rate); without, returns its input. rate must
 * be in [0, 1). */
gb_module *gb_dropout_new(double rate, uint64_t seed, const char *name);

/* Activation(act) ("activation", ...) and ReLU() ("re_lu", ...). */
gb_module *gb_activation_new(gb_activation act, const char *name);
gb_module *gb_relu_new(const char *name);

/* ---- normalization, embedding, pooling to a vector ---------------------------------- */

/* BatchNormalization: with training, normalizes with the batch's mean and
 * variance over every axis but `axis` and moves the running statistics
 * (moving = moving * momentum + batch * (1 - momentum)); without, uses
 * them. gamma and beta train; moving_mean and moving_variance are
 * non-trainable variables. Works traced (the update is a graph op). */
typedef struct gb_batch_norm_options {
    const char *name;          /* NULL: batch_normalization, ... */
    int64_t axis;              /* the feature axis; 0: -1 (the last) */
    double momentum;           /* 0: 0.99 */
    double epsilon;            /* 0: 1e-3 */
    bool no_center, no_scale;  /* Keras center=False / scale=False: no beta / gamma */
    gb_initializer beta_initializer, gamma_initializer;   /* zeros, ones */
    gb_initializer moving_mean_initializer, moving_variance_initializer;   /* zeros, ones */
} gb_batch_norm_options;
gb_module *gb_batch_norm_new(const gb_batch_norm_options *opts);

/* LayerNormalization over the last axis: each sample by its own mean and
 * variance, then gamma and beta. */
typedef struct gb_layer_norm_options {
    const char *name;          /* NULL: layer_normalization, ... */
    double epsilon;            /* 0: 1e-3 */
    bool no_center, no_scale;
    gb_initializer beta_initializer, gamma_initializer;
} gb_layer_norm_options;
gb_module *gb_layer_norm_new(const gb_layer_norm_options *opts);

/* Embedding(input_dim, output_dim): int32/int64 indices [..] to float32
 * rows [.., output_dim] of a trainable table "embeddings" (uniform in
 * [-0.05, 0.05) by default, as Keras); an index outside [0, input_dim)
 * is an error naming it. */
/* TextVectorization (keras.layers): strings [batch] (or [batch, 1]) to
 * token ids [batch, output_sequence_length] (int64, 0 the padding, 1 out
 * of vocabulary) or per-token values [batch, vocabulary size] (float32:
 * multi_hot, count, tf_idf; index 0 out of vocabulary). Standardizing
 * lowers ASCII letters and strips Keras' punctuation; splitting is on
 * whitespace. The vocabulary comes from gb_text_vectorization_adapt. */
typedef enum gb_tv_output_mode { GB_TV_INT, GB_TV_MULTI_HOT, GB_TV_COUNT, GB_TV_TF_IDF } gb_tv_output_mode;
typedef enum gb_tv_standardize {
    GB_TV_LOWER_AND_STRIP_PUNCTUATION, GB_TV_LOWER, GB_TV_STRIP_PUNCTUATION, GB_TV_NO_STANDARDIZE
} gb_tv_standardize;
typedef enum gb_tv_split { GB_TV_SPLIT_WHITESPACE, GB_TV_SPLIT_NONE } gb_tv_split;
typedef struct gb_text_vectorization_options {
    const char *name;
    int64_t max_tokens;               /* 0: no limit; counts the reserved entries */
    gb_tv_standardize standardize;
    gb_tv_split split;
    gb_tv_output_mode output_mode;
    int64_t output_sequence_length;   /* int: rows padded with 0 or cut to it (>= 1) */
    int64_t ngrams;                   /* N >= 2: the 1- to N-grams of each row's tokens,
                                       * joined by a space (Keras ngrams=N); 0, 1: tokens */
    bool mask;                        /* StringLookup: id 0 is the mask token "" (Keras
                                       * mask_token=""); TextVectorization's int mode
                                       * always has it, its other modes never */
} gb_text_vectorization_options;
gb_module *gb_text_vectorization_new(const gb_text_vectorization_options *opts);
/* StringLookup: each string (any shape) to its id, as Keras': "[UNK]"
 * (out of vocabulary) is 0 and the vocabulary starts at 1; with mask, the
 * mask token "" is 0, "[UNK]" 1, the vocabulary from 2. output_mode
 * multi_hot, count or tf_idf encodes each element of a [batch] input, or
 * each row of a [batch, tokens] one, as a row of the vocabulary's size
 * (no mask then). Only name, max_tokens, output_mode and mask of opts are
 * read. */
gb_module *gb_string_lookup_new(const gb_text_vectorization_options *opts);
/* Learns the vocabulary (and idf weights) from strings of any shape:
 * tokens by falling count, ties by bytes, up to max_tokens. Replaces a
 * vocabulary it had. From a dataset: gb_text_vectorization_adapt (gb_train.h). */
bool gb_text_vectorization_adapt_tensor(gb_module *layer, gb_tensor *x);
/* The vocabulary with its reserved entries first (a string tensor). */
gb_tensor *gb_text_vectorization_vocabulary(gb_module *layer);
int64_t gb_text_vectorization_vocabulary_size(gb_module *layer);

typedef struct gb_embedding_options {
    const char *name;
    gb_initializer embeddings_initializer;
    uint64_t seed;
    /* Index 0 is padding: the output's mask is ids != 0 (Keras mask_zero),
     * passed along a Sequential model or taken with gb_embedding_compute_mask. */
    bool mask_zero;
} gb_embedding_options;
gb_module *gb_embedding_new(int64_t input_dim, int64_t output_dim, const gb_embedding_options *opts);
/* Keras' compute_mask of an Embedding with mask_zero: ids != 0 (bool, the
 * ids' shape), the mask a recurrent layer takes after its input. */
gb_tensor *gb_embedding_compute_mask(gb_module *layer, gb_tensor *ids);

/* PositionEmbedding(sequence_length), as Keras-NLP's: a trainable table
 * "embeddings" [sequence_length, dim] (dim from the input's last axis;
 * Glorot-uniform by default). Called on x [..., T, dim] with T <=
 * sequence_length, it returns the first T rows broadcast to x's shape;
 * add it to the token embeddings (gb_add_layer_new). */
typedef struct gb_position_embedding_options {
    const char *name;                  /* NULL: position_embedding, ... */
    gb_initializer initializer;        /* default Glorot-uniform */
    uint64_t seed;                     /* 0: next from the global sequence */
} gb_position_embedding_options;
gb_module *gb_position_embedding_new(int64_t sequence_length, const gb_position_embedding_options *opts);

/* SinePositionEncoding, as Keras-NLP's: no weights; called on x [..., T,
 * d] it returns the fixed sinusoidal signal, broadcast to x's shape: at
 * position p, sin(p w_i) at even features i and cos(p w_i) at odd ones,
 * w_i = (1 / max_wavelength)^(2 floor(i/2) / d). Any T; add it to the
 * token embeddings. */
typedef struct gb_sine_position_encoding_options {
    const char *name;                  /* NULL: sine_position_encoding, ... */
    double max_wavelength;             /* 0: 10000, as Keras-NLP */
} gb_sine_position_encoding_options;
gb_module *gb_sine_position_encoding_new(const gb_sine_position_encoding_options *opts);

/* Recurrent layers, as Keras': SimpleRNN, LSTM (gates i, f, c, o) and GRU
 * (gates z, r, h), on [batch, time, features] with a known number of time
 * steps; the output is the last state [batch, units], or every state
 * [batch, time, units] with return_sequences (in the order processed:
 * reversed with go_backwards). Weights: kernel [features, gates * units],
 * recurrent_kernel [units, gates * units] and bias ([gates * units]; a
 * GRU with reset_after, Keras' default, has [2, 3 * units]: the input and
 * the recurrent bias). The time loop is C: eagerly it runs step by step
 * (the input's projection for all steps is one matrix product), traced it
 * unrolls into the graph, and a tape differentiates through time.
 *
 * gb_module_call_n takes x, then optionally a bool mask [batch, time]
 * (Keras' mask=, as from gb_embedding_compute_mask: a masked step keeps
 * the state and repeats the last output), then optionally the initial
 * state (h; an LSTM h and c, each [batch, units]; default zeros). With
 * return_state the outputs are the output, then h (and c). dropout and
 * recurrent_dropout (training only) drop inputs and the state fed to the
 * recurrent kernel with masks drawn once per call and kept for every
 * step, as Keras. */
typedef struct gb_rnn_options {
    const char *name;                     /* NULL: simple_rnn, lstm, gru (+ _1, ...) */
    gb_activation activation;             /* 0 (not linear): tanh */
    gb_activation recurrent_activation;   /* LSTM, GRU; 0: sigmoid */
    bool no_bias;                         /* Keras use_bias=False */
    bool return_sequences;
    bool return_state;
    bool go_backwards;
    bool no_unit_forget_bias;             /* LSTM: Keras unit_forget_bias=False */
    bool reset_before;                    /* GRU: Keras reset_after=False */
    double dropout, recurrent_dropout;    /* fractions in [0, 1) */
    gb_initializer kernel_initializer;    /* default Glorot-uniform */
    gb_initializer recurrent_initializer; /* default orthogonal */
    gb_initializer bias_initializer;      /* default zeros (LSTM: forget gate's ones) */
    gb_regularizer kernel_regularizer, recurrent_regularizer, bias_regularizer;
    uint64_t seed;                        /* 0: next from the global sequence */
} gb_rnn_options;
gb_module *gb_simple_rnn_new(int64_t units, const gb_rnn_options *opts);
gb_module *gb_lstm_new(int64_t units, const gb_rnn_options *opts);
gb_module *gb_gru_new(int64_t units, const gb_rnn_options *opts);

/* Bidirectional(layer): the recurrent layer read forwards and a copy
 * read backwards (both recreated from its config, named forward_<name>
 * and backward_<name>; the layer's reference is taken over), their
 * outputs merged on the last axis. Called as the layer is (x, mask,
 * initial state: the forward states then the backward ones); outputs the
 * merged output (merge_mode none: the forward then the backward output,
 * the latter back in time order), then with return_state the forward
 * and the backward states. */
typedef enum gb_merge_mode {
    GB_MERGE_CONCAT, GB_MERGE_SUM, GB_MERGE_MUL, GB_MERGE_AVE, GB_MERGE_NONE
} gb_merge_mode;
typedef struct gb_bidirectional_options {
    const char *name;             /* NULL: bidirectional, ... */
    gb_merge_mode merge_mode;     /* 0: concat */
} gb_bidirectional_options;
gb_module *gb_bidirectional_new(gb_module *layer, const gb_bidirectional_options *opts);

/* MultiHeadAttention(num_heads, key_dim), as Keras': called with
 * gb_module_call_n on (query), (query, value), (query, value, key) or
 * (query, value, key, attention_mask [batch, Tq, Tv] bool), each
 * [batch, time, dim] with the query's dim; the output [batch, Tq,
 * output_dim or dim], and with return_attention_scores the weights
 * [batch, heads, Tq, Tv] second. Masked keys get exactly 0 weight, a
 * query that may see no key gets 0 everywhere (gb_masked_softmax). */
typedef struct gb_mha_options {
    const char *name;                  /* NULL: multi_head_attention, ... */
    int64_t value_dim;                 /* 0: key_dim */
    int64_t output_dim;                /* 0: the query's width */
    double dropout;                    /* on the attention weights, training only */
    bool no_bias;
    bool use_causal_mask;              /* query i attends to keys j <= i */
    bool return_attention_scores;
    gb_initializer kernel_initializer; /* default Glorot-uniform */
    gb_initializer bias_initializer;   /* default zeros */
    gb_regularizer kernel_regularizer, bias_regularizer;
    uint64_t seed;
} gb_mha_options;
gb_module *gb_multi_head_attention_new(int64_t num_heads, int64_t key_dim, const gb_mha_options *opts);

/* GlobalAveragePooling2D: NHWC [B, H, W, C] -> [B, C]. */
gb_module *gb_global_avg_pool2d_new(const char *name);
/* GlobalAveragePooling1D: [batch, steps, features] to the mean over the
 * steps, [batch, features]; with a mask (Embedding's mask_zero), over the
 * steps the mask keeps (a row it keeps none of gives zeros, not Keras'
 * 0/0 NaN). */
gb_module *gb_global_avg_pool1d_new(const char *name);

/* ---- models ------------------------------------------------------------------------ */

/* Sequential(): calls its layers in order. name NULL: sequential, ... */
gb_module *gb_sequential_new(const char *name);
/* Appends a layer, taking over the caller's reference (also on failure).
 * Layer names within a model must be unique. */
bool gb_sequential_add(gb_module *model, gb_module *layer);
int gb_sequential_num_layers(const gb_module *model);
gb_module *gb_sequential_layer(const gb_module *model, int i);
bool gb_is_sequential(const gb_module *m);

/* ---- merging layers ------------------------------------------------------------------ */

/* Add(): the elementwise sum of two or more inputs of one shape. */
gb_module *gb_add_layer_new(const char *name);
/* Concatenate(axis): inputs of one rank, equal but along axis (-1: the
 * last; 0, the batch, is refused as Keras does). */
gb_module *gb_concatenate_new(int64_t axis, const char *name);

/* ---- functional models ------------------------------------------------------------------ */

/* Keras' functional API. A gb_sym is a symbolic tensor (KerasTensor): the
 * dtype and shape, batch unknown, of a value a model will compute.
 * gb_input() makes one; calling a layer on symbols (gb_apply) builds the
 * layer and records the call; gb_functional_new() turns the calls between
 * inputs and outputs into a model — several inputs and outputs, shared
 * layers (one layer applied twice uses the same weights) and models used
 * as layers all work:
 *
 *     gb_sym *x = gb_input(GB_F32, GB_SHAPE(784), "pixels");
 *     gb_sym *h = gb_apply(gb_dense_new(64, &(gb_dense_options){.activation = GB_ACT_RELU}), x);
 *     gb_sym *y = gb_apply(gb_dense_new(10, NULL), h);
 *     gb_module *model = gb_functional_new(1, &x, 1, &y, "mlp");
 *
 * Symbols, like tensors, belong to the current memory scope; a model
 * keeps what it needs of them. A layer's first symbolic call takes over
 * the caller's reference (as gb_sequential_add does, also when the call
 * fails), so layers made inline leak nothing; later calls share it. To keep a layer beyond its
 * models, gb_module_retain() it first. A model used as a layer follows
 * the same rule. */
typedef struct gb_sym gb_sym;

/* keras.Input(shape): shape without the batch dim (-1 for unknown dims).
 * name NULL: input_layer, input_layer_1, ... */
gb_sym *gb_input(gb_dtype dt, int rank, const int64_t *shape, const char *name);
/* layer(x) and layer([a, b, ...]) on symbols: checks the inputs, builds
 * the layer, returns its (first) output. */
gb_sym *gb_apply(gb_module *layer, gb_sym *x);
gb_sym *gb_apply_n(gb_module *layer, int n, gb_sym *const *xs);
/* Output i of the layer call that made s (for layers of several outputs). */
gb_sym *gb_sym_output(gb_sym *s, int i);
int gb_sym_num_outputs(const gb_sym *s);
/* dtype and shape (dims[0], the batch, -1); name: the producing layer's
 * or input's name. */
gb_tensor_spec gb_sym_spec(const gb_sym *s);
const char *gb_sym_name(const gb_sym *s);

/* keras.Model(inputs, outputs): the layers between them, in an order
 * that computes each value once. Inputs may be gb_input() symbols or any
 * symbol (the model then starts there); every output must be computable
 * from the inputs alone (a "graph disconnected" error names what is
 * missing). Layer names must be unique in the model. */
gb_module *gb_functional_new(int nin, gb_sym *const *inputs, int nout, gb_sym *const *outputs,
                             const char *name);
bool gb_is_functional(const gb_module *m);
int gb_model_num_inputs(const gb_module *m);
int gb_model_num_outputs(const gb_module *m);
/* The model's input and output symbols (the model keeps them alive): new
 * models from them share layers and weights — feature extraction. */
gb_sym *gb_model_input(const gb_module *m, int i);
gb_sym *gb_model_output(const gb_module *m, int i);
/* The output of the call-th call (0: the first) of the named layer inside
 * the model (Keras' get_layer(name).output); NULL when there is none. */
gb_sym *gb_model_layer_output(const gb_module *m, const char *layer, int call);
/* Keras' output names: the layer that makes output i ("" when none). */
const char *gb_model_output_name(const gb_module *m, int i);

/* ---- losses --------------------------------------------------------------------------- */

typedef enum gb_reduction {
    GB_REDUCTION_MEAN = 0,   /* Keras SUM_OVER_BATCH_SIZE: mean of per-sample losses */
    GB_REDUCTION_SUM,
    GB_REDUCTION_NONE        /* per-sample losses */
} gb_reduction;

/* Per-sample means reduce the last axis (Keras); rank-1 inputs are one
 * value per sample. y_true [B] and y_pred [B,1] (or the reverse) are
 * accepted as Keras does; any other shape mismatch is a GB_ERR_SHAPE error
 * (never a silent broadcast). y_true is cast to y_pred's dtype. */
gb_tensor *gb_loss_mean_squared_error(gb_tensor *y_true, gb_tensor *y_pred, gb_reduction r);
gb_tensor *gb_loss_mean_absolute_error(gb_tensor *y_true, gb_tensor *y_pred, gb_reduction r);
/* 0.5 e^2 where |e| <= delta, delta (|e| - 0.5 delta) beyond (Keras default delta 1). */
gb_tensor *gb_loss_huber(gb_tensor *y_true, gb_tensor *y_pred, double delta, gb_reduction r);
/* labels: class indices [B] (int32/int64; other dtypes are cast, as Keras),
 * y_pred [B, C] logits (from_logits) or probabilities. */
gb_tensor *gb_loss_sparse_categorical_crossentropy(gb_tensor *labels, gb_tensor *y_pred,
                                                   bool from_logits, gb_reduction r);
/* y_true: distributions [B, C] (one-hot). */
gb_tensor *gb_loss_categorical_crossentropy(gb_tensor *y_true, gb_tensor *y_pred,
                                            bool from_logits, gb_reduction r);
/* y_true in {0,1} (or soft), y_pred logits or probabilities, same shape. */
gb_tensor *gb_loss_binary_crossentropy(gb_tensor *y_true, gb_tensor *y_pred, bool from_logits,
                                       gb_reduction r);

/* ---- metrics ------------------------------------------------------------------------- */

/* Running metrics (keras.metrics): update_state / result / reset_state on
 * plain C state. Eager only: they read values, so a symbolic (traced)
 * tensor is a clear error. An update that fails leaves the state as it
 * was. y_true and y_pred of the confusion metrics (precision, recall, AUC)
 * are compared element by element: labels are positive when nonzero,
 * predictions are probabilities (or 0/1 decisions). */
typedef struct gb_metric gb_metric;

gb_metric *gb_metric_mean_new(const char *name);                        /* "mean" */
gb_metric *gb_metric_sparse_categorical_accuracy_new(const char *name); /* labels vs argmax */
gb_metric *gb_metric_categorical_accuracy_new(const char *name);        /* argmax vs argmax */
/* Precision tp / (tp + fp) and Recall tp / (tp + fn), a prediction being
 * positive when > threshold (Keras' default 0.5; must be in [0, 1]);
 * 0 while the denominator is 0. Names "precision", "recall". */
gb_metric *gb_metric_precision_new(const char *name, double threshold);
gb_metric *gb_metric_recall_new(const char *name, double threshold);

typedef enum gb_auc_curve { GB_AUC_ROC = 0, GB_AUC_PR } gb_auc_curve;
typedef enum gb_auc_summation {
    GB_AUC_INTERPOLATION = 0,   /* trapezoids (PR: Davis & Goadrich's interpolation) */
    GB_AUC_MINORING,            /* left/right Riemann sum, the smaller height */
    GB_AUC_MAJORING,            /* the larger height */
} gb_auc_summation;
typedef struct gb_auc_options {
    int num_thresholds;         /* 0: 200; else >= 2 */
    gb_auc_curve curve;         /* ROC */
    gb_auc_summation summation; /* interpolation */
    bool from_logits;           /* apply a sigmoid to y_pred first */
} gb_auc_options;
/* keras.metrics.AUC: confusion counts at num_thresholds thresholds evenly
 * spaced over [0, 1] (the first -1e-7, the last 1 + 1e-7, so 0 and 1
 * predictions fall inside), then the area under the curve they trace.
 * options NULL: Keras' defaults. Name "auc". */
gb_metric *gb_metric_auc_new(const char *name, const gb_auc_options *options);

void gb_metric_free(gb_metric *m);
const char *gb_metric_name(const gb_metric *m);

/* Mean: update_state(m, values, NULL); the others: (m, y_true, y_pred). */
bool gb_metric_update_state(gb_metric *m, gb_tensor *a, gb_tensor *b);
/* With sample weights (NULL: all 1; a scalar; one per sample; or, for the
 * confusion metrics, one per element of y_pred). */
bool gb_metric_update_state_weighted(gb_metric *m, gb_tensor *a, gb_tensor *b,
                                     gb_tensor *sample_weight);
/* Mean only: adds one value with a weight (a loss already read as a double). */
bool gb_metric_update_value(gb_metric *m, double value, double weight);
/* The result so far (0 before any update, as Keras). */
double gb_metric_result(const gb_metric *m);
/* The same as a float32 scalar in the current scope. */
gb_tensor *gb_metric_result_tensor(const gb_metric *m);
void gb_metric_reset_state(gb_metric *m);

/* Custom metrics (a subclass of keras.metrics.Metric), written in C:
 *
 *     typedef struct { double true_positives; } ctp_state;
 *     static bool ctp_update(gb_metric *m, void *state, gb_tensor *y_true, gb_tensor *y_pred,
 *                            gb_tensor *sample_weight) {
 *         ctp_state *s = state;
 *         ...read the tensors with gb_get, add to s->true_positives...
 *         return true;
 *     }
 *     static double ctp_result(gb_metric *m, const void *state) {
 *         return ((const ctp_state *)state)->true_positives;
 *     }
 *     static const gb_metric_type CTP = {
 *         .class_name = "CategoricalTruePositives",
 *         .default_name = "categorical_true_positives",
 *         .state_size = sizeof(ctp_state),
 *         .update_state = ctp_update, .result = ctp_result};
 *     gb_metric *m = gb_metric_new(&CTP, NULL, NULL);
 *
 * The state is plain data (no pointers it owns): it starts zeroed,
 * reset_state zeroes it (or calls the type's reset_state), and an update
 * runs on a copy that is kept only when update_state returns true and no
 * error was recorded, so a failed update changes nothing. update_state
 * gets non-NULL, concrete y_true and y_pred (values only: y_pred NULL)
 * and sample_weight as given (may be NULL); it reports a bad input with
 * gb_metric_error. Such a metric can also be given to gb_model_compile. */
typedef struct gb_metric_type {
    const char *class_name;     /* in errors (NULL: default_name) */
    const char *default_name;   /* the name when none is given (NULL: "metric") */
    size_t state_size;
    bool values_only;           /* updates take one tensor, as Mean: (m, values, NULL) */
    bool (*update_state)(gb_metric *m, void *state, gb_tensor *y_true, gb_tensor *y_pred,
                         gb_tensor *sample_weight);
    double (*result)(const gb_metric *m, const void *state);
    void (*reset_state)(gb_metric *m, void *state);   /* NULL: zero the state */
    /* The state is doubles that add up over parts of the data (totals,
     * counts): the result over several processes' updates is the result
     * of their states summed (gb_dist_metric_result). */
    bool state_is_sums;
} gb_metric_type;

/* A metric of a type (which must outlive it); user is the caller's, for
 * the type's functions (its parameters), returned by gb_metric_user. */
gb_metric *gb_metric_new(const gb_metric_type *type, const char *name, void *user);
void *gb_metric_user(const gb_metric *m);
const gb_metric_type *gb_metric_get_type(const gb_metric *m);
/* Records "<Class> metric '<name>': <message>" (code: GB_ERR_SHAPE for a
 * shape, GB_ERR_VALUE otherwise) unless an error is already recorded. */
void gb_metric_error(const gb_metric *m, gb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- call sites (GB_AT, gb_base.h) ------------------------------------------------------ */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_activation_from_name(...) GB_AT(gb_activation_from_name, __VA_ARGS__)
#define gb_activation_apply(...) GB_AT(gb_activation_apply, __VA_ARGS__)
#define gb_initializer_make(...) GB_AT(gb_initializer_make, __VA_ARGS__)
#define gb_module_new(...) GB_AT(gb_module_new, __VA_ARGS__)
#define gb_module_call(...) GB_AT(gb_module_call, __VA_ARGS__)
#define gb_module_call_masked(...) GB_AT(gb_module_call_masked, __VA_ARGS__)
#define gb_module_call_n(...) GB_AT(gb_module_call_n, __VA_ARGS__)
#define gb_module_build(...) GB_AT(gb_module_build, __VA_ARGS__)
#define gb_module_add_weight(...) GB_AT(gb_module_add_weight, __VA_ARGS__)
#define gb_module_add_variable(...) GB_AT(gb_module_add_variable, __VA_ARGS__)
#define gb_module_add_submodule(...) GB_AT(gb_module_add_submodule, __VA_ARGS__)
#define gb_module_variables(...) GB_AT(gb_module_variables, __VA_ARGS__)
#define gb_module_trainable_variables(...) GB_AT(gb_module_trainable_variables, __VA_ARGS__)
#define gb_module_non_trainable_variables(...) \
    GB_AT(gb_module_non_trainable_variables, __VA_ARGS__)
#define gb_module_count_params(...) GB_AT(gb_module_count_params, __VA_ARGS__)
#define gb_module_count_trainable_params(...) GB_AT(gb_module_count_trainable_params, __VA_ARGS__)
#define gb_module_summary(...) GB_AT(gb_module_summary, __VA_ARGS__)
#define gb_regularizer_apply(...) GB_AT(gb_regularizer_apply, __VA_ARGS__)
#define gb_module_regularize_weight(...) GB_AT(gb_module_regularize_weight, __VA_ARGS__)
#define gb_module_set_activity_regularizer(...) \
    GB_AT(gb_module_set_activity_regularizer, __VA_ARGS__)
#define gb_module_regularization_loss(...) GB_AT(gb_module_regularization_loss, __VA_ARGS__)
#define gb_losses_end(...) GB_AT(gb_losses_end, __VA_ARGS__)
#define gb_add_loss(...) GB_AT(gb_add_loss, __VA_ARGS__)
#define gb_config_new(...) GB_AT(gb_config_new, __VA_ARGS__)
#define gb_config_put_int(...) GB_AT(gb_config_put_int, __VA_ARGS__)
#define gb_config_put_number(...) GB_AT(gb_config_put_number, __VA_ARGS__)
#define gb_config_put_bool(...) GB_AT(gb_config_put_bool, __VA_ARGS__)
#define gb_config_put_null(...) GB_AT(gb_config_put_null, __VA_ARGS__)
#define gb_config_put_string(...) GB_AT(gb_config_put_string, __VA_ARGS__)
#define gb_config_put_dict(...) GB_AT(gb_config_put_dict, __VA_ARGS__)
#define gb_config_put_list(...) GB_AT(gb_config_put_list, __VA_ARGS__)
#define gb_config_put_ints(...) GB_AT(gb_config_put_ints, __VA_ARGS__)
#define gb_config_read_int(...) GB_AT(gb_config_read_int, __VA_ARGS__)
#define gb_config_read_number(...) GB_AT(gb_config_read_number, __VA_ARGS__)
#define gb_config_read_bool(...) GB_AT(gb_config_read_bool, __VA_ARGS__)
#define gb_config_read_string(...) GB_AT(gb_config_read_string, __VA_ARGS__)
#define gb_config_read_ints(...) GB_AT(gb_config_read_ints, __VA_ARGS__)
#define gb_config_to_json(...) GB_AT(gb_config_to_json, __VA_ARGS__)
#define gb_config_to_json_flat(...) GB_AT(gb_config_to_json_flat, __VA_ARGS__)
#define gb_config_from_json(...) GB_AT(gb_config_from_json, __VA_ARGS__)
#define gb_module_get_config(...) GB_AT(gb_module_get_config, __VA_ARGS__)
#define gb_module_from_config(...) GB_AT(gb_module_from_config, __VA_ARGS__)
#define gb_register_module_type(...) GB_AT(gb_register_module_type, __VA_ARGS__)
#define gb_dense_new(...) GB_AT(gb_dense_new, __VA_ARGS__)
#define gb_conv2d_new(...) GB_AT(gb_conv2d_new, __VA_ARGS__)
#define gb_max_pool2d_new(...) GB_AT(gb_max_pool2d_new, __VA_ARGS__)
#define gb_avg_pool2d_new(...) GB_AT(gb_avg_pool2d_new, __VA_ARGS__)
#define gb_flatten_new(...) GB_AT(gb_flatten_new, __VA_ARGS__)
#define gb_dropout_new(...) GB_AT(gb_dropout_new, __VA_ARGS__)
#define gb_activation_new(...) GB_AT(gb_activation_new, __VA_ARGS__)
#define gb_relu_new(...) GB_AT(gb_relu_new, __VA_ARGS__)
#define gb_batch_norm_new(...) GB_AT(gb_batch_norm_new, __VA_ARGS__)
#define gb_layer_norm_new(...) GB_AT(gb_layer_norm_new, __VA_ARGS__)
#define gb_embedding_new(...) GB_AT(gb_embedding_new, __VA_ARGS__)
#define gb_position_embedding_new(...) GB_AT(gb_position_embedding_new, __VA_ARGS__)
#define gb_sine_position_encoding_new(...) GB_AT(gb_sine_position_encoding_new, __VA_ARGS__)
#define gb_simple_rnn_new(...) GB_AT(gb_simple_rnn_new, __VA_ARGS__)
#define gb_lstm_new(...) GB_AT(gb_lstm_new, __VA_ARGS__)
#define gb_gru_new(...) GB_AT(gb_gru_new, __VA_ARGS__)
#define gb_bidirectional_new(...) GB_AT(gb_bidirectional_new, __VA_ARGS__)
#define gb_embedding_compute_mask(...) GB_AT(gb_embedding_compute_mask, __VA_ARGS__)
#define gb_multi_head_attention_new(...) GB_AT(gb_multi_head_attention_new, __VA_ARGS__)
#define gb_text_vectorization_new(...) GB_AT(gb_text_vectorization_new, __VA_ARGS__)
#define gb_string_lookup_new(...) GB_AT(gb_string_lookup_new, __VA_ARGS__)
#define gb_text_vectorization_adapt_tensor(...) GB_AT(gb_text_vectorization_adapt_tensor, __VA_ARGS__)
#define gb_text_vectorization_vocabulary(...) GB_AT(gb_text_vectorization_vocabulary, __VA_ARGS__)
#define gb_global_avg_pool2d_new(...) GB_AT(gb_global_avg_pool2d_new, __VA_ARGS__)
#define gb_global_avg_pool1d_new(...) GB_AT(gb_global_avg_pool1d_new, __VA_ARGS__)
#define gb_sequential_new(...) GB_AT(gb_sequential_new, __VA_ARGS__)
#define gb_add_layer_new(...) GB_AT(gb_add_layer_new, __VA_ARGS__)
#define gb_concatenate_new(...) GB_AT(gb_concatenate_new, __VA_ARGS__)
#define gb_input(...) GB_AT(gb_input, __VA_ARGS__)
#define gb_apply(...) GB_AT(gb_apply, __VA_ARGS__)
#define gb_apply_n(...) GB_AT(gb_apply_n, __VA_ARGS__)
#define gb_sym_output(...) GB_AT(gb_sym_output, __VA_ARGS__)
#define gb_functional_new(...) GB_AT(gb_functional_new, __VA_ARGS__)
#define gb_model_input(...) GB_AT(gb_model_input, __VA_ARGS__)
#define gb_model_output(...) GB_AT(gb_model_output, __VA_ARGS__)
#define gb_model_layer_output(...) GB_AT(gb_model_layer_output, __VA_ARGS__)
#define gb_sequential_add(...) GB_AT(gb_sequential_add, __VA_ARGS__)
#define gb_loss_mean_squared_error(...) GB_AT(gb_loss_mean_squared_error, __VA_ARGS__)
#define gb_loss_mean_absolute_error(...) GB_AT(gb_loss_mean_absolute_error, __VA_ARGS__)
#define gb_loss_huber(...) GB_AT(gb_loss_huber, __VA_ARGS__)
#define gb_loss_sparse_categorical_crossentropy(...) \
    GB_AT(gb_loss_sparse_categorical_crossentropy, __VA_ARGS__)
#define gb_loss_categorical_crossentropy(...) GB_AT(gb_loss_categorical_crossentropy, __VA_ARGS__)
#define gb_loss_binary_crossentropy(...) GB_AT(gb_loss_binary_crossentropy, __VA_ARGS__)
#define gb_metric_mean_new(...) GB_AT(gb_metric_mean_new, __VA_ARGS__)
#define gb_metric_sparse_categorical_accuracy_new(...) \
    GB_AT(gb_metric_sparse_categorical_accuracy_new, __VA_ARGS__)
#define gb_metric_categorical_accuracy_new(...) \
    GB_AT(gb_metric_categorical_accuracy_new, __VA_ARGS__)
#define gb_metric_update_state(...) GB_AT(gb_metric_update_state, __VA_ARGS__)
#define gb_metric_update_state_weighted(...) GB_AT(gb_metric_update_state_weighted, __VA_ARGS__)
#define gb_metric_update_value(...) GB_AT(gb_metric_update_value, __VA_ARGS__)
#define gb_metric_result_tensor(...) GB_AT(gb_metric_result_tensor, __VA_ARGS__)
#define gb_metric_precision_new(...) GB_AT(gb_metric_precision_new, __VA_ARGS__)
#define gb_metric_recall_new(...) GB_AT(gb_metric_recall_new, __VA_ARGS__)
#define gb_metric_auc_new(...) GB_AT(gb_metric_auc_new, __VA_ARGS__)
#define gb_metric_new(...) GB_AT(gb_metric_new, __VA_ARGS__)
#define gb_metric_user(...) GB_AT(gb_metric_user, __VA_ARGS__)
#define gb_metric_error(...) GB_AT(gb_metric_error, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
