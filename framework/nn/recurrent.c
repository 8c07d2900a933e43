/* nn/recurrent.c — the recurrent layers SimpleRNN, LSTM and GRU (Keras'
 * semantics and weight layouts; gb_rnn_options in gb_nn.h).
 *
 * One layer type per cell, one time loop for all three. The input's
 * projection for every step, x @ kernel (+ bias), is a single matrix
 * product over [batch, time, features]; each step then adds h @
 * recurrent_kernel and applies the cell's gates, slices of the last axis.
 * Without an initial state the first step starts from zero, so it skips
 * the recurrent product and never has to make a zero tensor of the batch
 * size (which a traced input may not know). Everything is ops: a tape
 * differentiates through time, and a traced call unrolls the loop into
 * the graph (the number of steps must be known when it runs): for the
 * fixed lengths these layers take, the unrolled graph plans one arena and
 * runs no per-step control flow.
 *
 * Keras' call arguments are inputs after x (gb_module_call_n): a bool
 * mask [batch, time], where a masked step keeps the state (a where() per
 * state), and the initial state. Dropout masks are drawn once per call
 * and multiply every step alike: the inputs' before the one projection,
 * the state's where the cell reads h (Keras' implementation 2: the
 * recurrent product, and a GRU's mix z * h too, see the dropped h; a
 * masked step still carries the undropped state).
 */
#include <stdio.h>
#include <stdlib.h>

#include "nn/internal.h"

typedef enum cell_kind { CELL_SIMPLE, CELL_LSTM, CELL_GRU } cell_kind;

typedef struct rnn_state {
    cell_kind kind;
    int64_t units;
    int64_t in_features;   /* 0 until built */
    gb_activation act, rec_act;
    bool use_bias, return_sequences, return_state, go_backwards, unit_forget_bias, reset_after;
    /* Bidirectional's layers: a masked step outputs zeros, not the last output. */
    bool zero_output_for_mask;
    double dropout, recurrent_dropout;
    int64_t calls;         /* dropout masks are drawn anew per call */
    gb_initializer kernel_init, rec_init, bias_init;
    gb_regularizer kernel_reg, rec_reg, bias_reg;
    gb_variable *kernel, *rec, *bias;
} rnn_state;

static const int GATES[3] = {1, 4, 3};
static const char *const CLASS[3] = {"SimpleRNN", "LSTM", "GRU"};

/* ---- shapes and weights --------------------------------------------------------------- */

static bool rnn_output_shape(gb_module *m, int rank, const int64_t *in, int *out_rank,
                             int64_t *out) {
    const rnn_state *s = gb_module_state(m);
    char buf[128];
    if (rank != 3 || in[2] <= 0 || (s->in_features && in[2] != s->in_features)) {
        if (rank == 3 && s->in_features && in[2] != s->in_features)
            gb__nn_error(m, GB_ERR_SHAPE, "input has %lld features (shape %s) but the layer was built for %lld",
                         (long long)in[2], gb__shape_fmt(rank, in, buf, sizeof buf),
                         (long long)s->in_features);
        else
            gb__nn_error(m, GB_ERR_SHAPE,
                         "expected [batch, time, features] with known features, got shape %s",
                         gb__shape_fmt(rank, in, buf, sizeof buf));
        return false;
    }
    out[0] = in[0];
    if (s->return_sequences) out[1] = in[1];
    out[s->return_sequences ? 2 : 1] = s->units;
    *out_rank = s->return_sequences ? 3 : 2;
    return true;
}

/* The bias's initial value: the initializer's, and for an LSTM with
 * unit_forget_bias ones in the forget gate's quarter (Keras). */
static bool init_lstm_forget_bias(rnn_state *s, gb_dtype dt) {
    if (s->kind != CELL_LSTM || !s->unit_forget_bias) return true;
    gb_scope_begin();
    gb_tensor *b = gb_variable_value(s->bias);
    int64_t u = s->units;
    gb_tensor *parts[3] = {gb_slice(b, (int64_t[]){0}, 1, (int64_t[]){u}, 1), gb_ones(dt, 1, &u),
                           gb_slice(b, (int64_t[]){2 * u}, 1, (int64_t[]){2 * u}, 1)};
    bool ok = gb_variable_assign(s->bias, gb_concat(parts, 3, 0));
    gb_scope_end();
    return ok;
}

