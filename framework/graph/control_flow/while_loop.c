/* graph/control_flow/while_loop.c — gb_while_loop (tf.while_loop).
 *
 * Eagerly it is a C loop: cond, then body, in the name scopes
 * "while/cond" and "while/body", with tapes recording the body's ops as
 * they run. While tracing, cond and body are traced once each into
 * sub-graphs over Placeholders of the loop variables' specs (a dim a shape
 * invariant frees is -1), and one While node runs the loop each time the
 * graph runs (while_op.c). When a tape records the loop as it is traced,
 * the node also outputs, for each variable the body changes, its value at
 * every iteration, which the gradient runs backwards over (while_grad.c).
 *
 * Both forms hold a loop variable to its dtype, rank and the dims no
 * invariant frees — checked on every iteration eagerly, on the traced
 * body's output shapes and again when the graph runs — and stop with an
 * error naming the loop after max_iterations.
 */
#include <stdio.h>

#include "graph/control_flow/internal.h"

typedef struct loop {
    gb_branch_fn cond, body;
    gb_tensor *const *vars;
    int n;
    const gb_while_options *o;
    const char *name;
    char label[256];             /* "gb_while_loop 'while' in function 'f'" */
    uint8_t free_dims[GB_MAX_OUTPUTS];
    char names[GB_MAX_OUTPUTS][32];
    const char *name_ptrs[GB_MAX_OUTPUTS];
} loop;

/* ---- checks ----------------------------------------------------------------------------- */

static bool check_invariant(loop *l, int k) {
    const gb_tensor *v = l->vars[k];
    if (k >= l->o->nshape_invariants) return true;
    const gb_shape_invariant *inv = &l->o->shape_invariants[k];
    bool fits = inv->rank == v->rank;
    for (int d = 0; fits && d < v->rank; d++) {
        if (inv->shape[d] < 0)
            l->free_dims[k] |= (uint8_t)(1u << d);
        else
            fits = gb__dims_match(inv->shape[d], v->shape[d]);
    }
    if (fits) return true;
    char a[96], b[96];
    gb__error(GB_ERR_SHAPE, "While",
              "%s: loop variable %d ('%s') is %s on entry, which does not fit "
              "its shape invariant %s",
              l->label, k, l->names[k], gb__shape_fmt(v->rank, v->shape, a, sizeof a),
              gb__shape_fmt(inv->rank, inv->shape, b, sizeof b));
    return false;
}

static bool check_args(loop *l) {
    const gb_while_options *o = l->o;
    if (!l->cond || !l->body || l->n < 1 || l->n > GB_MAX_OUTPUTS || !l->vars ||
        o->max_iterations < 0 || o->nshape_invariants < 0 || o->nshape_invariants > l->n ||
        (o->nshape_invariants && !o->shape_invariants) || o->nnames < 0) {
        gb__error(GB_ERR_VALUE, "While",
                  "%s: need cond and body functions, 1 to %d loop variables, "
                  "max_iterations >= 0 and at most one shape invariant per variable",
                  l->label, GB_MAX_OUTPUTS);
        return false;
    }
    for (int k = 0; k < l->n; k++) {
        if (k < o->nnames && o->names && o->names[k])
            snprintf(l->names[k], sizeof l->names[k], "%s", o->names[k]);
        else
            snprintf(l->names[k], sizeof l->names[k], "loop_var%d", k);
        l->name_ptrs[k] = l->names[k];
        if (!l->vars[k]) {
            if (gb_ok())
                gb__error(GB_ERR_VALUE, "While", "%s: loop variable %d ('%s') is NULL",
                          l->label, k, l->names[k]);
            return false;
        }
    }
    for (int k = 0; k < l->n; k++)
        if (!check_invariant(l, k)) return false;
    return true;
}

/* Whether the body's output k (dtype, rank, shape; -1 dims unknown) keeps
 * what loop variable k must; an error naming the loop, the variable and
 * the fix otherwise. `when` says which check found it. */
static bool check_next(const loop *l, int k, gb_dtype dt, int rank, const int64_t *shape,
                       const char *when) {
    const gb_tensor *v = l->vars[k];
    int bad = dt != v->dtype || rank != v->rank ? -2 : -1;
    for (int d = 0; bad == -1 && d < rank; d++)
        if (!(l->free_dims[k] >> d & 1) && !gb__dims_match(v->shape[d], shape[d])) bad = d;
    if (bad == -1) return true;
    char a[96], b[96], what[96] = "its dtype or rank changed";
    if (bad >= 0)
        snprintf(what, sizeof what, "dim %d changed; give it a shape invariant with -1 there",
                 bad);
    gb__error(bad >= 0 ? GB_ERR_SHAPE : GB_ERR_DTYPE, "While",
              "%s: loop variable %d ('%s') is %s %s on entry but %s %s %s (%s)",
              l->label, k, l->names[k], gb_dtype_name(v->dtype),
              gb__shape_fmt(v->rank, v->shape, a, sizeof a), gb_dtype_name(dt),
              gb__shape_fmt(rank, shape, b, sizeof b), when, what);
    return false;
}

