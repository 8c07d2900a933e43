/* autodiff/backprop.c — gradient(): walking a tape's records backwards.
 *
 * gradient() first marks the records that depend on a source (forward
 * from the sources), then walks them newest first, calling each op's
 * gradient function with the gradients of its outputs and summing what
 * flows into each input. Gradient functions use the public ops, so other
 * recording tapes record the backward pass: that is how second derivatives
 * and Jacobians of gradients work.
 */
#include <stdio.h>
#include <stdlib.h>

#include "autodiff/internal.h"

/* ---- gradient map: tensor id -> accumulated gradient ---------------------------- */

typedef struct grad_map {
    uint64_t *keys;     /* 0 = empty (ids start at 1) */
    gb_tensor **vals;
    bool *relevant;     /* depends on a source */
    size_t mask;
} grad_map;

static bool map_init(grad_map *m, size_t expected) {
    size_t cap = 64;
    while (cap < 2 * expected) cap *= 2;
    m->keys = calloc(cap, sizeof *m->keys);
    m->vals = calloc(cap, sizeof *m->vals);
    m->relevant = calloc(cap, sizeof *m->relevant);
    m->mask = cap - 1;
    if (!m->keys || !m->vals || !m->relevant) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory computing gradients");
        return false;
    }
    return true;
}

static void map_free(grad_map *m) {
    free(m->keys);
    free(m->vals);
    free(m->relevant);
}

/* The slot of id, inserting it when `insert`; SIZE_MAX when absent. */
static size_t map_slot(grad_map *m, uint64_t id, bool insert) {
    size_t i = (size_t)(id * 0x9E3779B97F4A7C15ull) & m->mask;
    while (m->keys[i] && m->keys[i] != id) i = (i + 1) & m->mask;
    if (m->keys[i] == id) return i;
    if (!insert) return SIZE_MAX;
    m->keys[i] = id;
    return i;
}

static bool map_relevant(grad_map *m, uint64_t id) {
    size_t s = map_slot(m, id, false);
    return s != SIZE_MAX && m->relevant[s];
}

static gb_tensor *map_get(grad_map *m, uint64_t id) {
    size_t s = map_slot(m, id, false);
    return s == SIZE_MAX ? NULL : m->vals[s];
}

static bool map_accumulate(grad_map *m, uint64_t id, gb_tensor *g) {
    size_t s = map_slot(m, id, true);
    m->vals[s] = m->vals[s] ? gb_add(m->vals[s], g) : g;
    return m->vals[s] != NULL;
}

/* ---- the backward walk ------------------------------------------------------------ */


static bool is_read_of(const tape_rec *r, const struct gb_variable *v) {
    return r->op == GB_OP_READ_VARIABLE && r->var == v;
}

/* Marks sources and everything computed from them as relevant. */
static void mark_relevant(gb_tape *t, grad_map *m, const grad_request *q) {
    for (int s = 0; s < q->nsources; s++)
        if (q->sources[s].tensor) m->relevant[map_slot(m, q->sources[s].tensor->id, true)] = true;
    for (int i = 0; i < t->nrecs; i++) {
        tape_rec *r = t->recs[i];
        bool rel = false;
        if (r->op == GB_OP_READ_VARIABLE) {
            for (int s = 0; s < q->nsources && !rel; s++)
                rel = is_read_of(r, q->sources[s].variable);
        } else {
            for (int j = 0; j < r->nin && !rel; j++) rel = map_relevant(m, r->in[j]->id);
        }
        if (rel)
            for (int k = 0; k < r->nout; k++) m->relevant[map_slot(m, r->out[k]->id, true)] = true;
    }
}

static bool no_gradient_error(const tape_rec *r) {
    const char *type = gb_op_type_name((gb_op_id)r->op);
    gb__error(GB_ERR_NO_GRADIENT, type,
              "no gradient is registered for op '%s' (op type %s). Wrap its input in "
              "gb_stop_gradient() to treat it as a constant, or give it one with "
              "gb_register_gradient(\"%s\", fn)",
              r->name, type, type);
    return false;
}