static bool rnn_build(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    rnn_state *s = gb_module_state(m);
    if (!gb__nn_require_float(m, dt)) return false;
    int64_t in = shape[rank - 1], g = GATES[s->kind] * s->units;
    s->kernel = gb_module_add_weight(m, "kernel", dt, 2, (int64_t[]){in, g}, s->kernel_init, true);
    s->rec = gb_module_add_weight(m, "recurrent_kernel", dt, 2, (int64_t[]){s->units, g},
                                  s->rec_init, true);
    if (s->use_bias) {
        bool two = s->kind == CELL_GRU && s->reset_after;
        s->bias = gb_module_add_weight(m, "bias", dt, two ? 2 : 1, two ? (int64_t[]){2, g} : &g,
                                       s->bias_init, true);
        if (!s->bias || !init_lstm_forget_bias(s, dt)) return false;
    }
    if (!s->kernel || !s->rec) return false;
    if (!gb__nn_regularize(m, s->kernel, s->kernel_reg, s->bias, s->bias_reg) ||
        !gb__nn_regularize(m, s->rec, s->rec_reg, NULL, (gb_regularizer){0}))
        return false;
    s->in_features = in;
    return true;
}

/* ---- the cells ------------------------------------------------------------------------ */

/* Columns [k * units, (k + 1) * units) of a [batch, gates * units] value
 * (or of a [gates * units] one: the GRU's recurrent bias at the first step). */
static gb_tensor *gate(const rnn_state *s, gb_tensor *z, int k) {
    int r = gb_rank(z);
    return gb_slice(z, (int64_t[]){0, k * s->units} + 2 - r, r, (int64_t[]){-1, s->units} + 2 - r, r);
}

/* Row k of the GRU's [2, 3u] bias, as [3u]. */
static gb_tensor *bias_row(const rnn_state *s, int k) {
    int64_t g = GATES[s->kind] * s->units;
    gb_tensor *row = gb_slice(gb_variable_value(s->bias), (int64_t[]){k, 0}, 2, (int64_t[]){1, g}, 2);
    return gb_reshape(row, 1, &g);
}

/* h @ recurrent_kernel (NULL at the first step: the state is zero). */
static gb_tensor *recur(const rnn_state *s, gb_tensor *h) {
    return h ? gb_matmul(h, gb_variable_value(s->rec)) : NULL;
}

static gb_tensor *add_or(gb_tensor *a, gb_tensor *b) { return b ? gb_add(a, b) : a; }

static gb_tensor *simple_step(const rnn_state *s, gb_tensor *x, gb_tensor *h) {
    return gb_activation_apply(s->act, add_or(x, recur(s, h)));
}

/* i, f, c, o; *c_state is updated. */
static gb_tensor *lstm_step(const rnn_state *s, gb_tensor *x, gb_tensor *h, gb_tensor **c) {
    gb_tensor *z = add_or(x, recur(s, h));
    gb_tensor *i = gb_activation_apply(s->rec_act, gate(s, z, 0));
    gb_tensor *cand = gb_activation_apply(s->act, gate(s, z, 2));
    gb_tensor *o = gb_activation_apply(s->rec_act, gate(s, z, 3));
    gb_tensor *ig = gb_mul(i, cand);
    *c = *c ? gb_add(gb_mul(gb_activation_apply(s->rec_act, gate(s, z, 1)), *c), ig) : ig;
    return gb_mul(o, gb_activation_apply(s->act, *c));
}

/* z, r, h. reset_after: hh = act(x_h + r * (h U_h + b_h)); before:
 * hh = act(x_h + (r * h) U_h). h' = z * h + (1 - z) * hh. */
