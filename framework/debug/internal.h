/* debug/internal.h — what the numerics check's files share, and the
 * profiler's op record (profiler.c), which op_log.c's hook calls.
 *
 * numerics.c runs the check after every op and reports bad outputs;
 * numerics_variables.c adds what variables need: an op that writes one
 * has no output, so the variable's new value is checked instead, and a
 * read reports what the variable holds and which checked write put it
 * there. Both fill a gb_numerics_alert, build its message from the parts
 * below and hand it to gb__numerics_report().
 */
#ifndef GB_DEBUG_INTERNAL_H
#define GB_DEBUG_INTERNAL_H

#include "ops/internal.h"

/* The profiler's record of one op call that started at t0 and took us. */
void gb__profile_op(const gb_op_call *c, gb_tensor *const *out, int nout, double t0, double us);
/* Turns the op-log hook's profiler part on or off (op_log.c). */
void gb__set_op_profiling(bool on);

/* Whether t (float32/float64, with data) holds a NaN or an Inf: one fast
 * pass, split across the pool for big tensors. */
bool gb__numerics_has_nonfinite(const gb_tensor *t);

/* Starts an alert about `values` (an output, or a variable's value) of the
 * op call c: the op's type, name (written to name[n]), scope, function,
 * step and backward pass; the dtype, shape and NaN/+Inf/-Inf counts of
 * values. The caller sets the rest (output_index, created, inputs...). */
void gb__numerics_alert_begin(gb_numerics_alert *a, const gb_op_call *c,
                              const gb_tensor *values, char *name, size_t n);
/* Summarizes c's inputs into a; true when all of them are finite. */
bool gb__numerics_alert_inputs(gb_numerics_alert *a, const gb_op_call *c);

/* printf into buf[n] from `used` on; returns the new length (which may
 * pass n: later appends then write nothing). */
size_t gb__numerics_append(char *buf, size_t n, size_t used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "1 NaN, 0 +Inf, 0 -Inf" */
size_t gb__numerics_append_counts(const gb_numerics_alert *a, char *buf, size_t n, size_t used);
/* Where it happened: the backward pass, the function, the first bad
 * index, the step. */
size_t gb__numerics_append_site(const gb_numerics_alert *a, char *buf, size_t n, size_t used);
/* " — input 0: float32 [3] min 0 max 2 NaN 0 Inf 0; input 1: ..." */
size_t gb__numerics_append_inputs(const gb_numerics_alert *a, char *buf, size_t n, size_t used);

/* Counts the alert and delivers it with its message: RAISE fails the op
 * (returns false), RECORD emits a GB_EVENT_NUMERICS event (up to the
 * limit) and returns true. */
bool gb__numerics_report(const gb_op_call *c, gb_numerics_alert *a, const char *text);

/* ---- variables (numerics_variables.c) ---------------------------------------------- */

/* A ReadVariableOp's output: scans it unless the variable's value is
 * known already, notes what it holds and, when that is not finite,
 * reports it. False: fail the op. */
bool gb__numerics_check_read(const gb_op_call *c, const gb_tensor *value);
/* After an op that writes variables (gb_op_def.written): checks each new
 * value, reports the bad ones, notes what each holds. False: fail the op. */
bool gb__numerics_check_written(const gb_op_call *c);

#endif
