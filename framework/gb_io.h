/* gb_io.h — checkpoints: a model's weights, an optimizer's state and any
 * variable, saved to one file by path and restored by path
 * (tf.train.Checkpoint).
 *
 *   gb_checkpoint *ck = gb_checkpoint_new();
 *   gb_checkpoint_track_module(ck, "model", model);
 *   gb_checkpoint_track_optimizer(ck, "optimizer", opt);
 *   gb_checkpoint_write(ck, "run/ckpt-3");          // atomic: old or new, never torn
 *   ...
 *   gb_restore_status st;
 *   if (gb_checkpoint_restore(ck, "run/ckpt-3", &st) && gb_restore_assert_consumed(&st)) ...
 *
 * Paths: "<object>/<variable name>" ("model/cnn/dense/kernel"), an
 * optimizer's slots under its object ("optimizer/Adam/cnn/dense/kernel/m")
 * with "optimizer/iterations", a tracked variable under its own name. The
 * file format (header, tensors, an index with a CRC-32 per tensor) is
 * described in io/checkpoint_file.c; `glassbox checkpoint ls` lists one.
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
 * the path. Keep the checkpoint until then; freeing it, or a new
 * restore, drops what still waits. */
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

#if !defined(GB_BUILDING_LIBRARY)
#define gb_checkpoint_new(...) GB_AT(gb_checkpoint_new, __VA_ARGS__)
#define gb_checkpoint_track_module(...) GB_AT(gb_checkpoint_track_module, __VA_ARGS__)
#define gb_checkpoint_track_optimizer(...) GB_AT(gb_checkpoint_track_optimizer, __VA_ARGS__)
#define gb_checkpoint_track_variable(...) GB_AT(gb_checkpoint_track_variable, __VA_ARGS__)
#define gb_checkpoint_write(...) GB_AT(gb_checkpoint_write, __VA_ARGS__)
#define gb_checkpoint_restore(...) GB_AT(gb_checkpoint_restore, __VA_ARGS__)
#define gb_checkpoint_restore_status(...) GB_AT(gb_checkpoint_restore_status, __VA_ARGS__)
#define gb_restore_assert_consumed(...) GB_AT(gb_restore_assert_consumed, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
