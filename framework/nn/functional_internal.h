/* nn/functional_internal.h — the graph of symbolic layer calls that
 * symbolic.c records and functional.c turns into models.
 */
#ifndef GB_NN_FUNCTIONAL_INTERNAL_H
#define GB_NN_FUNCTIONAL_INTERNAL_H

#include "nn/internal.h"

typedef struct gb__fnode gb__fnode;

struct gb_sym {
    gb__fnode *node;          /* the call that made it */
    int index;                /* which of its outputs */
    gb_tensor_spec spec;      /* dtype and shape, batch -1; name: the node's */
};

/* One layer call on symbols, or an input (layer NULL, no inputs). */
struct gb__fnode {
    int refs;                 /* its output symbols' references, together */
    gb_module *layer;         /* a reference of its own */
    char name[64];            /* the layer's or the input's name */
    int nin;
    gb_sym *in[GB_NN_MAX_IO]; /* each holds a reference */
    int nout;
    gb_sym out[];
};

gb_sym *gb__sym_retain(gb_sym *s);
void gb__sym_release(gb_sym *s);

/* One layer call of a functional model, in the order they run. */
typedef struct fstep {
    gb__fnode *node;          /* borrowed: alive through the outputs */
    int in[GB_NN_MAX_IO];     /* value indices of its inputs */
    int out0;                 /* its outputs are values out0 .. out0 + nout - 1 */
} fstep;

typedef struct functional_state {
    int nin, nout;
    gb_sym *inputs[GB_NN_MAX_IO], *outputs[GB_NN_MAX_IO];   /* each holds a reference */
    int out_value[GB_NN_MAX_IO];
    fstep *steps;
    int nsteps, capsteps;
    gb_sym **values;          /* construction only: value index -> symbol */
    int nvalues, capvalues;
} functional_state;

/* Which call of its layer (0, 1, ...) node n is in the model. */
int gb__functional_call_number(const functional_state *s, const gb__fnode *n);

/* The config of a functional model (functional_config.c). */
bool gb__functional_get_config(gb_module *m, gb_config *c);
gb_module *gb__functional_from_config(const gb_config *c);

/* One row of model.summary(): a layer (or an input) with its output
 * shape, parameter count and, in functional models, what feeds it. */
typedef struct gb__summary_row {
    char name[160];           /* "dense (Dense)" */
    char shape[160];          /* "(None, 64)" */
    int64_t params;
    char connected[512];      /* "input_layer[0][0]"; several separated by '\n' */
} gb__summary_row;

/* A functional model's summary rows: its inputs, then each layer once in
 * the order they run. */
int gb__functional_num_rows(const gb_module *m);
void gb__functional_row(gb_module *m, int i, gb__summary_row *row);

#endif