/* Runs one record's gradient function; writes dx[r->nin]. */
static bool call_backward(const tape_rec *r, gb_tensor **dys, const bool *needs, gb_tensor **dx) {
    for (int j = 0; j < r->nin; j++) dx[j] = NULL;
    if (r->op == CUSTOM_OP)
        return r->custom(r->in, r->nin, r->out, dys, r->nout, dx, r->custom_user) && gb_ok();
    gb_grad_fn fn = gb__grad_fn((gb_op_id)r->op);
    if (!fn) return no_gradient_error(r);
    gb_grad_ctx ctx = {
        .op = (gb_op_id)r->op,
        .op_type = gb_op_type_name((gb_op_id)r->op),
        .attrs = &r->attrs,
        .inputs = r->in,
        .nin = r->nin,
        .outputs = r->out,
        .nout = r->nout,
        .dys = dys,
        .needs_grad = needs,
    };
    return fn(&ctx, dx) && gb_ok();
}

/* Whether r's op reads a missing gradient of its later outputs as zeros
 * itself (its built-in gradient, not one registered in its place): no
 * tensor of zeros is made for them (an attention's weights, [B, H, T, T],
 * are rarely part of the loss). */
static bool takes_missing_dys(const tape_rec *r) {
    return r->op != CUSTOM_OP && (gb_op_table[r->op]->flags & GB_OPF_OPTIONAL_DYS) &&
           gb__grad_fn((gb_op_id)r->op) == gb_op_table[r->op]->grad;
}

/* Gradient functions may be the user's (registered or custom): their
 * wrapped calls must not leave their lines as the call site. */
static bool run_backward(const tape_rec *r, gb_tensor **dys, const bool *needs, gb_tensor **dx) {
    gb_call_site site = gb__call_site();
    bool ok = call_backward(r, dys, needs, dx);
    gb__call_site_restore(site);
    return ok;
}

/* The ops made for record r's gradient — its gradient function's, the
 * zeros for outputs without a gradient, the sums of what flows into its
 * inputs — run with the forward op's name published, so they are named
 * "gradients/<forward op>_grad/..." and numerics alerts point at it;
 * label names the sums. Restored after: backward passes nest. */
typedef struct grad_scope {
    const char *of, *of_type, *label;
} grad_scope;

static grad_scope grad_scope_enter(const tape_rec *r) {
    grad_scope outer = {gb__tl_backward_of, gb__tl_backward_of_type, gb__tl_backward_label};
    gb__tl_backward_of = r->name;
    gb__tl_backward_of_type = r->op == CUSTOM_OP ? r->name : gb_op_type_name((gb_op_id)r->op);
    gb__tl_backward_label = NULL;
    return outer;
}

static void grad_scope_leave(grad_scope outer) {
    gb__tl_backward_of = outer.of;
    gb__tl_backward_of_type = outer.of_type;
    gb__tl_backward_label = outer.label;
}

/* What the sum of two contributions to one gradient is called. */
static const char accumulate_label[] = "AccumulateGrad";

/* One record's backward step, with room dys for its outputs' gradients. */
static bool backprop_outputs(grad_map *m, const tape_rec *r, gb_tensor **dys) {
    bool any = false;
    for (int k = 0; k < r->nout; k++) {
        dys[k] = map_get(m, r->out[k]->id);
        any |= dys[k] != NULL;
    }
    if (!any) return true;
    /* Which inputs want a gradient: float ones that depend on a source. */
    bool needs_small[8], *needs = needs_small;
    gb_tensor *dx_small[8], **dx = dx_small;
    if (r->nin > 8) {
        needs = malloc((size_t)r->nin * sizeof *needs);
        dx = malloc((size_t)r->nin * sizeof *dx);
        if (!needs || !dx) {
            free(needs), free(dx);
            gb__error(GB_ERR_MEMORY, NULL, "gradient: out of memory");
            return false;
        }
    }
    bool needed = false;
    for (int j = 0; j < r->nin; j++) {
        needs[j] = gb_dtype_is_float(r->in[j]->dtype) && map_relevant(m, r->in[j]->id);
        needed |= needs[j];
    }
    bool ok = true;
    grad_scope outer = grad_scope_enter(r);
    for (int k = 0; needed && k < r->nout; k++)
        if (!dys[k] && !(k > 0 && takes_missing_dys(r))) ok = (dys[k] = gb__fill_like(r->out[k], 0.0)) != NULL;
    ok = ok && (!needed || run_backward(r, dys, needs, dx));
    gb__tl_backward_label = accumulate_label;
    for (int j = 0; ok && needed && j < r->nin; j++) {
        gb_tensor *x = r->in[j];
        if (!dx[j] || !needs[j]) continue;
        if (!gb_same_shape(dx[j], x)) {
            char a[96], b[96];
            gb__error(GB_ERR_INTERNAL, gb_op_type_name((gb_op_id)r->op),
                      "gradient of '%s' returned shape %s for input %d of shape %s", r->name,
                      gb_shape_str(dx[j], a, sizeof a), j, gb_shape_str(x, b, sizeof b));
            ok = false;
            break;
        }
        ok = map_accumulate(m, x->id, dx[j]);
    }
    grad_scope_leave(outer);
    if (needs != needs_small) {
        free(needs);
        free(dx);
    }
    return ok;
}

