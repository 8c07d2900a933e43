/* tape.c — GradientTape: recording op calls and walking them backwards.
 *
 * Each live tape of a thread holds one of 64 slots; a tensor carries a bit
 * per slot that watches it, so the dispatcher decides whether to record
 * with one AND. A bit can outlive its tape, so it only counts for tensors
 * made after the tape began (ids grow monotonically) or watched explicitly.
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

#include "internal.h"

enum { MAX_TAPES = 64, CUSTOM_OP = -1 };

typedef struct tape_rec {
    int op;                       /* gb_op_id, or CUSTOM_OP */
    int nin, nout;
    gb_tensor **in, **out;
    gb_attrs attrs;
    struct gb_variable *var;      /* ReadVariableOp */
    gb_custom_backward_fn custom; /* CUSTOM_OP */
    void *custom_user;
    const char *name;             /* "<scope>/<Type>" for errors */
} tape_rec;

typedef struct mem_chunk {
    struct mem_chunk *next;
    size_t used, cap;
    max_align_t data[];
} mem_chunk;

struct gb_tape {
    int slot;
    uint64_t bit;
    uint64_t start_id;
    int depth;                 /* scope depth the tape was begun in */
    int max_rec_depth;         /* deepest scope whose tensors it recorded */
    bool persistent, watch_accessed, used, recording, paused, in_gradient, expired;
    char expired_why[200];
    tape_rec **recs;
    int nrecs, caprecs;
    mem_chunk *mem;
    uint64_t *old_ids;         /* explicitly watched tensors older than the tape */
    int nold, capold;
    struct gb_variable **vars; /* watched variables, first-watched order */
    int nvars, capvars;
};

_Thread_local uint64_t gb__tl_recording;
_Thread_local const char *gb__tl_backward_of;
_Thread_local const char *gb__tl_backward_of_type;
static _Thread_local gb_tape *tl_slots[MAX_TAPES];

/* ---- bookkeeping --------------------------------------------------------------- */

static void update_recording_mask(void) {
    uint64_t m = 0;
    for (int i = 0; i < MAX_TAPES; i++) {
        gb_tape *t = tl_slots[i];
        if (t && t->recording && !t->paused && !t->in_gradient && !t->expired) m |= t->bit;
    }
    gb__tl_recording = m;
}

static void *tape_alloc(gb_tape *t, size_t n) {
    n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    mem_chunk *c = t->mem;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 32768 ? n : 32768;
        c = malloc(sizeof *c + cap);
        if (!c) {
            gb__error(GB_ERR_MEMORY, NULL, "out of memory recording on a GradientTape");
            return NULL;
        }
        c->cap = cap;
        c->used = 0;
        c->next = t->mem;
        t->mem = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += n;
    return p;
}

static bool grow(void **arr, int *cap, size_t elem) {
    int ncap = *cap ? 2 * *cap : 16;
    void *p = realloc(*arr, (size_t)ncap * elem);
    if (!p) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory on a GradientTape");
        return false;
    }
    *arr = p;
    *cap = ncap;
    return true;
}

static void drop_records(gb_tape *t) {
    while (t->mem) {
        mem_chunk *next = t->mem->next;
        free(t->mem);
        t->mem = next;
    }
    free(t->recs);
    t->recs = NULL;
    t->nrecs = t->caprecs = 0;
}

static void tape_destroy(void *arg) {
    gb_tape *t = arg;
    drop_records(t);
    free(t->old_ids);
    free(t->vars);
    tl_slots[t->slot] = NULL;
    update_recording_mask();
}

void gb__tapes_on_scope_end(int depth) {
    for (int i = 0; i < MAX_TAPES; i++) {
        gb_tape *t = tl_slots[i];
        /* Tapes begun in the ending scope are destroyed by its defer list;
         * older tapes that recorded tensors of this scope lose them. */
        if (!t || t->depth >= depth || t->expired || t->max_rec_depth < depth) continue;
        t->expired = true;
        snprintf(t->expired_why, sizeof t->expired_why,
                 "the GradientTape recorded tensors of a scope (depth %d) that has ended; "
                 "compute gradients before gb_scope_end(), or begin the tape inside that scope",
                 depth);
        drop_records(t);
    }
    update_recording_mask();
}

