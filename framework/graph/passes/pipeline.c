/* graph/passes/pipeline.c — the passes every trace runs, in order.
 *
 * After Grappler's default pipeline: pruning first (only needed nodes
 * reach the others), common subexpressions merged before constant folding
 * (fewer subgraphs to evaluate), arithmetic simplified on the folded
 * constants, then elementwise chains fused. The memory plan runs when the
 * plan is built (plan.c), on this graph and on every shape specialization.
 *
 * The graph as traced is kept beside the optimized one, so the trace
 * event and the Graphs dashboard can show both, and each pass's node count
 * and cost are recorded. Any pass can be turned off per function
 * (gb_function_options.passes_off) to debug a graph as it was written.
 */
#include <stdlib.h>

#include "graph/internal.h"

static const struct {
    const char *name;
    gb_graph_pass bit;
    bool (*run)(gb_concrete_function *cf);
} passes[] = {
    {"pruning", GB_PASS_PRUNING, gb__pass_prune},
    {"cse", GB_PASS_CSE, gb__pass_cse},
    {"constant_folding", GB_PASS_CONSTANT_FOLDING, gb__pass_constant_fold},
    {"arithmetic", GB_PASS_ARITHMETIC, gb__pass_arithmetic},
    {"fusion", GB_PASS_FUSION, gb__pass_fuse_elementwise},
};

/* The traced graph moves to cf->traced; cf->graph becomes its copy. */
static bool keep_traced(gb_concrete_function *cf) {
    cf->traced_outputs = malloc((size_t)(cf->nout ? cf->nout : 1) * sizeof *cf->traced_outputs);
    if (!cf->traced_outputs) return false;
    memcpy(cf->traced_outputs, cf->outputs, (size_t)cf->nout * sizeof *cf->outputs);
    gb_rewrite rw;
    if (!gb__rewrite_begin(&rw, cf)) return false;
    rw.keep_all = true;
    rw.keep_old = true;
    cf->traced = cf->graph;
    return gb__rewrite_commit(&rw);
}

bool gb__optimize(gb_concrete_function *cf) {
    cf->stats.nodes_traced = cf->graph.n;
    if (!keep_traced(cf)) {
        if (gb_ok()) gb__error(GB_ERR_MEMORY, NULL, "out of memory optimizing '%s'", cf->owner->name);
        return false;
    }
    cf->stats.npasses = 0;
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
        gb_pass_stats *st = &cf->stats.passes[cf->stats.npasses++];
        *st = (gb_pass_stats){.pass = passes[i].name, .ran = !(cf->passes_off & passes[i].bit)};
        double t0 = gb__now_us();
        if (st->ran && !passes[i].run(cf)) return false;
        if (i == 0) cf->prune = st->ran; /* later rebuilds drop dead nodes only after it */
        st->ms = (gb__now_us() - t0) / 1000.0;
        st->nodes = cf->graph.n;
    }
    return true;
}