static bool check_cond_output(const loop *l, int n, const gb_tensor *p) {
    if (n != 1) {
        if (gb_ok())
            gb__error(GB_ERR_VALUE, "While",
                      "%s: its cond returned %d outputs; it must return one "
                      "bool scalar",
                      l->label, n);
        return false;
    }
    return gb__cf_check_pred(p, l->label, "the output of its cond");
}

static bool check_body_count(const loop *l, int n) {
    if (n == l->n) return true;
    if (gb_ok())
        gb__error(GB_ERR_VALUE, "While",
                  "%s: its body returned %d outputs for %d loop variables", l->label,
                  n, l->n);
    return false;
}

/* ---- eagerly: a C loop -------------------------------------------------------------------- */

/* Calls fn in the loop's scope "<name>/<part>"; returns its output count. */
static int call_part(const loop *l, const char *part, gb_branch_fn fn, gb_tensor *const *in,
                     gb_tensor **out) {
    char scope[192];
    snprintf(scope, sizeof scope, "%s/%s", l->name, part);
    gb_name_scope_push(scope);
    gb_call_site site = gb__call_site(); /* the user code moves it */
    int n = fn(l->o->user, in, l->n, out);
    gb__call_site_restore(site);
    gb_name_scope_pop();
    return gb_ok() ? n : -1;
}

static int while_eager(loop *l, gb_tensor **outputs) {
    gb_tensor *cur[GB_MAX_OUTPUTS], *next[GB_CF_OUTPUT_ROOM];
    for (int k = 0; k < l->n; k++) cur[k] = l->vars[k];
    for (int64_t iter = 0;; iter++) {
        gb_tensor *p[GB_CF_OUTPUT_ROOM] = {0};
        int nc = call_part(l, "cond", l->cond, cur, p);
        if (!check_cond_output(l, nc, p[0])) return -1;
        if (!*(const uint8_t *)p[0]->data) break;
        if (l->o->max_iterations && iter >= l->o->max_iterations) {
            gb__error(GB_ERR_VALUE, "While",
                      "%s: its cond still holds after max_iterations = %lld "
                      "iterations",
                      l->label, (long long)l->o->max_iterations);
            return -1;
        }
        int nb = call_part(l, "body", l->body, cur, next);
        if (!check_body_count(l, nb)) return -1;
        char when[48];
        snprintf(when, sizeof when, "after iteration %lld", (long long)iter + 1);
        for (int k = 0; k < l->n; k++) {
            if (!next[k]) {
                gb__error(GB_ERR_VALUE, "While", "%s: its body's output %d is NULL",
                          l->label, k);
                return -1;
            }
            if (!check_next(l, k, next[k]->dtype, next[k]->rank, next[k]->shape, when)) return -1;
        }
        memcpy(cur, next, (size_t)l->n * sizeof *cur);
    }
    memcpy(outputs, cur, (size_t)l->n * sizeof *cur);
    return l->n;
}

/* ---- traced: a While node ------------------------------------------------------------------ */

static gb_tensor_spec var_spec(const loop *l, int k) {
    gb_tensor_spec s = gb__cf_spec_of(l->vars[k]);
    for (int d = 0; d < s.rank; d++)
        if (l->free_dims[k] >> d & 1) s.shape[d] = -1;
    return s;
}

/* Traces cond and body and checks what they return. */
static bool trace_parts(loop *l, gb_cf_record *r, gb_tensor_spec *specs) {
    if (!gb__cf_trace_branch(r, 0, "cond", l->cond, l->o->user, specs, l->n, l->name_ptrs))
        return false;
    const gb_cf_branch *c = &r->sub[0];
    const gb_out_desc *p = c->cf->nout == 1 ? gb__cf_output(c, 0) : NULL;
    if (!p) return check_cond_output(l, c->cf->nout, NULL);
    if (p->dtype != GB_BOOL || p->rank != 0) {
        char s[96];
        gb__error(GB_ERR_DTYPE, "While",
                  "%s: the output of its cond must be a bool scalar, got %s %s",
                  l->label, gb_dtype_name(p->dtype), gb__shape_fmt(p->rank, p->shape, s, sizeof s));
        return false;
    }
    if (!gb__cf_trace_branch(r, 1, "body", l->body, l->o->user, specs, l->n, l->name_ptrs))
        return false;
    const gb_cf_branch *b = &r->sub[1];
    if (!check_body_count(l, b->cf->nout)) return false;
    for (int k = 0; k < l->n; k++) {
        const gb_out_desc *d = gb__cf_output(b, k);
        if (!check_next(l, k, d->dtype, d->rank, d->shape, "after the body (as traced)"))
            return false;
        /* A variable the body passes through unchanged needs no stack. */
        gb_edge e = b->cf->outputs[k];
        r->stacked[k] = !(e.node == b->cf->input_nodes[k] && e.out == 0);
    }
    return true;
}

