/* io/checkpoint.c — tf.train.Checkpoint: the objects a checkpoint tracks,
 * the path of each of their tensors, and writing and restoring them.
 *
 * The paths are gathered fresh at each write and restore (a model built
 * or an optimizer stepped since then has more variables). A restore
 * checks everything first — each tracked tensor's entry, its dtype and
 * shape, its data CRC — and assigns only when all of it holds, so a
 * mismatched or damaged file changes nothing. Values for the weights of
 * a tracked module not built yet wait in the checkpoint until its build
 * makes them (checkpoint_delayed.c).
 *
 * A module's assets (state learned outside variables: a TextVectorization's
 * vocabulary) are saved beside its variables, at the path of its place in
 * the module tree (<object>/<module>/.../<asset>). The file holds numbers
 * only, so a string asset is a uint8 entry: its element count (u64,
 * little-endian), then gb__strings_encode's bytes. A restore decodes every
 * asset while it checks, and installs them before it assigns a variable.
 */
#include <stdio.h>
#include <stdlib.h>

#include "io/internal.h"

enum { MAX_OBJECTS = 32, NAME_BYTES = 64 };

typedef enum object_kind { OBJ_MODULE, OBJ_OPTIMIZER, OBJ_VARIABLE } object_kind;

typedef struct tracked {
    object_kind kind;
    char name[NAME_BYTES];
    void *obj;
} tracked;

struct gb_checkpoint {
    tracked obj[MAX_OBJECTS];
    int n;
    gb__delayed *last;   /* the last restore: its status, values waiting for builds */
};

/* One tensor a tracked object contributes: a variable, the optimizer's
 * iteration count (var NULL, opt set), or asset `asset` of module `mod`
 * (spec: its dtype and rank; value: what a restore decoded). */
typedef struct item {
    char path[256];
    gb_variable *var;
    gb_optimizer *opt;
    gb_module *mod;
    int asset;
    gb_tensor_spec spec;
    gb_tensor *value;
} item;

typedef struct items {
    item *v;
    int n, cap;
} items;

gb_checkpoint *gb_checkpoint_new(void) {
    gb_checkpoint *c = calloc(1, sizeof *c);
    if (!c) gb__error(GB_ERR_MEMORY, NULL, "gb_checkpoint_new: out of memory");
    return c;
}

void gb_checkpoint_free(gb_checkpoint *c) {
    if (!c) return;
    gb__delayed_free(c->last);
    free(c);
}

static bool track(gb_checkpoint *c, object_kind kind, const char *name, void *obj) {
    const char *why = !c || !obj ? "NULL checkpoint or object"
                      : !name || !name[0] || strlen(name) >= NAME_BYTES || strchr(name, '/')
                          ? "the name must be 1 to 63 characters without '/'"
                      : c->n == MAX_OBJECTS ? "at most 32 objects"
                                            : NULL;
    for (int i = 0; !why && i < c->n; i++)
        if (strcmp(c->obj[i].name, name) == 0) why = "an object of that name is tracked already";
    if (why) {
        gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_track: %s ('%s')", why, name ? name : "");
        return false;
    }
    c->obj[c->n].kind = kind;
    snprintf(c->obj[c->n].name, NAME_BYTES, "%s", name);
    c->obj[c->n++].obj = obj;
    return true;
}

bool gb_checkpoint_track_module(gb_checkpoint *c, const char *name, gb_module *m) {
    return track(c, OBJ_MODULE, name, m);
}
bool gb_checkpoint_track_optimizer(gb_checkpoint *c, const char *name, gb_optimizer *o) {
    return track(c, OBJ_OPTIMIZER, name, o);
}
bool gb_checkpoint_track_variable(gb_checkpoint *c, const char *name, gb_variable *v) {
    return track(c, OBJ_VARIABLE, name, v);
}

/* ---- the paths ------------------------------------------------------------------------------- */

static bool push(items *it, const char *prefix, const char *name, gb_variable *v, gb_optimizer *o) {
    if (it->n == it->cap) {
        int cap = it->cap ? 2 * it->cap : 32;
        item *grown = realloc(it->v, (size_t)cap * sizeof *grown);
        if (!grown) {
            gb__error(GB_ERR_MEMORY, NULL, "checkpoint: out of memory");
            return false;
        }
        it->v = grown;
        it->cap = cap;
    }
    item *x = &it->v[it->n];
    *x = (item){.var = v, .opt = o};
    int len = name ? snprintf(x->path, sizeof x->path, "%s/%s", prefix, name)
                   : snprintf(x->path, sizeof x->path, "%s", prefix);
    if (len >= (int)sizeof x->path) {
        gb__error(GB_ERR_VALUE, NULL, "checkpoint: the path of '%s' is longer than 255 bytes",
                  name ? name : prefix);
        return false;
    }
    for (int i = 0; i < it->n; i++)
        if (strcmp(it->v[i].path, x->path) == 0) {
            gb__error(GB_ERR_VALUE, NULL, "checkpoint: two tensors would be saved as '%s'", x->path);
            return false;
        }
    it->n++;
    return true;
}

