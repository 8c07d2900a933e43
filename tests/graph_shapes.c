/* graph_shapes.c — generated graphs shaped like real models, as the JSON
 * the engine writes (webui/http_api.md), for the Graphs page's tests and
 * benchmarks (webui_fixtures graph / many_traces, graphs_page.bench.mjs):
 *
 *   10k100    10,000 ops in 100 scopes block_00 .. block_99
 *   10x1000   10 scopes of 1,000 ops
 *   flat5k    5,000 ops, no scope at all
 *   scope5k   one scope (gradients) of 5,000 ops
 *   repeat12  a transformer-like layer (attention, layer norms, MLP)
 *             repeated 12 times under encoder/layer_0 .. layer_11
 *
 * A block is a chain that cycles through ten op types: each op reads the
 * one before it, a binary op also the one three back, and every 25th one
 * the previous block's op 50 (an edge across scopes); the first op reads
 * the previous block's last.
 */
#include "graph_shapes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text {
    char *s;
    size_t len, cap;
    bool failed;
    int nodes;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
    for (;;) {
        if (t->failed) return;
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
        size_t cap = (t->cap ? t->cap * 2 : 1 << 16) + (size_t)n;
        char *s = realloc(t->s, cap);
        if (!s) {
            t->failed = true;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

/* One node; in1/in2 may be NULL. */
static void node(text *t, const char *name, const char *op, const char *in1, const char *in2) {
    put(t, "%s{\"name\":\"%s\",\"op\":\"%s\",\"device\":\"CPU:0\",\"inputs\":[", t->nodes ? "," : "",
        name, op);
    if (in1) put(t, "\"%s\"", in1);
    if (in2) put(t, ",\"%s\"", in2);
    put(t, "],\"control\":[],\"attrs\":{},\"outputs\":[{\"dtype\":\"float32\",\"shape\":%s}]}",
        !strcmp(op, "Const") ? "[256]" : "[-1,256]");
    t->nodes++;
}

static const char *const chain_ops[10] = {"MatMul", "Add",   "Relu", "Mul",     "Sub",
                                          "Tanh",   "Const", "Mul",  "Sigmoid", "Add"};

static bool unary(const char *op) {
    return !strcmp(op, "Relu") || !strcmp(op, "Tanh") || !strcmp(op, "Sigmoid");
}

/* The name of op i of a chain block under scope ("" : top level). */
static void chain_name(char *out, size_t cap, const char *scope, int i) {
    snprintf(out, cap, "%s%s%s_%d", scope, *scope ? "/" : "", chain_ops[i % 10], i);
}

/* A block of n ops under scope; prev: the previous block's scope (NULL
 * for the first, whose op 0 is the Placeholder "input"), prev_n its size. */
static void chain(text *t, const char *scope, int n, const char *prev, int prev_n) {
    char name[160], a[160], b[160];
    for (int i = 0; i < n; i++) {
        const char *op = chain_ops[i % 10];
        chain_name(name, sizeof name, scope, i);
        if (!strcmp(op, "Const")) {
            node(t, name, op, NULL, NULL);
            continue;
        }
        int p = i - 1 - (i >= 1 && !strcmp(chain_ops[(i - 1) % 10], "Const"));
        if (p >= 0) chain_name(a, sizeof a, scope, p);
        else if (prev) chain_name(a, sizeof a, prev, prev_n - 1);
        else snprintf(a, sizeof a, "input");
        const char *second = NULL;
        if (!unary(op) && i % 25 == 0 && prev && prev_n > 50) {
            chain_name(b, sizeof b, prev, 50);
            second = b;
        } else if (!unary(op) && i >= 3) {
            chain_name(b, sizeof b, scope, i - 3);
            second = b;
        }
        node(t, name, op, a, second);
    }
}

static void blocks(text *t, int count, int per, const char *fmt) {
    char scope[64], prev[64];
    for (int k = 0; k < count; k++) {
        snprintf(scope, sizeof scope, fmt, k);
        chain(t, scope, per, k ? prev : NULL, per);
        memcpy(prev, scope, sizeof prev);
    }
}

/* ---- a transformer-like layer ---------------------------------------------------- */

/* "<layer>/<rest>" into out. */
static const char *at(char *out, const char *layer, const char *rest) {
    snprintf(out, 160, "%s/%s", layer, rest);
    return out;
}

/* A dense projection under layer/scope reading x: kernel and bias reads,
 * MatMul, Add. Writes the Add's name into out. */
static void dense(text *t, const char *layer, const char *scope, const char *x, char *out) {
    char k[160], b[160], m[160], r[96];
    snprintf(r, sizeof r, "%s/ReadVariableOp", scope);
    at(k, layer, r);
    node(t, k, "ReadVariableOp", NULL, NULL);
    snprintf(r, sizeof r, "%s/ReadVariableOp_1", scope);
    at(b, layer, r);
    node(t, b, "ReadVariableOp", NULL, NULL);
    snprintf(r, sizeof r, "%s/MatMul", scope);
    node(t, at(m, layer, r), "MatMul", x, k);
    snprintf(r, sizeof r, "%s/Add", scope);
    node(t, at(out, layer, r), "Add", m, b);
}

/* A layer norm under layer/scope reading x; writes its output's name. */
static void layer_norm(text *t, const char *layer, const char *scope, const char *x, char *out) {
    static const char *const steps[][2] = {{"Mean", "Mean"}, {"Sub", "Sub"}, {"Square", "Square"},
                                           {"Mean_1", "Mean"}, {"Add", "Add"}, {"Rsqrt", "Rsqrt"},
                                           {"Mul", "Mul"}};
    char prev[160], name[160], r[96];
    snprintf(prev, sizeof prev, "%s", x);
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        snprintf(r, sizeof r, "%s/%s", scope, steps[i][0]);
        at(name, layer, r);
        node(t, name, steps[i][1], prev, i == 1 || i == 6 ? x : NULL);
        memcpy(prev, name, sizeof prev);
    }
    memcpy(out, prev, 160);
}

static void transformer_layer(text *t, const char *layer, const char *x, char *out) {
    char q[160], k[160], v[160], s[160], p[160], c[160], o[160], r1[160], n1[160], h[160],
        h2[160], r2[160], tmp[160];
    dense(t, layer, "attention/query", x, q);
    dense(t, layer, "attention/key", x, k);
    dense(t, layer, "attention/value", x, v);
    node(t, at(s, layer, "attention/scores/MatMul"), "MatMul", q, k);
    node(t, at(tmp, layer, "attention/scores/Mul"), "Mul", s, NULL);
    node(t, at(p, layer, "attention/Softmax"), "Softmax", tmp, NULL);
    node(t, at(c, layer, "attention/context/MatMul"), "MatMul", p, v);
    dense(t, layer, "attention/output", c, o);
    node(t, at(r1, layer, "residual/Add"), "Add", x, o);
    layer_norm(t, layer, "layer_norm", r1, n1);
    dense(t, layer, "mlp/dense", n1, h);
    node(t, at(tmp, layer, "mlp/Relu"), "Relu", h, NULL);
    dense(t, layer, "mlp/dense_1", tmp, h2);
    node(t, at(r2, layer, "residual_1/Add"), "Add", n1, h2);
    layer_norm(t, layer, "layer_norm_1", r2, out);
}

static void transformer(text *t, int layers) {
    char x[160] = "tokens", layer[64], out[160];
    node(t, "tokens", "Placeholder", NULL, NULL);
    for (int i = 0; i < layers; i++) {
        snprintf(layer, sizeof layer, "encoder/layer_%d", i);
        transformer_layer(t, layer, x, out);
        memcpy(x, out, sizeof x);
    }
    node(t, "logits/MatMul", "MatMul", x, NULL);
}

/* ---- the shapes ------------------------------------------------------------------ */

static void last_output(text *t, const char *name) { put(t, "],\"outputs\":[\"%s\"]}", name); }

char *graph_shape_json(const char *shape, int *nodes) {
    text t = {0};
    put(&t, "{\"nodes\":[");
    char last[160];
    if (!strcmp(shape, "10k100")) {
        node(&t, "input", "Placeholder", NULL, NULL);
        blocks(&t, 100, 100, "block_%02d");
        chain_name(last, sizeof last, "block_99", 99);
    } else if (!strcmp(shape, "10x1000")) {
        node(&t, "input", "Placeholder", NULL, NULL);
        blocks(&t, 10, 1000, "block_%02d");
        chain_name(last, sizeof last, "block_09", 999);
    } else if (!strcmp(shape, "flat5k") || !strcmp(shape, "scope5k")) {
        const char *scope = shape[0] == 'f' ? "" : "gradients";
        node(&t, "input", "Placeholder", NULL, NULL);
        chain(&t, scope, 5000, NULL, 0);
        chain_name(last, sizeof last, scope, 4999);
    } else if (!strcmp(shape, "repeat12")) {
        transformer(&t, 12);
        snprintf(last, sizeof last, "logits/MatMul");
    } else {
        free(t.s);
        return NULL;
    }
    last_output(&t, last);
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    if (nodes) *nodes = t.nodes;
    return t.s;
}

char *graph_chain_json(int n, int *nodes) {
    text t = {0};
    put(&t, "{\"nodes\":[");
    node(&t, "input", "Placeholder", NULL, NULL);
    int full = n / 100;
    blocks(&t, full, 100, "block_%02d");
    char last[160] = "input";
    if (full) snprintf(last, sizeof last, "block_%02d/Add_99", full - 1);
    last_output(&t, last);
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    if (nodes) *nodes = t.nodes;
    return t.s;
}