/* The node's outputs: the loop variables, and with stacks, each changing
 * variable's values [iterations, ...] and the iteration count. */
static bool node_outputs(const loop *l, gb_cf_record *r, const gb_tensor_spec *specs) {
    r->nout = l->n;
    for (int k = 0; k < l->n; k++) {
        r->out[k] = (gb_out_desc){.dtype = specs[k].dtype, .rank = specs[k].rank};
        memcpy(r->out[k].shape, specs[k].shape, sizeof specs[k].shape);
        r->nstacked += r->stacks && r->stacked[k];
    }
    if (!r->stacks) return true;
    if (l->n + r->nstacked + 1 > GB_MAX_OUTPUTS) {
        gb__error(GB_ERR_VALUE, "While",
                  "%s: %d loop variables, %d of which change, are too many for "
                  "a loop a GradientTape records (it keeps each changing one's values: at most "
                  "%d in all)",
                  l->label, l->n, r->nstacked, GB_MAX_OUTPUTS - 1);
        return false;
    }
    for (int k = 0; k < l->n; k++) {
        if (!r->stacked[k]) continue;
        if (specs[k].rank + 1 > GB_MAX_RANK) {
            gb__error(GB_ERR_SHAPE, "While",
                      "%s: loop variable %d ('%s') has rank %d; a loop a "
                      "GradientTape records keeps its values per iteration at rank %d at most",
                      l->label, k, l->names[k], specs[k].rank, GB_MAX_RANK - 1);
            return false;
        }
        gb_out_desc *s = &r->out[r->nout++];
        *s = (gb_out_desc){.dtype = specs[k].dtype, .rank = specs[k].rank + 1, .shape = {-1}};
        memcpy(s->shape + 1, specs[k].shape, (size_t)specs[k].rank * sizeof *s->shape);
    }
    r->out[r->nout++] = (gb_out_desc){.dtype = GB_I64, .rank = 0};
    return true;
}

static bool any_float(const loop *l) {
    for (int k = 0; k < l->n; k++)
        if (gb_dtype_is_float(l->vars[k]->dtype)) return true;
    return false;
}

static int while_traced(loop *l, gb_tensor **outputs) {
    gb_cf_record *r = gb__cf_record_new(GB_OP_WHILE);
    if (!r) return -1;
    gb__cf_name_node(r, "while", l->o->name);
    r->nvars = l->n;
    r->max_iterations = l->o->max_iterations;
    memcpy(r->free_dims, l->free_dims, sizeof r->free_dims);
    memcpy(r->var_names, l->names, sizeof r->var_names);
    gb_tensor_spec specs[GB_MAX_OUTPUTS];
    for (int k = 0; k < l->n; k++) specs[k] = var_spec(l, k);
    if (!trace_parts(l, r, specs)) return -1;
    r->stacks = any_float(l) && gb__cf_recorded(l->vars, l->n);
    if (!node_outputs(l, r, specs) || !gb__cf_check_no_trainable_captures(r)) return -1;
    gb_tensor *out[GB_MAX_OUTPUTS];
    if (gb__cf_add_node(r, l->vars, l->n, out) < 0) return -1;
    memcpy(outputs, out, (size_t)l->n * sizeof *out);
    return l->n;
}

int gb_while_loop(gb_branch_fn cond_fn, gb_branch_fn body_fn, gb_tensor *const *loop_vars,
                  int nvars, const gb_while_options *opts, gb_tensor **outputs) {
    static const gb_while_options none;
    loop l = {.cond = cond_fn, .body = body_fn, .vars = loop_vars, .n = nvars,
              .o = opts ? opts : &none};
    l.name = l.o->name && l.o->name[0] ? l.o->name : "while";
    gb__cf_label("gb_while_loop", l.name, l.label, sizeof l.label);
    if (!check_args(&l)) return -1;
    return gb__tl_trace ? while_traced(&l, outputs) : while_eager(&l, outputs);
}