/* The assets of m and its submodules, m's path under prefix. */
static bool gather_assets(items *it, const char *prefix, gb_module *m) {
    char path[256];
    if (snprintf(path, sizeof path, "%s/%s", prefix, gb_module_name(m)) >= (int)sizeof path) {
        gb__error(GB_ERR_VALUE, NULL, "checkpoint: the path of '%s' is longer than 255 bytes",
                  gb_module_name(m));
        return false;
    }
    const gb_module_type *t = gb_module_get_type(m);
    gb_tensor_spec specs[GB_MODULE_MAX_ASSETS];
    int n = t->assets ? t->assets(m, specs) : 0;
    for (int i = 0; i < n; i++) {
        if (!push(it, path, specs[i].name, NULL, NULL)) return false;
        item *x = &it->v[it->n - 1];
        x->mod = m, x->asset = i, x->spec = specs[i];
    }
    for (int i = 0; i < gb_module_num_submodules(m); i++)
        if (!gather_assets(it, path, gb_module_submodule(m, i))) return false;
    return true;
}

static bool gather_object(const tracked *t, items *it) {
    if (t->kind == OBJ_VARIABLE) return push(it, t->name, NULL, t->obj, NULL);
    if (t->kind == OBJ_MODULE) {
        int n = 0;
        gb_variable *const *vars = gb_module_variables(t->obj, &n);
        for (int i = 0; i < n; i++)
            if (!push(it, t->name, gb_variable_name(vars[i]), vars[i], NULL)) return false;
        return gather_assets(it, t->name, t->obj);
    }
    int n = gb_optimizer_slot_variables(t->obj, NULL, 0);
    gb_variable **slots = calloc(n > 0 ? (size_t)n : 1, sizeof *slots);
    if (!slots) {
        gb__error(GB_ERR_MEMORY, NULL, "checkpoint: out of memory");
        return false;
    }
    gb_optimizer_slot_variables(t->obj, slots, n);
    bool ok = push(it, t->name, "iterations", NULL, t->obj);
    for (int i = 0; ok && i < n; i++) ok = push(it, t->name, gb_variable_name(slots[i]), slots[i], NULL);
    free(slots);
    return ok;
}

static bool gather(const gb_checkpoint *c, items *it) {
    for (int i = 0; i < c->n; i++)
        if (!gather_object(&c->obj[i], it)) return false;
    return true;
}

/* ---- write ------------------------------------------------------------------------------------ */

/* Asset x's entry (data in the current scope); false with no entry when
 * the module has learned nothing yet, or after an error. */
static bool asset_entry(const item *x, gb__ckpt_entry *e) {
    gb_tensor *t = gb_module_get_type(x->mod)->asset_value(x->mod, x->asset);
    if (!t) return false;
    if (gb_tensor_dtype(t) != GB_STRING) {
        e->dtype = gb_tensor_dtype(t);
        e->rank = gb_rank(t);
        memcpy(e->dims, gb_shape(t), (size_t)e->rank * sizeof e->dims[0]);
        e->data = gb_data(t);
        e->nbytes = gb_nbytes(t);
        return true;
    }
    unsigned char *blob;
    uint64_t nbytes, count = (uint64_t)gb_size(t);
    if (!gb__strings_encode(gb_data_strings(t), gb_size(t), &blob, &nbytes)) return false;
    unsigned char *p = malloc((size_t)nbytes + 8);
    gb_tensor *u = NULL;
    if (p) {
        for (int k = 0; k < 8; k++) p[k] = (unsigned char)(count >> (8 * k));
        memcpy(p + 8, blob, nbytes);
        u = gb_tensor_from(GB_U8, p, 1, (int64_t[]){(int64_t)nbytes + 8});
    } else {
        gb__error(GB_ERR_MEMORY, NULL, "checkpoint: out of memory for '%s'", e->path);
    }
    if (u) {
        e->dtype = GB_U8;
        e->rank = 1;
        e->dims[0] = (int64_t)nbytes + 8;
        e->data = gb_data(u);
        e->nbytes = nbytes + 8;
    }
    free(p);
    free(blob);
    return u != NULL;
}