static gb_tensor *gru_step(const rnn_state *s, gb_tensor *x, gb_tensor *h) {
    gb_tensor *hr = NULL;
    if (s->reset_after) {
        hr = recur(s, h);
        if (s->use_bias) hr = hr ? gb_add(hr, bias_row(s, 1)) : bias_row(s, 1);
    } else if (h) {
        int64_t u = s->units;
        gb_tensor *u_zr = gb_slice(gb_variable_value(s->rec), (int64_t[]){0, 0}, 2,
                                   (int64_t[]){u, 2 * u}, 2);
        hr = gb_matmul(h, u_zr);
    }
    gb_tensor *zg = gb_activation_apply(s->rec_act, add_or(gate(s, x, 0), hr ? gate(s, hr, 0) : NULL));
    gb_tensor *rg = gb_activation_apply(s->rec_act, add_or(gate(s, x, 1), hr ? gate(s, hr, 1) : NULL));
    gb_tensor *inner = NULL;
    if (s->reset_after && hr) {
        inner = gb_mul(rg, gate(s, hr, 2));
    } else if (!s->reset_after && h) {
        int64_t u = s->units;
        gb_tensor *u_h = gb_slice(gb_variable_value(s->rec), (int64_t[]){0, 2 * u}, 2,
                                  (int64_t[]){u, u}, 2);
        inner = gb_matmul(gb_mul(rg, h), u_h);
    }
    gb_tensor *hh = gb_activation_apply(s->act, add_or(gate(s, x, 2), inner));
    gb_tensor *one = gb_scalar(gb_tensor_dtype(zg), 1.0);
    gb_tensor *fresh = gb_mul(gb_sub(one, zg), hh);
    return h ? gb_add(gb_mul(zg, h), fresh) : fresh;
}

/* ---- the time loop -------------------------------------------------------------------- */

/* x @ kernel plus the input bias, for every step: [batch, time, gates * units]. */
static gb_tensor *project(const rnn_state *s, gb_tensor *x) {
    gb_tensor *xw = gb_matmul(x, gb_variable_value(s->kernel));
    if (!s->use_bias) return xw;
    return gb_add(xw, s->kind == CELL_GRU && s->reset_after ? bias_row(s, 0) : gb_variable_value(s->bias));
}

/* What one call works on besides x: the mask [batch, time] (NULL: every
 * step counts), the state h (and c) it starts from (NULL: zeros), and
 * the dropout masks (NULL: none), scaled by 1 / (1 - rate). */
typedef struct rnn_inputs {
    gb_tensor *mask, *h, *c;
    gb_tensor *x_keep, *h_keep;
} rnn_inputs;

static int num_states(const rnn_state *s) { return s->kind == CELL_LSTM ? 2 : 1; }

static bool check_state(gb_module *m, gb_tensor *x, gb_tensor *st, const char *what) {
    const rnn_state *s = gb_module_state(m);
    int64_t b = gb_dim(x, 0);
    if (gb_rank(st) == 2 && gb_dim(st, 1) == s->units && (b < 0 || gb_dim(st, 0) < 0 || gb_dim(st, 0) == b) &&
        gb_tensor_dtype(st) == gb_tensor_dtype(x))
        return true;
    char buf[128];
    gb__nn_error(m, GB_ERR_SHAPE, "the initial state %s must be %s [%lld, %lld] like the input, got %s %s",
                 what, gb_dtype_name(gb_tensor_dtype(x)), (long long)b, (long long)s->units,
                 gb_dtype_name(gb_tensor_dtype(st)), gb__shape_fmt(gb_rank(st), gb_shape(st), buf, sizeof buf));
    return false;
}

/* Sorts the inputs after x: an optional bool mask, then an optional
 * initial state (h; for an LSTM h and c), as Keras' mask= and
 * initial_state= arguments. */
static bool read_inputs(gb_module *m, int nin, gb_tensor *const *in, rnn_inputs *r) {
    const rnn_state *s = gb_module_state(m);
    gb_tensor *x = in[0];
    int i = 1;
    if (i < nin && gb_tensor_dtype(in[i]) == GB_BOOL) {
        r->mask = in[i++];
        if (gb_rank(r->mask) != 2 || gb_dim(r->mask, 1) != gb_dim(x, 1) ||
            (gb_dim(x, 0) >= 0 && gb_dim(r->mask, 0) >= 0 && gb_dim(r->mask, 0) != gb_dim(x, 0))) {
            char a[128], b[128];
            gb__nn_error(m, GB_ERR_SHAPE, "the mask must be [batch, time] of the input %s, got %s",
                         gb__shape_fmt(gb_rank(x), gb_shape(x), a, sizeof a),
                         gb__shape_fmt(gb_rank(r->mask), gb_shape(r->mask), b, sizeof b));
            return false;
        }
    }
    if (nin - i != 0 && nin - i != num_states(s)) {
        gb__nn_error(m, GB_ERR_VALUE,
                     "takes the input, an optional bool mask [batch, time] and an optional initial "
                     "state (%s), got %d inputs",
                     s->kind == CELL_LSTM ? "h and c" : "h", nin);
        return false;
    }
    if (i < nin) {
        r->h = in[i];
        if (!check_state(m, x, r->h, "h")) return false;
        if (s->kind == CELL_LSTM) {
            r->c = in[i + 1];
            if (!check_state(m, x, r->c, "c")) return false;
        }
    }
    return true;
}