static bool backprop_record(grad_map *m, const tape_rec *r) {
    /* An op has at most GB_MAX_OUTPUTS; a custom record (a traced
     * function's call) may have hundreds: the heap's, then. */
    gb_tensor *few[GB_MAX_OUTPUTS];
    gb_tensor **dys = r->nout <= GB_MAX_OUTPUTS ? few : malloc((size_t)r->nout * sizeof *dys);
    if (!dys) {
        gb__error(GB_ERR_MEMORY, NULL, "gradient: out of memory");
        return false;
    }
    bool ok = backprop_outputs(m, r, dys);
    if (dys != few) free(dys);
    return ok;
}

static bool seed_targets(grad_map *m, const grad_request *q) {
    for (int i = 0; i < q->ntargets; i++) {
        gb_tensor *y = q->targets[i];
        gb_tensor *dy = q->output_gradients ? q->output_gradients[i] : gb__fill_like(y, 1.0);
        if (!dy) {
            if (gb_ok())
                gb__error(GB_ERR_VALUE, NULL, "gradient: output gradient %d is NULL", i);
            return false;
        }
        if (!gb_same_shape(dy, y) || dy->dtype != y->dtype) {
            char a[96], b[96];
            gb__error(GB_ERR_SHAPE, NULL,
                      "gradient: output gradient %d is %s %s but target %d is %s %s", i,
                      gb_dtype_name(dy->dtype), gb_shape_str(dy, a, sizeof a), i,
                      gb_dtype_name(y->dtype), gb_shape_str(y, b, sizeof b));
            return false;
        }
        if (!map_accumulate(m, y->id, dy)) return false;
    }
    return true;
}

/* The gradient collected for one source, or NULL. */
static gb_tensor *source_gradient(const gb_tape *t, grad_map *m, const gb_source *s) {
    if (s->tensor) return map_get(m, s->tensor->id);
    gb_tensor *sum = NULL;
    for (int i = 0; i < t->nrecs; i++) {
        if (!is_read_of(t->recs[i], s->variable)) continue;
        gb_tensor *g = map_get(m, t->recs[i]->out[0]->id);
        if (!g || !sum) {
            sum = sum ? sum : g;
            continue;
        }
        grad_scope outer = grad_scope_enter(t->recs[i]);   /* the read's gradient scope */
        gb__tl_backward_label = accumulate_label;
        sum = gb_add(sum, g);
        grad_scope_leave(outer);
    }
    return sum;
}

static gb_tensor *unconnected_value(const gb_source *s, gb_unconnected mode) {
    if (mode != GB_UNCONNECTED_ZERO) return NULL;
    if (s->tensor) return gb__fill_like(s->tensor, 0.0);
    return gb_zeros(gb_variable_dtype(s->variable), gb_variable_rank(s->variable),
                    gb_variable_shape(s->variable));
}

