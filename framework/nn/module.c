/* nn/module.c — gb_module: names, weights, submodules, lazy build, calls.
 *
 * A module is a small header (name, reference count, build record, owned
 * variables and submodules) followed by its type's state block. Everything
 * kind-specific goes through the type's vtable (build / output_shape /
 * call / free), so no struct carries every layer's fields.
 *
 * Auto names follow Keras: a process-wide counter per prefix gives dense,
 * dense_1, dense_2 ...; explicit names are used as given. Default seeds
 * come from a global sequence (gb_nn_set_seed) so a program builds the
 * same weights every run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nn/internal.h"

enum { NAME_BYTES = 64 };

typedef struct var_list {
    gb_variable **v;
    int n, cap;
} var_list;

struct gb_module {
    const gb_module_type *type;
    char name[NAME_BYTES];
    int refcount;
    uint64_t seed;
    bool trainable;
    bool built;               /* build() ran: weights exist */
    bool out_known;           /* the output shape is recorded */
    bool in_scope;            /* its name scope is pushed (during call/build) */
    bool ref_taken;           /* a model or a symbolic call took the creation reference */
    gb_dtype dtype;           /* the inputs' dtype at build */
    int in_rank, out_rank;
    int64_t in_shape[GB_MAX_RANK], out_shape[GB_MAX_RANK];
    var_list own;             /* variables it owns, creation order */
    gb_module **subs;
    int nsubs, capsubs;
    var_list collected[4];    /* result buffers: all, trainable, non-trainable, counting */
    gb__weight_penalty *penalties;  /* kernel/bias regularizers of its weights */
    int npenalties, cappenalties;
    gb_regularizer activity;  /* activity_regularizer ({0, 0}: none) */
    void *attached;           /* what a higher layer keeps on it (train: the compiled state) */
    void (*attached_free)(void *);
    _Alignas(max_align_t) unsigned char state[];
};

/* ---- naming and seeds ------------------------------------------------------------ */

typedef struct uid_entry {
    char prefix[NAME_BYTES];
    int count;
} uid_entry;

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static uid_entry *uids;
static int nuids, capuids;
static uint64_t global_seed;
static uint64_t seed_counter;

/* The next Keras-style name for prefix into out; false when out of memory. */
static bool next_auto_name(const char *prefix, char *out, size_t n) {
    pthread_mutex_lock(&names_lock);
    int i = 0;
    while (i < nuids && strcmp(uids[i].prefix, prefix) != 0) i++;
    if (i == nuids) {
        if (nuids == capuids) {
            int cap = capuids ? 2 * capuids : 16;
            uid_entry *grown = realloc(uids, (size_t)cap * sizeof *grown);
            if (!grown) {
                pthread_mutex_unlock(&names_lock);
                return false;
            }
            uids = grown;
            capuids = cap;
        }
        snprintf(uids[i].prefix, sizeof uids[i].prefix, "%s", prefix);
        uids[i].count = 0;
        nuids++;
    }
    int k = uids[i].count++;
    pthread_mutex_unlock(&names_lock);
    if (k == 0)
        snprintf(out, n, "%s", prefix);
    else
        snprintf(out, n, "%s_%d", prefix, k);
    return true;
}

void gb_nn_clear_session(void) {
    pthread_mutex_lock(&names_lock);
    free(uids);
    uids = NULL;
    nuids = capuids = 0;
    pthread_mutex_unlock(&names_lock);
}

void gb_nn_set_seed(uint64_t seed) {
    pthread_mutex_lock(&names_lock);
    global_seed = seed;
    seed_counter = 0;
    pthread_mutex_unlock(&names_lock);
}

bool gb__nn_auto_name(const char *prefix, char *out, size_t n) {
    return next_auto_name(prefix, out, n);
}

static uint64_t next_default_seed(void) {
    pthread_mutex_lock(&names_lock);
    uint64_t s = gb__nn_mix_seed(global_seed, ++seed_counter);
    pthread_mutex_unlock(&names_lock);
    return s;
}

uint64_t gb__nn_next_seed(void) { return next_default_seed(); }

uint64_t gb__nn_seed_position(void) {
    pthread_mutex_lock(&names_lock);
    uint64_t at = seed_counter;
    pthread_mutex_unlock(&names_lock);
    return at;
}

