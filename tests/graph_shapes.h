/* graph_shapes.h — generated graphs shaped like real models
 * (graph_shapes.c), as the JSON the engine writes. */
#ifndef GB_TEST_GRAPH_SHAPES_H
#define GB_TEST_GRAPH_SHAPES_H

#include <stdbool.h>

/* The graph of a named shape (10k100, 10x1000, flat5k, scope5k,
 * repeat12), malloc'ed, its node count in *nodes; NULL for an unknown
 * shape or out of memory. */
char *graph_shape_json(const char *shape, int *nodes);

/* An input and n ops (n a multiple of 100) in scopes of 100: the graph of
 * each of many traces. */
char *graph_chain_json(int n, int *nodes);

#endif
