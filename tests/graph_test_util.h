/* graph_test_util.h — what the traced-function tests share.
 *
 * A graph runs the kernels an eager call runs, on the same inputs, so its
 * results are compared with eager ones bit for bit: assert_bitwise(). A
 * function body written once runs both ways: eagerly by calling it, traced
 * through a gb_function (with an input signature where dims are -1):
 * assert_calls_like_eager().
 */
#ifndef GB_TEST_GRAPH_TEST_UTIL_H
#define GB_TEST_GRAPH_TEST_UTIL_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"

/* traced has eager's dtype, shape and bytes; `what` names it in failures. */
static inline void assert_bitwise(const gb_tensor *eager, const gb_tensor *traced,
                                  const char *what) {
    char se[64], st[64];
    ck_assert_msg(eager && traced, "%s: missing (eager %p, traced %p)", what, (void *)eager,
                  (void *)traced);
    ck_assert_msg(gb_tensor_dtype(eager) == gb_tensor_dtype(traced) &&
                      gb_same_shape(eager, traced),
                  "%s: %s %s traced, %s %s eager", what, gb_dtype_name(gb_tensor_dtype(traced)),
                  gb_shape_str(traced, st, sizeof st), gb_dtype_name(gb_tensor_dtype(eager)),
                  gb_shape_str(eager, se, sizeof se));
    if (gb_tensor_dtype(eager) == GB_STRING) { /* the bytes, not where they are */
        for (int64_t i = 0; i < gb_size(eager); i++) {
            gb_string a = gb_get_string(eager, i), b = gb_get_string(traced, i);
            ck_assert_msg(a.len == b.len && memcmp(a.data, b.data, (size_t)a.len) == 0,
                          "%s: string element %lld is '%.*s' traced, '%.*s' eager", what,
                          (long long)i, (int)b.len, b.data, (int)a.len, a.data);
        }
        return;
    }
    size_t es = gb_dtype_size(gb_tensor_dtype(eager));
    const char *de = gb_data(eager), *dt = gb_data(traced);
    for (int64_t i = 0; i < gb_size(eager); i++)
        ck_assert_msg(memcmp(de + (size_t)i * es, dt + (size_t)i * es, es) == 0,
                      "%s: element %lld is %.17g traced, %.17g eager", what, (long long)i,
                      gb_get(traced, i), gb_get(eager, i));
}

/* f (a gb_function of body) called on in[nin] gives what body gives
 * eagerly, output for output. */
static inline void assert_calls_like_eager(gb_function *f, gb_function_fn body, void *user,
                                           gb_tensor *const *in, int nin) {
    gb_tensor *eager[GB_FUNCTION_MAX_OUTPUTS], *traced[GB_FUNCTION_MAX_OUTPUTS];
    int ne = body(user, in, nin, NULL, 0, eager);
    ck_assert_msg(ne >= 0 && gb_ok(), "%s eagerly: %s", gb_function_name(f), gb_error_string());
    int nt = gb_function_call(f, in, nin, NULL, 0, traced);
    ck_assert_msg(nt == ne, "%s: %d outputs traced (%s), %d eager", gb_function_name(f), nt,
                  gb_error_string(), ne);
    for (int k = 0; k < ne; k++) {
        char what[96];
        snprintf(what, sizeof what, "%s output %d (batch %lld)", gb_function_name(f), k,
                 nin && gb_rank(in[0]) ? (long long)gb_dim(in[0], 0) : 0LL);
        assert_bitwise(eager[k], traced[k], what);
    }
}

#endif