void gb__nn_seed_rewind(uint64_t position) {
    pthread_mutex_lock(&names_lock);
    seed_counter = position;
    pthread_mutex_unlock(&names_lock);
}

uint64_t gb__nn_mix_seed(uint64_t a, uint64_t b) {
    uint64_t state = a ^ (b * 0x9E3779B97F4A7C15ull);
    uint64_t s = gb__splitmix64(&state);
    return s ? s : 1; /* 0 means "unset" in the options */
}

void gb__nn_error(const gb_module *m, gb_status code, const char *fmt, ...) {
    if (!gb_ok()) return;
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gb__error(code, m->type->class_name, "%s layer '%s': %s", m->type->class_name, m->name, msg);
}

bool gb__nn_require_float(const gb_module *m, gb_dtype dt) {
    if (gb_dtype_is_float(dt)) return true;
    gb__nn_error(m, GB_ERR_DTYPE, "expected a float32 or float64 input, got %s (cast it first)",
                 gb_dtype_name(dt));
    return false;
}

/* ---- lifetime ------------------------------------------------------------------------ */

gb_module *gb_module_new(const gb_module_type *type, const char *name, uint64_t seed) {
    if (!type || !(type->call || type->call_n) || !type->class_name || !type->default_name) {
        gb__error(GB_ERR_VALUE, NULL,
                  "gb_module_new: the module type needs a class_name, a default_name and a "
                  "call (or call_n) function");
        return NULL;
    }
    if (name && strlen(name) >= NAME_BYTES) {
        gb__error(GB_ERR_VALUE, type->class_name, "%s: name '%s' is longer than %d characters",
                  type->class_name, name, NAME_BYTES - 1);
        return NULL;
    }
    if (name && strchr(name, '/')) {
        gb__error(GB_ERR_VALUE, type->class_name,
                  "%s: name '%s' contains '/', which separates name scopes", type->class_name,
                  name);
        return NULL;
    }
    gb_module *m = calloc(1, sizeof *m + type->state_size);
    if (!m) {
        gb__error(GB_ERR_MEMORY, type->class_name, "%s: out of memory", type->class_name);
        return NULL;
    }
    m->type = type;
    m->refcount = 1;
    m->trainable = true;
    m->dtype = GB_DTYPE_COUNT;
    m->seed = seed ? seed : next_default_seed();
    if (name && name[0]) {
        snprintf(m->name, sizeof m->name, "%s", name);
    } else if (!next_auto_name(type->default_name, m->name, sizeof m->name)) {
        free(m);
        gb__error(GB_ERR_MEMORY, type->class_name, "%s: out of memory", type->class_name);
        return NULL;
    }
    return m;
}

void *gb_module_state(gb_module *m) { return m ? m->state : NULL; }

gb_module *gb_module_retain(gb_module *m) {
    if (m) m->refcount++;
    return m;
}

gb_module *gb__module_take(gb_module *m) {
    if (!m) return NULL;
    if (m->ref_taken) return gb_module_retain(m);
    m->ref_taken = true;
    return m;
}

void gb_module_free(gb_module *m) {
    if (!m || --m->refcount > 0) return;
    if (m->type->free) m->type->free(m);
    if (m->attached_free) m->attached_free(m->attached);
    for (int i = 0; i < m->nsubs; i++) gb_module_free(m->subs[i]);
    for (int i = 0; i < m->own.n; i++) gb_variable_free(m->own.v[i]);
    free(m->subs);
    free(m->own.v);
    free(m->penalties);
    for (int k = 0; k < 4; k++) free(m->collected[k].v);
    free(m);
}

void gb__module_attach(gb_module *m, void *data, void (*free_fn)(void *)) {
    if (m->attached_free) m->attached_free(m->attached);
    m->attached = data;
    m->attached_free = free_fn;
}

void *gb__module_attached(const gb_module *m) { return m ? m->attached : NULL; }

