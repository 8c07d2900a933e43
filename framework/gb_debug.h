/* gb_debug.h — numerics checks: find the first NaN/Inf and name its op.
 *
 * gb_enable_check_numerics() scans every floating-point output of every op
 * (eager, in gradient functions, in layers and optimizers) in one fused
 * pass. In RAISE mode the first bad op fails with a GB_ERR_NUMERIC sticky
 * error; in RECORD mode each bad output becomes a GB_EVENT_NUMERICS event
 * (detail: const gb_numerics_alert *) and training goes on. Either way the
 * report names the op type and name, the name scope, the function, the
 * step, the output's NaN/+Inf/-Inf counts and first bad index, and each
 * input's shape and range — so you see at once whether the op created the
 * NaN or received it — and, in a backward pass, the forward op whose
 * gradient produced it. Variables are checked when they are written (an
 * assign, an optimizer's update: the alert names the op, the variable and
 * the step) and when they are read (the alert says what the variable
 * holds and which checked write put it there).
 */
#ifndef GB_DEBUG_H
#define GB_DEBUG_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gb_numerics_mode {
    GB_NUMERICS_RAISE = 0,   /* fail the op: nothing after it runs */
    GB_NUMERICS_RECORD       /* emit an alert event, keep going */
} gb_numerics_mode;

#define GB_NUMERICS_MAX_INPUTS 8

typedef struct gb_numerics_input {
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
    double min, max;          /* over finite values; NaN when there are none */
    int64_t nan_count, inf_count;
} gb_numerics_input;

typedef struct gb_numerics_alert {
    const char *op_type;      /* "Log" */
    const char *op_name;      /* "model/dense_1/Log" or "gradients/model/Sqrt_grad/Mul" */
    const char *scope;        /* name-scope path */
    const char *function;     /* enclosing traced function, or NULL */
    bool has_step;
    int64_t step;
    bool backward;            /* produced by a gradient function */
    const char *forward_op;   /* backward: the forward op whose gradient it is */
    const char *forward_op_type;
    const char *fused_in;     /* op_name is a step of this FusedElementwise node, or NULL */
    int output_index;
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
    int64_t nan_count, pos_inf_count, neg_inf_count;
    int64_t first_index;      /* flat index of the first bad element */
    bool created;             /* every input finite: this op made the NaN/Inf */
    int ninputs;              /* summarized inputs (at most GB_NUMERICS_MAX_INPUTS) */
    gb_numerics_input inputs[GB_NUMERICS_MAX_INPUTS];
    const char *message;      /* the whole report as one line */
    /* Variables. An op that writes one (Assign*VariableOp, an optimizer's
     * fused update) has no output: the variable's new value is checked,
     * one alert per variable it wrote (output_index -1, dtype and shape
     * the variable's). A ReadVariableOp's alert is about what the
     * variable holds (reading creates nothing: created is false) and, when
     * a write checked while checks were on put it there, names that op. */
    const char *variable;     /* the variable written or read; NULL for other ops */
    bool variable_written;    /* true: this op wrote it; false: read it */
    const char *written_by;   /* a read: the op type of that checked write, or NULL */
    bool written_has_step;
    int64_t written_step;     /* the step that write ran at */
} gb_numerics_alert;

/* RAISE mode. */
void gb_enable_check_numerics(void);
/* max_alerts bounds RECORD mode's alert events (<= 0: 1000); counting goes
 * on, and every alert, stored or not, is also a scalar event
 * GB_NUMERICS_SEEN_TAG whose value is the alerts so far, at the global
 * step: a store holds how many there were and when the last one was. */
void gb_enable_check_numerics_mode(gb_numerics_mode mode, int max_alerts);
#define GB_NUMERICS_SEEN_TAG "numerics/alerts_seen"
void gb_disable_check_numerics(void);
bool gb_check_numerics_enabled(void);
/* Bad outputs seen since checks were enabled (RECORD mode keeps counting). */
int64_t gb_numerics_alert_count(void);

/* tf.debugging.check_numerics: t unchanged, or an error naming `message`
 * if t holds a NaN or Inf. Its gradient is checked the same way. Messages
 * longer than 63 bytes are cut (the op keeps it as plain data). */
gb_tensor *gb_check_numerics(gb_tensor *t, const char *message);

/* ---- call sites (GB_AT, gb_base.h) ------------------------------------------------------ */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_check_numerics(...) GB_AT(gb_check_numerics, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
