/* train/health_fit.c — what fit measures for the training-health checks
 * (debug/health*.c), which never see a layer.
 *
 * Every step hands its loss to the spike detector. A check step (every
 * `interval` steps, gb_health_options) arms a measure of the optimizer
 * (optim/measure.h): its fused update kernels sum the squares of each
 * variable's gradient, value before, value after and update while they
 * hold them in cache, so the step returns no gradient and nothing copies
 * a weight. The step runs its check variant, which reads from its own
 * forward pass while it runs (an output watcher of nn) each ReLU layer's
 * dead units (zero for every sample and position of the batch) and each
 * sigmoid or tanh layer's saturated outputs, counted in the step (a
 * reduction each, one small tensor out). Traced, the variant is a second
 * program of the train function, made once; eager, the same ops run, so
 * both modes give the same figures. After the step the figures are read
 * per layer, in the model's order.
 * An optimizer that clips its gradients updates with other gradients
 * than backward made: there the check step also returns the gradients
 * (the mechanism callbacks use) and their norms are taken from them, so
 * an exploding gradient shows even while clipping tames it.
 * Measuring on the check step's batch, not every batch of the interval,
 * keeps the cost of the steps between checks at one loss read, and that
 * of a check step at a few reductions over the activations: no second
 * forward pass, no extra pass over the weights.
 *
 * In a distributed fit rank 0 checks, on the gradients averaged over the
 * ranks (what the update used); every rank takes part in the check steps,
 * and a traced step's per-rank gradient norms, from before the averaging,
 * reach rank 0 in one small allreduce and leave as the scalars of the
 * runs "rank_<r>" (an eager step averages during backward: it has none).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "debug/health_internal.h"
#include "gb_dist.h"
#include "optim/measure.h"
#include "train/internal.h"

typedef struct hf_layer {
    gb_module *module;
    gb__health_act act;
    int first, count;          /* its variables in vars[] */
    /* Its output's figure (ReLU, sigmoid, tanh layers): the count made
     * while the step body runs, its index in the step's figures (-1:
     * none), its units (the last axis) and values per sample. */
    gb_tensor *fig;
    int slot;
    int64_t units, per_sample;
} hf_layer;

struct gb__health_fit {
    gb__health *monitor;
    int ntrainable;            /* the model's trainable variables when the map was made */
    gb_variable **vars;        /* every layer's checked variables, layer by layer */
    int *grad_index;           /* each one's index among the trainable variables; -1: none */
    gb__health_var *figs;
    int nvars;
    hf_layer *layers;
    gb__health_layer *out;
    int nlayers;
    int64_t generation;        /* of the map: each one made counts 1, 2, ... */
    bool check, user_wants;    /* this step is a check step; a callback asked for gradients */
    bool raw_grads;            /* the step returns the gradients for their norms (clipping) */
    bool checked;              /* a check ran: the first is behind */
    /* A distributed fit: every rank takes part when rank 0 checks (agreed
     * at the fit's start), and rank 0 keeps each rank's per-layer
     * gradient norms from before the averaging ([rank][layer]). */
    bool dist_on;
    double *rank_norms;
    int nranks;
};

void gb__health_fit_free(gb__health_fit *h) {
    if (!h) return;
    gb__health_free(h->monitor);
    free(h->vars);
    free(h->grad_index);
    free(h->figs);
    free(h->layers);
    free(h->out);
    free(h->rank_norms);
    free(h);
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcmp(s + n - k, tail);
}

/* The name before the rank: MultiHeadAttention's query, key and value
 * biases are [heads, key_dim], rank 2, and start at 0 as every bias does. */
static gb__health_role role_of(gb_variable *v) {
    const char *name = gb_variable_name(v);
    if (ends_with(name, "moving_variance")) return GB__HEALTH_MOVING_VARIANCE;
    if (ends_with(name, "bias")) return GB__HEALTH_BIAS;
    if (gb_variable_rank(v) >= 2) return GB__HEALTH_WEIGHT;
    return GB__HEALTH_OTHER;
}