const char *gb_module_name(const gb_module *m) { return m ? m->name : ""; }
const char *gb_module_class_name(const gb_module *m) { return m ? m->type->class_name : ""; }
const gb_module_type *gb_module_get_type(const gb_module *m) { return m ? m->type : NULL; }
uint64_t gb_module_seed(const gb_module *m) { return m ? m->seed : 0; }
bool gb_module_built(const gb_module *m) { return m && m->built; }
gb_dtype gb_module_dtype(const gb_module *m) { return m ? m->dtype : GB_DTYPE_COUNT; }
bool gb_module_trainable(const gb_module *m) { return m && m->trainable; }

static int copy_shape(int rank, const int64_t *src, int64_t *dst) {
    memcpy(dst, src, (size_t)rank * sizeof *dst);
    return rank;
}

int gb_module_input_shape(const gb_module *m, int64_t dims[GB_MAX_RANK]) {
    return m && m->built ? copy_shape(m->in_rank, m->in_shape, dims) : -1;
}

int gb_module_output_shape(const gb_module *m, int64_t dims[GB_MAX_RANK]) {
    return m && m->out_known ? copy_shape(m->out_rank, m->out_shape, dims) : -1;
}

/* ---- weights and submodules ---------------------------------------------------------- */

static bool list_push(var_list *l, gb_variable *v) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 4;
        gb_variable **grown = realloc(l->v, (size_t)cap * sizeof *grown);
        if (!grown) return false;
        l->v = grown;
        l->cap = cap;
    }
    l->v[l->n++] = v;
    return true;
}

bool gb_module_add_variable(gb_module *m, gb_variable *v) {
    if (!m || !v) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_add_variable: NULL %s",
                               m ? "variable" : "module");
        gb_variable_free(v);
        return false;
    }
    if (!list_push(&m->own, v)) {
        gb__nn_error(m, GB_ERR_MEMORY, "out of memory adding variable '%s'",
                     gb_variable_name(v));
        gb_variable_free(v);
        return false;
    }
    if (!m->trainable) gb_variable_set_trainable(v, false);
    return true;
}

static gb_variable *new_initialized_variable(const char *name, gb_initializer init,
                                             gb_dtype dt, int rank, const int64_t *shape,
                                             bool trainable) {
    gb_init_scope s = gb__init_scope_begin();
    gb_tensor *initial = gb_initializer_make(init, dt, rank, shape);
    gb_variable *v = initial ? gb_variable_new(name, initial, trainable) : NULL;
    gb__init_scope_end(s);
    return v;
}

gb_variable *gb_module_add_weight(gb_module *m, const char *name, gb_dtype dt, int rank,
                                  const int64_t *shape, gb_initializer init, bool trainable) {
    if (!m) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_add_weight: NULL module");
        return NULL;
    }
    if (!gb_ok()) return NULL;
    if (!init.seed) init.seed = gb__nn_mix_seed(m->seed, (uint64_t)m->own.n + 1);
    bool push = !m->in_scope;
    if (push) gb_name_scope_push(m->name);
    gb_variable *v = new_initialized_variable(name, init, dt, rank, shape, trainable);
    if (push) gb_name_scope_pop();
    return v && gb_module_add_variable(m, v) ? v : NULL;
}

static bool reaches(gb_module *from, const gb_module *target) {
    if (from == target) return true;
    for (int i = 0; i < from->nsubs; i++)
        if (reaches(from->subs[i], target)) return true;
    return false;
}

bool gb_module_add_submodule(gb_module *m, gb_module *sub) {
    if (!m || !sub) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_add_submodule: NULL %s",
                               m ? "submodule" : "module");
        gb_module_free(sub);
        return false;
    }
    if (reaches(sub, m)) {
        gb__nn_error(m, GB_ERR_VALUE, "cannot add '%s' as a submodule: it contains '%s' (a cycle)",
                     sub->name, m->name);
        gb_module_free(sub);
        return false;
    }
    if (m->nsubs == m->capsubs) {
        int cap = m->capsubs ? 2 * m->capsubs : 4;
        gb_module **grown = realloc(m->subs, (size_t)cap * sizeof *grown);
        if (!grown) {
            gb__nn_error(m, GB_ERR_MEMORY, "out of memory adding submodule '%s'", sub->name);
            gb_module_free(sub);
            return false;
        }
        m->subs = grown;
        m->capsubs = cap;
    }
    m->subs[m->nsubs++] = sub;
    sub->ref_taken = true;
    if (!m->trainable) gb_module_set_trainable(sub, false);
    return true;
}

