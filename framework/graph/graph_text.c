/* graph/graph_text.c — concrete functions and their graphs as text.
 *
 * A signature reads like a C prototype with the captures and outputs
 * (TensorFlow's pretty_printed_concrete_signatures):
 *
 *   double(a: float32[]) -> (float32[])
 *   train_step(x: float32[-1,784], y: int32[-1]) captures dense/kernel, dense/bias -> ()
 *
 * A graph prints one node per line, in execution order, inputs by name
 * (":k" for an output other than the first), control edges as "^name",
 * the variable a variable op reads or writes after its type, and the
 * attributes by name (ops.def's schema, printed by ops/attr_text.c):
 *
 *   dense/ReadVariableOp = ReadVariableOp 'dense/kernel'() -> float32[784,10]
 *   dense/MatMul = MatMul(x, dense/ReadVariableOp) {transpose_a=false, transpose_b=false} -> float32[-1,10]
 *   return (dense/BiasAdd)
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/internal.h"

/* A growing string. */
typedef struct text {
    char *s;
    size_t len, cap;
    bool failed;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = true;
            return;
        }
        if (t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? 2 * t->cap : 1024;
        while (cap < t->len + (size_t)n + 1) cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

static char *finish(text *t) {
    if (t->failed || !t->s) {
        free(t->s);
        gb__error(GB_ERR_MEMORY, NULL, "out of memory printing a graph");
        return NULL;
    }
    return t->s;
}

static void put_spec(text *t, gb_dtype dt, int rank, const int64_t *shape) {
    put(t, "%s[", gb_dtype_name(dt));
    for (int d = 0; d < rank; d++) put(t, "%s%lld", d ? "," : "", (long long)shape[d]);
    put(t, "]");
}

static void put_edge(text *t, const gb_graph *g, gb_edge e) {
    put(t, "%s", g->nodes[e.node].name);
    if (e.out) put(t, ":%d", e.out);
}

/* ---- signatures ------------------------------------------------------------------------ */

static void put_signature(text *t, gb_concrete_function *cf) {
    const gb_function *f = cf->owner;
    char name[64], val[96];
    put(t, "%s(", f->name);
    for (int i = 0; i < cf->nin; i++) {
        const gb_tensor_spec *s = &cf->sig.in[i];
        put(t, "%s%s: ", i ? ", " : "", gb__input_name(f, i, name, sizeof name));
        put_spec(t, s->dtype, s->rank, s->shape);
    }
    for (int i = 0; i < cf->sig.nstatic; i++)
        put(t, "%s%s=%s", cf->nin || i ? ", " : "", cf->sig.st[i].name,
            gb__static_text(&cf->sig.st[i], val, sizeof val));
    put(t, ")");
    for (int i = 0; i < cf->ncaptures; i++) {
        gb_variable *v = gb__variable_by_id(cf->captures[i]);
        put(t, "%s%s", i ? ", " : " captures ", v ? gb_variable_name(v) : "(freed variable)");
    }
    put(t, " -> (");
    for (int k = 0; k < cf->nout; k++) {
        const gb_out_desc *d = gb__graph_desc(&cf->graph, cf->outputs[k]);
        if (k) put(t, ", ");
        put_spec(t, d->dtype, d->rank, d->shape);
    }
    put(t, ")");
}

const char *gb__concrete_signature(gb_concrete_function *cf) {
    if (!cf->sig_text) {
        text t = {0};
        put_signature(&t, cf);
        cf->sig_text = finish(&t);
    }
    return cf->sig_text ? cf->sig_text : "";
}

const char *gb_concrete_signature_text(const gb_concrete_function *cf) {
    return cf ? gb__concrete_signature((gb_concrete_function *)cf) : "";
}

const char *gb_function_concrete_signatures(gb_function *f) {
    if (!f) return "";
    text t = {0};
    for (int i = 0; i < f->ncache; i++) {
        put_signature(&t, f->cache[i]);
        put(&t, "\n");
    }
    if (!f->ncache) put(&t, "%s", "");
    free(f->signatures_text);
    f->signatures_text = finish(&t);
    return f->signatures_text ? f->signatures_text : "";
}

/* ---- graphs ------------------------------------------------------------------------------ */

/* A fused node's program: the ops it replaced, by name, each with its
 * operands (s<k>: step k's result, in<k>: the node's input k). */
static void put_program(text *t, const gb_fused_program *p) {
    put(t, " {steps=[");
    for (int s = 0; s < p->nsteps; s++) {
        const gb_fused_step *st = &p->steps[s];
        put(t, "%s%s(%s%d", s ? ", " : "", gb_op_type_name(st->op), st->a < 0 ? "in" : "s",
            st->a < 0 ? -1 - st->a : st->a);
        if (st->kind != GB_FUSED_MAP)
            put(t, ",%s%d", st->b < 0 ? "in" : "s", st->b < 0 ? -1 - st->b : st->b);
        put(t, ") \"%s\"", st->name);
    }
    put(t, "]}");
}

/* A node's attributes by the op's schema (ops/attr_text.c), in style st. */
static void put_schema_attrs(text *t, const gb_node *nd, const gb_attrs_style *st) {
    char small[512];
    int n = gb__attrs_print(nd->op, &nd->attrs, st, small, sizeof small);
    if (n < 0) {
        t->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        put(t, "%s", small);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        t->failed = true;
        return;
    }
    gb__attrs_print(nd->op, &nd->attrs, st, big, (size_t)n + 1);
    put(t, "%s", big);
    free(big);
}

static void put_attrs(text *t, const gb_node *nd) {
    if (nd->op == GB_OP_FUSED_ELEMENTWISE && nd->payload) {
        put_program(t, nd->payload);
        return;
    }
    const gb_attrs_style st = {.omit_variable = true};
    size_t before = t->len;
    put(t, " ");
    put_schema_attrs(t, nd, &st);
    if (t->s && t->len == before + 1) t->s[t->len = before] = '\0'; /* none: no space either */
}

static void put_node(text *t, const gb_graph *g, const gb_node *nd) {
    char var[256];
    gb__attrs_variable_label(nd->op, &nd->attrs, var, sizeof var);
    put(t, "%s = %s%s%s(", nd->name, gb_op_type_name(nd->op), var[0] ? " " : "", var);
    for (int i = 0; i < nd->nin; i++) {
        if (i) put(t, ", ");
        put_edge(t, g, nd->in[i]);
    }
    if (nd->after >= 0) put(t, "%s^%s", nd->nin ? ", " : "", g->nodes[nd->after].name);
    put(t, ")");
    put_attrs(t, nd);
    if (nd->nout) put(t, " -> ");
    for (int k = 0; k < nd->nout; k++) {
        if (k) put(t, ", ");
        put_spec(t, nd->out[k].dtype, nd->out[k].rank, nd->out[k].shape);
    }
    put(t, "\n");
}

/* The nodes of g in `order` (all of them, in program order, when NULL),
 * then the outputs; cached in *cache. */
static const char *graph_text(const gb_graph *g, const int32_t *order, int n,
                              const gb_edge *outputs, int nout, char **cache) {
    if (*cache) return *cache;
    text t = {0};
    for (int i = 0; i < n; i++) put_node(&t, g, &g->nodes[order ? order[i] : i]);
    put(&t, "return (");
    for (int k = 0; k < nout; k++) {
        if (k) put(&t, ", ");
        put_edge(&t, g, outputs[k]);
    }
    put(&t, ")\n");
    *cache = finish(&t);
    return *cache ? *cache : "";
}

/* ---- graphs as JSON (for the store and the Graphs dashboard) ---------------------------- */

static void put_json_str(text *t, const char *s) {
    put(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') put(t, "\\%c", *p);
        else if (*p < 0x20) put(t, "\\u%04x", *p);
        else put(t, "%c", *p);
    }
    put(t, "\"");
}

static void put_json_edge(text *t, const gb_graph *g, gb_edge e) {
    if (!e.out) {
        put_json_str(t, g->nodes[e.node].name);
        return;
    }
    char buf[320];
    snprintf(buf, sizeof buf, "%s:%d", g->nodes[e.node].name, e.out);
    put_json_str(t, buf);
}

/* "attrs": the node's attributes by name, variables by their names:
 * {"axes":[2],"keepdims":true}, {"variable":"dense/kernel"}. */
static void put_json_attrs(text *t, const gb_node *nd) {
    put(t, "\"attrs\":");
    put_schema_attrs(t, nd, &(gb_attrs_style){.json = true});
}

static void put_json_node(text *t, const gb_graph *g, const gb_node *nd) {
    put(t, "{\"name\":");
    put_json_str(t, nd->name);
    put(t, ",\"op\":");
    put_json_str(t, gb_op_type_name(nd->op));
    /* Every kernel runs on the host's cores; named so the dashboard's
     * colour-by-device reads the same once there is more than one. */
    put(t, ",\"device\":\"CPU:0\",\"inputs\":[");
    for (int i = 0; i < nd->nin; i++) {
        if (i) put(t, ",");
        put_json_edge(t, g, nd->in[i]);
    }
    put(t, "],\"control\":[");
    if (nd->after >= 0) put_json_str(t, g->nodes[nd->after].name);
    put(t, "],");
    put_json_attrs(t, nd);
    put(t, ",\"outputs\":[");
    for (int k = 0; k < nd->nout; k++) {
        put(t, "%s{\"dtype\":\"%s\",\"shape\":[", k ? "," : "", gb_dtype_name(nd->out[k].dtype));
        for (int d = 0; d < nd->out[k].rank; d++)
            put(t, "%s%lld", d ? "," : "", (long long)nd->out[k].shape[d]);
        put(t, "]}");
    }
    put(t, "]");
    if (nd->op == GB_OP_FUSED_ELEMENTWISE && nd->payload) {
        const gb_fused_program *p = nd->payload;
        put(t, ",\"fused\":[");
        for (int s = 0; s < p->nsteps; s++) {
            put(t, "%s{\"op\":\"%s\",\"name\":", s ? "," : "", gb_op_type_name(p->steps[s].op));
            put_json_str(t, p->steps[s].name);
            put(t, "}");
        }
        put(t, "]");
    }
    put(t, "}");
}

/* {"nodes": [...], "outputs": [...]}: the format of webui/http_api.md's
 * /api/graphs/graph. */
static char *graph_json(const gb_graph *g, const int32_t *order, int n, const gb_edge *outputs,
                        int nout) {
    text t = {0};
    put(&t, "{\"nodes\":[");
    for (int i = 0; i < n; i++) {
        if (i) put(&t, ",");
        put_json_node(&t, g, &g->nodes[order ? order[i] : i]);
    }
    put(&t, "],\"outputs\":[");
    for (int k = 0; k < nout; k++) {
        if (k) put(&t, ",");
        put_json_edge(&t, g, outputs[k]);
    }
    put(&t, "]}");
    return finish(&t);
}

char *gb__concrete_graph_json(const gb_concrete_function *cf, bool traced) {
    return traced ? graph_json(&cf->traced, NULL, cf->traced.n, cf->traced_outputs, cf->nout)
                  : graph_json(&cf->graph, cf->plan->order, cf->plan->norder, cf->outputs,
                               cf->nout);
}

/* The graph as it runs: the plan's nodes in the plan's order. */
const char *gb__concrete_graph(gb_concrete_function *cf) {
    return graph_text(&cf->graph, cf->plan->order, cf->plan->norder, cf->outputs, cf->nout,
                      &cf->graph_text);
}

/* The graph as traced: every node, in program order. */
static const char *traced_text(gb_concrete_function *cf) {
    return graph_text(&cf->traced, NULL, cf->traced.n, cf->traced_outputs, cf->nout,
                      &cf->traced_text);
}

const char *gb_concrete_traced_graph_text(const gb_concrete_function *cf) {
    return cf ? traced_text((gb_concrete_function *)cf) : "";
}

const char *gb_function_traced_graph_text(gb_function *f) {
    return f && f->latest ? traced_text(f->latest) : "";
}

gb_graph_stats gb_concrete_graph_stats(const gb_concrete_function *cf) {
    return cf ? cf->stats : (gb_graph_stats){0};
}

gb_graph_stats gb_function_graph_stats(const gb_function *f) {
    return f && f->latest ? f->latest->stats : (gb_graph_stats){0};
}

const char *gb_concrete_graph_text(const gb_concrete_function *cf) {
    return cf ? gb__concrete_graph((gb_concrete_function *)cf) : "";
}

int gb_concrete_node_count(const gb_concrete_function *cf) { return cf ? cf->plan->norder : 0; }