/* Keras' dropout masks: drawn once per call and kept for every time step
 * (one for the inputs [batch, 1, features], one for the state [batch,
 * units]), fresh seeds each call. */
static void draw_dropout(gb_module *m, gb_tensor *x, rnn_inputs *r) {
    rnn_state *s = gb_module_state(m);
    uint64_t seed = gb__nn_mix_seed(gb_module_seed(m), ++s->calls);
    gb_dtype dt = gb_tensor_dtype(x);
    if (s->dropout > 0) {
        gb_tensor *first = gb_slice(x, (int64_t[]){0, 0, 0}, 3, (int64_t[]){-1, 1, -1}, 3);
        r->x_keep = gb_dropout(gb_ones_like(first), s->dropout, seed);
    }
    if (s->recurrent_dropout > 0) {
        /* ones [batch, units] from the input's batch, which a trace may not know */
        gb_tensor *col = gb_slice(x, (int64_t[]){0, 0, 0}, 3, (int64_t[]){-1, 1, 1}, 3);
        gb_tensor *ones = gb_mul(gb_reshape(gb_ones_like(col), 2, (int64_t[]){-1, 1}),
                                 gb_ones(dt, 1, &s->units));
        r->h_keep = gb_dropout(ones, s->recurrent_dropout, gb__nn_mix_seed(seed, 1));
    }
}

/* Where mask column t is false the step keeps what it had (prev NULL:
 * the zero state); a Keras masked step. */
static gb_tensor *carry(gb_tensor *keep, gb_tensor *next, gb_tensor *prev) {
    if (!keep) return next;
    return gb_where(keep, next, prev ? prev : gb_scalar(gb_tensor_dtype(next), 0.0));
}

/* Step t's projected input [batch, g]. A slice's gradient is its gradient
 * padded to the sliced tensor's shape, so T slices of the whole [batch,
 * T, g] projection would cost T padded copies of it in the backward pass
 * (O(T^2) bytes: at T = 64 most of an LSTM's train step). Slicing steps
 * out of chunks of CHUNK steps, themselves slices of the whole, pads
 * each step only to its chunk: O(T^2 / CHUNK + T * CHUNK). */
enum { CHUNK = 8 };

static gb_tensor *step_input(gb_tensor *const *chunks, int64_t t, int64_t g) {
    gb_tensor *chunk = chunks[t / CHUNK];
    return gb_reshape(gb_slice(chunk, (int64_t[]){0, t % CHUNK, 0}, 3, (int64_t[]){-1, 1, g}, 3), 2,
                      (int64_t[]){-1, g});
}

/* The generic time loop: any cell, masks, recurrent dropout. */
static bool generic_loop(const rnn_state *s, gb_tensor *xw, const rnn_inputs *r, gb_tensor **seq,
                         gb_tensor **h_out, gb_tensor **c_out) {
    int64_t steps = gb_dim(xw, 1), g = GATES[s->kind] * s->units, nchunks = (steps + CHUNK - 1) / CHUNK;
    gb_tensor **chunks = malloc((size_t)nchunks * sizeof *chunks);
    if (!chunks) {
        gb__error(GB_ERR_MEMORY, CLASS[s->kind], "%s: out of memory", CLASS[s->kind]);
        return false;
    }
    for (int64_t i = 0; i < nchunks; i++)
        chunks[i] = gb_slice(xw, (int64_t[]){0, i * CHUNK, 0}, 3,
                             (int64_t[]){-1, steps - i * CHUNK < CHUNK ? steps - i * CHUNK : CHUNK, g}, 3);
    gb_tensor *h = r->h, *c = r->c;
    for (int64_t k = 0; k < steps && gb_ok(); k++) {
        int64_t t = s->go_backwards ? steps - 1 - k : k;
        gb_tensor *xt = step_input(chunks, t, g);
        gb_tensor *hin = h && r->h_keep ? gb_mul(h, r->h_keep) : h, *c_next = c;
        gb_tensor *h_next = s->kind == CELL_SIMPLE ? simple_step(s, xt, hin)
                            : s->kind == CELL_LSTM ? lstm_step(s, xt, hin, &c_next)
                                                   : gru_step(s, xt, hin);
        gb_tensor *keep = r->mask ? gb_slice(r->mask, (int64_t[]){0, t}, 2, (int64_t[]){-1, 1}, 2) : NULL;
        if (seq) seq[k] = s->zero_output_for_mask ? carry(keep, h_next, NULL) : carry(keep, h_next, h);
        if (s->kind == CELL_LSTM) c = carry(keep, c_next, c);
        h = carry(keep, h_next, h);
    }
    free(chunks);
    *h_out = h;
    *c_out = c;
    return gb_ok();
}