int gb_module_num_submodules(const gb_module *m) { return m ? m->nsubs : 0; }

gb_module *gb_module_submodule(const gb_module *m, int i) {
    return m && i >= 0 && i < m->nsubs ? m->subs[i] : NULL;
}

gb_module *gb_module_find(gb_module *m, const char *name) {
    if (!m || !name) return NULL;
    for (int i = 0; i < m->nsubs; i++) {
        if (strcmp(m->subs[i]->name, name) == 0) return m->subs[i];
        gb_module *deeper = gb_module_find(m->subs[i], name);
        if (deeper) return deeper;
    }
    return NULL;
}

gb_variable *gb_module_variable(gb_module *m, const char *name) {
    if (!m || !name) return NULL;
    size_t n = strlen(name);
    for (int i = 0; i < m->own.n; i++) {
        /* The full name, or its last components from a '/' on. */
        const char *full = gb_variable_name(m->own.v[i]);
        size_t len = strlen(full);
        if (len >= n && strcmp(full + len - n, name) == 0 && (len == n || full[len - n - 1] == '/'))
            return m->own.v[i];
    }
    return NULL;
}

/* ---- regularizers ------------------------------------------------------------------------ */

bool gb_module_regularize_weight(gb_module *m, gb_variable *v, gb_regularizer r) {
    if (!m || !v) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_regularize_weight: NULL %s",
                               m ? "variable" : "module");
        return false;
    }
    bool owned = false;
    for (int i = 0; i < m->own.n; i++) owned |= m->own.v[i] == v;
    if (!owned) {
        gb__nn_error(m, GB_ERR_VALUE, "'%s' is not one of its weights", gb_variable_name(v));
        return false;
    }
    if (!gb__regularizer_valid(r, m->name)) return false;
    if (!r.l1 && !r.l2) return true;
    if (m->npenalties == m->cappenalties) {
        int cap = m->cappenalties ? 2 * m->cappenalties : 2;
        gb__weight_penalty *grown = realloc(m->penalties, (size_t)cap * sizeof *grown);
        if (!grown) {
            gb__nn_error(m, GB_ERR_MEMORY, "out of memory");
            return false;
        }
        m->penalties = grown;
        m->cappenalties = cap;
    }
    m->penalties[m->npenalties++] = (gb__weight_penalty){v, r};
    return true;
}

bool gb_module_set_activity_regularizer(gb_module *m, gb_regularizer r) {
    if (!m) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_set_activity_regularizer: NULL module");
        return false;
    }
    if (!gb__regularizer_valid(r, m->name)) return false;
    m->activity = r;
    return true;
}

gb_regularizer gb__module_activity(const gb_module *m) { return m->activity; }

const gb__weight_penalty *gb__module_penalties(const gb_module *m, int *n) {
    *n = m->npenalties;
    return m->penalties;
}

/* ---- collecting variables -------------------------------------------------------------- */

enum { COLLECT_ALL = 0, COLLECT_TRAINABLE = 1, COLLECT_NON_TRAINABLE = 2, COUNT_BUFFER = 3 };

static bool listed(const var_list *l, const gb_variable *v) {
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == v) return true;
    return false;
}

/* Own variables first, then submodules depth first; a layer shared twice
 * contributes once. Small models make the linear membership test cheap. */
static bool collect(const gb_module *m, int which, var_list *out) {
    for (int i = 0; i < m->own.n; i++) {
        gb_variable *v = m->own.v[i];
        bool t = gb_variable_trainable(v);
        if (which == COLLECT_TRAINABLE && !t) continue;
        if (which == COLLECT_NON_TRAINABLE && t) continue;
        if (!listed(out, v) && !list_push(out, v)) return false;
    }
    for (int i = 0; i < m->nsubs; i++)
        if (!collect(m->subs[i], which, out)) return false;
    return true;
}

/* Collects into m's buffer `slot`, so the arrays handed out by the three
 * public collectors stay valid while parameters are counted. */
static gb_variable *const *collect_into(gb_module *m, int which, int slot, int *n) {
    if (n) *n = 0;
    if (!m) return NULL;
    var_list *out = &m->collected[slot];
    out->n = 0;
    if (!collect(m, which, out)) {
        gb__nn_error(m, GB_ERR_MEMORY, "out of memory collecting variables");
        out->n = 0;
    }
    if (n) *n = out->n;
    return out->v;
}

