/* graph/control_flow/cond.c — gb_cond (tf.cond) and the If op.
 *
 * Eagerly the predicate's value picks the branch and only that one runs,
 * in the name scope "cond/true" or "cond/false"; tapes record its ops as
 * usual. While tracing, both branches are traced into sub-graphs, their
 * outputs must agree in count, dtype and rank (a dim they disagree on is
 * -1 in the result, unless declared), and one If node — inputs: the
 * predicate, then the branches' inputs — runs the branch the predicate
 * picks each time the graph runs. Its kernel makes its outputs (the
 * branch's, whose shapes may differ from one run to the next).
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/control_flow/internal.h"

/* ---- checks ------------------------------------------------------------------------------- */

static const char *branch_name(int which) { return which ? "false" : "true"; }

static bool check_args(gb_tensor *pred, gb_branch_fn t, gb_branch_fn f, gb_tensor *const *in,
                       int n, const gb_cond_options *o, const char *name) {
    if (!t || !f || n < 0 || n > GB_CF_MAX_INPUTS || (n && !in) ||
        o->noutput_shapes < 0 || o->noutput_shapes > GB_MAX_OUTPUTS ||
        (o->noutput_shapes && !o->output_shapes)) {
        gb__error(GB_ERR_VALUE, "If",
                  "%s: need both branch functions, 0 to %d inputs and 0 to %d output "
                  "shapes",
                  name, GB_CF_MAX_INPUTS, GB_MAX_OUTPUTS);
        return false;
    }
    if (!pred) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, "If", "%s: the predicate is NULL", name);
        return false;
    }
    for (int i = 0; i < n; i++)
        if (!in[i]) {
            if (gb_ok()) gb__error(GB_ERR_VALUE, "If", "%s: input %d is NULL", name, i);
            return false;
        }
    return gb__cf_check_pred(pred, name, "the predicate");
}

/* Whether one branch's output k fits its declared shape; an error naming
 * the branch and the dim otherwise. */
static bool fits_declared(const char *name, int which, int k, gb_dtype dt, int rank,
                          const int64_t *shape, const gb_shape_invariant *want) {
    int bad = want->rank != rank ? -2 : -1;
    for (int d = 0; bad == -1 && d < rank; d++)
        if (want->shape[d] >= 0 && shape[d] >= 0 && shape[d] != want->shape[d]) bad = d;
    if (bad == -1) return true;
    char a[96], b[96], where[32] = "its rank";
    if (bad >= 0) snprintf(where, sizeof where, "dim %d", bad);
    gb__error(GB_ERR_SHAPE, "If",
              "%s: output %d of the %s branch is %s %s, which does not fit its "
              "declared shape %s (%s)",
              name, k, branch_name(which), gb_dtype_name(dt), gb__shape_fmt(rank, shape, a, sizeof a),
              gb__shape_fmt(want->rank, want->shape, b, sizeof b), where);
    return false;
}

/* The If node's outputs: the branches' merged, or an error naming the
 * output and both branches' dtypes or shapes. */
static bool merge_outputs(gb_cf_record *r, const gb_cond_options *o, const char *label) {
    const gb_cf_branch *t = &r->sub[0], *f = &r->sub[1];
    if (t->cf->nout != f->cf->nout || t->cf->nout > GB_MAX_OUTPUTS) {
        gb__error(GB_ERR_VALUE, "If",
                  "%s: the true branch returns %d outputs and the false branch %d; "
                  "both must return the same number (at most %d)",
                  label, t->cf->nout, f->cf->nout, GB_MAX_OUTPUTS);
        return false;
    }
    r->nout = t->cf->nout;
    for (int k = 0; k < r->nout; k++) {
        const gb_out_desc *a = gb__cf_output(t, k), *b = gb__cf_output(f, k);
        char sa[96], sb[96];
        if (a->dtype != b->dtype || a->rank != b->rank) {
            bool dt = a->dtype != b->dtype;
            gb__error(dt ? GB_ERR_DTYPE : GB_ERR_SHAPE, "If",
                      "%s: output %d is %s %s in the true branch but %s %s in the "
                      "false branch; the branches must agree in %s",
                      label, k, gb_dtype_name(a->dtype), gb__shape_fmt(a->rank, a->shape, sa, sizeof sa),
                      gb_dtype_name(b->dtype), gb__shape_fmt(b->rank, b->shape, sb, sizeof sb),
                      dt ? "dtype" : "rank");
            return false;
        }
        if (k < o->noutput_shapes &&
            (!fits_declared(label, 0, k, a->dtype, a->rank, a->shape, &o->output_shapes[k]) ||
             !fits_declared(label, 1, k, b->dtype, b->rank, b->shape, &o->output_shapes[k])))
            return false;
        r->out[k] = *a;
        for (int d = 0; d < a->rank; d++)
            if (a->shape[d] != b->shape[d]) r->out[k].shape[d] = -1; /* known per run */
        for (int d = 0; k < o->noutput_shapes && d < a->rank; d++)
            if (o->output_shapes[k].shape[d] >= 0) r->out[k].shape[d] = o->output_shapes[k].shape[d];
    }
    return true;
}

/* ---- eager and traced ------------------------------------------------------------------------ */