/* Keras' default LSTM without a mask or recurrent dropout runs as one
 * op with its own backward pass (BlockLSTM, ops/lstm.c). */
static bool lstm_fast_path(const rnn_state *s, const rnn_inputs *r) {
    return s->kind == CELL_LSTM && s->act == GB_ACT_TANH && s->rec_act == GB_ACT_SIGMOID && !r->mask &&
           !r->h_keep;
}

/* The last step of [batch, T, units]: [batch, units]. */
static gb_tensor *last_step(gb_tensor *seq) {
    int64_t steps = gb_dim(seq, 1), u = gb_dim(seq, 2);
    return gb_reshape(gb_slice(seq, (int64_t[]){0, steps - 1, 0}, 3, (int64_t[]){-1, 1, u}, 3), 2,
                      (int64_t[]){-1, u});
}

static int rnn_call(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out, bool training) {
    rnn_state *s = gb_module_state(m);
    gb_tensor *x = in[0];
    int64_t steps = gb_dim(x, 1);
    if (steps <= 0) {
        gb__nn_error(m, GB_ERR_SHAPE,
                     "needs a known, positive number of time steps, got %lld (a traced call "
                     "needs it in the input signature)",
                     (long long)steps);
        return -1;
    }
    rnn_inputs r = {0};
    if (!read_inputs(m, nin, in, &r)) return -1;
    if (training) draw_dropout(m, x, &r);
    gb_tensor *xw = project(s, r.x_keep ? gb_mul(x, r.x_keep) : x);
    gb_tensor *y = NULL, *h = NULL, *c = NULL;
    if (lstm_fast_path(s, &r)) {
        gb_tensor *hs, *cs;
        if (!gb__block_lstm(s->go_backwards ? gb__reverse_time(xw) : xw, gb_variable_value(s->rec), r.h,
                            r.c, &hs, &cs))
            return -1;
        h = last_step(hs);
        c = last_step(cs);
        y = s->return_sequences ? hs : h;
    } else {
        gb_tensor **seq = s->return_sequences ? malloc((size_t)steps * sizeof *seq) : NULL;
        if (s->return_sequences && !seq) {
            gb__nn_error(m, GB_ERR_MEMORY, "out of memory");
            return -1;
        }
        if (generic_loop(s, xw, &r, seq, &h, &c)) y = seq ? gb_stack(seq, (int)steps, 1) : h;
        free(seq);
    }
    int n = 0;
    if (gb_ok()) {
        out[n++] = y;
        if (s->return_state) out[n++] = h;
        if (s->return_state && c) out[n++] = c;
    }
    return gb_ok() ? n : -1;
}

/* ---- configs -------------------------------------------------------------------------- */

static bool rnn_get_config(gb_module *m, gb_config *c) {
    const rnn_state *s = gb_module_state(m);
    gb__weighted_config w = {s->act, s->use_bias, s->kernel_init, s->bias_init,
                             s->kernel_reg, s->bias_reg, gb__module_activity(m), gb_module_seed(m)};
    bool ok = gb_config_put_int(c, "units", s->units) && gb__config_put_weighted(c, &w) &&
              gb__config_put_init(c, "recurrent_initializer", s->rec_init) &&
              gb__config_put_regularizer(c, "recurrent_regularizer", s->rec_reg) &&
              gb_config_put_bool(c, "return_sequences", s->return_sequences) &&
              gb_config_put_bool(c, "return_state", s->return_state) &&
              gb_config_put_bool(c, "go_backwards", s->go_backwards) &&
              gb_config_put_number(c, "dropout", s->dropout) &&
              gb_config_put_number(c, "recurrent_dropout", s->recurrent_dropout) &&
              gb_config_put_bool(c, "zero_output_for_mask", s->zero_output_for_mask);
    if (ok && s->kind != CELL_SIMPLE)
        ok = gb_config_put_string(c, "recurrent_activation", gb_activation_name(s->rec_act)) != NULL;
    if (ok && s->kind == CELL_LSTM) ok = gb_config_put_bool(c, "unit_forget_bias", s->unit_forget_bias);
    if (ok && s->kind == CELL_GRU) ok = gb_config_put_bool(c, "reset_after", s->reset_after);
    return ok;
}