gb_variable *const *gb_module_variables(gb_module *m, int *n) {
    return collect_into(m, COLLECT_ALL, COLLECT_ALL, n);
}
gb_variable *const *gb_module_trainable_variables(gb_module *m, int *n) {
    return collect_into(m, COLLECT_TRAINABLE, COLLECT_TRAINABLE, n);
}
gb_variable *const *gb_module_non_trainable_variables(gb_module *m, int *n) {
    return collect_into(m, COLLECT_NON_TRAINABLE, COLLECT_NON_TRAINABLE, n);
}

static int64_t count_params(gb_module *m, int which) {
    int n = 0;
    gb_variable *const *vars = collect_into(m, which, COUNT_BUFFER, &n);
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += gb_variable_size(vars[i]);
    return total;
}

int64_t gb_module_count_params(gb_module *m) { return count_params(m, COLLECT_ALL); }
int64_t gb_module_count_trainable_params(gb_module *m) {
    return count_params(m, COLLECT_TRAINABLE);
}

void gb_module_set_trainable(gb_module *m, bool trainable) {
    if (!m) return;
    m->trainable = trainable;
    for (int i = 0; i < m->own.n; i++) gb_variable_set_trainable(m->own.v[i], trainable);
    for (int i = 0; i < m->nsubs; i++) gb_module_set_trainable(m->subs[i], trainable);
}

/* ---- build and call --------------------------------------------------------------------- */

/* The type's forward pass. A user's layer makes wrapped calls; their
 * lines must not stay the call site for what the caller does next (the
 * next layer of a model, say). */
static int run_call_n(gb_module *m, int nin, gb_tensor *const *in, gb_tensor *mask,
                      gb_tensor **out, bool training) {
    gb_call_site site = gb__call_site();
    int nout;
    if (m->type->call) {
        out[0] = mask && m->type->call_masked ? m->type->call_masked(m, in[0], mask, training)
                                              : m->type->call(m, in[0], training);
        nout = out[0] ? 1 : -1;
    } else if (mask && m->type->call_n_takes_mask && nin < GB_NN_MAX_IO) {
        gb_tensor *args[GB_NN_MAX_IO] = {in[0], mask};
        for (int i = 1; i < nin; i++) args[i + 1] = in[i];
        nout = m->type->call_n(m, nin + 1, args, out, training);
        for (int i = 0; i < nout; i++)
            if (!out[i]) nout = -1;
    } else {
        nout = m->type->call_n(m, nin, in, out, training);
        for (int i = 0; i < nout; i++)
            if (!out[i]) nout = -1;
    }
    gb__call_site_restore(site);
    return gb_ok() ? nout : -1;
}

/* The type's input check and output shape; false after an error. Types
 * without one accept any input. */
static bool check_input(gb_module *m, int rank, const int64_t *in, int *out_rank, int64_t *out) {
    if (m->type->output_shape) return m->type->output_shape(m, rank, in, out_rank, out);
    *out_rank = copy_shape(rank, in, out);
    return true;
}

static bool check_dtype(const gb_module *m, gb_dtype dt) {
    if (!m->built || m->own.n == 0 || dt == m->dtype) return true;
    gb__nn_error(m, GB_ERR_DTYPE,
                 "built for %s inputs, called with %s (cast the input; weights keep their dtype)",
                 gb_dtype_name(m->dtype), gb_dtype_name(dt));
    return false;
}

static void record_output(gb_module *m, int rank, const int64_t *shape) {
    m->out_rank = copy_shape(rank, shape, m->out_shape);
    if (rank > 0) m->out_shape[0] = -1;
    m->out_known = true;
}

_Atomic(gb_module_built_fn) gb__module_built_hook;

/* Tells the layer above that m's weights now exist (io/ restores values
 * that waited for them), in an init scope as the build: eagerly, unseen
 * by tapes, even when the build runs inside a trace. */
static bool announce_built(gb_module *m) {
    gb_module_built_fn hook = atomic_load_explicit(&gb__module_built_hook, memory_order_acquire);
    if (!hook) return true;
    gb_init_scope s = gb__init_scope_begin();
    bool ok = hook(m) && gb_ok();
    gb__init_scope_end(s);
    return ok;
}

