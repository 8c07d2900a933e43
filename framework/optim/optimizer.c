/* optim/optimizer.c — what every optimizer shares: slots, iterations, apply_gradients.
 *
 * An optimizer is a name, a learning-rate schedule, an iteration counter,
 * one fused update op with its hyperparameters (chosen by the per-kind
 * constructor), and per-variable state: the slot variables, created
 * lazily on the first apply (as Keras builds them), found again through a
 * pointer-keyed hash index. apply_gradients validates the whole call
 * before it updates anything, clips the gradients if asked
 * (optim/clipping.c), then runs one update op per variable; the
 * step's last op counts the iteration, so the count also advances when
 * the ops run from a traced graph.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optim/internal.h"

struct gb_optimizer {
    int64_t id;           /* its handle in update ops and graphs */
    char name[64];
    gb_lr_schedule schedule;
    int64_t iterations;
    gb_op_id op;
    gb_attrs attrs; /* hyperparameters; ptr and flags are set per call */
    const char *slot_names[GB__OPTIM_MAX_SLOTS];
    gb__optim_var **vars; /* first-applied order; each allocated once, never moved */
    int nvars, capvars;
    int *index;           /* open addressing: position in vars + 1, 0 = empty */
    size_t index_cap;     /* a power of two, at least 2 * nvars */
    char **no_decay;      /* name parts excluded from weight decay */
    int nno_decay;
    bool no_decay_vectors; /* and every variable of rank 0 or 1 */
    gb_gradient_clipping clipping;
    int64_t measure;      /* the armed measure's number (optim/measure.h); 0: none */
    int64_t measures;     /* how many were armed: the next one's number - 1 */
};

/* Optimizers by id (core/handles.c), for the update ops' attributes. */
static gb_handles optimizers;

/* ---- life cycle ------------------------------------------------------------------------- */

gb_optimizer *gb__optimizer_new(const gb__optim_spec *spec) {
    if (!gb__lr_schedule_check(&spec->learning_rate, spec->name)) return NULL;
    gb_optimizer *o = calloc(1, sizeof *o);
    if (!o) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", spec->name);
        return NULL;
    }
    snprintf(o->name, sizeof o->name, "%s", spec->name);
    o->schedule = spec->learning_rate;
    o->op = spec->op;
    o->attrs = spec->attrs;
    o->attrs.ni = GB__OPTIM_NI;
    if (!(o->id = gb__handle_add(&optimizers, o, "optimizer"))) {
        free(o);
        return NULL;
    }
    o->attrs.i[GB__OPTIM_I_OPTIMIZER] = o->id;
    memcpy(o->slot_names, spec->slot_names, sizeof o->slot_names);
    return o;
}

/* One variable's state: its slots and the spare buffers. */
static void free_entry(gb__optim_var *e) {
    for (int k = 0; k < GB__OPTIM_MAX_SLOTS; k++) gb_variable_free(e->slot[k]);
    for (int k = 0; k <= GB__OPTIM_MAX_SLOTS; k++) gb__buffer_unref(e->spare[k]);
    free(e);
}

void gb_optimizer_free(gb_optimizer *opt) {
    if (!opt) return;
    gb__handle_remove(&optimizers, opt->id);
    for (int i = 0; i < opt->nvars; i++) free_entry(opt->vars[i]);
    for (int i = 0; i < opt->nno_decay; i++) free(opt->no_decay[i]);
    free(opt->no_decay);
    free(opt->vars);
    free(opt->index);
    free(opt);
}

/* ---- per-variable state ------------------------------------------------------------------ */