static int cond_eager(gb_tensor *pred, gb_branch_fn t, gb_branch_fn f, gb_tensor *const *in,
                      int n, const gb_cond_options *o, const char *name, const char *label,
                      gb_tensor **out) {
    int which = *(const uint8_t *)pred->data ? 0 : 1;
    char scope[192];
    snprintf(scope, sizeof scope, "%s/%s", name, branch_name(which));
    gb_name_scope_push(scope);
    gb_call_site site = gb__call_site(); /* the user code moves it */
    int nout = (which ? f : t)(o->user, in, n, out);
    gb__call_site_restore(site);
    gb_name_scope_pop();
    if (!gb_ok()) return -1;
    if (nout < 0 || nout > GB_MAX_OUTPUTS) {
        gb__error(GB_ERR_VALUE, "If", "%s: the %s branch returned %d (0 to %d outputs, "
                  "or -1 after an error)", label, branch_name(which), nout, GB_MAX_OUTPUTS);
        return -1;
    }
    for (int k = 0; k < nout; k++) {
        if (!out[k]) {
            gb__error(GB_ERR_VALUE, "If", "%s: output %d of the %s branch is NULL",
                      label, k, branch_name(which));
            return -1;
        }
        if (k < o->noutput_shapes && !fits_declared(label, which, k, out[k]->dtype, out[k]->rank,
                                                     out[k]->shape, &o->output_shapes[k]))
            return -1;
    }
    return nout;
}

static int cond_traced(gb_tensor *pred, gb_branch_fn t, gb_branch_fn f, gb_tensor *const *in,
                       int n, const gb_cond_options *o, const char *label, gb_tensor **out) {
    gb_cf_record *r = gb__cf_record_new(GB_OP_IF);
    if (!r) return -1;
    gb__cf_name_node(r, "cond", o->name);
    /* The heap's: specs are big, and conds nest. */
    gb_tensor_spec *specs = malloc((size_t)(n ? n : 1) * sizeof *specs);
    if (!specs) {
        gb__error(GB_ERR_MEMORY, "If", "%s: out of memory", label);
        return -1;
    }
    for (int i = 0; i < n; i++) specs[i] = gb__cf_spec_of(in[i]);
    bool ok = gb__cf_trace_branch(r, 0, "true", t, o->user, specs, n, NULL) &&
              gb__cf_trace_branch(r, 1, "false", f, o->user, specs, n, NULL) &&
              merge_outputs(r, o, label) && gb__cf_check_no_trainable_captures(r);
    free(specs);
    if (!ok) return -1;
    gb_tensor *args[1 + GB_CF_MAX_INPUTS] = {pred};
    for (int i = 0; i < n; i++) args[1 + i] = in[i];
    return gb__cf_add_node(r, args, 1 + n, out);
}

int gb_cond(gb_tensor *pred, gb_branch_fn true_fn, gb_branch_fn false_fn,
            gb_tensor *const *inputs, int ninputs, const gb_cond_options *opts,
            gb_tensor **outputs) {
    static const gb_cond_options none;
    const gb_cond_options *o = opts ? opts : &none;
    const char *name = o->name && o->name[0] ? o->name : "cond";
    char label[256];
    gb__cf_label("gb_cond", name, label, sizeof label);
    if (!check_args(pred, true_fn, false_fn, inputs, ninputs, o, label)) return -1;
    if (gb__tl_trace)
        return cond_traced(pred, true_fn, false_fn, inputs, ninputs, o, label, outputs);
    return cond_eager(pred, true_fn, false_fn, inputs, ninputs, o, name, label, outputs);
}

/* ---- the If op ------------------------------------------------------------------------------- */

static int infer_if(const gb_op_call *c, gb_out_desc *out) {
    gb_cf_record *r = gb__cf_record_of(c);
    if (!r) return -1;
    if (c->nin != 1 + r->sub[0].cf->nin) {
        gb__op_error(c, GB_ERR_VALUE, "%s: takes the predicate and %d inputs, got %d inputs",
                     c->def->name, r->sub[0].cf->nin, c->nin);
        return -1;
    }
    if (c->in[0]->dtype != GB_BOOL || c->in[0]->rank != 0) {
        gb__op_error(c, GB_ERR_DTYPE, "%s: the predicate must be a bool scalar", c->def->name);
        return -1;
    }
    memcpy(out, r->out, (size_t)r->nout * sizeof *out);
    return r->nout;
}

/* Runs the branch the predicate picks; its outputs land in the current
 * scope (the graph run's). */
static bool kernel_if(const gb_op_call *c, gb_tensor **out) {
    gb_cf_record *r = gb__cf_record_of(c);
    if (!r) return false;
    const gb_cf_branch *b = &r->sub[*(const uint8_t *)c->in[0]->data ? 0 : 1];
    return gb__execute(b->cf, c->in + 1, c->nin - 1, out) >= 0;
}

const gb_op_def gb_opdef_if = {
    .name = "If",
    .arity = -1,
    .flags = GB_OPF_ALLOCATES,
    .inputs_doc = "the predicate (bool scalar), then the branches' inputs; record_id names "
                  "the record of its two traced branches (control_flow/registry.c)",
    .infer = infer_if,
    .kernel = kernel_if,
    .grad = gb__if_grad,
};