/* Builds m (its name scope already pushed) for inputs of this dtype and
 * shape; the batch dim is recorded as unknown. On a built module this is
 * only the input check. Types with an output_shape function know their
 * output shape now; the others (models, custom blocks) learn it from
 * their first call. */
static bool build_here(gb_module *m, gb_dtype dt, int rank, const int64_t *shape) {
    if (rank < 0 || rank > GB_MAX_RANK) {
        gb__nn_error(m, GB_ERR_SHAPE, "input rank %d is outside 0..%d", rank, GB_MAX_RANK);
        return false;
    }
    int64_t in[GB_MAX_RANK], out[GB_MAX_RANK];
    int out_rank = 0;
    /* Checked as given, so errors show the shape the user passed. */
    if (!check_dtype(m, dt) || !check_input(m, rank, shape, &out_rank, out)) return false;
    if (m->built) return true;
    copy_shape(rank, shape, in);
    if (rank > 0) in[0] = -1;
    bool ok = true;
    if (m->type->build) {
        gb_init_scope s = gb__init_scope_begin();
        gb_call_site site = gb__call_site();
        ok = m->type->build(m, dt, rank, in) && gb_ok();
        gb__call_site_restore(site);
        gb__init_scope_end(s);
    }
    if (!ok) return false;
    m->dtype = dt;
    m->in_rank = copy_shape(rank, in, m->in_shape);
    m->built = true;
    if (!announce_built(m)) return false;
    /* A build may settle what the shape check could not know before. */
    if (m->type->output_shape) {
        if (!check_input(m, rank, in, &out_rank, out)) return false;
        record_output(m, out_rank, out);
    }
    return true;
}

/* Learns the output shape of a built module by running it once on zeros
 * (unknown dims as 1), as Keras builds subclassed models: that also builds
 * its layers. In an init scope: a tape around it must neither see it nor
 * expire because of it. */
static bool probe_output(gb_module *m) {
    int64_t dims[GB_MAX_RANK];
    for (int i = 0; i < m->in_rank; i++) dims[i] = m->in_shape[i] < 0 ? 1 : m->in_shape[i];
    gb_init_scope s = gb__init_scope_begin();
    /* Every output is made; the first one's shape is the one recorded (a
     * layer with a second output, as attention scores, included). */
    gb_tensor *x = gb_zeros(m->dtype, m->in_rank, dims), *out[GB_NN_MAX_IO];
    int n = run_call_n(m, 1, &x, NULL, out, false);
    if (n > 0) record_output(m, out[0]->rank, out[0]->shape);
    gb__init_scope_end(s);
    return n > 0;
}

static void enter(gb_module *m, bool *was_in) {
    *was_in = m->in_scope;
    gb_name_scope_push(m->name);
    m->in_scope = true;
}

static void leave(gb_module *m, bool was_in) {
    m->in_scope = was_in;
    gb_name_scope_pop();
}

bool gb_module_build(gb_module *m, gb_dtype dtype, int rank, const int64_t *shape) {
    if (!m) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_module_build: NULL module");
        return false;
    }
    if (!gb_ok()) return false;
    if (rank > 0 && !shape) {
        gb__nn_error(m, GB_ERR_VALUE, "build: shape is NULL for rank %d", rank);
        return false;
    }
    bool was_in;
    enter(m, &was_in);
    bool ok = build_here(m, dtype, rank, shape) && (m->out_known || probe_output(m));
    leave(m, was_in);
    return ok;
}

/* Checks (or, the first time, builds for) the first input. */
static bool ready_for(gb_module *m, gb_tensor *x) {
    int out_rank;
    int64_t out[GB_MAX_RANK];
    return m->built ? check_dtype(m, x->dtype) && check_input(m, x->rank, x->shape, &out_rank, out)
                    : build_here(m, x->dtype, x->rank, x->shape);
}

/* The call of gb_module_call_n and gb_module_call_masked: the input's
 * mask to the type's call, the output's into *out_mask (when not NULL). */
static _Thread_local gb__output_watch output_watch;