/* The activation a layer ends with, from its config: only the built-in
 * layers that have one are asked (a custom layer's get_config may fail). */
static gb__health_act act_of(gb_module *m) {
    const char *cls = gb_module_class_name(m);
    if (!strcmp(cls, "ReLU")) return GB__HEALTH_ACT_RELU;
    if (strcmp(cls, "Dense") && strcmp(cls, "Conv2D") && strcmp(cls, "Activation"))
        return GB__HEALTH_ACT_NONE;
    gb_config *c = gb_module_get_config(m);
    const char *name = gb_config_string(gb_config_get(gb_config_get(c, "config"), "activation"));
    gb__health_act act = !name                      ? GB__HEALTH_ACT_NONE
                         : !strcmp(name, "relu")    ? GB__HEALTH_ACT_RELU
                         : !strcmp(name, "sigmoid") ? GB__HEALTH_ACT_SIGMOID
                         : !strcmp(name, "tanh")    ? GB__HEALTH_ACT_TANH
                                                    : GB__HEALTH_ACT_NONE;
    gb_config_free(c);
    return act;
}

static int index_of(gb_variable *const *vars, int n, gb_variable *v) {
    for (int i = 0; i < n; i++)
        if (vars[i] == v) return i;
    return -1;
}

/* The model's layers and their checked variables (trainable ones, and
 * moving variances), made when the model is first checked and again when
 * its trainable variables change. */
static bool map_model(gb__health_fit *h, gb_module *model) {
    int ntrain = 0, nsub = gb_module_num_submodules(model);
    gb_variable *const *train = gb_module_trainable_variables(model, &ntrain);
    int total = 0;
    for (int i = 0; i < nsub; i++) {
        int n = 0;
        gb_module_variables(gb_module_submodule(model, i), &n);
        total += n;
    }
    free(h->vars), free(h->grad_index), free(h->figs), free(h->layers), free(h->out);
    h->vars = calloc((size_t)total + 1, sizeof *h->vars);
    h->grad_index = calloc((size_t)total + 1, sizeof *h->grad_index);
    h->figs = calloc((size_t)total + 1, sizeof *h->figs);
    h->layers = calloc((size_t)nsub + 1, sizeof *h->layers);
    h->out = calloc((size_t)nsub + 1, sizeof *h->out);
    h->nvars = h->nlayers = 0;
    if (!h->vars || !h->grad_index || !h->figs || !h->layers || !h->out) {
        gb__error(GB_ERR_MEMORY, NULL, "health checks: out of memory for %d variables", total);
        return false;
    }
    for (int i = 0; i < nsub; i++) {
        gb_module *m = gb_module_submodule(model, i);
        int n = 0;
        gb_variable *const *vs = gb_module_variables(m, &n);
        hf_layer *l = &h->layers[h->nlayers++];
        *l = (hf_layer){.module = m, .act = act_of(m), .first = h->nvars, .slot = -1};
        for (int k = 0; k < n; k++) {
            int g = index_of(train, ntrain, vs[k]);
            if (g < 0 && role_of(vs[k]) != GB__HEALTH_MOVING_VARIANCE) continue;
            h->grad_index[h->nvars] = g;
            h->vars[h->nvars++] = vs[k];
        }
        l->count = h->nvars - l->first;
    }
    h->ntrainable = ntrain;
    h->generation++;
    return gb_ok();
}

/* c's measures, made on first use; NULL after an error. */
static gb__health_fit *health_of(gb__compiled *c) {
    if (c->health) return c->health;
    gb__health_fit *h = calloc(1, sizeof *h);
    if (!h || !(h->monitor = gb__health_new())) {
        free(h);
        gb__error(GB_ERR_MEMORY, NULL, "health checks: out of memory for a monitor");
        return NULL;
    }
    return c->health = h;
}