/* ---- begin / end / watch ---------------------------------------------------------- */

gb_tape *gb_tape_begin_ex(bool persistent, bool watch_accessed_variables) {
    int slot = -1;
    for (int i = 0; i < MAX_TAPES && slot < 0; i++)
        if (!tl_slots[i]) slot = i;
    if (slot < 0) {
        gb__error(GB_ERR_STATE, NULL,
                  "more than %d GradientTapes alive on this thread; end the scopes of old ones",
                  MAX_TAPES);
        return NULL;
    }
    gb_tape *t = gb__scope_alloc(sizeof *t);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->slot = slot;
    t->bit = (uint64_t)1 << slot;
    t->start_id = gb__next_tensor_id();
    t->depth = gb_scope_depth();
    t->persistent = persistent;
    t->watch_accessed = watch_accessed_variables;
    t->recording = true;
    if (!gb__scope_defer(tape_destroy, t)) return NULL;
    tl_slots[slot] = t;
    update_recording_mask();
    return t;
}

gb_tape *gb_tape_begin(void) { return gb_tape_begin_ex(false, true); }

static bool tape_usable(const gb_tape *t, const char *fn) {
    if (!t) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: tape is NULL", fn);
        return false;
    }
    return true;
}

void gb_tape_end(gb_tape *t) {
    if (!tape_usable(t, "gb_tape_end")) return;
    t->recording = false;
    update_recording_mask();
}

void gb_tape_stop_recording(gb_tape *t) {
    if (!tape_usable(t, "gb_tape_stop_recording")) return;
    t->paused = true;
    update_recording_mask();
}

void gb_tape_resume_recording(gb_tape *t) {
    if (!tape_usable(t, "gb_tape_resume_recording")) return;
    t->paused = false;
    update_recording_mask();
}

static bool is_old_watched(const gb_tape *t, uint64_t id) {
    for (int i = 0; i < t->nold; i++)
        if (t->old_ids[i] == id) return true;
    return false;
}

/* Whether tape t watches tensor x (its bit set and still meaningful). */
static bool watches(const gb_tape *t, const gb_tensor *x) {
    return (x->tape_bits & t->bit) && (x->id >= t->start_id || is_old_watched(t, x->id));
}

void gb_tape_watch(gb_tape *t, gb_tensor *x) {
    if (!tape_usable(t, "gb_tape_watch") || !x) return;
    if (watches(t, x)) return;
    if (x->id < t->start_id) {
        if (t->nold == t->capold && !grow((void **)&t->old_ids, &t->capold, sizeof(uint64_t)))
            return;
        t->old_ids[t->nold++] = x->id;
    }
    x->tape_bits |= t->bit;
}

static bool var_watched(const gb_tape *t, const struct gb_variable *v) {
    for (int i = 0; i < t->nvars; i++)
        if (t->vars[i] == v) return true;
    return false;
}

static void add_var(gb_tape *t, struct gb_variable *v) {
    if (var_watched(t, v)) return;
    if (t->nvars == t->capvars && !grow((void **)&t->vars, &t->capvars, sizeof *t->vars)) return;
    t->vars[t->nvars++] = v;
}

void gb_tape_watch_variable(gb_tape *t, gb_variable *v) {
    if (!tape_usable(t, "gb_tape_watch_variable") || !v) return;
    add_var(t, v);
}

int gb_tape_watched_variables(const gb_tape *t, gb_variable **out, int cap) {
    if (!t) return 0;
    for (int i = 0; i < t->nvars && i < cap; i++) out[i] = t->vars[i];
    return t->nvars;
}