gb__output_watch gb__module_watch_outputs(gb__output_watch w) {
    gb__output_watch was = output_watch;
    output_watch = w;
    return was;
}

static int call_masked_n(gb_module *m, int nin, gb_tensor *const *in, gb_tensor *mask,
                         gb_tensor **out, bool training, gb_tensor **out_mask) {
    if (out_mask) *out_mask = NULL;
    if (!m || !in || !out || nin < 1 || nin > GB_NN_MAX_IO) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, m ? m->type->class_name : NULL,
                      "gb_module_call_n: %s", !m ? "the module is NULL"
                                              : !in || !out ? "NULL input or output array"
                                                            : "the number of inputs is outside 1..16");
        return -1;
    }
    for (int i = 0; i < nin; i++) {
        if (in[i]) continue;
        if (gb_ok()) gb__nn_error(m, GB_ERR_VALUE, "input %d is NULL", i);
        return -1;
    }
    if (m->type->call && nin != 1) {
        gb__nn_error(m, GB_ERR_VALUE, "takes one input, called with %d", nin);
        return -1;
    }
    if (!gb_ok()) return -1;
    bool was_in;
    enter(m, &was_in);
    int nout = ready_for(m, in[0]) ? run_call_n(m, nin, in, mask, out, training) : -1;
    if (nout > 0 && !m->out_known) record_output(m, out[0]->rank, out[0]->shape);
    if (nout > 0 && (m->activity.l1 || m->activity.l2) && !gb__add_activity_loss(m->activity, out[0]))
        nout = -1;
    if (nout > 0 && out_mask && m->type->compute_mask) {
        *out_mask = m->type->compute_mask(m, in[0], mask);
        if (!gb_ok()) nout = -1;
    }
    if (nout > 0 && output_watch.fn) output_watch.fn(m, out[0], output_watch.user);
    leave(m, was_in);
    return nout;
}

int gb_module_call_n(gb_module *m, int nin, gb_tensor *const *in, gb_tensor **out,
                     bool training) {
    return call_masked_n(m, nin, in, NULL, out, training, NULL);
}

gb_tensor *gb_module_call_masked(gb_module *m, gb_tensor *x, gb_tensor *mask, bool training,
                                 gb_tensor **out_mask) {
    if (out_mask) *out_mask = NULL;
    if (!m || !x) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, NULL, "gb_module_call_masked: %s is NULL",
                      m ? "the input" : "the module");
        return NULL;
    }
    if (mask && !m->type->call && !m->type->call_n_takes_mask) {
        gb__nn_error(m, GB_ERR_VALUE, "takes several inputs or outputs; only single-input layers "
                     "take a mask");
        return NULL;
    }
    gb_tensor *out[GB_NN_MAX_IO];
    int nout = call_masked_n(m, 1, &x, mask, out, training, out_mask);
    if (nout > 1)
        gb__nn_error(m, GB_ERR_VALUE,
                     "has %d outputs; call it with gb_module_call_n() to get them all", nout);
    return nout == 1 ? out[0] : NULL;
}

gb_tensor *gb_module_call(gb_module *m, gb_tensor *x, bool training) {
    if (!m || !x) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, NULL, "gb_module_call: %s is NULL", m ? "the input" : "the module");
        return NULL;
    }
    gb_tensor *out[GB_NN_MAX_IO];
    int nout = gb_module_call_n(m, 1, &x, out, training);
    if (nout > 1)
        gb__nn_error(m, GB_ERR_VALUE,
                     "has %d outputs; call it with gb_module_call_n() to get them all", nout);
    return nout == 1 ? out[0] : NULL;
}

void gb__module_mark_built(gb_module *m, gb_dtype dt, int in_rank, const int64_t *in,
                           int out_rank, const int64_t *out) {
    m->dtype = dt;
    m->in_rank = copy_shape(in_rank, in, m->in_shape);
    if (in_rank > 0) m->in_shape[0] = -1;
    m->built = true;
    record_output(m, out_rank, out);
}

bool gb__module_rebuild(gb_module *m) {
    if (!m->built || m->type->output_shape) return true;
    m->out_known = false;
    int64_t in[GB_MAX_RANK];
    copy_shape(m->in_rank, m->in_shape, in);
    return gb_module_build(m, m->dtype, m->in_rank, in);
}
