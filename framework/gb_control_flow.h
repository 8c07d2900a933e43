/* gb_control_flow.h — data-dependent control flow: cond, while_loop and
 * tensor arrays (tf.cond, tf.while_loop, tf.TensorArray).
 *
 * C code cannot be rewritten as AutoGraph rewrites Python, so where a
 * traced function must decide or loop on a tensor's value, it says so:
 *
 *   Python under tf.function             glassbox
 *   if x > 0: y = f(x) else: y = g(x)    gb_cond(gb_greater(x, zero), f, g, &x, 1, NULL, &y)
 *   while i < n: i, acc = body(i, acc)   gb_while_loop(cond, body, vars, 2, NULL, vars)
 *   for t in tf.range(T): ...            the same, with a counter among the loop variables
 *   ys = []; ys.append(y)                ta = gb_tensor_array_write(ta, t, y)
 *   tf.stack(ys)                         gb_tensor_array_stack(ta)
 *
 * Eagerly (outside a trace, or with gb_run_functions_eagerly) they simply
 * run: gb_cond calls the branch the predicate picks, gb_while_loop is a C
 * loop; tapes record the ops as they run, so gradients come for free.
 * While a function traces, each branch, and a loop's cond and body, is
 * traced once into a sub-graph of its own, and one node — If or While —
 * stands for the whole construct in the function's graph; the node picks a
 * branch, or loops, each time the graph runs. Nodes inside a branch are
 * named under its scope ("cond/true/Mul", "while/body/Tanh", below the
 * current name scope), and so are errors and numerics alerts from them.
 *
 * Branches, conds and bodies are C functions like a gb_function's, without
 * static arguments: they read their inputs (symbolic while tracing), write
 * their outputs and return how many, or -1 after an error. A branch sees
 * only its inputs: a tensor of the enclosing trace it needs must be passed
 * to gb_cond as an input, or be a loop variable (an error says so).
 *
 * Both are differentiable. The gradient of a cond follows the branch taken;
 * that of a while loop runs the loop backwards over the loop variables'
 * values at each iteration, which the traced loop keeps when a tape
 * records it. Integer loop variables (counters) get no gradient.
 *
 *   static int less_than_n(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
 *       out[0] = gb_less(v[0], v[2]);                  // i < n
 *       return 1;
 *   }
 *   static int times_x(void *u, gb_tensor *const *v, int n, gb_tensor **out) {
 *       out[0] = gb_add_scalar(v[0], 1);              // i + 1
 *       out[1] = gb_mul(v[1], v[3]);                   // acc * x
 *       out[2] = v[2], out[3] = v[3];                  // n and x unchanged
 *       return 4;
 *   }
 *   gb_tensor *vars[4] = {gb_scalar(GB_I64, 0), gb_scalar(GB_F64, 1), n, x};
 *   gb_while_loop(less_than_n, times_x, vars, 4, NULL, vars);   // vars[1] = x^n
 */
#ifndef GB_CONTROL_FLOW_H
#define GB_CONTROL_FLOW_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A branch of gb_cond, or the cond or body of gb_while_loop. */
typedef int (*gb_branch_fn)(void *user, gb_tensor *const *inputs, int ninputs,
                            gb_tensor **outputs);

/* The shape a value must keep: -1 for a dim that may differ (between the
 * branches of a cond, or from one iteration of a loop to the next). */
typedef struct gb_shape_invariant {
    int rank;
    int64_t shape[GB_MAX_RANK];
} gb_shape_invariant;
#define GB_INVARIANT(...)                                                                   \
    ((gb_shape_invariant){.rank = (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                          .shape = {__VA_ARGS__}})
#define GB_INVARIANT_SCALAR ((gb_shape_invariant){.rank = 0})

/* ---- cond ----------------------------------------------------------------------------- */

typedef struct gb_cond_options {
    void *user;                 /* passed to both branches */
    const char *name;           /* the node and its branches' scope; NULL: "cond" */
    /* Optional, one per output: the shape it must have in both branches.
     * Without them, a dim the branches disagree on becomes -1. */
    const gb_shape_invariant *output_shapes;
    int noutput_shapes;
} gb_cond_options;

/* tf.cond: true_fn(inputs) when pred (a bool scalar) holds, else
 * false_fn(inputs). Writes the outputs, returns how many, or -1 (sticky
 * error). Traced, both branches must return as many outputs, of the same
 * dtypes and ranks; a dim they disagree on is -1 in the result. */
int gb_cond(gb_tensor *pred, gb_branch_fn true_fn, gb_branch_fn false_fn,
            gb_tensor *const *inputs, int ninputs, const gb_cond_options *opts,
            gb_tensor **outputs);

/* ---- while_loop ------------------------------------------------------------------------ */

typedef struct gb_while_options {
    void *user;                 /* passed to cond and body */
    const char *name;           /* the node and the scope of cond and body; NULL: "while" */
    /* More iterations than this is an error naming the loop (0: no limit). */
    int64_t max_iterations;
    /* The loop variables' names in errors (nnames of them); NULL: "loop_var<i>". */
    const char *const *names;
    int nnames;
    /* Optional, one per loop variable: the shape it keeps, -1 for a dim
     * that may change. Without one, a variable must keep its initial
     * shape: a body that changes it is an error naming the variable. */
    const gb_shape_invariant *shape_invariants;
    int nshape_invariants;
} gb_while_options;

/* tf.while_loop: while cond_fn(vars) (a bool scalar) holds, vars =
 * body_fn(vars). Writes the final values of the nvars loop variables to
 * outputs (which may be loop_vars itself); returns nvars or -1. */
int gb_while_loop(gb_branch_fn cond_fn, gb_branch_fn body_fn, gb_tensor *const *loop_vars,
                  int nvars, const gb_while_options *opts, gb_tensor **outputs);

/* ---- tensor arrays ---------------------------------------------------------------------- */

/* A tensor array is a tensor of shape [size, ...element shape], written
 * one element at a time: a write returns the new array, so it can be a
 * loop variable (tf.TensorArray in a tf.while_loop). Indices are int32 or
 * int64 scalar tensors (symbolic inside a loop); one outside [0, size) is
 * an error when the op runs. Writes and reads are differentiable. */
gb_tensor *gb_tensor_array_new(gb_dtype dt, int64_t size, int rank, const int64_t *element_shape);
gb_tensor *gb_tensor_array_write(gb_tensor *ta, gb_tensor *index, gb_tensor *value);
gb_tensor *gb_tensor_array_read(gb_tensor *ta, gb_tensor *index);
/* Every element, stacked along a new first axis (the array itself). */
gb_tensor *gb_tensor_array_stack(gb_tensor *ta);
/* The number of elements (-1 while tracing when it is not known). */
int64_t gb_tensor_array_size(const gb_tensor *ta);

/* ---- call sites (GB_AT, gb_base.h) ---------------------------------------------------- */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_cond(...) GB_AT(gb_cond, __VA_ARGS__)
#define gb_while_loop(...) GB_AT(gb_while_loop, __VA_ARGS__)
#define gb_tensor_array_new(...) GB_AT(gb_tensor_array_new, __VA_ARGS__)
#define gb_tensor_array_write(...) GB_AT(gb_tensor_array_write, __VA_ARGS__)
#define gb_tensor_array_read(...) GB_AT(gb_tensor_array_read, __VA_ARGS__)
#define gb_tensor_array_stack(...) GB_AT(gb_tensor_array_stack, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
