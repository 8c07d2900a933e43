/* gb_autodiff.h — variables and GradientTape.
 *
 * Semantics follow tf.GradientTape:
 *   gb_tape *tape = gb_tape_begin();          // `with tf.GradientTape() as tape:`
 *   gb_tape_watch(tape, x);
 *   gb_tensor *y = gb_mul(x, x);
 *   gb_tape_end(tape);                        // end of the `with` block
 *   gb_tensor *dy_dx = gb_tape_gradient(tape, y, x);
 *
 * - trainable variables read while a tape records are watched automatically
 *   (unless the tape was begun with watch_accessed_variables = false);
 * - a non-persistent tape allows one gradient call; a second is an error;
 * - several or non-scalar targets give the gradient of their sum;
 * - an unconnected source gives NULL (GB_UNCONNECTED_NONE) or zeros;
 * - gradient functions run through the ordinary ops, so an outer tape
 *   records them: nest tapes for second derivatives.
 *
 * A tape belongs to the memory scope it was begun in and dies with it (no
 * free needed). It keeps the tensors it recorded; if a scope holding some
 * of them ends first, the tape is expired and gradient() says so.
 */
#ifndef GB_AUTODIFF_H
#define GB_AUTODIFF_H

#include "gb_base.h"
#include "gb_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- variables ------------------------------------------------------------ */

typedef struct gb_variable gb_variable;

/* A mutable tensor living outside scopes. The name is prefixed with the
 * current name scope ("dense_1/kernel"). The initial value is copied. */
gb_variable *gb_variable_new(const char *name, gb_tensor *initial, bool trainable);
void gb_variable_free(gb_variable *v);
/* The value at this moment: a later assign does not change it. */
gb_tensor *gb_variable_value(gb_variable *v);
bool gb_variable_assign(gb_variable *v, gb_tensor *value);
bool gb_variable_assign_add(gb_variable *v, gb_tensor *delta);
bool gb_variable_assign_sub(gb_variable *v, gb_tensor *delta);
const char *gb_variable_name(const gb_variable *v);
bool gb_variable_trainable(const gb_variable *v);
void gb_variable_set_trainable(gb_variable *v, bool trainable);
gb_dtype gb_variable_dtype(const gb_variable *v);
int gb_variable_rank(const gb_variable *v);
const int64_t *gb_variable_shape(const gb_variable *v);
int64_t gb_variable_size(const gb_variable *v);

/* ---- tapes ---------------------------------------------------------------------- */

typedef struct gb_tape gb_tape;

typedef enum gb_unconnected {
    GB_UNCONNECTED_NONE = 0,  /* unconnected sources get NULL */
    GB_UNCONNECTED_ZERO       /* ... or zeros of the source's shape */
} gb_unconnected;

/* A gradient source: a tensor or a variable. */
typedef struct gb_source {
    gb_tensor *tensor;
    gb_variable *variable;
} gb_source;
#define GB_SRC(t) ((gb_source){.tensor = (t), .variable = 0})
#define GB_SRC_VAR(v) ((gb_source){.tensor = 0, .variable = (v)})

/* Begins recording: persistent = false, watch_accessed_variables = true. */
gb_tape *gb_tape_begin(void);
gb_tape *gb_tape_begin_ex(bool persistent, bool watch_accessed_variables);
/* Ends recording (the end of TF's `with` block); gradients stay possible. */
void gb_tape_end(gb_tape *tape);
/* Pause and resume recording (TF's `with tape.stop_recording():`). */
void gb_tape_stop_recording(gb_tape *tape);
void gb_tape_resume_recording(gb_tape *tape);

void gb_tape_watch(gb_tape *tape, gb_tensor *t);
void gb_tape_watch_variable(gb_tape *tape, gb_variable *v);
/* Writes up to cap watched variables, in first-watched order; returns the
 * total number. */
int gb_tape_watched_variables(const gb_tape *tape, gb_variable **out, int cap);

/* The general form: d(sum of targets)/d(each source). output_gradients may
 * be NULL (ones) or hold one tensor per target. Writes out[nsources]. */
