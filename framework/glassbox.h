/* glassbox.h — the one header a training program includes.
 *
 * glassbox is an observability-first neural-network training framework:
 * eager tensors, GradientTape autodiff, and (in the summary/ and webui/
 * components) an event store and live dashboards.
 *
 * Tutorial (this block is extracted and compiled as examples/tutorial.c by
 * the build, so it cannot rot):
 *
 * BEGIN TUTORIAL
 * #include <stdio.h>
 * #include "glassbox.h"
 *
 * int main(void) {
 *     gb_scope_begin();                              // a scope owns every tensor below
 *     gb_tensor *x = gb_scalar(GB_F64, 3.0);
 *     gb_tape *tape = gb_tape_begin();               // with tf.GradientTape() as tape:
 *     gb_tape_watch(tape, x);
 *     gb_tensor *y = gb_pow(x, x);                   //     y = x ** x
 *     gb_tape_end(tape);
 *     gb_tensor *dy_dx = gb_tape_gradient(tape, y, x);
 *     if (!gb_ok()) {                                // errors are sticky: check once
 *         fprintf(stderr, "%s\n", gb_error_string());
 *         return 1;
 *     }
 *     printf("d(x^x)/dx at 3 = %.4f\n", gb_item(dy_dx));   // 56.6625
 *     gb_scope_end();                                // frees x, y, the tape, dy_dx
 *     return 0;
 * }
 * END TUTORIAL
 */
#ifndef GLASSBOX_H
#define GLASSBOX_H

#include "gb_base.h"
#include "gb_tensor.h"
#include "gb_op.h"
#include "gb_ops.h"
#include "gb_autodiff.h"
#include "gb_function.h"
#include "gb_control_flow.h"
#include "gb_observer.h"
#include "gb_profiler.h"
#include "gb_nn.h"
#include "gb_debug.h"
#include "gb_health.h"
#include "gb_optim.h"
#include "gb_data.h"
#include "gb_train.h"
#include "gb_io.h"
#include "gb_saved_model.h"
#include "gb_dist.h"

#endif
