/* debug/numerics_variables.c — numerics checks of what variables hold.
 *
 * Reading a variable creates nothing: a NaN that a ReadVariableOp hands
 * out was put there by a write. Ops that write variables (Assign*-
 * VariableOp, the optimizers' fused updates) have no outputs, so after
 * one runs the check scans the new value of each variable it wrote: the
 * alert comes from the op that wrote the NaN, naming it, the variable and
 * the step. Each variable keeps what the checks last learned about its
 * value, by write count (gb_variable_numerics): a later read of a bad
 * value says which checked write put it there, a read of a value already
 * checked is not scanned again, and a write can tell whether a variable
 * it updates was bad before it ran.
 */
#include <stdio.h>

#include "debug/internal.h"

/* A variable's current value as a tensor header on the stack, for the
 * scans and the alert's dtype and shape. */
static gb_tensor value_of(gb_variable *v) {
    gb_tensor t = {.dtype = gb_variable_dtype(v),
                   .rank = (uint8_t)gb_variable_rank(v),
                   .size = gb_variable_size(v),
                   .data = gb__variable_buffer(v)->data};
    memcpy(t.shape, gb_variable_shape(v), sizeof t.shape);
    return t;
}

static bool checkable(const gb_tensor *t) { return t->data && gb_dtype_is_float(t->dtype); }

/* What the checks know of v's value now: it is the value they last
 * learned about (no write since). */
static bool known_now(gb_variable *v) {
    return gb__variable_numerics(v)->write == gb__variable_writes(v);
}

/* ... and of the value before its last write: 1 bad, 0 finite, -1 not
 * checked. */
static int before_last_write(gb_variable *v) {
    const gb_variable_numerics *k = gb__variable_numerics(v);
    if (k->write == 0 || k->write + 1 != gb__variable_writes(v)) return -1;
    return k->nonfinite;
}

/* ---- reads ------------------------------------------------------------------------------ */

/* "variable 'w' holds 1 NaN, 0 +Inf, 0 -Inf (float32 [3]), read by op
 * 'ReadVariableOp' (type ReadVariableOp), first at index 1, step 9
 * (written by AssignVariableOp at step 7)" */
static void describe_read(const gb_numerics_alert *a, char *buf, size_t n) {
    char shape[96];
    size_t u = gb__numerics_append(buf, n, 0, "variable '%s' holds ", a->variable);
    u = gb__numerics_append_counts(a, buf, n, u);
    u = gb__numerics_append(buf, n, u, " (%s %s), read by op '%s' (type %s)",
                            gb_dtype_name(a->dtype),
                            gb__shape_fmt(a->rank, a->shape, shape, sizeof shape), a->op_name,
                            a->op_type);
    u = gb__numerics_append_site(a, buf, n, u);
    if (!a->written_by)
        gb__numerics_append(buf, n, u,
                            ". No write checked by numerics put them there: the variable held "
                            "them already (its initial value, or a write while checks were off)");
    else if (a->written_has_step)
        gb__numerics_append(buf, n, u, " (written by %s at step %lld)", a->written_by,
                            (long long)a->written_step);
    else
        gb__numerics_append(buf, n, u, " (written by %s)", a->written_by);
}

static bool report_read(const gb_op_call *c, gb_variable *v, const gb_tensor *value) {
    const gb_variable_numerics *k = gb__variable_numerics(v);
    gb_numerics_alert a;
    char name[192], text[1400];
    gb__numerics_alert_begin(&a, c, value, name, sizeof name);
    a.variable = gb_variable_name(v);
    a.written_by = k->writer;
    a.written_has_step = k->has_step;
    a.written_step = k->step;
    describe_read(&a, text, sizeof text);
    return gb__numerics_report(c, &a, text);
}

bool gb__numerics_check_read(const gb_op_call *c, const gb_tensor *value) {
    gb_variable *v = gb__call_variable(c);
    if (!checkable(value)) return true;
    gb_variable_numerics *k = gb__variable_numerics(v);
    if (!known_now(v))
        *k = (gb_variable_numerics){.write = gb__variable_writes(v),
                                    .nonfinite = gb__numerics_has_nonfinite(value)};
    return !k->nonfinite || report_read(c, v, value);
}

/* ---- writes ------------------------------------------------------------------------------- */

