/* graph/passes/schedule.c — an order of the nodes that needs less memory
 * than program order.
 *
 * Program order is what the traced code did, and a train step does
 * everything in phases: all the gradients, then all the updates. So every
 * gradient is alive at once — the MLP's 784x256 kernel gradient beside
 * every other — although each update could run, and free its gradient, as
 * soon as that gradient is ready. This reorders within what the graph
 * allows and no further:
 *   - data edges;
 *   - every access to one variable (reads, writes) in program order, and a
 *     write after every reader of a value read from that variable before
 *     it (a read is a view of the variable's memory);
 *   - an optimizer's updates in program order (they share its step
 *     counter, which the last one advances);
 *   - side effects that name no variable (Print, random draws, numerics
 *     checks) in program order among themselves.
 * Tensorflow's automatic control dependencies draw the same lines. Among
 * the nodes ready to run it picks the one that frees the most bytes (or
 * allocates the fewest), program order breaking ties: greedy, so the
 * memory plan keeps this order only when its arena comes out smaller.
 */
#include <stdlib.h>
#include <string.h>

#include "graph/internal.h"

typedef struct deps {
    int32_t *first, *next, *target; /* adjacency: edges pos -> later pos */
    int n, cap;
    int32_t *waiting;               /* per position: unmet dependencies */
} deps;

static bool add_dep(deps *d, int from, int to) {
    if (from < 0 || from == to) return true;
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 256;
        int32_t *next = realloc(d->next, (size_t)cap * sizeof *next);
        if (next) d->next = next;
        int32_t *target = next ? realloc(d->target, (size_t)cap * sizeof *target) : NULL;
        if (!target) return false;
        d->target = target;
        d->cap = cap;
    }
    d->target[d->n] = to;
    d->next[d->n] = d->first[from];
    d->first[from] = d->n++;
    d->waiting[to]++;
    return true;
}

/* Positions are indices into the program order; pos_of maps node -> pos. */
typedef struct sched {
    const gb_graph *g;
    const int32_t *order;
    int n;
    int32_t *pos_of;
    deps d;
} sched;

/* Orders pos after the last earlier access to state `id` (a variable's
 * id, or an optimizer's as a negative number) and records it as the last. */
static bool access_dep(sched *s, int pos, int64_t id, int64_t *last_var_ids,
                       int32_t *last_var_pos, int *nvars) {
    int slot = 0;
    while (slot < *nvars && last_var_ids[slot] != id) slot++;
    if (slot == *nvars) last_var_ids[(*nvars)++] = id, last_var_pos[slot] = -1;
    if (!add_dep(&s->d, last_var_pos[slot], pos)) return false;
    last_var_pos[slot] = pos;
    return true;
}

/* An optimizer's update ops also share its step counter, which no
 * variable names: the step's last update advances it, and the others
 * read it (Adam's bias correction). Moved ahead of another variable's
 * update, the last one made that update run as the next step, so a
 * traced Adam step corrected its first step as if it were the second. */
static int optimizer_slot(gb_op_id op) {   /* its "optimizer_id" attribute's slot, or -1 */
    int n;
    const gb_attr_def *a = gb__op_attrs(op, &n);
    for (int k = 0; k < n; k++)
        if (strcmp(a[k].name, "optimizer_id") == 0) return a[k].slot;
    return -1;
}

static bool variable_deps(sched *s, int pos, int64_t *last_var_ids, int32_t *last_var_pos,
                          int *nvars) {
    const gb_node *nd = &s->g->nodes[s->order[pos]];
    const int opt = optimizer_slot(nd->op);
    if (opt >= 0 &&
        !access_dep(s, pos, -1 - nd->attrs.i[opt], last_var_ids, last_var_pos, nvars))
        return false;
    for (int k = 0; k < nd->attrs.nvars; k++) {
        int64_t id = nd->attrs.vars[k];
        /* A write waits for the readers of what was read before it. */
        if (nd->op != GB_OP_READ_VARIABLE)
            for (int q = 0; q < pos; q++) {
                const gb_node *r = &s->g->nodes[s->order[q]];
                if (r->op != GB_OP_READ_VARIABLE || r->attrs.vars[0] != id) continue;
                for (int c = q + 1; c < pos; c++) {
                    const gb_node *user = &s->g->nodes[s->order[c]];
                    for (int i = 0; i < user->nin; i++)
                        if (user->in[i].node == s->order[q] && !add_dep(&s->d, c, pos)) return false;
                }
            }
        if (!access_dep(s, pos, id, last_var_ids, last_var_pos, nvars)) return false;
    }
    return true;
}