static size_t hash_ptr(const void *p, size_t cap) {
    return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

static gb__optim_var *find(const gb_optimizer *o, const gb_variable *v) {
    if (!o->index_cap) return NULL;
    for (size_t h = hash_ptr(v, o->index_cap);; h = (h + 1) & (o->index_cap - 1)) {
        int pos = o->index[h];
        if (pos == 0) return NULL;
        if (o->vars[pos - 1]->var == v) return o->vars[pos - 1];
    }
}

gb__optim_var *gb__optim_state_of(const gb_op_call *c) {
    int64_t id = c->attrs->i[GB__OPTIM_I_OPTIMIZER];
    gb_optimizer *o = gb__handle_get(&optimizers, id);
    if (!o) {
        gb__op_error(c, GB_ERR_STATE, "%s: its optimizer (id %lld) was freed", c->def->name,
                     (long long)id);
        return NULL;
    }
    gb_variable *v = gb__variable_by_id(c->attrs->vars[0]);
    gb__optim_var *e = v ? find(o, v) : NULL;
    if (!e)
        gb__op_error(c, GB_ERR_STATE, "%s: optimizer '%s' has no state for variable %lld (freed?)",
                     c->def->name, o->name, (long long)c->attrs->vars[0]);
    return e;
}

/* Rebuilds the index with room for twice the variables. */
static bool grow_index(gb_optimizer *o) {
    size_t cap = o->index_cap ? o->index_cap * 2 : 64;
    int *index = calloc(cap, sizeof *index);
    if (!index) return false;
    for (int i = 0; i < o->nvars; i++) {
        size_t h = hash_ptr(o->vars[i]->var, cap);
        while (index[h]) h = (h + 1) & (cap - 1);
        index[h] = i + 1;
    }
    free(o->index);
    o->index = index;
    o->index_cap = cap;
    return true;
}

static bool add_entry(gb_optimizer *o, gb__optim_var *e) {
    if (o->nvars == o->capvars) {
        int cap = o->capvars ? 2 * o->capvars : 16;
        gb__optim_var **vars = realloc(o->vars, (size_t)cap * sizeof *vars);
        if (!vars) return false;
        o->vars = vars;
        o->capvars = cap;
    }
    if ((size_t)(o->nvars + 1) * 2 > o->index_cap && !grow_index(o)) return false;
    o->vars[o->nvars++] = e;
    size_t h = hash_ptr(e->var, o->index_cap);
    while (o->index[h]) h = (h + 1) & (o->index_cap - 1);
    o->index[h] = o->nvars;
    return true;
}

static bool excluded_from_decay(const gb_optimizer *o, const gb_variable *v) {
    if (o->no_decay_vectors && gb_variable_rank(v) <= 1) return true;
    for (int i = 0; i < o->nno_decay; i++)
        if (strstr(gb_variable_name(v), o->no_decay[i])) return true;
    return false;
}

/* A zero-initialized, non-trainable slot "<optimizer>/<variable>/<slot>". */
static gb_variable *new_slot(const gb_optimizer *o, gb_variable *v, const char *slot) {
    char name[256];
    snprintf(name, sizeof name, "%s/%s/%s", o->name, gb_variable_name(v), slot);
    gb_scope_begin();
    gb_variable *s = gb_variable_new(
        name, gb_zeros(gb_variable_dtype(v), gb_variable_rank(v), gb_variable_shape(v)), false);
    gb_scope_end();
    return s;
}


static gb__optim_var *create_entry(gb_optimizer *o, gb_variable *v) {
    gb__optim_var *e = calloc(1, sizeof *e);
    if (!e) goto oom;
    *e = (gb__optim_var){.opt = o, .var = v, .decay = !excluded_from_decay(o, v)};
    for (int k = 0; k < GB__OPTIM_MAX_SLOTS; k++) {
        if (!o->slot_names[k]) continue;
        e->slot[k] = new_slot(o, v, o->slot_names[k]);
        if (!e->slot[k]) {
            free_entry(e);
            return NULL;
        }
    }
    if (add_entry(o, e)) return e;
    free_entry(e);
oom:
    gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory creating the slots of '%s'", o->name,
              gb_variable_name(v));
    return NULL;
}

/* The state of v, created on first use. The slots must still match v: a
 * mismatch means v was freed and another variable took its address. */
static gb__optim_var *entry_for(gb_optimizer *o, gb_variable *v) {
    gb__optim_var *e = find(o, v);
    if (!e) return create_entry(o, v);
    for (int k = 0; k < GB__OPTIM_MAX_SLOTS; k++) {
        gb_variable *s = e->slot[k];
        if (s && (gb_variable_dtype(s) != gb_variable_dtype(v) ||
                  gb_variable_size(s) != gb_variable_size(v))) {
            gb__error(GB_ERR_STATE, NULL,
                      "%s: slot '%s' does not fit variable '%s' any more; was a variable the "
                      "optimizer saw freed and another created in its place? Use a new "
                      "optimizer for new variables",
                      o->name, gb_variable_name(s), gb_variable_name(v));
            return NULL;
        }
    }
    return e;
}

/* ---- validation ----------------------------------------------------------------------------- */