static gb_module *make(cell_kind kind, int64_t units, const gb_rnn_options *o);

static gb_module *from_config(cell_kind kind, const gb_config *c) {
    const char *who = CLASS[kind];
    gb__weighted_config w = {0};
    gb_rnn_options o = {0};
    int64_t units = 0;
    bool unit_forget = true, reset_after = true, zero_output = false;
    const char *rec_act = kind == CELL_SIMPLE ? NULL
                                              : gb_config_read_string(c, who, "recurrent_activation", "sigmoid");
    bool ok = gb_config_read_int(c, who, "units", 0, &units) && gb__config_read_weighted(c, who, &w) &&
              gb__config_read_init(c, who, "recurrent_initializer", &o.recurrent_initializer) &&
              gb__config_read_regularizer(c, who, "recurrent_regularizer", &o.recurrent_regularizer) &&
              gb_config_read_bool(c, who, "return_sequences", false, &o.return_sequences) &&
              gb_config_read_bool(c, who, "return_state", false, &o.return_state) &&
              gb_config_read_bool(c, who, "go_backwards", false, &o.go_backwards) &&
              gb_config_read_number(c, who, "dropout", 0, &o.dropout) &&
              gb_config_read_number(c, who, "recurrent_dropout", 0, &o.recurrent_dropout) &&
              gb_config_read_bool(c, who, "zero_output_for_mask", false, &zero_output) &&
              (kind != CELL_LSTM || gb_config_read_bool(c, who, "unit_forget_bias", true, &unit_forget)) &&
              (kind != CELL_GRU || gb_config_read_bool(c, who, "reset_after", true, &reset_after)) &&
              (!rec_act || gb_activation_from_name(rec_act, &o.recurrent_activation)) &&
              (kind == CELL_SIMPLE || rec_act);
    if (!ok) return NULL;
    if (w.activation == GB_ACT_LINEAR) {
        gb__error(GB_ERR_VALUE, NULL, "%s config: a linear activation is not supported", who);
        return NULL;
    }
    o.name = gb__config_name(c, who);
    o.activation = w.activation;
    o.no_bias = !w.use_bias;
    o.kernel_initializer = w.kernel_init;
    o.bias_initializer = w.bias_init;
    o.kernel_regularizer = w.kernel_reg;
    o.bias_regularizer = w.bias_reg;
    o.no_unit_forget_bias = !unit_forget;
    o.reset_before = !reset_after;
    o.seed = w.seed;
    gb_module *m = gb__nn_with_activity(make(kind, units, &o), w.activity_reg);
    if (m) gb__rnn_set_zero_output_for_mask(m, zero_output);
    return m;
}

static gb_module *simple_from_config(const gb_config *c) { return from_config(CELL_SIMPLE, c); }
static gb_module *lstm_from_config(const gb_config *c) { return from_config(CELL_LSTM, c); }
static gb_module *gru_from_config(const gb_config *c) { return from_config(CELL_GRU, c); }

/* Keras' RNN.compute_mask: a sequence output keeps the input's mask; a
 * last-step output has none. */
static gb_tensor *rnn_compute_mask(gb_module *m, gb_tensor *x, gb_tensor *mask) {
    (void)x;
    return gb__rnn_returns_sequences(m) ? mask : NULL;
}

#define RNN_TYPE(sym, cls, dflt, from)                                                       \
    const gb_module_type sym = {.class_name = cls,                                          \
                                .default_name = dflt,                                       \
                                .state_size = sizeof(rnn_state),                            \
                                .build = rnn_build,                                         \
                                .output_shape = rnn_output_shape,                           \
                                .call_n = rnn_call,                                         \
                                .call_n_takes_mask = true,                                  \
                                .compute_mask = rnn_compute_mask,                           \
                                .get_config = rnn_get_config,                               \
                                .from_config = from};