static bool build_deps(sched *s) {
    int64_t *var_ids = malloc((size_t)(5 * s->n + 1) * sizeof *var_ids); /* 4 vars + an optimizer */
    int32_t *var_pos = malloc((size_t)(5 * s->n + 1) * sizeof *var_pos);
    int nvars = 0, last_effect = -1;
    bool ok = var_ids && var_pos;
    for (int pos = 0; ok && pos < s->n; pos++) {
        const gb_node *nd = &s->g->nodes[s->order[pos]];
        for (int i = 0; ok && i < nd->nin; i++) ok = add_dep(&s->d, s->pos_of[nd->in[i].node], pos);
        if (!ok || !(nd->flags & GB_NODE_STATEFUL)) continue;
        if (nd->attrs.nvars > 0) {
            ok = variable_deps(s, pos, var_ids, var_pos, &nvars);
        } else {
            ok = add_dep(&s->d, last_effect, pos);
            last_effect = pos;
        }
    }
    free(var_ids);
    free(var_pos);
    return ok;
}

/* ---- the greedy order ---------------------------------------------------------------- */

static int64_t out_bytes(const gb_node *nd) {
    if (gb_op_table[nd->op]->flags & (GB_OPF_VIEW | GB_OPF_ALLOCATES) || nd->op == GB_OP_CONST ||
        nd->op == GB_OP_PLACEHOLDER)
        return 0;
    int64_t b = 0;
    for (int k = 0; k < nd->nout; k++) {
        int64_t n = gb__shape_size(nd->out[k].rank, nd->out[k].shape);
        b += n > 0 ? n * (int64_t)gb_dtype_size(nd->out[k].dtype) : 0;
    }
    return b;
}

/* Bytes running pos would free (inputs it reads last) minus what it makes. */
static int64_t gain(const sched *s, int pos, const int32_t *readers_left) {
    const gb_node *nd = &s->g->nodes[s->order[pos]];
    int64_t freed = 0;
    for (int i = 0; i < nd->nin; i++) {
        const gb_node *in = &s->g->nodes[nd->in[i].node];
        bool twice = false;
        for (int j = 0; j < i; j++) twice |= nd->in[j].node == nd->in[i].node;
        if (!twice && readers_left[s->pos_of[nd->in[i].node]] == 1) freed += out_bytes(in);
    }
    return freed - out_bytes(nd);
}

static void greedy(sched *s, int32_t *readers_left, bool *done, int32_t *out) {
    for (int k = 0; k < s->n; k++) {
        int best = -1;
        int64_t best_gain = 0;
        for (int pos = 0; pos < s->n; pos++) {
            if (done[pos] || s->d.waiting[pos]) continue;
            int64_t g = gain(s, pos, readers_left);
            if (best < 0 || g > best_gain) best = pos, best_gain = g;
        }
        done[best] = true;
        out[k] = s->order[best];
        const gb_node *nd = &s->g->nodes[s->order[best]];
        for (int i = 0; i < nd->nin; i++) readers_left[s->pos_of[nd->in[i].node]]--;
        for (int e = s->d.first[best]; e >= 0; e = s->d.next[e]) s->d.waiting[s->d.target[e]]--;
    }
}

bool gb__schedule_for_memory(const gb_concrete_function *cf, int32_t *order, int n) {
    const gb_graph *g = &cf->graph;
    sched s = {.g = g, .order = order, .n = n};
    size_t sz = (size_t)(n ? n : 1);
    s.pos_of = malloc((size_t)(g->n ? g->n : 1) * sizeof *s.pos_of);
    s.d.first = malloc(sz * sizeof *s.d.first);
    s.d.waiting = calloc(sz, sizeof *s.d.waiting);
    int32_t *readers_left = calloc(sz, sizeof *readers_left);
    bool *done = calloc(sz, sizeof *done);
    int32_t *out = malloc(sz * sizeof *out);
    bool ok = s.pos_of && s.d.first && s.d.waiting && readers_left && done && out;
    if (ok) {
        for (int i = 0; i < g->n; i++) s.pos_of[i] = -1;
        for (int pos = 0; pos < n; pos++) s.pos_of[order[pos]] = pos, s.d.first[pos] = -1;
        for (int pos = 0; pos < n; pos++)
            for (int i = 0; i < g->nodes[order[pos]].nin; i++)
                readers_left[s.pos_of[g->nodes[order[pos]].in[i].node]]++;
        for (int k = 0; k < cf->nout; k++) readers_left[s.pos_of[cf->outputs[k].node]]++;
        ok = build_deps(&s);
    }
    if (ok) {
        greedy(&s, readers_left, done, out);
        memcpy(order, out, sz * sizeof *out);
    }
    free(s.pos_of);
    free(s.d.first);
    free(s.d.next);
    free(s.d.target);
    free(s.d.waiting);
    free(readers_left);
    free(done);
    free(out);
    return ok;
}