gb_status gb__optim_gradient_fits(const gb_variable *v, const gb_tensor *g, char *why,
                                  size_t n) {
    char vs[128], gs[128];
    gb_dtype vt = gb_variable_dtype(v);
    if (vt != GB_F32 && vt != GB_F64) {
        snprintf(why, n, "variable '%s' is %s; optimizers update float32 and float64 variables",
                 gb_variable_name(v), gb_dtype_name(vt));
        return GB_ERR_DTYPE;
    }
    /* A traced gradient's unknown dims are checked when the graph runs. */
    bool same_shape = gb__shapes_match(gb_rank(g), gb_shape(g), gb_variable_rank(v),
                                       gb_variable_shape(v));
    if (gb_tensor_dtype(g) == vt && same_shape) return GB_OK;
    snprintf(why, n, "the gradient for variable '%s' is %s %s but the variable is %s %s",
             gb_variable_name(v), gb_dtype_name(gb_tensor_dtype(g)),
             gb__shape_fmt(gb_rank(g), gb_shape(g), gs, sizeof gs), gb_dtype_name(vt),
             gb__shape_fmt(gb_variable_rank(v), gb_variable_shape(v), vs, sizeof vs));
    return same_shape ? GB_ERR_DTYPE : GB_ERR_SHAPE;
}

static const char *const APPLY = "gb_optimizer_apply_gradients";

/* The call's arguments, before anything is touched. Returns the index of
 * the last variable with a gradient, or -1 after an error. */
static int check_apply(const gb_optimizer *o, gb_tensor *const *grads, int ngrads,
                       gb_variable *const *vars, int nvars) {
    if (!o) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the optimizer is NULL", APPLY);
        return -1;
    }
    if (ngrads != nvars) {
        gb__error(GB_ERR_VALUE, NULL,
                  "%s: %d gradients for %d variables; there must be one gradient (or NULL) per "
                  "variable",
                  APPLY, ngrads, nvars);
        return -1;
    }
    if (nvars < 0 || (nvars > 0 && (!grads || !vars))) {
        gb__error(GB_ERR_VALUE, NULL, "%s: %s for %d variables", APPLY,
                  nvars < 0 ? "negative count" : "NULL array", nvars);
        return -1;
    }
    int last = -1;
    for (int i = 0; i < nvars; i++) {
        if (!vars[i]) {
            gb__error(GB_ERR_VALUE, NULL, "%s: variable %d is NULL", APPLY, i);
            return -1;
        }
        if (!grads[i]) continue;
        char why[512];
        gb_status st = gb__optim_gradient_fits(vars[i], grads[i], why, sizeof why);
        if (st != GB_OK) {
            gb__error(st, NULL, "%s: %s (gradient %d)", APPLY, why, i);
            return -1;
        }
        last = i;
    }
    if (last < 0)
        gb__error(GB_ERR_VALUE, NULL, "%s: no gradients provided for any of the %d variable%s%s%s",
                  APPLY, nvars, nvars == 1 ? "" : "s", nvars ? ", e.g. " : "",
                  nvars ? gb_variable_name(vars[0]) : "");
    return last;
}

/* ---- applying ------------------------------------------------------------------------------- */

/* One update op per variable with a gradient; last: the one that advances
 * the iteration count. */
static bool apply_each(gb_optimizer *opt, gb_tensor *const *grads, gb_variable *const *vars,
                       int nvars, int last) {
    for (int i = 0; i < nvars; i++) {
        gb__optim_var *e = find(opt, vars[i]);
        if (!grads[i]) {
            if (!e->warned_no_grad)
                gb__warn("%s: gradients do not exist for variable '%s' (its gradient is NULL), "
                         "so %s does not update it; is it connected to the loss?",
                         APPLY, gb_variable_name(vars[i]), opt->name);
            e->warned_no_grad = true;
            continue;
        }
        gb_attrs a = opt->attrs;
        /* The variables it writes, by id, so a traced graph captures them. */
        a.vars[a.nvars++] = gb__variable_id(e->var);
        for (int k = 0; k < GB__OPTIM_MAX_SLOTS && a.nvars < 4; k++)
            if (e->slot[k]) a.vars[a.nvars++] = gb__variable_id(e->slot[k]);
        if (!e->decay) a.f[GB__OPTIM_F_WEIGHT_DECAY] = 0;
        a.i[GB__OPTIM_I_ADVANCE] = i == last;
        gb_tensor *none[1];
        if (gb__dispatch(opt->op, &grads[i], 1, &a, none) < 0) return false;
    }
    return true;
}