/* ---- recording ---------------------------------------------------------------- */

static bool any_float_output(gb_tensor **out, int nout) {
    for (int k = 0; k < nout; k++)
        if (gb_dtype_is_float(out[k]->dtype)) return true;
    return false;
}

/* The recording tapes that should see this call. */
static uint64_t tapes_for_call(const gb_op_call *c) {
    uint64_t mask = 0;
    if (c->op == GB_OP_READ_VARIABLE) {
        struct gb_variable *v = gb__call_variable(c);
        for (uint64_t m = gb__tl_recording; m; m &= m - 1) {
            gb_tape *t = tl_slots[__builtin_ctzll(m)];
            if ((t->watch_accessed && gb__variable_is_trainable(v)) || var_watched(t, v)) {
                add_var(t, v);
                mask |= t->bit;
            }
        }
        return mask;
    }
    for (int i = 0; i < c->nin; i++) {
        const gb_tensor *x = c->in[i];
        for (uint64_t m = x->tape_bits & gb__tl_recording & ~mask; m; m &= m - 1) {
            gb_tape *t = tl_slots[__builtin_ctzll(m)];
            if (watches(t, x)) mask |= t->bit;
        }
    }
    return mask;
}

static tape_rec *new_record(gb_tape *t, int op, gb_tensor *const *in, int nin, gb_tensor **out,
                            int nout, const char *type_name) {
    if (t->nrecs == t->caprecs && !grow((void **)&t->recs, &t->caprecs, sizeof *t->recs))
        return NULL;
    tape_rec *r = tape_alloc(t, sizeof *r + (size_t)(nin + nout) * sizeof(gb_tensor *));
    if (!r) return NULL;
    memset(r, 0, sizeof *r);
    r->op = op;
    r->nin = nin;
    r->nout = nout;
    r->in = (gb_tensor **)(r + 1);
    r->out = r->in + nin;
    if (nin) memcpy(r->in, in, (size_t)nin * sizeof *in); /* ReadVariableOp has none */
    if (nout) memcpy(r->out, out, (size_t)nout * sizeof *out);
    const char *path = gb_name_scope_path();
    if (path[0]) {
        size_t n = strlen(path) + strlen(type_name) + 2;
        char *name = tape_alloc(t, n);
        if (name) snprintf(name, n, "%s/%s", path, type_name);
        r->name = name;
    } else {
        r->name = type_name;
    }
    int depth = gb_scope_depth();
    if (depth > t->max_rec_depth) t->max_rec_depth = depth;
    t->recs[t->nrecs++] = r;
    return r;
}

void gb__tape_record(const gb_op_call *c, gb_tensor **out, int nout) {
    if (nout == 0 || !any_float_output(out, nout)) return;
    uint64_t mask = tapes_for_call(c);
    if (!mask) return;
    for (uint64_t m = mask; m; m &= m - 1) {
        gb_tape *t = tl_slots[__builtin_ctzll(m)];
        tape_rec *r = new_record(t, c->op, c->in, c->nin, out, nout, c->def->name);
        if (!r) return;
        r->attrs = *c->attrs;
        if (c->op == GB_OP_READ_VARIABLE) r->var = gb__call_variable(c);
    }
    for (int k = 0; k < nout; k++) out[k]->tape_bits |= mask;
}

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

