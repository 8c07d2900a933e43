/* ops/conv/run.h — running one convolution kernel call (internal; see
 * ops/conv/run.c). */
#ifndef GB_CONV_RUN_H
#define GB_CONV_RUN_H

#include "ops/conv/im2col.h"

typedef enum gb_conv_kind {
    GB_CONV_FORWARD,     /* a = x, b = W, out = y */
    GB_CONV_INPUT_GRAD,  /* a = W, b = dy, out = dx */
    GB_CONV_FILTER_GRAD, /* a = x, b = dy, out = dW */
} gb_conv_kind;

/* Fills out for window g with oc output channels; false after an error
 * (memory). Big calls run on the worker threads. */
bool gb__conv_run(gb_conv_kind kind, const gb_window *g, int64_t oc, const gb_tensor *a,
                  const gb_tensor *b, gb_tensor *out);

#endif
