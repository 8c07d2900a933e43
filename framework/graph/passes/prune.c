/* graph/passes/prune.c — pruning: only what an output or a stateful op
 * needs stays in the graph.
 *
 * As the seeds say of graphs, an op no output needs is not run: a value
 * computed and dropped in the traced code (a debug norm, a metric nobody
 * returned) costs nothing. Stateful nodes (assignments, prints, random
 * draws) always stay, with everything they need. The rebuild that ends
 * every pass does the work (passes/rewrite.c); this pass turns it on for
 * the rest of the pipeline.
 */
#include "graph/internal.h"

bool gb__pass_prune(gb_concrete_function *cf) {
    gb_rewrite rw;
    if (!gb__rewrite_begin(&rw, cf)) return false;
    rw.keep_all = false;
    return gb__rewrite_commit(&rw);
}