/* The entry of item x, its data in the current scope; false when it has
 * none (an asset not learned yet). */
static bool entry_of(const item *x, int64_t *iterations, gb__ckpt_entry *e) {
    *e = (gb__ckpt_entry){0};
    snprintf(e->path, sizeof e->path, "%s", x->path);
    if (x->mod) return asset_entry(x, e);
    if (!x->var) {
        *iterations = gb_optimizer_iterations(x->opt);
        e->dtype = GB_I64;
        e->data = iterations;
        e->nbytes = sizeof *iterations;
        return true;
    }
    gb_tensor *t = gb_variable_value(x->var);
    e->dtype = gb_tensor_dtype(t);
    e->rank = gb_rank(t);
    memcpy(e->dims, gb_shape(t), (size_t)e->rank * sizeof e->dims[0]);
    e->data = gb_data(t);
    e->nbytes = (uint64_t)gb_size(t) * gb_dtype_size(e->dtype);
    return true;
}

bool gb_checkpoint_write(gb_checkpoint *c, const char *path) {
    return gb__checkpoint_write_with(c, path, NULL, 0);
}

/* An extra entry must not take a tracked tensor's path. */
static bool extras_fit(const items *it, const gb__ckpt_entry *extra, int nextra) {
    for (int k = 0; k < nextra; k++)
        for (int i = 0; i < it->n; i++)
            if (strcmp(it->v[i].path, extra[k].path) == 0) {
                gb__error(GB_ERR_VALUE, NULL, "checkpoint: two tensors would be saved as '%s'",
                          extra[k].path);
                return false;
            }
    return true;
}

bool gb__checkpoint_write_with(gb_checkpoint *c, const char *path, const gb__ckpt_entry *extra,
                               int nextra) {
    if (!gb_ok()) return false;
    if (!c || !path || nextra < 0 || (nextra && !extra)) {
        gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_write: NULL %s",
                  !c ? "checkpoint" : path ? "extra entries" : "path");
        return false;
    }
    items it = {0};
    gb__ckpt_entry *e = NULL;
    int64_t *iters = NULL;
    gb_scope_begin();
    bool ok = gather(c, &it) && extras_fit(&it, extra, nextra);
    if (ok) {
        e = calloc((size_t)(it.n + nextra) + 1, sizeof *e);
        iters = calloc((size_t)it.n + 1, sizeof *iters);
        if (!e || !iters) ok = false, gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", path);
    }
    int n = 0;
    for (int i = 0; ok && i < it.n; i++) n += entry_of(&it.v[i], &iters[i], &e[n]);
    for (int k = 0; ok && k < nextra; k++) e[n + k] = extra[k];
    ok = ok && gb_ok() && gb__ckpt_write(path, e, n + nextra);
    gb_scope_end();
    free(e), free(iters), free(it.v);
    return ok;
}

/* ---- restore ------------------------------------------------------------------------------------ */

static const gb__ckpt_entry *find(const gb__ckpt_file *f, const char *path) {
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->entries[i].path, path) == 0) return &f->entries[i];
    return NULL;
}

/* The tracked tensor x against its entry e: dtype and shape. */
static bool matches(const gb__ckpt_file *f, const item *x, const gb__ckpt_entry *e) {
    if (x->mod) {
        bool str = x->spec.dtype == GB_STRING;
        gb_dtype dt = str ? GB_U8 : x->spec.dtype;
        int64_t dims[GB_MAX_RANK];
        for (int d = 0; d < x->spec.rank; d++) /* any size where the spec says -1 */
            dims[d] = x->spec.shape[d] < 0 && d < e->rank ? e->dims[d] : x->spec.shape[d];
        return gb__ckpt_fits(f->path, e, dt, str ? 1 : x->spec.rank, dims,
                             str ? "(a string asset: its count, then its strings' bytes)" : NULL);
    }
    if (!x->var) return gb__ckpt_fits(f->path, e, GB_I64, 0, NULL, NULL);
    return gb__ckpt_fits(f->path, e, gb_variable_dtype(x->var), gb_variable_rank(x->var),
                         gb_variable_shape(x->var), NULL);
}

/* Every tracked tensor with a module not built yet: the restore waits in it. */
static bool watch_unbuilt(const gb_checkpoint *c, gb__delayed *d) {
    for (int i = 0; i < c->n; i++)
        if (c->obj[i].kind == OBJ_MODULE && !gb__module_tree_built(c->obj[i].obj) &&
            !gb__delayed_watch(d, c->obj[i].name, c->obj[i].obj))
            return false;
    return true;
}

