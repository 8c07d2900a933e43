/* debug/numerics.c — the numerics check hook and the CheckNumerics op.
 *
 * The dispatcher calls check_outputs() after every kernel while checks are
 * on. A first pass counts non-finite elements with integer bit tests (it
 * vectorizes, so a clean output costs about one read of its memory); only
 * a bad output gets the slower second pass that classifies NaN/+Inf/-Inf,
 * finds the first index and summarizes the inputs. Variables, read and
 * written, get reports of their own (numerics_variables.c).
 */
#include <math.h>
#include <stdio.h>

#include "core/parallel.h"
#include "debug/internal.h"

/* Set by the switches on one thread, read by checks on every thread. */
static _Atomic gb_numerics_mode mode;
static _Atomic int max_alerts = 1000;
static _Atomic int64_t alert_count;

/* ---- scanning -------------------------------------------------------------------- */

typedef struct scan {
    const gb_tensor *t;
    _Atomic bool bad;
} scan;

static void scan_part(void *ctx, int64_t b, int64_t e, int worker) {
    (void)worker;
    scan *s = ctx;
    if (gb__nonfinite_in(s->t->dtype, s->t->data, b, e)) s->bad = true;
}

/* Big tensors are scanned on every core, as the kernels that made them
 * ran; a clean output costs one pass over memory the kernel just wrote. */
bool gb__numerics_has_nonfinite(const gb_tensor *t) {
    enum { GRAIN = 1 << 16 };
    if (t->size < 2 * GRAIN) return gb__nonfinite_in(t->dtype, t->data, 0, t->size);
    scan s = {.t = t, .bad = false};
    gb__parallel_for(t->size, GRAIN, scan_part, &s);
    return s.bad;
}

static void classify(const gb_tensor *t, gb_numerics_alert *a) {
    a->first_index = -1;
    for (int64_t i = 0; i < t->size; i++) {
        double v = gb__load(t->dtype, t->data, i);
        if (isfinite(v)) continue;
        if (a->first_index < 0) a->first_index = i;
        if (isnan(v))
            a->nan_count++;
        else if (v > 0)
            a->pos_inf_count++;
        else
            a->neg_inf_count++;
    }
}

static void summarize_input(const gb_tensor *t, gb_numerics_input *s) {
    s->dtype = t->dtype;
    s->rank = t->rank;
    memcpy(s->shape, t->shape, sizeof s->shape);
    s->min = INFINITY;
    s->max = -INFINITY;
    s->nan_count = s->inf_count = 0;
    for (int64_t i = 0; t->data && i < t->size; i++) {
        double v = gb__load(t->dtype, t->data, i);
        if (isnan(v)) {
            s->nan_count++;
        } else if (isinf(v)) {
            s->inf_count++;
        } else {
            if (v < s->min) s->min = v;
            if (v > s->max) s->max = v;
        }
    }
    if (s->min > s->max) s->min = s->max = NAN;
}

/* ---- alerts --------------------------------------------------------------------------- */

void gb__numerics_alert_begin(gb_numerics_alert *a, const gb_op_call *c,
                              const gb_tensor *values, char *name, size_t n) {
    memset(a, 0, sizeof *a);
    a->op_type = c->def->name;
    a->op_name = gb__op_display_name(c, name, n);
    a->scope = gb_name_scope_path();
    a->function = gb__tl_function;
    a->has_step = gb_get_step(&a->step);
    bool fused_step = c->op == GB_OP_FUSED_ELEMENTWISE && c->payload && gb__tl_fused_node;
    if (fused_step) {
        /* A step made it: its own type, and the node that holds it. */
        const gb_fused_program *p = c->payload;
        for (int s = 0; s < p->nsteps; s++)
            if (strcmp(p->steps[s].name, a->op_name) == 0) a->op_type = gb_op_type_name(p->steps[s].op);
        if (strcmp(gb__tl_fused_node, a->op_name) != 0) a->fused_in = gb__tl_fused_node;
        gb__tl_fused_node = NULL;
    }
    a->backward = gb__tl_backward_of != NULL;
    a->forward_op = gb__tl_backward_of;
    a->forward_op_type = gb__tl_backward_of_type;
    a->dtype = values->dtype;
    a->rank = values->rank;
    memcpy(a->shape, values->shape, sizeof a->shape);
    classify(values, a);
    if (fused_step) {   /* the step's own values, of the output's shape */
        a->nan_count = gb__tl_fused_bad[0];
        a->pos_inf_count = gb__tl_fused_bad[1];
        a->neg_inf_count = gb__tl_fused_bad[2];
    }
}

