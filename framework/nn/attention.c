/* nn/attention.c — MultiHeadAttention, as Keras' layer (gb_mha_options in
 * gb_nn.h).
 *
 * Weights in Keras' layout: query/kernel [dim, heads, key_dim] and
 * query/bias [heads, key_dim], the same for key and value (value_dim),
 * attention_output/kernel [heads, value_dim, out] and its bias [out]. A
 * call is matrix products over reshapes of them (each projection one GEMM
 * over [batch * time, dim]), then per head the scores q k^T / sqrt(key_dim),
 * a masked softmax over the keys allowed (the attention mask and the
 * causal one together) and the weighted values — one DotProductAttention
 * op, or, with dropout on the weights while training, the same from
 * ops — and the output projection.
 *
 * Inputs: (query), (query, value), (query, value, key) or (query, value,
 * key, attention_mask [batch, Tq, Tv] bool). Weights are built from the
 * query's width, which value and key must share (Keras builds them from
 * each; a different value width is refused by name). The second output,
 * with return_attention_scores, is the weights [batch, heads, Tq, Tv].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/internal.h"

typedef struct mha_state {
    int64_t heads, key_dim, value_dim, out_dim;   /* out_dim 0: the query's width */
    int64_t dim;                                    /* the query's width; 0 until built */
    bool use_bias, causal, return_scores;
    double dropout;
    int64_t calls;                                  /* dropout draws anew per call */
    gb_initializer kernel_init, bias_init;
    gb_regularizer kernel_reg, bias_reg;
    gb_variable *kernel[4], *bias[4];               /* query, key, value, output */
} mha_state;

enum { Q, K, V, O };
static const char *const PART[4] = {"query", "key", "value", "attention_output"};

static bool mha_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    mha_state *s = gb_module_state(m);
    if (!gb__nn_require_float(m, dt)) return false;
    if (rank != 3 || shape[2] <= 0) {
        char buf[128];
        gb__nn_error(m, GB_ERR_SHAPE, "expected a query [batch, time, dim] with known dim, got %s",
                     gb__shape_fmt(rank, shape, buf, sizeof buf));
        return false;
    }
    s->dim = shape[2];
    int64_t out = s->out_dim ? s->out_dim : s->dim;
    const int64_t width[4] = {s->key_dim, s->key_dim, s->value_dim, 0};
    for (int p = 0; p < 4; p++) {
        char name[64];
        snprintf(name, sizeof name, "%s/kernel", PART[p]);
        const int64_t *ks = p == O ? (int64_t[]){s->heads, s->value_dim, out}
                                   : (int64_t[]){s->dim, s->heads, width[p]};
        s->kernel[p] = gb_module_add_weight(m, name, dt, 3, ks, s->kernel_init, true);
        if (s->use_bias) {
            snprintf(name, sizeof name, "%s/bias", PART[p]);
            s->bias[p] = p == O ? gb_module_add_weight(m, name, dt, 1, &out, s->bias_init, true)
                                : gb_module_add_weight(m, name, dt, 2, (int64_t[]){s->heads, width[p]},
                                                       s->bias_init, true);
        }
        if (!s->kernel[p] || (s->use_bias && !s->bias[p]) ||
            !gb__nn_regularize(m, s->kernel[p], s->kernel_reg, s->bias[p], s->bias_reg))
            return false;
    }
    return true;
}

/* x [B, T, dim] projected by part p to [B, T, heads, width]. */
static gb_tensor *project(const mha_state *s, int p, gb_tensor *x, int64_t width) {
    int64_t hw = s->heads * width;
    gb_tensor *y = gb_matmul(x, gb_reshape(gb_variable_value(s->kernel[p]), 2, (int64_t[]){s->dim, hw}));
    if (s->use_bias) y = gb_add(y, gb_reshape(gb_variable_value(s->bias[p]), 1, &hw));
    return gb_reshape(y, 4, (int64_t[]){gb_dim(x, 0), gb_dim(x, 1), s->heads, width});
}

/* [B, T, heads, width] as [B, heads, T, width], and back. */
static gb_tensor *swap_time_heads(gb_tensor *x) { return gb_transpose(x, (int64_t[]){0, 2, 1, 3}, 4); }

/* The attended values [B, Tq, heads, value_dim] and the weights [B,
 * heads, Tq, Tv]. Without dropout, one DotProductAttention op
 * (ops/attention.c: each head's scores made, softmaxed and applied in
 * cache, q, k and v read in place); dropping weights while training, the
 * same from ops with the dropout between. */
