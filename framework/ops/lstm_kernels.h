/* ops/lstm_kernels.h — the LSTM cell's elementwise half, forward and
 * backward, for BlockLSTM and BlockLSTMGrad (ops/lstm.c); compiled once
 * per ISA level (ops/isa/lstm_cell.c, core/isa.h) (internal).
 *
 * A job is one time step k: the op has already run the step's matrix
 * product, and the kernel finishes units [j0, j1) of every row of the
 * batch in one pass over memory (the four gates' activations, the cell
 * update, the output; or the gates' derivatives in closed form). Parts
 * handle disjoint units, so they never write the same memory.
 *
 * Rows are strided: a row of the step is `row_4u` elements after the
 * previous one in the [batch, time, 4 units] tensors and `row_u` in the
 * [batch, time, units] ones; the running states of the backward pass and
 * c0 are [batch, units] (`c_prev_ld` says which stride c_prev has).
 */
#ifndef GB_OPS_LSTM_KERNELS_H
#define GB_OPS_LSTM_KERNELS_H

#include <stdint.h>

#include "core/isa.h"

typedef struct gb_lstm_cell_job {
    int64_t batch, units;
    int64_t row_4u, row_u, c_prev_ld;
    const void *c_prev;     /* the cell state the step reads (c0, or the previous step's) */
    /* forward: gates holds h_prev R on entry and the activations (sigmoid
     * of i, f, o; tanh of g) on return; xw is the step's input projection */
    void *gates;
    const void *xw;
    void *c, *h;            /* the step's cell state and output */
    /* backward: dh_next and dc (running, [batch, units]) come in from the
     * step after; dc leaves as what flows to the step before. dxw is the
     * step's gradient of the gates' inputs. gates and c are read. */
    const void *dh_seq, *dc_seq; /* the outputs' gradients at this step */
    const void *dh_next;
    void *dc;
    void *dxw;
} gb_lstm_cell_job;

/* Units [j0, j1) of one step. */
typedef void (*gb_lstm_cell_fn)(const gb_lstm_cell_job *j, int64_t j0, int64_t j1);

/* forward[0] / backward[0] for float32, [1] for float64. */
typedef struct gb_lstm_cell_table {
    gb_lstm_cell_fn forward[2], backward[2];
} gb_lstm_cell_table;
GB_ISA_DECLARE(const gb_lstm_cell_table, gb__lstm_cell_kernels);

#endif
