/* gb_io.h — checkpoints: a model's weights, an optimizer's state and any
 * variable, saved to one file by path and restored by path
 * (tf.train.Checkpoint), and a manager that numbers them in a directory
 * and keeps the last few (tf.train.CheckpointManager).
 *
 *   gb_checkpoint *ck = gb_checkpoint_new();
 *   gb_checkpoint_track_module(ck, "model", model);
 *   gb_checkpoint_track_optimizer(ck, "optimizer", opt);
 *   gb_checkpoint_write(ck, "run/ckpt-3");          // atomic: old or new, never torn
 *   ...
 *   gb_restore_status st;
 *   if (gb_checkpoint_restore(ck, "run/ckpt-3", &st) && gb_restore_assert_consumed(&st)) ...
 *
 *   gb_checkpoint_manager *mgr = gb_checkpoint_manager_new(ck, "run",
 *       &(gb_checkpoint_manager_options){.max_to_keep = 3});
 *   if (!gb_checkpoint_manager_restore_or_initialize(mgr, &st)) ...   // an error: stop
 *   for (...) { ...; gb_checkpoint_manager_save(mgr, step); }          // run/ckpt-<step>
 *
 * Paths: "<object>/<variable name>" ("model/cnn/dense/kernel"), an
 * optimizer's slots under its object ("optimizer/Adam/cnn/dense/kernel/m")
 * with "optimizer/iterations", a tracked variable under its own name, a
 * module's assets (what it learned outside variables: a vocabulary) at its
 * place in the tree ("model/topics/vectorize/vocabulary"). The
 * file format (header, tensors, an index with a CRC-32 per tensor) is
 * described in io/checkpoint_file.c, the manager's state file
 * ("<dir>/checkpoint", text) in io/checkpoint_state.c; gb_checkpoint_list
 * and `glassbox checkpoint ls` list a file's tensors.
 */
#ifndef GB_IO_H
#define GB_IO_H

#include "gb_nn.h"
#include "gb_optim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gb_checkpoint gb_checkpoint;

gb_checkpoint *gb_checkpoint_new(void);
void gb_checkpoint_free(gb_checkpoint *c);

/* The objects a checkpoint saves and restores, each under a name; they
 * stay the caller's and must outlive the checkpoint's use. An optimizer
 * saves the slots it has (gb_optimizer_build makes them before a first
 * step, so a restore can fill them) and its iteration count. */
bool gb_checkpoint_track_module(gb_checkpoint *c, const char *name, gb_module *m);
bool gb_checkpoint_track_optimizer(gb_checkpoint *c, const char *name, gb_optimizer *o);
bool gb_checkpoint_track_variable(gb_checkpoint *c, const char *name, gb_variable *v);

/* Every tracked tensor to path, atomically. */
bool gb_checkpoint_write(gb_checkpoint *c, const char *path);

/* What a restore matched: tensors restored, tracked ones the file lacks
 * (missing), the file's that nothing tracked claims (unexpected), the
 * file's that wait for layers not built yet (pending), the first of each
 * by path. */
typedef struct gb_restore_status {
    char file[256];
    int restored, missing, unexpected, pending;
    char first_missing[256], first_unexpected[256], first_pending[256];
} gb_restore_status;

/* Restores every tracked tensor the file has. A shape or dtype mismatch
 * (both shown), a corrupt tensor (its CRC) or a damaged file is an error
 * naming the tensor, and then nothing is changed. Missing and unexpected
 * tensors are counted in *st, not errors (TensorFlow's expect_partial);
 * gb_restore_assert_consumed makes them one.
 *
 * Delayed restoration: the file's values for a tracked module whose
 * layers are not built yet (a Sequential model never called) are kept in
 * the checkpoint, counted as pending, and each is assigned when a build
 * (the model's first call, gb_module_build) makes its weight, checked
 * then: a dtype or shape mismatch fails that build with an error naming
 * the path. Keep the checkpoint until then (it holds a reference to the
 * module meanwhile); freeing it, or a new restore on it, drops what still
 * waits. Of two checkpoints restored into one unbuilt module, the later
 * restore's values win. Only modules wait: an optimizer's
 * slots are restored when they exist (gb_optimizer_build makes them),
 * and file values for slots not made yet count as unexpected. */
bool gb_checkpoint_restore(gb_checkpoint *c, const char *path, gb_restore_status *st);
/* The last restore's status as of now: pending values assigned by builds
 * since count as restored; a weight a build made that the file lacks as
 * missing; a pending value no weight claimed once the module is fully
 * built as unexpected. */
bool gb_checkpoint_restore_status(gb_checkpoint *c, gb_restore_status *st);
/* assert_consumed: false, with an error naming the first missing,
 * unexpected and pending tensors and the counts, unless the file and the
 * tracked objects matched exactly. Pending values fail it: after a
 * restore into a model not built yet, build it, refresh the status with
 * gb_checkpoint_restore_status, then assert. */
bool gb_restore_assert_consumed(const gb_restore_status *st);

/* One tensor of a checkpoint file, as listed. */
typedef struct gb_checkpoint_entry {
    char path[256];
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
    uint64_t bytes;
    bool intact;          /* its bytes match their CRC */
} gb_checkpoint_entry;