typedef struct grad_request {
    gb_tensor *const *targets;
    int ntargets;
    gb_tensor *const *output_gradients;
    const gb_source *sources;
    int nsources;
    gb_unconnected unconnected;
} grad_request;

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
static bool run_backward(const tape_rec *r, gb_tensor **dys, const bool *needs, gb_tensor **dx) {
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

/* Runs the gradient function with the forward op's name published for
 * numerics alerts (restored after: backward passes nest). */
static bool record_backward(const tape_rec *r, gb_tensor **dys, const bool *needs,
                            gb_tensor **dx) {
    const char *outer = gb__tl_backward_of, *outer_type = gb__tl_backward_of_type;
    gb__tl_backward_of = r->name;
    gb__tl_backward_of_type = r->op == CUSTOM_OP ? r->name : gb_op_type_name((gb_op_id)r->op);
    bool ok = run_backward(r, dys, needs, dx);
    gb__tl_backward_of = outer;
    gb__tl_backward_of_type = outer_type;
    return ok;
}

static bool backprop_record(grad_map *m, const tape_rec *r) {
    gb_tensor *dys[GB_MAX_OUTPUTS];
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
    for (int k = 0; needed && k < r->nout; k++)
        if (!dys[k]) ok = (dys[k] = gb_zeros_like(r->out[k])) != NULL;
    ok = ok && (!needed || record_backward(r, dys, needs, dx));
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
    if (needs != needs_small) {
        free(needs);
        free(dx);
    }
    return ok;
}

static bool seed_targets(grad_map *m, const grad_request *q) {
    for (int i = 0; i < q->ntargets; i++) {
        gb_tensor *y = q->targets[i];
        gb_tensor *dy = q->output_gradients ? q->output_gradients[i] : gb_ones_like(y);
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
        if (g) sum = sum ? gb_add(sum, g) : g;
    }
    return sum;
}

static gb_tensor *unconnected_value(const gb_source *s, gb_unconnected mode) {
    if (mode != GB_UNCONNECTED_ZERO) return NULL;
    if (s->tensor) return gb_zeros_like(s->tensor);
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

static bool run_gradient(gb_tape *t, const grad_request *q, gb_tensor **out) {
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
    update_recording_mask();
    mark_relevant(t, &m, q);
    bool ok = seed_targets(&m, q);
    for (int i = t->nrecs - 1; ok && i >= 0; i--) ok = backprop_record(&m, t->recs[i]);
    for (int s = 0; ok && s < q->nsources; s++) {
        const gb_source *src = &q->sources[s];
        gb_dtype dt = src->tensor ? src->tensor->dtype : gb_variable_dtype(src->variable);
        if (!gb_dtype_is_float(dt)) {
            gb__warn("the dtype of gradient source %d must be floating (float32 or float64), "
                     "got %s: its gradient is NULL",
                     s, gb_dtype_name(dt));
            continue;
        }
        out[s] = source_gradient(t, &m, src);
        if (!out[s]) out[s] = unconnected_value(src, q->unconnected);
    }
    t->in_gradient = was;
    update_recording_mask();
    map_free(&m);
    return ok && gb_ok();
}

static bool claim_use(gb_tape *t) {
    if (!tape_usable(t, "gradient")) return false;
    if (!t->persistent && t->used) {
        gb__error(GB_ERR_STATE, NULL,
                  "a non-persistent GradientTape can compute gradients only once; begin it "
                  "with gb_tape_begin_ex(true, ...) to call gradient() several times");
        return false;
    }
    t->used = true;
    return true;
}

bool gb_tape_gradient_ex(gb_tape *t, gb_tensor *const *targets, int ntargets,
                         gb_tensor *const *output_gradients, const gb_source *sources,
                         int nsources, gb_unconnected unconnected, gb_tensor **out) {
    if (!claim_use(t)) {
        for (int s = 0; s < nsources; s++) out[s] = NULL;
        return false;
    }
    grad_request q = {targets, ntargets, output_gradients, sources, nsources, unconnected};
    bool ok = run_gradient(t, &q, out);
    if (!t->persistent) drop_records(t); /* TF frees a used tape's resources */
    return ok;
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

/* ---- Jacobians ---------------------------------------------------------------------- */

/* One backward pass per unit output gradient: rows[i] = d(dys[i] . y)/dx,
 * NULL where x is unconnected. */
static bool gradient_rows(gb_tape *t, gb_tensor *y, gb_tensor *x, gb_tensor **dys, int64_t n,
                          gb_tensor **rows) {
    gb_source s = GB_SRC(x);
    for (int64_t i = 0; i < n; i++) {
        grad_request q = {&y, 1, &dys[i], &s, 1, GB_UNCONNECTED_NONE};
        if (!run_gradient(t, &q, &rows[i])) return false;
    }
    return true;
}

/* A tensor of y's dtype and shape with ones at flat positions
 * first, first + stride, ... (count of them). */
static gb_tensor *unit_tensor(const gb_tensor *y, int64_t first, int64_t stride, int64_t count) {
    gb_tensor *e = gb_zeros(y->dtype, y->rank, y->shape);
    if (!e) return NULL;
    for (int64_t b = 0; b < count; b++) gb__store(e->dtype, e->data, first + b * stride, 1.0);
    return e;
}

/* Stacks the rows along stack_axis and reshapes to the Jacobian's shape;
 * NULL (unconnected) when every row is and the caller asked for NONE. */
static gb_tensor *assemble(gb_tensor **rows, int64_t n, const gb_tensor *x, int stack_axis,
                           int rank, const int64_t *shape, gb_unconnected unconnected) {
    bool any = false;
    for (int64_t i = 0; i < n; i++) any |= rows[i] != NULL;
    if (!any && unconnected == GB_UNCONNECTED_NONE) return NULL;
    for (int64_t i = 0; i < n; i++)
        if (!rows[i]) rows[i] = gb_zeros(x->dtype, x->rank, x->shape);
    return gb_reshape(gb_stack(rows, (int)n, stack_axis), rank, shape);
}

/* Shared driver: n backward passes with the unit gradients unit(i). */
typedef struct jac_plan {
    int64_t n;           /* number of backward passes */
    int64_t first_mul;   /* unit i has ones at i * first_mul + b * stride, b < count */
    int64_t stride, count;
    int stack_axis;
    int rank;
    int64_t shape[GB_MAX_RANK];
} jac_plan;

static gb_tensor *run_jacobian(gb_tape *t, gb_tensor *y, gb_tensor *x, const jac_plan *p,
                               gb_unconnected unconnected) {
    if (p->n == 0) return gb_zeros(x->dtype, p->rank, p->shape);
    gb_tensor **buf = malloc((size_t)p->n * 2 * sizeof *buf);
    if (!buf) {
        gb__error(GB_ERR_MEMORY, NULL, "jacobian: out of memory");
        return NULL;
    }
    gb_tensor **dys = buf, **rows = buf + p->n;
    bool ok = true;
    for (int64_t i = 0; ok && i < p->n; i++)
        ok = (dys[i] = unit_tensor(y, i * p->first_mul, p->stride, p->count)) != NULL;
    gb_tensor *result = NULL;
    if (ok && gradient_rows(t, y, x, dys, p->n, rows))
        result = assemble(rows, p->n, x, p->stack_axis, p->rank, p->shape, unconnected);
    free(buf);
    if (!t->persistent) drop_records(t);
    return result;
}

static bool jacobian_args(gb_tape *t, gb_tensor *y, gb_tensor *x, const char *fn) {
    if (!y || !x) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "%s: target or source is NULL", fn);
        return false;
    }
    return claim_use(t);
}

static bool result_shape(jac_plan *p, const int64_t *a, int ra, const int64_t *b, int rb,
                         const char *fn) {
    p->rank = ra + rb;
    if (p->rank > GB_MAX_RANK) {
        gb__error(GB_ERR_SHAPE, NULL, "%s: result rank %d exceeds %d", fn, p->rank, GB_MAX_RANK);
        return false;
    }
    memcpy(p->shape, a, (size_t)ra * sizeof *a);
    memcpy(p->shape + ra, b, (size_t)rb * sizeof *b);
    return true;
}

gb_tensor *gb_tape_jacobian(gb_tape *t, gb_tensor *y, gb_tensor *x, gb_unconnected unconnected) {
    if (!jacobian_args(t, y, x, "jacobian")) return NULL;
    jac_plan p = {.n = y->size, .first_mul = 1, .stride = 1, .count = 1, .stack_axis = 0};
    if (!result_shape(&p, y->shape, y->rank, x->shape, x->rank, "jacobian")) return NULL;
    return run_jacobian(t, y, x, &p, unconnected);
}

gb_tensor *gb_tape_batch_jacobian(gb_tape *t, gb_tensor *y, gb_tensor *x,
                                  gb_unconnected unconnected) {
    if (!jacobian_args(t, y, x, "batch_jacobian")) return NULL;
    if (y->rank < 1 || x->rank < 1 || y->shape[0] != x->shape[0]) {
        char a[96], b[96];
        gb__error(GB_ERR_SHAPE, NULL,
                  "batch_jacobian: need first dimension of target shape %s and source shape "
                  "%s to match",
                  gb_shape_str(y, a, sizeof a), gb_shape_str(x, b, sizeof b));
        return NULL;
    }
    int64_t batch = y->shape[0];
    int64_t inner = batch ? y->size / batch : 0;
    jac_plan p = {.n = inner, .first_mul = 1, .stride = inner, .count = batch, .stack_axis = 1};
    int64_t head[GB_MAX_RANK];
    memcpy(head, y->shape, (size_t)y->rank * sizeof *head);
    if (!result_shape(&p, head, y->rank, x->shape + 1, x->rank - 1, "batch_jacobian"))
        return NULL;
    return run_jacobian(t, y, x, &p, unconnected);
}

/* ---- custom gradients ---------------------------------------------------------------- */

bool gb_custom_gradient(const char *name, gb_custom_forward_fn forward,
                        gb_custom_backward_fn backward, void *user, gb_tensor *const *inputs,
                        int nin, gb_tensor **outputs, int nout) {
    for (int k = 0; k < nout; k++) outputs[k] = NULL;
    for (int i = 0; i < nin; i++)
        if (!inputs[i]) {
            if (gb_ok()) gb__error(GB_ERR_VALUE, name, "custom gradient: input %d is NULL", i);
            return false;
        }
    if (!forward || !backward || nout < 1 || nout > GB_MAX_OUTPUTS) {
        gb__error(GB_ERR_VALUE, name,
                  "custom gradient: need forward and backward functions and 1..%d outputs",
                  GB_MAX_OUTPUTS);
        return false;
    }
    /* The forward pass is opaque to tapes: only `backward` defines the
     * gradient. */
    uint64_t saved = gb__tl_recording;
    gb__tl_recording = 0;
    bool ok = forward(inputs, nin, outputs, nout, user) && gb_ok();
    for (int k = 0; ok && k < nout; k++) {
        ok = outputs[k] != NULL;
        /* An output that is an input would alias their gradients. */
        for (int i = 0; ok && i < nin; i++)
            if (outputs[k]->id == inputs[i]->id) ok = (outputs[k] = gb_copy(outputs[k])) != NULL;
        if (ok) outputs[k]->tape_bits = 0;
    }
    gb__tl_recording = saved;
    if (!ok) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, name, "custom gradient: forward produced no output");
        return false;
    }
    if (!saved) return true;
    gb_op_call probe = {.op = GB_OP_IDENTITY, .def = gb_op_table[GB_OP_IDENTITY], .in = inputs,
                        .nin = nin, .attrs = NULL};
    uint64_t mask = tapes_for_call(&probe);
    for (uint64_t m = mask; m; m &= m - 1) {
        gb_tape *t = tl_slots[__builtin_ctzll(m)];
        tape_rec *r = new_record(t, CUSTOM_OP, inputs, nin, outputs, nout,
                                 name ? name : "CustomGradient");
        if (!r) return false;
        r->custom = backward;
        r->custom_user = user;
    }
    for (int k = 0; k < nout; k++) outputs[k]->tape_bits |= mask;
    return true;
}