bool gb__numerics_alert_inputs(gb_numerics_alert *a, const gb_op_call *c) {
    bool finite = true;
    a->ninputs = c->nin < GB_NUMERICS_MAX_INPUTS ? c->nin : GB_NUMERICS_MAX_INPUTS;
    for (int i = 0; i < a->ninputs; i++) {
        summarize_input(c->in[i], &a->inputs[i]);
        if (a->inputs[i].nan_count || a->inputs[i].inf_count) finite = false;
    }
    return finite;
}

/* ---- messages ----------------------------------------------------------------------------- */

size_t gb__numerics_append(char *buf, size_t n, size_t used, const char *fmt, ...) {
    if (used >= n) return used;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + used, n - used, fmt, ap);
    va_end(ap);
    return k < 0 ? used : used + (size_t)k;
}

size_t gb__numerics_append_counts(const gb_numerics_alert *a, char *buf, size_t n, size_t u) {
    return gb__numerics_append(buf, n, u, "%lld NaN, %lld +Inf, %lld -Inf",
                               (long long)a->nan_count, (long long)a->pos_inf_count,
                               (long long)a->neg_inf_count);
}

size_t gb__numerics_append_site(const gb_numerics_alert *a, char *buf, size_t n, size_t u) {
    if (a->backward)
        u = gb__numerics_append(buf, n, u, " in the backward pass of '%s' (type %s)",
                                a->forward_op, a->forward_op_type);
    if (a->function) u = gb__numerics_append(buf, n, u, " in function '%s'", a->function);
    u = gb__numerics_append(buf, n, u, ", first at index %lld", (long long)a->first_index);
    if (a->has_step) u = gb__numerics_append(buf, n, u, ", step %lld", (long long)a->step);
    return u;
}

size_t gb__numerics_append_inputs(const gb_numerics_alert *a, char *buf, size_t n, size_t u) {
    char shape[96];
    for (int i = 0; i < a->ninputs; i++) {
        const gb_numerics_input *s = &a->inputs[i];
        u = gb__numerics_append(buf, n, u, "%s input %d: %s %s min %g max %g NaN %lld Inf %lld",
                                i ? ";" : " —", i, gb_dtype_name(s->dtype),
                                gb__shape_fmt(s->rank, s->shape, shape, sizeof shape), s->min,
                                s->max, (long long)s->nan_count, (long long)s->inf_count);
    }
    return u;
}

/* "1 NaN, 0 +Inf, 0 -Inf in output 0 (float32 [3]) of op 'loss/Log' (type
 * Log), first at index 1, step 4. The op created them: ..." */
static void describe_output(const gb_numerics_alert *a, char *buf, size_t n) {
    char shape[96];
    size_t u = gb__numerics_append_counts(a, buf, n, 0);
    u = gb__numerics_append(buf, n, u, " in output %d (%s %s) of op '%s' (type %s)",
                            a->output_index, gb_dtype_name(a->dtype),
                            gb__shape_fmt(a->rank, a->shape, shape, sizeof shape), a->op_name,
                            a->op_type);
    if (a->fused_in) u = gb__numerics_append(buf, n, u, ", fused into node '%s'", a->fused_in);
    u = gb__numerics_append_site(a, buf, n, u);
    u = gb__numerics_append(buf, n, u,
                            a->created ? ". The op created them: its inputs are finite"
                                       : ". The op received them: an input is already non-finite");
    gb__numerics_append_inputs(a, buf, n, u);
}

/* ---- reports ---------------------------------------------------------------------------- */

/* Every alert of RECORD mode, stored or past max_alerts, also counts as a
 * scalar point GB_NUMERICS_SEEN_TAG = the alerts so far, at the global
 * step: the store then knows how many there were and the step of the last,
 * though it holds only the first max_alerts (the Numerics page says so),
 * and the Scalars page charts how they grew. A point costs far less than
 * the report text already built for each alert. */
static void emit_seen(int64_t count) {
    if (!gb_observer_wants(GB_EVENT_SCALAR)) return;
    int64_t step = 0;
    gb_get_step(&step);
    gb_scalar_event s = {.tag = GB_NUMERICS_SEEN_TAG, .value = (double)count, .step = step};
    gb_event ev = {.kind = GB_EVENT_SCALAR, .message = s.tag, .detail = &s};
    gb_observer_emit(&ev);
}

bool gb__numerics_report(const gb_op_call *c, gb_numerics_alert *a, const char *text) {
    a->message = text;
    int64_t count = ++alert_count;
    if (mode == GB_NUMERICS_RAISE) {
        gb__op_error(c, GB_ERR_NUMERIC, "check_numerics: %s", text);
        return false;
    }
    if (count <= max_alerts) {
        gb_event ev = {.kind = GB_EVENT_NUMERICS, .op_type = a->op_type, .op_name = a->op_name,
                       .message = text, .detail = a};
        gb_observer_emit(&ev);
    }
    emit_seen(count);
    return true;
}