/* Whether this process takes part in the checks: alone, while they are
 * active; in a distributed fit, every rank when rank 0 checks (the other
 * ranks have no writer to listen, yet their gradient norms are gathered
 * on the same steps). */
static bool taking_part(const gb__compiled *c) {
    return c->dist ? c->health && c->health->dist_on : gb_health_active();
}

bool gb__health_fit_dist_begin(gb__compiled *c) {
    double on = gb_dist_rank() == 0 && gb_health_active();
    if (!gb_dist_allreduce_doubles(&on, 1, GB_DIST_SUM)) return false;
    gb__health_fit *h = on > 0 ? health_of(c) : c->health;
    if (h) h->dist_on = on > 0;
    return !(on > 0) || h != NULL;
}

/* A check step's end: the measure disarmed; callbacks that did not ask
 * for the gradients see none. */
static void end_check(gb__health_fit *h, gb_train_state *s) {
    h->check = false;
    gb__optimizer_measure_end(s->optimizer);
    if (h->user_wants) return;
    s->want_gradients = false;
    s->gradients = NULL;
    s->ngradients = 0;
}

bool gb__health_fit_before(gb__compiled *c) {
    gb_train_state *s = &c->state;
    if (c->health && c->health->check) {   /* a check step that failed: disarm its measure */
        c->health->check = false;           /* (the batch's callbacks asked for gradients already) */
        gb__optimizer_measure_end(s->optimizer);
    }
    if (!taking_part(c)) return true;
    gb__health_fit *h = health_of(c);
    if (!h) return false;
    /* The steps between checks cost this test alone. */
    if (!gb__health_due(gb_optimizer_iterations(s->optimizer) + 1, !h->checked)) return true;
    int ntrain = 0;
    gb_module_trainable_variables(s->model, &ntrain);
    if (!ntrain) return true;   /* not built: its first call builds it; the next step is the first check */
    h->checked = true;
    if ((!h->vars || ntrain != h->ntrainable) && !map_model(h, s->model)) return false;
    gb__optimizer_measure_begin(s->optimizer);
    h->check = true;
    h->user_wants = s->want_gradients;
    h->raw_grads = gb__optimizer_clips(s->optimizer);
    if (h->raw_grads) s->want_gradients = true;
    return gb_ok();
}

/* Sum of squares of x[n]: eight partial sums, so the loop is not one
 * chain of dependent adds and vectorizes. */
