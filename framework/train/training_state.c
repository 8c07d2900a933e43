/* train/training_state.c — a model's weights and its optimizer's state in
 * one checkpoint file, with entries of the caller's beside them: what
 * model files (a config) and BackupAndRestore (fit's position) share.
 *
 * The tensors are tracked as ModelCheckpoint tracks them ("model/...",
 * "optimizer/..."), so any of these files also restores with
 * gb_checkpoint_restore. Restoring is all or nothing: the file must hold
 * exactly the model's and the optimizer's tensors and the caller's own
 * entries, or nothing is assigned. An optimizer that has not stepped yet
 * has no slots; the file's slots are made first (optimizer.build), so a
 * loaded optimizer continues where the saved one stopped.
 */
#include <stdio.h>
#include <string.h>

#include "train/internal.h"

static gb_checkpoint *tracking(gb_module *model, gb_optimizer *opt) {
    gb_checkpoint *ck = gb_checkpoint_new();
    if (ck && gb_checkpoint_track_module(ck, "model", model) &&
        (!opt || gb_checkpoint_track_optimizer(ck, "optimizer", opt)))
        return ck;
    gb_checkpoint_free(ck);
    return NULL;
}

bool gb__state_write(gb_module *model, gb_optimizer *opt, const char *path,
                     const gb__ckpt_entry *extra, int nextra) {
    gb_checkpoint *ck = tracking(model, opt);
    bool ok = ck && gb__checkpoint_write_with(ck, path, extra, nextra);
    gb_checkpoint_free(ck);
    return ok;
}

/* Whether f holds slot variables (optimizer entries beside its iterations). */
static bool has_slots(const gb__ckpt_file *f) {
    for (int i = 0; i < f->count; i++)
        if (strncmp(f->entries[i].path, "optimizer/", 10) == 0 &&
            strcmp(f->entries[i].path, "optimizer/iterations") != 0)
            return true;
    return false;
}

bool gb__state_restore(gb_module *model, gb_optimizer *opt, const gb__ckpt_file *f,
                       const char *const *own, int nown) {
    if (opt && has_slots(f)) {
        int n = 0;
        gb_variable *const *vars = gb_module_trainable_variables(model, &n);
        if (!gb_optimizer_build(opt, vars, n)) return false;
    }
    gb_checkpoint *ck = tracking(model, opt);
    bool ok = ck && gb__checkpoint_restore_exact(ck, f, own, nown);
    gb_checkpoint_free(ck);
    return ok;
}

const void *gb__state_entry(const gb__ckpt_file *f, const char *path, gb_dtype dt, int rank,
                            size_t *nbytes) {
    const gb__ckpt_entry *e = NULL;
    for (int i = 0; i < f->count && !e; i++)
        if (strcmp(f->entries[i].path, path) == 0) e = &f->entries[i];
    if (!e) {
        gb__error(GB_ERR_IO, NULL, "%s: no entry '%s'", f->path, path);
        return NULL;
    }
    if (e->dtype != dt || e->rank != rank) {
        gb__error(GB_ERR_IO, NULL, "%s: entry '%s' is %s of rank %d where %s of rank %d belongs",
                  f->path, path, gb_dtype_name(e->dtype), e->rank, gb_dtype_name(dt), rank);
        return NULL;
    }
    if (nbytes) *nbytes = (size_t)e->nbytes;
    return gb__ckpt_data(f, e);
}
