/* polymorphic.c — one function, three dtypes, three traces: tf.function's
 * polymorphism, in C.
 *
 * The TensorFlow guide's example, line for line:
 *
 *     @tf.function
 *     def double(a):
 *       print("Tracing with", a)
 *       return a + a
 *
 *     print(double(tf.constant(1)))      # int32: 2
 *     print(double(tf.constant(1.1)))    # float32: 2.2
 *     print(double(tf.constant("a")))    # string: b'aa'
 *
 * printf in the traced C function runs only while it traces, as Python's
 * print does under tf.function, and shows the symbolic input. With
 * --reasons, each call is followed by why it traced (the dtype change
 * that made the third trace: input 0 'a' changed dtype: float32 -> string).
 *
 *     build/examples/polymorphic [--reasons]
 */
#include <stdio.h>

#include "flags.h"
#include "glassbox.h"

static int double_fn(void *user, gb_tensor *const *in, int nin, const gb_value *statics,
                     int nstatics, gb_tensor **out) {
    (void)user, (void)nin, (void)statics, (void)nstatics;
    char repr[160];
    printf("Tracing with %s\n", gb_tensor_repr(in[0], repr, sizeof repr));
    out[0] = gb_add(in[0], in[0]); /* strings concatenate */
    return out[0] ? 1 : -1;
}

/* print(double(x)); print() — and the trace's reason with --reasons. */
static bool call(gb_function *f, gb_tensor *x, bool reasons) {
    int traces = gb_function_tracing_count(f);
    gb_tensor *y;
    if (gb_function_call(f, &x, 1, NULL, 0, &y) != 1) {
        fprintf(stderr, "polymorphic: %s\n", gb_error_string());
        return false;
    }
    char repr[160];
    printf("%s\n", gb_tensor_repr(y, repr, sizeof repr));
    if (reasons && gb_function_tracing_count(f) > traces)
        printf("(traced: %s)\n", gb_function_last_trace_reason(f));
    printf("\n");
    return true;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    bool reasons = false;
    const example_flag flags[] = {
        {"--reasons", NULL, "after each call that traced, print why it traced", EXAMPLE_SWITCH,
         &reasons},
    };
    const example_program p = {"polymorphic",
                               "One traced function called on int32, float32 and string.", flags,
                               sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;

    gb_function *f = gb_function_new(
        "double", double_fn,
        &(gb_function_options){.input_names = (const char *const[]){"a"}, .ninput_names = 1});
    bool ok = f && call(f, gb_scalar(GB_I32, 1), reasons) &&
              call(f, gb_scalar(GB_F32, 1.1), reasons) &&
              call(f, gb_string_scalar("a"), reasons);
    gb_function_free(f);
    return ok ? 0 : 1;
}