static bool check_request(const gb_tape *t, const grad_request *q) {
    if (t->expired) {
        gb__error(GB_ERR_STATE, NULL, "%s", t->expired_why);
        return false;
    }
    for (int i = 0; i < q->ntargets; i++)
        if (!q->targets[i]) {
            if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gradient: target %d is NULL", i);
            return false;
        }
    for (int s = 0; s < q->nsources; s++) {
        const gb_source *src = &q->sources[s];
        if (!src->tensor == !src->variable) {
            if (gb_ok())
                gb__error(GB_ERR_VALUE, NULL,
                          "gradient: source %d must be exactly one of a tensor or a variable", s);
            return false;
        }
    }
    return true;
}

/* The gradient of source s, final once the walk has passed every record
 * that reads or consumes it: written to out[s] and reported to the hook. */
static void finish_source(const gb_tape *t, grad_map *m, const grad_request *q, int s,
                          gb_tensor **out) {
    const gb_source *src = &q->sources[s];
    gb_dtype dt = src->tensor ? src->tensor->dtype : gb_variable_dtype(src->variable);
    if (!gb_dtype_is_float(dt)) {
        gb__warn("the dtype of gradient source %d must be floating (float32 or float64), "
                 "got %s: its gradient is NULL",
                 s, gb_dtype_name(dt));
    } else {
        out[s] = source_gradient(t, m, src);
        if (!out[s]) out[s] = unconnected_value(src, q->unconnected);
    }
    if (q->hook && q->hook->ready) q->hook->ready(q->hook->user, s, out[s]);
}

/* For a hooked walk: when each variable source's gradient is final — at its
 * first read, since every record that can add to it comes later — as
 * (record index, source) pairs sorted by record index, newest first.
 * Sources never read (and tensor sources) are finished after the walk.
 * Returns how many pairs; -1 after a memory error. */
typedef struct due_source {
    int rec, source;
} due_source;

static int by_record_desc(const void *a, const void *b) {
    const due_source *x = a, *y = b;
    return (y->rec > x->rec) - (y->rec < x->rec);
}

static int due_sources(const gb_tape *t, const grad_request *q, due_source **out) {
    *out = NULL;
    if (!q->hook || q->nsources == 0) return 0;
    due_source *d = malloc((size_t)q->nsources * sizeof *d);
    if (!d) {
        gb__error(GB_ERR_MEMORY, NULL, "gradient: out of memory");
        return -1;
    }
    int n = 0;
    for (int s = 0; s < q->nsources; s++) {
        const struct gb_variable *v = q->sources[s].variable;
        for (int i = 0; v && i < t->nrecs; i++)
            if (is_read_of(t->recs[i], v)) {
                d[n++] = (due_source){i, s};
                break;
            }
    }
    qsort(d, (size_t)n, sizeof *d, by_record_desc);
    *out = d;
    return n;
}

/* The backward walk, newest record first; sources whose gradient is final
 * are finished as soon as the walk passes their first read (hooked walks),
 * the rest at the end. */
static bool walk(gb_tape *t, grad_map *m, const grad_request *q, gb_tensor **out) {
    due_source *due;
    int ndue = due_sources(t, q, &due), next = 0;
    if (ndue < 0) return false;
    bool *done = calloc((size_t)q->nsources + 1, sizeof *done);
    bool ok = done && seed_targets(m, q);
    if (!done) gb__error(GB_ERR_MEMORY, NULL, "gradient: out of memory");
    for (int i = t->nrecs - 1; ok && i >= 0; i--) {
        ok = backprop_record(m, t->recs[i]);
        for (; ok && next < ndue && due[next].rec >= i; next++) {
            finish_source(t, m, q, due[next].source, out);
            done[due[next].source] = true;
        }
        if (ok && q->hook && q->hook->between) q->hook->between(q->hook->user);
    }
    for (int s = 0; ok && s < q->nsources; s++)
        if (!done[s]) finish_source(t, m, q, s, out);
    free(due);
    free(done);
    return ok;
}