bool gb_tape_gradient_ex(gb_tape *tape, gb_tensor *const *targets, int ntargets,
                         gb_tensor *const *output_gradients,
                         const gb_source *sources, int nsources,
                         gb_unconnected unconnected, gb_tensor **out);
/* d target / d source; NULL if unconnected (and on error). */
gb_tensor *gb_tape_gradient(gb_tape *tape, gb_tensor *target, gb_tensor *source);
bool gb_tape_gradients(gb_tape *tape, gb_tensor *target,
                       gb_tensor *const *sources, int nsources, gb_tensor **out);
bool gb_tape_gradient_vars(gb_tape *tape, gb_tensor *target,
                           gb_variable *const *vars, int nvars, gb_tensor **out);

/* Jacobian: shape target.shape + source.shape. */
gb_tensor *gb_tape_jacobian(gb_tape *tape, gb_tensor *target, gb_tensor *source,
                            gb_unconnected unconnected);
/* For target [B, ...] and source [B, ...] whose rows are independent:
 * shape [B] + target.shape[1:] + source.shape[1:]. */
gb_tensor *gb_tape_batch_jacobian(gb_tape *tape, gb_tensor *target, gb_tensor *source,
                                  gb_unconnected unconnected);

/* ---- custom gradients -------------------------------------------------------------- */

/* Computes outputs[nout] from inputs[nin]; runs unrecorded. */
typedef bool (*gb_custom_forward_fn)(gb_tensor *const *inputs, int nin,
                                     gb_tensor **outputs, int nout, void *user);
/* Given dys[nout], writes dxs[nin] (NULL: none). Runs recorded by outer tapes. */
typedef bool (*gb_custom_backward_fn)(gb_tensor *const *inputs, int nin,
                                      gb_tensor *const *outputs, gb_tensor *const *dys,
                                      int nout, gb_tensor **dxs, void *user);
/* tf.custom_gradient: outputs from `forward`, gradients from `backward`. */
bool gb_custom_gradient(const char *name, gb_custom_forward_fn forward,
                        gb_custom_backward_fn backward, void *user,
                        gb_tensor *const *inputs, int nin, gb_tensor **outputs, int nout);

/* ---- call sites (GB_AT, gb_base.h) ---------------------------------------------- */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_variable_new(...) GB_AT(gb_variable_new, __VA_ARGS__)
#define gb_variable_value(...) GB_AT(gb_variable_value, __VA_ARGS__)
#define gb_variable_assign(...) GB_AT(gb_variable_assign, __VA_ARGS__)
#define gb_variable_assign_add(...) GB_AT(gb_variable_assign_add, __VA_ARGS__)
#define gb_variable_assign_sub(...) GB_AT(gb_variable_assign_sub, __VA_ARGS__)
#define gb_tape_begin(...) GB_AT(gb_tape_begin, __VA_ARGS__)
#define gb_tape_begin_ex(...) GB_AT(gb_tape_begin_ex, __VA_ARGS__)
#define gb_tape_end(...) GB_AT(gb_tape_end, __VA_ARGS__)
#define gb_tape_stop_recording(...) GB_AT(gb_tape_stop_recording, __VA_ARGS__)
#define gb_tape_resume_recording(...) GB_AT(gb_tape_resume_recording, __VA_ARGS__)
#define gb_tape_watch(...) GB_AT(gb_tape_watch, __VA_ARGS__)
#define gb_tape_watch_variable(...) GB_AT(gb_tape_watch_variable, __VA_ARGS__)
#define gb_tape_gradient_ex(...) GB_AT(gb_tape_gradient_ex, __VA_ARGS__)
#define gb_tape_gradient(...) GB_AT(gb_tape_gradient, __VA_ARGS__)
#define gb_tape_gradients(...) GB_AT(gb_tape_gradients, __VA_ARGS__)
#define gb_tape_gradient_vars(...) GB_AT(gb_tape_gradient_vars, __VA_ARGS__)
#define gb_tape_jacobian(...) GB_AT(gb_tape_jacobian, __VA_ARGS__)
#define gb_tape_batch_jacobian(...) GB_AT(gb_tape_batch_jacobian, __VA_ARGS__)
#define gb_custom_gradient(...) GB_AT(gb_custom_gradient, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