static bool is_own(const char *path, const char *const *own, int nown) {
    for (int k = 0; k < nown; k++)
        if (strcmp(own[k], path) == 0) return true;
    return false;
}

/* Asset x's entry e (its data checked) as a tensor in the current scope. */
static gb_tensor *decode_asset(const item *x, const gb__ckpt_entry *e, const unsigned char *data) {
    if (x->spec.dtype != GB_STRING) return gb_tensor_from(e->dtype, data, e->rank, e->dims);
    uint64_t count = 0;
    if (e->nbytes >= 8)
        for (int k = 0; k < 8; k++) count |= (uint64_t)data[k] << (8 * k);
    if (e->nbytes < 8 || count > (e->nbytes - 8) / 8) {
        gb__error(GB_ERR_IO, NULL, "%s: '%s': %llu bytes cannot hold its string count and %llu "
                  "strings", "checkpoint", e->path, (unsigned long long)e->nbytes,
                  (unsigned long long)count);
        return NULL;
    }
    int64_t n = (int64_t)count;
    return gb__strings_decode(data + 8, e->nbytes - 8, 1, &n, e->path);
}

/* Whether x is an asset its module holds already (a vocabulary from the
 * config of a model file): one the file lacks is then no missing tensor,
 * so files written before assets were saved still restore exactly. */
static bool learned(const item *x) {
    return x->mod && gb_module_get_type(x->mod)->asset_value(x->mod, x->asset) != NULL;
}

/* Every tracked tensor's data in the file, checked (dtype, shape, CRC),
 * into data[] (NULL where the file lacks it: counted as missing). */
static bool check_items(const gb__ckpt_file *f, const items *it, const void **data,
                        gb_restore_status *st) {
    for (int i = 0; i < it->n; i++) {
        const gb__ckpt_entry *e = find(f, it->v[i].path);
        if (!e && learned(&it->v[i])) continue; /* kept as it is (a file written before assets) */
        if (!e) {
            gb__status_count(&st->missing, st->first_missing, sizeof st->first_missing,
                             it->v[i].path);
            continue;
        }
        if (!matches(f, &it->v[i], e) || !(data[i] = gb__ckpt_data(f, e))) return false;
        if (it->v[i].mod && !(it->v[i].value = decode_asset(&it->v[i], e, data[i]))) return false;
    }
    return true;
}

/* The file's tensors no tracked tensor claimed: the caller's own entries
 * (left alone), kept for a module not built yet (their data checked now;
 * d NULL: none waits), or unexpected. */
static bool sort_unclaimed(const gb__ckpt_file *f, const items *it, gb__delayed *d,
                           const char *const *own, int nown, gb_restore_status *st) {
    for (int i = 0; i < f->count; i++) {
        const gb__ckpt_entry *e = &f->entries[i];
        bool claimed = is_own(e->path, own, nown);
        for (int k = 0; k < it->n && !claimed; k++) claimed = strcmp(it->v[k].path, e->path) == 0;
        if (claimed) continue;
        if (!d || !gb__delayed_covers(d, e->path)) {
            gb__status_count(&st->unexpected, st->first_unexpected, sizeof st->first_unexpected,
                             e->path);
            continue;
        }
        const void *data = gb__ckpt_data(f, e);
        if (!data || !gb__delayed_keep(d, e, data)) return false;
    }
    return true;
}

/* Assigns the checked data to the tracked tensors. */
/* Each module's assets, all at once (NULL where the file has none). */
static bool install_assets(const items *it, gb_restore_status *st) {
    for (int i = 0; i < it->n; i++) {
        const item *x = &it->v[i];
        if (!x->mod || x->asset != 0) continue; /* a module's first asset starts its run */
        gb_tensor *values[GB_MODULE_MAX_ASSETS] = {0};
        int n = 0;
        for (int k = i; k < it->n && it->v[k].mod == x->mod && it->v[k].asset == n; k++, n++)
            values[n] = it->v[k].value, st->restored += values[n] != NULL;
        if (!gb_module_get_type(x->mod)->set_assets(x->mod, values)) return false;
    }
    return true;
}