bool gb__tape_run_gradient(gb_tape *t, const grad_request *q, gb_tensor **out) {
    for (int s = 0; s < q->nsources; s++) out[s] = NULL;
    if (!check_request(t, q)) return false;
    grad_map m;
    size_t expected = (size_t)t->nrecs * 2 + (size_t)q->ntargets + (size_t)q->nsources;
    if (!map_init(&m, expected)) {
        map_free(&m);
        return false;
    }
    /* This tape must not record its own backward pass; others do. */
    bool was = t->in_gradient;
    t->in_gradient = true;
    gb__tape_update_recording();
    mark_relevant(t, &m, q);
    /* Traced, what no record's gradient owns (the seeds, zeros of
     * unconnected sources) becomes nodes under "gradients/" too. */
    bool scoped = gb__tl_tracing;
    if (scoped) gb_name_scope_push("gradients");
    bool ok = walk(t, &m, q, out);
    if (scoped) gb_name_scope_pop();
    t->in_gradient = was;
    gb__tape_update_recording();
    map_free(&m);
    return ok && gb_ok();
}

bool gb__tape_claim_use(gb_tape *t) {
    if (!gb__tape_usable(t, "gradient")) return false;
    if (!t->persistent && t->used) {
        gb__error(GB_ERR_STATE, NULL,
                  "a non-persistent GradientTape can compute gradients only once; begin it "
                  "with gb_tape_begin_ex(true, ...) to call gradient() several times");
        return false;
    }
    t->used = true;
    return true;
}

/* gradient_ex with an optional hook (gb__tape_gradient_hooked). */
static bool gradient_with(gb_tape *t, gb_tensor *const *targets, int ntargets,
                          gb_tensor *const *output_gradients, const gb_source *sources,
                          int nsources, gb_unconnected unconnected, const gb__grad_hook *hook,
                          gb_tensor **out) {
    if (!gb__tape_claim_use(t)) {
        for (int s = 0; s < nsources; s++) out[s] = NULL;
        return false;
    }
    grad_request q = {targets, ntargets, output_gradients, sources, nsources, unconnected, hook};
    bool ok = gb__tape_run_gradient(t, &q, out);
    if (!t->persistent) gb__tape_drop_records(t); /* TF frees a used tape's resources */
    return ok;
}

bool gb_tape_gradient_ex(gb_tape *t, gb_tensor *const *targets, int ntargets,
                         gb_tensor *const *output_gradients, const gb_source *sources,
                         int nsources, gb_unconnected unconnected, gb_tensor **out) {
    return gradient_with(t, targets, ntargets, output_gradients, sources, nsources, unconnected,
                         NULL, out);
}

bool gb__tape_gradient_hooked(gb_tape *t, gb_tensor *target, const gb_source *sources,
                              int nsources, gb_unconnected unconnected, const gb__grad_hook *hook,
                              gb_tensor **out) {
    return gradient_with(t, &target, 1, NULL, sources, nsources, unconnected, hook, out);
}

gb_tensor *gb_tape_gradient(gb_tape *t, gb_tensor *target, gb_tensor *source) {
    gb_tensor *out = NULL;
    gb_source s = GB_SRC(source);
    if (!source) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gradient: source is NULL");
        return NULL;
    }
    gb_tape_gradient_ex(t, &target, 1, NULL, &s, 1, GB_UNCONNECTED_NONE, &out);
    return out;
}

/* gradient() for a list of tensors or a list of variables. */
static bool gradients_from(gb_tape *t, gb_tensor *target, gb_tensor *const *tensors,
                           gb_variable *const *vars, int n, gb_tensor **out) {
    gb_source small[16] = {{0}};
    gb_source *src = n <= 16 ? small : calloc((size_t)n, sizeof *src);
    if (!src) {
        gb__error(GB_ERR_MEMORY, NULL, "gradient: out of memory");
        return false;
    }
    for (int i = 0; i < n; i++) src[i] = tensors ? GB_SRC(tensors[i]) : GB_SRC_VAR(vars[i]);
    bool ok = gb_tape_gradient_ex(t, &target, 1, NULL, src, n, GB_UNCONNECTED_NONE, out);
    if (src != small) free(src);
    return ok;
}

bool gb_tape_gradients(gb_tape *t, gb_tensor *target, gb_tensor *const *sources, int n,
                       gb_tensor **out) {
    return gradients_from(t, target, sources, NULL, n, out);
}

bool gb_tape_gradient_vars(gb_tape *t, gb_tensor *target, gb_variable *const *vars, int n,
                           gb_tensor **out) {
    return gradients_from(t, target, NULL, vars, n, out);
}