static bool clipping_on(const gb_gradient_clipping *c) {
    return c->clipnorm > 0 || c->global_clipnorm > 0 || c->clipvalue > 0;
}

/* The gradients clipped (a copy of the array; "<optimizer>/clip" ops), or
 * grads itself when clipping is off; NULL after an error. */
static gb_tensor **clipped(const gb_optimizer *opt, gb_tensor *const *grads, int n) {
    if (!clipping_on(&opt->clipping)) return (gb_tensor **)grads;
    gb_tensor **out = malloc((size_t)n * sizeof *out);
    if (!out) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", APPLY);
        return NULL;
    }
    memcpy(out, grads, (size_t)n * sizeof *out);
    gb_name_scope_push("clip");
    bool ok = gb__optim_clip(&opt->clipping, out, n);
    gb_name_scope_pop();
    if (ok) return out;
    free(out);
    return NULL;
}

bool gb_optimizer_apply_gradients(gb_optimizer *opt, gb_tensor *const *grads, int ngrads,
                                  gb_variable *const *vars, int nvars) {
    if (!gb_ok()) return false; /* a gradient that failed is NULL: do not mistake it */
    int last = check_apply(opt, grads, ngrads, vars, nvars);
    if (last < 0 || !gb_optimizer_build(opt, vars, nvars)) return false;
    /* Its ops under the optimizer's name ("Adam/ResourceApplyAdam"), as
     * Keras names them: a traced step's graph shows one "Adam" scope. */
    gb_name_scope_push(opt->name);
    double t0 = gb__prof_clock();
    gb_tensor **g = clipped(opt, grads, nvars);
    bool ok = g && apply_each(opt, g, vars, nvars, last);
    if (g && g != grads) free(g);
    gb__prof_range(GB_PROFILE_OPTIMIZER, opt->name, t0);
    gb_name_scope_pop();
    return ok;
}

/* ---- measures (optim/measure.h) ------------------------------------------------------------ */

void gb__optimizer_measure_begin(gb_optimizer *opt) { opt->measure = ++opt->measures; }

void gb__optimizer_measure_end(gb_optimizer *opt) { opt->measure = 0; }

int64_t gb__optimizer_measuring(const gb_optimizer *opt) { return opt->measure; }

bool gb__optimizer_measured(const gb_optimizer *opt, const gb_variable *v, gb__update_sums *out) {
    const gb__optim_var *e = opt->measures ? find(opt, v) : NULL;
    if (!e || e->measured != opt->measures) return false;
    *out = e->sums;
    return true;
}

bool gb__optimizer_clips(const gb_optimizer *opt) { return clipping_on(&opt->clipping); }

bool gb_optimizer_set_clipping(gb_optimizer *opt, gb_gradient_clipping clipping) {
    if (!opt) {
        gb__error(GB_ERR_VALUE, NULL, "gb_optimizer_set_clipping: the optimizer is NULL");
        return false;
    }
    if (!gb__optim_clipping_valid(&clipping, opt->name)) return false;
    opt->clipping = clipping;
    return true;
}

gb_gradient_clipping gb_optimizer_clipping(const gb_optimizer *opt) {
    return opt ? opt->clipping : (gb_gradient_clipping){0};
}

bool gb_optimizer_build(gb_optimizer *opt, gb_variable *const *vars, int n) {
    if (!opt || n < 0 || (n > 0 && !vars)) {
        gb__error(GB_ERR_VALUE, NULL, "gb_optimizer_build: %s",
                  !opt ? "the optimizer is NULL" : "bad variable array");
        return false;
    }
    for (int i = 0; i < n; i++) {
        if (!vars[i]) {
            gb__error(GB_ERR_VALUE, NULL, "gb_optimizer_build: variable %d is NULL", i);
            return false;
        }
        if (!entry_for(opt, vars[i])) return false;
    }
    return true;
}

/* ---- the step's numbers, read by the fused kernels ---------------------------------------- */

double gb__optimizer_step_lr(const gb_optimizer *opt) {
    return gb__lr_schedule_eval(&opt->schedule, opt->iterations);
}

int64_t gb__optimizer_step_number(const gb_optimizer *opt) { return opt->iterations + 1; }

void gb__optimizer_advance(gb_optimizer *opt) { opt->iterations++; }

/* ---- accessors -------------------------------------------------------------------------------- */