static double sumsq_f32(const float *x, int64_t n) {
    double acc[8] = {0};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += (double)x[i + k] * x[i + k];
    for (; i < n; i++) acc[0] += (double)x[i] * x[i];
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* Sum of squares of t; float32 on the fast path, any other dtype element
 * by element. */
static double sumsq(const gb_tensor *t) {
    int64_t n = gb_size(t);
    const float *f = gb_data_f32(t);
    if (f) return sumsq_f32(f, n);
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += gb_get(t, i) * gb_get(t, i);
    return s;
}

/* The smallest element of t (moving variances). */
static double min_value(const gb_tensor *t) {
    double lo = INFINITY;
    for (int64_t i = 0, n = gb_size(t); i < n; i++) {
        double x = gb_get(t, i);
        if (x < lo) lo = x;
    }
    return lo;
}

/* Each variable's figures: from its update's measure (the optimizer
 * updated it on this step), else its value alone; the gradient's from
 * the returned gradients where the step returned them for that. */
static void measure_variables(gb__health_fit *h, const gb_train_state *s) {
    for (int i = 0; i < h->nvars; i++) {
        gb_variable *v = h->vars[i];
        gb__health_var *f = &h->figs[i];
        int g = h->grad_index[i];
        gb__update_sums u;
        *f = (gb__health_var){.name = gb_variable_name(v), .role = role_of(v),
                              .size = gb_variable_size(v)};
        if (g >= 0 && gb__optimizer_measured(s->optimizer, v, &u)) {
            f->has_grad = f->has_update = true;
            f->grad_sumsq = u.grad, f->update_sumsq = u.update;
            f->weight_sumsq = u.after, f->before_sumsq = u.before;
        } else {
            gb_tensor *now = gb_variable_value(v);
            if (!now) continue;
            f->weight_sumsq = sumsq(now);
            if (f->role == GB__HEALTH_MOVING_VARIANCE) f->min_value = min_value(now);
        }
        gb_tensor *grad = h->raw_grads && g >= 0 && g < s->ngradients ? s->gradients[g] : NULL;
        if (grad) f->has_grad = true, f->grad_sumsq = sumsq(grad);
    }
}

int64_t gb__health_fit_variant(const gb__compiled *c) {
    return c->health && c->health->check ? c->health->generation : 0;
}

/* A layer's output figure, counted in the step: a ReLU layer's dead units
 * (those whose largest value over the batch and every position is 0), a
 * sigmoid's or tanh's outputs within saturation_eps of an asymptote. The
 * tape never sees these ops: they start from a stopped gradient. */
static gb_tensor *output_figure(hf_layer *l, gb_tensor *y) {
    int rank = gb_rank(y);
    gb_dtype dt = gb_tensor_dtype(y);
    l->units = rank ? gb_dim(y, -1) : 1;
    l->per_sample = 1;
    for (int d = 1; d < rank; d++) l->per_sample *= gb_dim(y, d);
    y = gb_stop_gradient(y);
    gb_tensor *hit;
    if (l->act == GB__HEALTH_ACT_RELU) {
        int64_t axes[GB_MAX_RANK];
        for (int d = 0; d < rank - 1; d++) axes[d] = d;
        gb_tensor *top = rank > 1 ? gb_reduce_max(y, axes, rank - 1, false) : y;
        hit = gb_cast(gb_equal(top, gb_scalar(dt, 0)), GB_F32);
    } else {
        double eps = gb_health_get_options().saturation_eps;
        double lo = l->act == GB__HEALTH_ACT_SIGMOID ? eps : -1 + eps, hi = 1 - eps;
        hit = gb_add(gb_cast(gb_less(y, gb_scalar(dt, lo)), GB_F32),
                     gb_cast(gb_greater(y, gb_scalar(dt, hi)), GB_F32));
    }
    return gb_reshape(gb_reduce_sum(hit, NULL, 0, false), 1, (int64_t[]){1});
}

static void watch_output(gb_module *m, gb_tensor *y, void *user) {
    gb__health_fit *h = user;
    if (!gb_ok()) return;
    for (int i = 0; i < h->nlayers; i++) {
        hf_layer *l = &h->layers[i];
        if (l->module != m || l->act == GB__HEALTH_ACT_NONE) continue;
        l->fig = output_figure(l, y);   /* a layer called twice: its last call */
        return;
    }
}

gb__output_watch gb__health_fit_watch(gb__compiled *c, int64_t variant) {
    gb__health_fit *h = c->health;
    if (!variant || !h) return gb__module_watch_outputs((gb__output_watch){0});
    for (int i = 0; i < h->nlayers; i++) h->layers[i].fig = NULL;
    return gb__module_watch_outputs((gb__output_watch){.fn = watch_output, .user = h});
}

gb_tensor *gb__health_fit_unwatch(gb__compiled *c, gb__output_watch was) {
    gb__output_watch mine = gb__module_watch_outputs(was);
    gb__health_fit *h = c->health;
    if (!mine.fn || !h) return NULL;
    gb_tensor **figs = malloc(((size_t)h->nlayers + 1) * sizeof *figs);
    if (!figs) {
        gb__error(GB_ERR_MEMORY, NULL, "health checks: out of memory for %d layers", h->nlayers);
        return NULL;
    }
    int n = 0;
    for (int i = 0; i < h->nlayers; i++) {
        hf_layer *l = &h->layers[i];
        l->slot = -1;
        if (!l->fig) continue;
        l->slot = n;
        figs[n++] = l->fig;
        l->fig = NULL;
    }
    gb_tensor *all = n ? gb_concat(figs, n, 0) : NULL;
    free(figs);
    return all;
}

/* The activation figures of the step (out->health) into its layers;
 * rows: the samples of the batch. */
static void read_outputs(gb__health_fit *h, const gb_tensor *figs, int64_t rows) {
    int64_t n = figs ? gb_size(figs) : 0;
    for (int i = 0; i < h->nlayers; i++) {
        const hf_layer *l = &h->layers[i];
        gb__health_layer *o = &h->out[i];
        if (l->slot < 0 || l->slot >= n) continue;
        int64_t count = (int64_t)gb_get(figs, l->slot);
        o->has_output = true;
        o->units = l->units;
        o->values = l->per_sample * rows;
        if (l->act == GB__HEALTH_ACT_RELU)
            o->dead_units = count;
        else
            o->saturated_values = count;
    }
}

bool gb__health_fit_rank_norms(gb__compiled *c, gb_tensor *const *grads, int n) {
    gb__health_fit *h = c->health;
    if (!c->dist || !h || !h->dist_on || !h->check) return true;
    int nranks = gb_dist_size(), rank = gb_dist_rank(), nl = h->nlayers;
    double *m = calloc((size_t)nranks * (size_t)nl + 1, sizeof *m);
    if (!m) {
        gb__error(GB_ERR_MEMORY, NULL, "health checks: out of memory for %d ranks' norms", nranks);
        return false;
    }
    for (int l = 0; l < nl; l++)
        for (int k = h->layers[l].first; k < h->layers[l].first + h->layers[l].count; k++) {
            int g = h->grad_index[k];
            if (g >= 0 && g < n && grads[g]) m[rank * nl + l] += sumsq(grads[g]);
        }
    /* A gather as a sum: each rank fills its own row, zeros elsewhere. */
    if (!gb_dist_allreduce_doubles(m, nranks * nl, GB_DIST_SUM)) {
        free(m);
        return false;
    }
    free(h->rank_norms);
    h->rank_norms = rank == 0 ? m : NULL;
    h->nranks = nranks;
    if (rank != 0) free(m);
    return true;
}

/* Rank 0 of a distributed fit: each rank's per-layer gradient norms, from
 * before the averaging, as the scalars of the runs "rank_<r>". */
static void emit_rank_norms(gb__health_fit *h, int64_t step) {
    if (!h->rank_norms) return;
    for (int r = 0; r < h->nranks; r++)
        for (int l = 0; l < h->nlayers; l++)
            if (h->out[l].nvars)
                gb__health_rank_figure(h->out[l].name, "grad_norm", sqrt(h->rank_norms[r * h->nlayers + l]),
                                       step, r);
    free(h->rank_norms);
    h->rank_norms = NULL;
}

void gb__health_fit_after(gb__compiled *c, const gb__io *x, const gb__step_out *out) {
    gb_train_state *s = &c->state;
    gb__health_fit *h = c->health;
    if (!h || !taking_part(c)) return;
    if (gb_dist_rank() != 0 && c->dist) {   /* took part in the gather; rank 0 reports */
        if (h->check) end_check(h, s);
        return;
    }
    int64_t step = gb_optimizer_iterations(s->optimizer);
    if (out->loss) gb__health_loss(h->monitor, step, gb_item(out->loss));
    if (!h->check) return;
    measure_variables(h, s);
    for (int i = 0; i < h->nlayers; i++) {
        const hf_layer *l = &h->layers[i];
        h->out[i] = (gb__health_layer){.name = gb_module_name(l->module), .vars = h->figs + l->first,
                                       .nvars = l->count, .act = l->act};
    }
    read_outputs(h, out->health, x->n && x->t[0] && gb_rank(x->t[0]) ? gb_dim(x->t[0], 0) : 0);
    if (gb_ok()) {
        emit_rank_norms(h, step);
        gb__health_check(h->monitor, step, h->out, h->nlayers);
    }
    end_check(h, s);
}