/* Before the op ran: a variable it writes that already held a NaN/Inf,
 * else one whose value was not checked (NULL: none). */
typedef struct before_write {
    gb_variable *held_bad;
    gb_variable *unchecked;
} before_write;

static before_write look_before(gb_variable *const *vars, int n) {
    before_write b = {0};
    for (int i = 0; i < n; i++) {
        int state = before_last_write(vars[i]);
        if (state == 1 && !b.held_bad) b.held_bad = vars[i];
        if (state < 0 && !b.unchecked) b.unchecked = vars[i];
    }
    return b;
}

/* Why the op has them: an input, a variable it updates, or itself. */
static size_t append_write_origin(const gb_numerics_alert *a, const before_write *b, char *buf,
                                  size_t n, size_t u) {
    if (!a->created && b->held_bad)
        return gb__numerics_append(buf, n, u,
                                   ". The op received them: variable '%s' already held "
                                   "non-finite values",
                                   gb_variable_name(b->held_bad));
    if (!a->created)
        return gb__numerics_append(buf, n, u,
                                   ". The op received them: an input is already non-finite");
    u = gb__numerics_append(buf, n, u, ". The op created them: its inputs are finite");
    if (b->unchecked)
        u = gb__numerics_append(buf, n, u, " (the value of '%s' before this write was not checked)",
                                gb_variable_name(b->unchecked));
    return u;
}

/* "variable 'w' now holds 1 NaN, 0 +Inf, 0 -Inf (float32 [3]), written by
 * op 'AssignVariableOp' (type AssignVariableOp), first at index 1, step 7.
 * The op received them: an input is already non-finite — input 0: ..." */
static void describe_write(const gb_numerics_alert *a, const before_write *b, char *buf,
                           size_t n) {
    char shape[96];
    size_t u = gb__numerics_append(buf, n, 0, "variable '%s' now holds ", a->variable);
    u = gb__numerics_append_counts(a, buf, n, u);
    u = gb__numerics_append(buf, n, u, " (%s %s), written by op '%s' (type %s)",
                            gb_dtype_name(a->dtype),
                            gb__shape_fmt(a->rank, a->shape, shape, sizeof shape), a->op_name,
                            a->op_type);
    u = gb__numerics_append_site(a, buf, n, u);
    u = append_write_origin(a, b, buf, n, u);
    gb__numerics_append_inputs(a, buf, n, u);
}

static bool report_write(const gb_op_call *c, gb_variable *v, const before_write *b) {
    gb_numerics_alert a;
    char name[192], text[1400];
    gb_tensor value = value_of(v);
    gb__numerics_alert_begin(&a, c, &value, name, sizeof name);
    a.output_index = -1;
    a.variable = gb_variable_name(v);
    a.variable_written = true;
    a.created = gb__numerics_alert_inputs(&a, c) && !b->held_bad;
    describe_write(&a, b, text, sizeof text);
    return gb__numerics_report(c, &a, text);
}

/* Remembers what the checked write c left in v, for later reads. */
static void note_write(gb_variable *v, bool nonfinite, const gb_op_call *c) {
    gb_variable_numerics *k = gb__variable_numerics(v);
    *k = (gb_variable_numerics){.write = gb__variable_writes(v), .nonfinite = nonfinite,
                                .writer = c->def->name};
    k->has_step = gb_get_step(&k->step);
}

bool gb__numerics_check_written(const gb_op_call *c) {
    gb_variable *vars[GB_MAX_WRITTEN];
    signed char scanned[GB_MAX_WRITTEN];
    int n = c->def->written(c, vars, scanned);
    before_write b = look_before(vars, n);
    bool bad[GB_MAX_WRITTEN];
    /* Every variable is noted before the first report, which may fail the
     * op (RAISE): later reads still learn where their NaN came from. */
    for (int i = 0; i < n; i++) {
        gb_tensor value = value_of(vars[i]);
        bad[i] = scanned[i] >= 0 ? scanned[i] == 1
                                 : checkable(&value) && gb__numerics_has_nonfinite(&value);
        note_write(vars[i], bad[i], c);
    }
    for (int i = 0; i < n; i++)
        if (bad[i] && !report_write(c, vars[i], &b)) return false;
    return true;
}