RNN_TYPE(gb__simple_rnn_type, "SimpleRNN", "simple_rnn", simple_from_config)
RNN_TYPE(gb__lstm_type, "LSTM", "lstm", lstm_from_config)
RNN_TYPE(gb__gru_type, "GRU", "gru", gru_from_config)

static const gb_module_type *const TYPES[3] = {&gb__simple_rnn_type, &gb__lstm_type, &gb__gru_type};

/* ---- constructors --------------------------------------------------------------------- */

static gb_module *make(cell_kind kind, int64_t units, const gb_rnn_options *o) {
    static const gb_rnn_options defaults;
    if (!o) o = &defaults;
    const char *who = CLASS[kind];
    if (units <= 0) {
        gb__error(GB_ERR_VALUE, who, "%s: units must be positive, got %lld", who, (long long)units);
        return NULL;
    }
    if (!(o->dropout >= 0 && o->dropout < 1) || !(o->recurrent_dropout >= 0 && o->recurrent_dropout < 1)) {
        gb__error(GB_ERR_VALUE, who, "%s: dropout %g and recurrent_dropout %g must be in [0, 1)", who,
                  o->dropout, o->recurrent_dropout);
        return NULL;
    }
    if ((unsigned)o->activation >= GB_ACT_COUNT || (unsigned)o->recurrent_activation >= GB_ACT_COUNT) {
        gb__error(GB_ERR_VALUE, who, "%s: activation %d or recurrent activation %d is out of range",
                  who, (int)o->activation, (int)o->recurrent_activation);
        return NULL;
    }
    gb_module *m = gb_module_new(TYPES[kind], o->name, o->seed);
    if (!m) return NULL;
    rnn_state *s = gb_module_state(m);
    s->kind = kind;
    s->units = units;
    s->act = o->activation ? o->activation : GB_ACT_TANH;
    s->rec_act = o->recurrent_activation ? o->recurrent_activation : GB_ACT_SIGMOID;
    s->use_bias = !o->no_bias;
    s->return_sequences = o->return_sequences;
    s->return_state = o->return_state;
    s->dropout = o->dropout;
    s->recurrent_dropout = o->recurrent_dropout;
    s->go_backwards = o->go_backwards;
    s->unit_forget_bias = !o->no_unit_forget_bias;
    s->reset_after = !o->reset_before;
    s->kernel_init = gb__nn_init_or(o->kernel_initializer, GB_INIT_GLOROT_UNIFORM);
    s->rec_init = gb__nn_init_or(o->recurrent_initializer, GB_INIT_ORTHOGONAL);
    s->bias_init = gb__nn_init_or(o->bias_initializer, GB_INIT_ZEROS);
    s->kernel_reg = o->kernel_regularizer;
    s->rec_reg = o->recurrent_regularizer;
    s->bias_reg = o->bias_regularizer;
    return m;
}

gb_module *gb_simple_rnn_new(int64_t units, const gb_rnn_options *opts) {
    return make(CELL_SIMPLE, units, opts);
}

gb_module *gb_lstm_new(int64_t units, const gb_rnn_options *opts) {
    return make(CELL_LSTM, units, opts);
}

gb_module *gb_gru_new(int64_t units, const gb_rnn_options *opts) {
    return make(CELL_GRU, units, opts);
}

bool gb__is_rnn(const gb_module *m) {
    const gb_module_type *t = gb_module_get_type(m);
    return t == TYPES[0] || t == TYPES[1] || t == TYPES[2];
}

void gb__rnn_set_zero_output_for_mask(gb_module *m, bool on) {
    if (gb__is_rnn(m)) ((rnn_state *)gb_module_state(m))->zero_output_for_mask = on;
}

bool gb__rnn_returns_sequences(gb_module *m) {
    return gb__is_rnn(m) && ((const rnn_state *)gb_module_state(m))->return_sequences;
}

gb_tensor *gb__reverse_time(gb_tensor *y) {
    int64_t steps = gb_dim(y, 1);
    return gb_gather(y, gb_arange(GB_I64, (double)(steps - 1), -1, -1), 1);
}