bool gb_optimizer_exclude_from_weight_decay(gb_optimizer *opt, const char *name_part) {
    if (!opt || !name_part || !name_part[0]) {
        gb__error(GB_ERR_VALUE, NULL, "gb_optimizer_exclude_from_weight_decay: %s",
                  !opt ? "the optimizer is NULL" : "empty name part");
        return false;
    }
    char **list = realloc(opt->no_decay, (size_t)(opt->nno_decay + 1) * sizeof *list);
    char *copy = list ? strdup(name_part) : NULL;
    if (list) opt->no_decay = list;
    if (!copy) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_optimizer_exclude_from_weight_decay: out of memory");
        return false;
    }
    opt->no_decay[opt->nno_decay++] = copy;
    for (int i = 0; i < opt->nvars; i++)
        if (excluded_from_decay(opt, opt->vars[i]->var)) opt->vars[i]->decay = false;
    return true;
}

bool gb_optimizer_exclude_vectors_from_weight_decay(gb_optimizer *opt) {
    if (!opt) {
        gb__error(GB_ERR_VALUE, NULL, "gb_optimizer_exclude_vectors_from_weight_decay: the optimizer is NULL");
        return false;
    }
    opt->no_decay_vectors = true;
    for (int i = 0; i < opt->nvars; i++)
        if (excluded_from_decay(opt, opt->vars[i]->var)) opt->vars[i]->decay = false;
    return true;
}

bool gb__optimizer_no_decay_vectors(const gb_optimizer *opt) { return opt->no_decay_vectors; }

const char *gb_optimizer_name(const gb_optimizer *opt) { return opt ? opt->name : ""; }

gb_op_id gb__optimizer_op(const gb_optimizer *opt, gb_attrs *attrs) {
    *attrs = opt->attrs;
    return opt->op;
}

int gb__optimizer_no_decay(const gb_optimizer *opt, const char *const **parts) {
    *parts = (const char *const *)opt->no_decay;
    return opt->nno_decay;
}

double gb_optimizer_learning_rate(const gb_optimizer *opt) {
    return opt ? gb__optimizer_step_lr(opt) : NAN;
}

bool gb_optimizer_set_learning_rate(gb_optimizer *opt, double learning_rate) {
    const char *who = "gb_optimizer_set_learning_rate";
    if (!opt) {
        gb__error(GB_ERR_VALUE, NULL, "%s: the optimizer is NULL", who);
        return false;
    }
    if (opt->schedule.kind != GB_LR_CONSTANT) {
        gb__error(GB_ERR_STATE, NULL,
                  "%s: optimizer '%s' was created with a learning-rate schedule, so its "
                  "learning rate is not settable",
                  who, opt->name);
        return false;
    }
    if (!gb__optim_check_range(who, "learning_rate", learning_rate, 0, INFINITY, false))
        return false;
    opt->schedule.initial_learning_rate = learning_rate;
    return true;
}

const gb_lr_schedule *gb_optimizer_schedule(const gb_optimizer *opt) {
    return opt ? &opt->schedule : NULL;
}

int64_t gb_optimizer_iterations(const gb_optimizer *opt) { return opt ? opt->iterations : 0; }

bool gb_optimizer_set_iterations(gb_optimizer *opt, int64_t iterations) {
    if (!opt || iterations < 0) {
        gb__error(GB_ERR_VALUE, NULL, "gb_optimizer_set_iterations: %s (got %lld)",
                  !opt ? "the optimizer is NULL" : "iterations must be >= 0",
                  (long long)iterations);
        return false;
    }
    opt->iterations = iterations;
    return true;
}

gb_variable *gb_optimizer_slot(const gb_optimizer *opt, const gb_variable *var,
                               const char *slot) {
    const gb__optim_var *e = opt && var && slot ? find(opt, var) : NULL;
    for (int k = 0; e && k < GB__OPTIM_MAX_SLOTS; k++)
        if (opt->slot_names[k] && strcmp(opt->slot_names[k], slot) == 0) return e->slot[k];
    return NULL;
}

int gb_optimizer_slot_variables(const gb_optimizer *opt, gb_variable **out, int cap) {
    int n = 0;
    for (int i = 0; opt && i < opt->nvars; i++)
        for (int k = 0; k < GB__OPTIM_MAX_SLOTS; k++)
            if (opt->vars[i]->slot[k]) {
                if (n < cap && out) out[n] = opt->vars[i]->slot[k];
                n++;
            }
    return n;
}