/* Reports output k of c, which holds a NaN or an Inf. */
static bool report_output(const gb_op_call *c, const gb_tensor *out, int k) {
    gb_numerics_alert a;
    char name[192], text[1400];
    gb__numerics_alert_begin(&a, c, out, name, sizeof name);
    a.output_index = k;
    a.created = gb__numerics_alert_inputs(&a, c);
    describe_output(&a, text, sizeof text);
    return gb__numerics_report(c, &a, text);
}

static bool check_outputs(const gb_op_call *c, gb_tensor **out, int nout) {
    if (c->op == GB_OP_CHECK_NUMERICS) return true; /* it reports for itself */
    if (c->op == GB_OP_READ_VARIABLE) return gb__numerics_check_read(c, out[0]);
    for (int k = 0; k < nout; k++) {
        const gb_tensor *t = out[k];
        if (!t->data || !gb_dtype_is_float(t->dtype) || !gb__numerics_has_nonfinite(t)) continue;
        if (!report_output(c, t, k)) return false;
    }
    return !c->def->written || gb__numerics_check_written(c);
}

/* ---- switches ------------------------------------------------------------------------- */

void gb_enable_check_numerics_mode(gb_numerics_mode m, int limit) {
    mode = m;
    max_alerts = limit > 0 ? limit : 1000;
    alert_count = 0;
    atomic_store_explicit(&gb__numerics_hook, check_outputs, memory_order_release);
    gb__hook_flag_set(GB_HOOK_NUMERICS, true);
}

void gb_enable_check_numerics(void) { gb_enable_check_numerics_mode(GB_NUMERICS_RAISE, 0); }

void gb_disable_check_numerics(void) { gb__hook_flag_set(GB_HOOK_NUMERICS, false); }

bool gb_check_numerics_enabled(void) { return atomic_load(&gb__hook_flags) & GB_HOOK_NUMERICS; }

int64_t gb_numerics_alert_count(void) { return alert_count; }

/* ---- the CheckNumerics op --------------------------------------------------------------- */

static int infer_check(const gb_op_call *c, gb_out_desc *out) {
    const gb_tensor *x = c->in[0];
    if (!gb_dtype_is_float(x->dtype)) {
        gb__op_error(c, GB_ERR_DTYPE, "CheckNumerics: needs a float tensor, got %s",
                     gb_dtype_name(x->dtype));
        return -1;
    }
    out[0].dtype = x->dtype;
    out[0].rank = x->rank;
    memcpy(out[0].shape, x->shape, sizeof x->shape);
    return 1;
}

static bool kernel_check(const gb_op_call *c, gb_tensor **out) {
    gb_tensor *x = c->in[0];
    if (gb__numerics_has_nonfinite(x)) {
        gb_numerics_alert a = {0};
        classify(x, &a);
        gb__op_error(c, GB_ERR_NUMERIC,
                     "CheckNumerics: %s: tensor had %lld NaN, %lld +Inf, %lld -Inf values, "
                     "first at index %lld",
                     c->attrs->s, (long long)a.nan_count,
                     (long long)a.pos_inf_count, (long long)a.neg_inf_count,
                     (long long)a.first_index);
        return false;
    }
    return gb__view_into(out[0], x);
}

static gb_tensor *check_op(gb_tensor *t, const gb_attrs *a) {
    return gb__op1(GB_OP_CHECK_NUMERICS, &t, 1, a);
}

static bool grad_check(const gb_grad_ctx *g, gb_tensor **dx) {
    gb_attrs a = {0};
    snprintf(a.s, sizeof a.s, "gradient of: %.50s", g->attrs->s);
    dx[0] = check_op(g->dys[0], &a);
    return dx[0] != NULL;
}

const gb_op_def gb_opdef_check_numerics = {
    .name = "CheckNumerics",
    .arity = 1,
    .flags = GB_OPF_STATEFUL | GB_OPF_VIEW,
    .infer = infer_check,
    .kernel = kernel_check,
    .grad = grad_check,
};

gb_tensor *gb_check_numerics(gb_tensor *t, const char *message) {
    /* In the attributes by value, as plain data: tapes and traced graphs
     * copy them, and a graph outlives the scope of the call that made it. */
    gb_attrs a = {0};
    snprintf(a.s, sizeof a.s, "%.63s", message ? message : "");
    return check_op(t, &a);
}