static gb_tensor *attend(gb_module *m, gb_tensor *q, gb_tensor *k, gb_tensor *v, gb_tensor *ok, bool training,
                         gb_tensor **weights_out) {
    mha_state *s = gb_module_state(m);
    double scale = 1.0 / sqrt((double)s->key_dim);
    bool dropping = training && s->dropout > 0;
    if (!dropping) return gb__dot_product_attention(q, k, v, ok, scale, weights_out);
    gb_tensor *qh = gb_mul(swap_time_heads(q), gb_scalar(gb_tensor_dtype(q), scale));
    gb_tensor *scores = gb_matmul_t(qh, swap_time_heads(k), false, true);    /* [B, H, Tq, Tv] */
    gb_tensor *weights = ok ? gb_masked_softmax(scores, ok) : gb_softmax(scores, -1);
    gb_tensor *dropped = dropping ? gb_dropout(weights, s->dropout, gb__nn_mix_seed(gb_module_seed(m), ++s->calls))
                                  : weights;
    *weights_out = weights;
    return swap_time_heads(gb_matmul(dropped, swap_time_heads(v)));         /* [B, Tq, H, V] */
}

/* Query i may see keys j <= i: a constant [Tq, Tv] (Keras' causal mask). */
static gb_tensor *causal_mask(gb_module *m, int64_t tq, int64_t tv) {
    if (tq <= 0 || tv <= 0) {
        gb__nn_error(m, GB_ERR_SHAPE, "use_causal_mask needs known query and key lengths, got %lld and %lld",
                     (long long)tq, (long long)tv);
        return NULL;
    }
    bool *c = malloc((size_t)(tq * tv) * sizeof *c);
    if (!c) {
        gb__nn_error(m, GB_ERR_MEMORY, "out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < tq; i++)
        for (int64_t j = 0; j < tv; j++) c[i * tv + j] = j <= i;
    gb_tensor *t = gb_tensor_from(GB_BOOL, c, 2, (int64_t[]){tq, tv});
    free(c);
    return t;
}

/* The keys each query may attend to, [B or 1, 1, Tq, Tv] bool; NULL: all. */
static gb_tensor *allowed(gb_module *m, gb_tensor *mask, int64_t tq, int64_t tv) {
    const mha_state *s = gb_module_state(m);
    gb_tensor *a = mask ? gb_expand_dims(mask, 1) : NULL;
    if (!s->causal) return a;
    gb_tensor *c = causal_mask(m, tq, tv);
    /* Both must allow: where the mask allows, the causal one decides. */
    return a ? gb_where(a, c, gb_zeros(GB_BOOL, 0, NULL)) : c;
}

static int mha_call(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out, bool training) {
    mha_state *s = gb_module_state(m);
    if (nin < 1 || nin > 4) {
        gb__nn_error(m, GB_ERR_VALUE, "takes query, value, key and attention_mask (1 to 4 inputs), got %d", nin);
        return -1;
    }
    gb_tensor *q = in[0], *v = nin > 1 ? in[1] : in[0], *k = nin > 2 ? in[2] : v;
    gb_tensor *mask = nin > 3 ? in[3] : NULL;
    for (int i = 1; i < 3; i++) {
        gb_tensor *x = i == 1 ? v : k;
        if (gb_rank(x) != 3 || gb_dim(x, 2) != s->dim) {
            char buf[128];
            gb__nn_error(m, GB_ERR_SHAPE, "the %s must be [batch, time, %lld] like the query, got %s",
                         i == 1 ? "value" : "key", (long long)s->dim,
                         gb__shape_fmt(gb_rank(x), gb_shape(x), buf, sizeof buf));
            return -1;
        }
    }
    if (mask && gb_tensor_dtype(mask) != GB_BOOL) {
        gb__nn_error(m, GB_ERR_DTYPE, "the attention mask must be bool, got %s",
                     gb_dtype_name(gb_tensor_dtype(mask)));
        return -1;
    }
    int64_t tq = gb_dim(q, 1), tv = gb_dim(v, 1);
    gb_tensor *qh = project(s, Q, q, s->key_dim), *kh = project(s, K, k, s->key_dim);
    gb_tensor *vh = project(s, V, v, s->value_dim), *weights = NULL;
    gb_tensor *ok = allowed(m, mask, tq, tv);
    if (s->causal && !ok) return -1;
    gb_tensor *o = attend(m, qh, kh, vh, ok, training, &weights);  /* [B, Tq, H, V] */
    int64_t hv = s->heads * s->value_dim, width = s->out_dim ? s->out_dim : s->dim;
    o = gb_matmul(gb_reshape(o, 3, (int64_t[]){gb_dim(q, 0), tq, hv}),
                  gb_reshape(gb_variable_value(s->kernel[O]), 2, (int64_t[]){hv, width}));
    if (s->use_bias) o = gb_add(o, gb_variable_value(s->bias[O]));
    out[0] = o;
    if (s->return_scores) out[1] = weights;
    return gb_ok() ? 1 + s->return_scores : -1;
}

/* ---- configs -------------------------------------------------------------------------- */

static bool mha_get_config(gb_module *m, gb_config *c) {
    const mha_state *s = gb_module_state(m);
    return gb_config_put_int(c, "num_heads", s->heads) && gb_config_put_int(c, "key_dim", s->key_dim) &&
           gb_config_put_int(c, "value_dim", s->value_dim) &&
           gb_config_put_int(c, "output_dim", s->out_dim) &&
           gb_config_put_number(c, "dropout", s->dropout) &&
           gb_config_put_bool(c, "use_bias", s->use_bias) &&
           gb_config_put_bool(c, "use_causal_mask", s->causal) &&
           gb_config_put_bool(c, "return_attention_scores", s->return_scores) &&
           gb__config_put_init(c, "kernel_initializer", s->kernel_init) &&
           gb__config_put_init(c, "bias_initializer", s->bias_init) &&
           gb__config_put_regularizer(c, "kernel_regularizer", s->kernel_reg) &&
           gb__config_put_regularizer(c, "bias_regularizer", s->bias_reg) &&
           gb_config_put_int(c, "seed", (int64_t)gb_module_seed(m));
}

static gb_module *mha_from_config(const gb_config *c) {
    static const char who[] = "MultiHeadAttention";
    int64_t heads = 0, key_dim = 0, seed = 0;
    bool use_bias = true;
    gb_mha_options o = {.name = gb__config_name(c, who)};
    bool ok = gb_config_read_int(c, who, "num_heads", 0, &heads) &&
              gb_config_read_int(c, who, "key_dim", 0, &key_dim) &&
              gb_config_read_int(c, who, "value_dim", 0, &o.value_dim) &&
              gb_config_read_int(c, who, "output_dim", 0, &o.output_dim) &&
              gb_config_read_number(c, who, "dropout", 0, &o.dropout) &&
              gb_config_read_bool(c, who, "use_bias", true, &use_bias) &&
              gb_config_read_bool(c, who, "use_causal_mask", false, &o.use_causal_mask) &&
              gb_config_read_bool(c, who, "return_attention_scores", false, &o.return_attention_scores) &&
              gb__config_read_init(c, who, "kernel_initializer", &o.kernel_initializer) &&
              gb__config_read_init(c, who, "bias_initializer", &o.bias_initializer) &&
              gb__config_read_regularizer(c, who, "kernel_regularizer", &o.kernel_regularizer) &&
              gb__config_read_regularizer(c, who, "bias_regularizer", &o.bias_regularizer) &&
              gb_config_read_int(c, who, "seed", 0, &seed);
    o.no_bias = !use_bias;
    o.seed = (uint64_t)seed;
    return ok ? gb_multi_head_attention_new(heads, key_dim, &o) : NULL;
}

const gb_module_type gb__mha_type = {
    .class_name = "MultiHeadAttention",
    .default_name = "multi_head_attention",
    .state_size = sizeof(mha_state),
    .build = mha_build,
    .call_n = mha_call,
    .get_config = mha_get_config,
    .from_config = mha_from_config,
};

gb_module *gb_multi_head_attention_new(int64_t num_heads, int64_t key_dim, const gb_mha_options *opts) {
    static const gb_mha_options defaults;
    if (!opts) opts = &defaults;
    if (num_heads <= 0 || key_dim <= 0 || opts->value_dim < 0 || opts->output_dim < 0 ||
        !(opts->dropout >= 0 && opts->dropout < 1)) {
        gb__error(GB_ERR_VALUE, "MultiHeadAttention",
                  "MultiHeadAttention: num_heads %lld and key_dim %lld must be positive, value_dim "
                  "%lld and output_dim %lld >= 0 (0: the default), dropout %g in [0, 1)",
                  (long long)num_heads, (long long)key_dim, (long long)opts->value_dim,
                  (long long)opts->output_dim, opts->dropout);
        return NULL;
    }
    gb_module *m = gb_module_new(&gb__mha_type, opts->name, opts->seed);
    if (!m) return NULL;
    mha_state *s = gb_module_state(m);
    s->heads = num_heads;
    s->key_dim = key_dim;
    s->value_dim = opts->value_dim ? opts->value_dim : key_dim;
    s->out_dim = opts->output_dim;
    s->use_bias = !opts->no_bias;
    s->causal = opts->use_causal_mask;
    s->return_scores = opts->return_attention_scores;
    s->dropout = opts->dropout;
    s->kernel_init = gb__nn_init_or(opts->kernel_initializer, GB_INIT_GLOROT_UNIFORM);
    s->bias_init = gb__nn_init_or(opts->bias_initializer, GB_INIT_ZEROS);
    s->kernel_reg = opts->kernel_regularizer;
    s->bias_reg = opts->bias_regularizer;
    return m;
}