static bool assign_items(const gb__ckpt_file *f, const items *it, const void **data,
                         gb_restore_status *st) {
    bool ok = install_assets(it, st);
    for (int i = 0; ok && i < it->n; i++) {
        if (!data[i] || it->v[i].mod) continue;
        const gb__ckpt_entry *e = find(f, it->v[i].path);
        if (it->v[i].var)
            ok = gb_variable_assign(it->v[i].var, gb_tensor_from(e->dtype, data[i], e->rank, e->dims));
        else
            ok = gb_optimizer_set_iterations(it->v[i].opt, *(const int64_t *)data[i]);
        st->restored += ok;
    }
    return ok && gb_ok();
}

/* Checks everything (tracked tensors, values kept for later), then
 * assigns: a failure before the assignments changes nothing. exact: the
 * file and the tracked tensors must match (but for the caller's own
 * entries) before anything is assigned. */
static bool restore_from(const gb_checkpoint *c, const gb__ckpt_file *f, gb__delayed *d,
                         const char *const *own, int nown, bool exact, gb_restore_status *st) {
    items it = {0};
    const void **data = NULL;
    bool ok = gather(c, &it) && (!d || watch_unbuilt(c, d));
    if (ok && !(data = calloc((size_t)it.n + 1, sizeof *data))) {
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", f->path);
        ok = false;
    }
    ok = ok && check_items(f, &it, data, st) && sort_unclaimed(f, &it, d, own, nown, st) &&
         (!exact || gb_restore_assert_consumed(st)) && assign_items(f, &it, data, st);
    free(data);
    free(it.v);
    return ok;
}

bool gb_checkpoint_restore(gb_checkpoint *c, const char *path, gb_restore_status *st) {
    if (!gb_ok()) return false;
    if (!c || !path || !st) {
        gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_restore: NULL %s",
                  !c ? "checkpoint" : !path ? "path" : "status");
        return false;
    }
    *st = (gb_restore_status){0};
    snprintf(st->file, sizeof st->file, "%s", path);
    gb__ckpt_file f;
    if (!gb__ckpt_read(path, &f)) return false;
    gb__delayed *d = gb__delayed_new(path);
    gb_scope_begin();
    bool ok = d && restore_from(c, &f, d, NULL, 0, false, st);
    gb_scope_end();
    gb__ckpt_close(&f);
    if (!ok) {
        gb__delayed_free(d);
        return false;
    }
    gb__delayed_start(d, st);
    gb__delayed_free(c->last);   /* a new restore replaces what an older one waited for */
    c->last = d;
    return true;
}

bool gb_checkpoint_restore_status(gb_checkpoint *c, gb_restore_status *st) {
    if (!gb_ok()) return false;
    if (!c || !st || !c->last) {
        gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_restore_status: %s",
                  !c || !st ? "NULL checkpoint or status" : "the checkpoint has not been restored");
        return false;
    }
    gb__delayed_status(c->last, st);
    return true;
}

bool gb__checkpoint_restore_exact(gb_checkpoint *c, const gb__ckpt_file *f, const char *const *own,
                                  int nown) {
    if (!gb_ok()) return false;
    gb_restore_status st = {0};
    snprintf(st.file, sizeof st.file, "%.255s", f->path);
    gb_scope_begin();
    bool ok = restore_from(c, f, NULL, own, nown, true, &st);
    gb_scope_end();
    return ok;
}

bool gb_restore_assert_consumed(const gb_restore_status *st) {
    if (!gb_ok()) return false;
    if (!st) {
        gb__error(GB_ERR_VALUE, NULL, "gb_restore_assert_consumed: NULL status");
        return false;
    }
    if (!st->missing && !st->unexpected && !st->pending) return true;
    char missing[320] = "", unexpected[320] = "", pending[400] = "";
    if (st->missing)
        snprintf(missing, sizeof missing, "%d tracked tensor%s not in the file (first: '%s')",
                 st->missing, st->missing == 1 ? "" : "s", st->first_missing);
    if (st->unexpected)
        snprintf(unexpected, sizeof unexpected, "%s%d tensor%s of the file unused (first: '%s')",
                 st->missing ? "; " : "", st->unexpected, st->unexpected == 1 ? "" : "s",
                 st->first_unexpected);
    if (st->pending)
        snprintf(pending, sizeof pending,
                 "%s%d tensor%s of the file waiting for layers not built yet (first: '%s'; build "
                 "them, then check gb_checkpoint_restore_status)",
                 st->missing || st->unexpected ? "; " : "", st->pending,
                 st->pending == 1 ? "" : "s", st->first_pending);
    gb__error(GB_ERR_VALUE, NULL, "%s: restore did not match: %s%s%s", st->file, missing,
              unexpected, pending);
    return false;
}