/* The tensors of the checkpoint at path, in file order, into *entries
 * (malloc'd; free() it); returns their count, or -1 with an error naming
 * the file when it is not a readable checkpoint. */
int gb_checkpoint_list(const char *path, gb_checkpoint_entry **entries);

/* ---- directories ----------------------------------------------------------------------- */

/* Creates dir and the parents it lacks, as `mkdir -p` (an existing
 * directory is fine); false with a GB_ERR_IO error naming the path that
 * could not be made. The CheckpointManager and SavedModel saves use it. */
bool gb_make_dirs(const char *dir);

/* ---- CheckpointManager ------------------------------------------------------------------- */

typedef struct gb_checkpoint_manager gb_checkpoint_manager;

typedef struct gb_checkpoint_manager_options {
    const char *prefix;          /* files "<prefix>-<step>"; NULL: "ckpt" */
    int max_to_keep;             /* checkpoints kept (the newest); 0: all (TensorFlow's None) */
    /* Of the checkpoints rotation removes, keep one for good every this
     * many hours of wall time; 0: off. */
    double keep_checkpoint_every_n_hours;
    /* The wall clock in seconds since the epoch; NULL: the system's
     * (tests pass their own to move time). */
    double (*now)(void *user);
    void *now_user;
} gb_checkpoint_manager_options;

/* A manager of c's checkpoints in directory (made at the first save if
 * missing). An existing state file there ("checkpoint") is read back: a
 * damaged one is an error naming the file and line; checkpoints it lists
 * that are gone are dropped and reported (gb_checkpoint_manager_missing).
 * Temporary files of saves killed mid-write are removed. One manager per
 * directory at a time. NULL opts: the defaults above. */
gb_checkpoint_manager *gb_checkpoint_manager_new(gb_checkpoint *c, const char *directory,
                                                 const gb_checkpoint_manager_options *opts);
void gb_checkpoint_manager_free(gb_checkpoint_manager *m);

/* Writes c to "<directory>/<prefix>-<step>" (atomically; saving a step
 * again replaces it), rewrites the state file (atomically), then deletes
 * what rotation let go. Returns the path (the manager's, valid until the
 * next save), or NULL after an error. */
const char *gb_checkpoint_manager_save(gb_checkpoint_manager *m, int64_t step);
/* The newest checkpoint's path, or NULL when there is none. */
const char *gb_checkpoint_manager_latest(const gb_checkpoint_manager *m);
/* The checkpoints kept, oldest first (those kept for good by
 * keep_checkpoint_every_n_hours too): up to cap paths into paths (may be
 * NULL); returns how many there are. */
int gb_checkpoint_manager_checkpoints(const gb_checkpoint_manager *m, const char **paths, int cap);
/* The checkpoints the state file listed that were not on disk when the
 * manager opened the directory, in the same way. */
int gb_checkpoint_manager_missing(const gb_checkpoint_manager *m, const char **paths, int cap);

/* What restore_or_initialize did; 0 is a failure, so `if (!r)` catches it. */
typedef enum gb_restore_or_init {
    GB_CKPT_FAILED = 0,      /* an error is set: nothing was initialized over it */
    GB_CKPT_RESTORED,        /* the latest checkpoint was restored; *st says how well */
    GB_CKPT_INITIALIZED,     /* no checkpoint yet: the objects keep their values */
} gb_restore_or_init;

/* Restores the latest checkpoint into the manager's checkpoint (delayed
 * restoration included), or says there is none. */
gb_restore_or_init gb_checkpoint_manager_restore_or_initialize(gb_checkpoint_manager *m,
                                                               gb_restore_status *st);

#if !defined(GB_BUILDING_LIBRARY)
#define gb_checkpoint_list(...) GB_AT(gb_checkpoint_list, __VA_ARGS__)
#define gb_make_dirs(...) GB_AT(gb_make_dirs, __VA_ARGS__)
#define gb_checkpoint_new(...) GB_AT(gb_checkpoint_new, __VA_ARGS__)
#define gb_checkpoint_track_module(...) GB_AT(gb_checkpoint_track_module, __VA_ARGS__)
#define gb_checkpoint_track_optimizer(...) GB_AT(gb_checkpoint_track_optimizer, __VA_ARGS__)
#define gb_checkpoint_track_variable(...) GB_AT(gb_checkpoint_track_variable, __VA_ARGS__)
#define gb_checkpoint_write(...) GB_AT(gb_checkpoint_write, __VA_ARGS__)
#define gb_checkpoint_restore(...) GB_AT(gb_checkpoint_restore, __VA_ARGS__)
#define gb_checkpoint_restore_status(...) GB_AT(gb_checkpoint_restore_status, __VA_ARGS__)
#define gb_restore_assert_consumed(...) GB_AT(gb_restore_assert_consumed, __VA_ARGS__)
#define gb_checkpoint_manager_new(...) GB_AT(gb_checkpoint_manager_new, __VA_ARGS__)
#define gb_checkpoint_manager_save(...) GB_AT(gb_checkpoint_manager_save, __VA_ARGS__)
#define gb_checkpoint_manager_restore_or_initialize(...) \
    GB_AT(gb_checkpoint_manager_restore_or_initialize, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
