/* retracing.c — why a gb_function traces again, and how to make it stop.
 *
 * A gb_function (tf.function in C) traces its C function into a graph once
 * per signature and then runs the graph. Each section below makes one
 * cause of a new trace happen and prints, after every call, whether it
 * traced and why (gb_function_last_trace_reason), and the
 * excessive-retracing warning when a call raises it (gb_last_warning;
 * glassbox also prints warnings on stderr). The last two sections are the
 * fixes: an input signature with a -1 dim, and reduce_retracing.
 *
 *     build/examples/retracing [--db PATH [--run NAME]]
 *
 * With --db every trace, its reason and its graphs go to the store too,
 * and the dashboard's Traces page shows them (glassbox serve --db PATH).
 */
#include <stdio.h>
#include <string.h>

#include "gb_summary.h"
#include "glassbox.h"

/* ---- printing ------------------------------------------------------------------------ */

enum { WIDTH = 78 };

/* Prints text wrapped at WIDTH columns after `indent` spaces and a label,
 * later lines indented two more: reasons run long. */
static void print_wrapped(int indent, const char *label, const char *text) {
    int col = printf("%*s%s", indent, "", label);
    bool line_start = true;
    for (text += strspn(text, " "); *text; text += strspn(text, " ")) {
        int word = (int)strcspn(text, " ");
        if (!line_start && col + 1 + word > WIDTH) {
            col = printf("\n%*s", indent + 2, "") - 1;
            line_start = true;
        }
        col += printf("%s%.*s", line_start ? "" : " ", word, text);
        line_start = false;
        text += word;
    }
    putchar('\n');
}

static void section(const char *title, const char *what) {
    printf("\n== %s ==\n", title);
    print_wrapped(0, "", what);
}

/* "square(float32[3], exponent=2)": the call as its signature sees it
 * (this example's static arguments are all ints). */
static const char *call_text(const gb_function *f, const gb_tensor *x, const gb_value *statics,
                             int nstatics, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "%s(%s[", gb_function_name(f),
                                gb_dtype_name(gb_tensor_dtype(x)));
    for (int d = 0; d < gb_rank(x) && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "", (long long)gb_dim(x, d));
    if (k < n) k += (size_t)snprintf(buf + k, n - k, "]");
    for (int i = 0; i < nstatics && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, ", %s=%lld", statics[i].name,
                              (long long)statics[i].as.i);
    if (k < n) snprintf(buf + k, n - k, ")");
    return buf;
}

/* Calls f on x and says what happened: the cached graph ran, or a trace
 * and its reason; and the warning, when this call raised one. */
static void call_and_explain(gb_function *f, gb_tensor *x, const gb_value *statics,
                             int nstatics) {
    int traces = gb_function_tracing_count(f), warnings = gb_warning_count();
    char call[128];
    printf("  %s\n", call_text(f, x, statics, nstatics, call, sizeof call));
    gb_tensor *y;
    gb_scope_begin();
    int n = gb_function_call(f, &x, 1, statics, nstatics, &y);
    gb_scope_end();
    if (n < 0)
        printf("    failed: %s\n", gb_error_string());
    else if (gb_function_tracing_count(f) > traces)
        print_wrapped(4, "traced: ", gb_function_last_trace_reason(f));
    else
        printf("    no trace: the cached graph ran\n");
    if (gb_warning_count() > warnings) print_wrapped(4, "WARNING: ", gb_last_warning());
}

static gb_tensor *vector(int64_t n) { return gb_ones(GB_F32, GB_SHAPE(n)); }

/* ---- the functions traced ---------------------------------------------------------------
 * Each section wraps its own C function: glassbox keeps a C function's
 * recent calls (to spot re-wrapping), so sharing one would mix them up. */

static int square_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_mul(in[0], in[0]);
    return 1;
}

static int power_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)nst;
    out[0] = gb_pow_scalar(in[0], (double)st[0].as.i); /* the exponent is baked into the graph */
    return 1;
}

static int scaled_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb_variable *scale = *(gb_variable **)user; /* captured: the graph reads this variable */
    out[0] = gb_mul(in[0], gb_variable_value(scale));
    return 1;
}

static int negate_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_neg(in[0]);
    return 1;
}

static int mean_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                   gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_reduce_mean(in[0], GB_ALL_AXES, false);
    return 1;
}

static int center_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_sub(in[0], gb_reduce_mean(in[0], GB_ALL_AXES, true));
    return 1;
}

static int sum_of_squares_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st,
                             int nst, gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    out[0] = gb_reduce_sum(gb_square(in[0]), GB_ALL_AXES, false);
    return 1;
}

/* Options naming the one tensor input "x", so reasons say input 0 'x'. */
static gb_function_options named_x(void) {
    static const char *const names[] = {"x"};
    return (gb_function_options){.input_names = names, .ninput_names = 1};
}

/* ---- the causes ----------------------------------------------------------------------------- */

static void shape_and_dtype_changes(void) {
    gb_function_options o = named_x();
    gb_function *square = gb_function_new("square", square_fn, &o);
    section("1. The first call",
            "A function traces on its first call; the same signature again runs the graph.");
    call_and_explain(square, vector(3), NULL, 0);
    call_and_explain(square, vector(3), NULL, 0);
    section("2. A dtype change", "Each dtype of an input needs its own graph.");
    call_and_explain(square, gb_ones(GB_F64, GB_SHAPE(3)), NULL, 0);
    section("3. A rank change", "Each rank of an input needs its own graph.");
    call_and_explain(square, gb_ones(GB_F32, GB_SHAPE(3, 1)), NULL, 0);
    section("4. A dim change",
            "A new size in a dim traces again (sections 9 and 10 show the fixes).");
    call_and_explain(square, vector(4), NULL, 0);
    gb_function_free(square);
}

static void static_value_change(void) {
    gb_function_options o = named_x();
    gb_function *power = gb_function_new("power", power_fn, &o);
    section("5. A static argument changing value",
            "Static (non-tensor) arguments are part of the signature by value.");
    call_and_explain(power, vector(3), (gb_value[]){GB_INT("exponent", 2)}, 1);
    call_and_explain(power, vector(3), (gb_value[]){GB_INT("exponent", 2)}, 1);
    call_and_explain(power, vector(3), (gb_value[]){GB_INT("exponent", 3)}, 1);
    gb_function_free(power);
}

static void captured_variable_freed(void) {
    gb_variable *scale = gb_variable_new("scale", gb_scalar(GB_F32, 2), true);
    gb_function_options o = named_x();
    o.user = &scale;
    gb_function *scaled = gb_function_new("scaled", scaled_fn, &o);
    section("6. A captured variable freed",
            "A graph captures the variables it reads: freeing one makes the graph stale.");
    call_and_explain(scaled, vector(3), NULL, 0);
    gb_variable_free(scale);
    scale = gb_variable_new("scale", gb_scalar(GB_F32, 2), true);
    call_and_explain(scaled, vector(3), NULL, 0);
    gb_function_free(scaled);
    gb_variable_free(scale);
}

static void rewrapped_in_a_loop(void) {
    section("7. The same C function wrapped in a new gb_function in a loop",
            "Every new gb_function starts with an empty cache; 5 traces in 10 calls warn.");
    gb_function_options o = named_x();
    for (int i = 0; i < 5; i++) {
        gb_function *negate = gb_function_new("negate", negate_fn, &o); /* the mistake */
        call_and_explain(negate, vector(3), NULL, 0);
        gb_function_free(negate);
    }
}

static void varying_dim(void) {
    gb_function_options o = named_x();
    gb_function *mean = gb_function_new("mean", mean_fn, &o);
    section("8. A dim varying call after call",
            "A length that changes every call traces every call; the warning says which.");
    for (int64_t n = 1; n <= 5; n++) call_and_explain(mean, vector(n), NULL, 0);
    gb_function_free(mean);
}

/* ---- the fixes ------------------------------------------------------------------------------- */

/* How many traces served the calls, and the signatures cached, one a line. */
static void summary_of(gb_function *f, int calls) {
    printf("  %d trace(s) for %d calls; cached:\n", gb_function_tracing_count(f), calls);
    char line[512];
    for (const char *s = gb_function_concrete_signatures(f); *s; s += strcspn(s, "\n") + 1) {
        snprintf(line, sizeof line, "%.*s", (int)strcspn(s, "\n"), s);
        print_wrapped(4, "", line);
        if (!s[strcspn(s, "\n")]) break;
    }
}

static void fix_input_signature(void) {
    gb_function_options o = {.input_signature = (gb_tensor_spec[]){GB_SPEC("x", GB_F32, -1)},
                             .ninput_signature = 1};
    gb_function *center = gb_function_new("center", center_fn, &o);
    section("9. Fix: an input signature with -1",
            "GB_SPEC(\"x\", GB_F32, -1) accepts any length: one trace serves them all.");
    for (int64_t n = 1; n <= 5; n++) call_and_explain(center, vector(n), NULL, 0);
    summary_of(center, 5);
    gb_function_free(center);
}

static void fix_reduce_retracing(void) {
    gb_function_options o = named_x();
    o.reduce_retracing = true;
    gb_function *sos = gb_function_new("sum_of_squares", sum_of_squares_fn, &o);
    section("10. Fix: reduce_retracing",
            "The second distinct shape traces once more, with the dims that differ as -1.");
    int64_t lengths[] = {3, 4, 5, 6, 3};
    for (int i = 0; i < 5; i++) call_and_explain(sos, vector(lengths[i]), NULL, 0);
    summary_of(sos, 5);
    gb_function_free(sos);
}

/* --db PATH [--run NAME]: the default writer, or NULL (and *bad on a
 * malformed command line). */
static gb_summary_writer *open_store(int argc, char **argv, bool *bad) {
    const char *db = NULL, *run = "retracing";
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--db")) db = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--run")) run = argv[++i];
        else *bad = true;
    }
    gb_summary_writer *w = NULL;
    if (*bad || !db) return NULL;
    if (gb_summary_writer_open(db, run, NULL, &w) != GB_OK) {
        fprintf(stderr, "retracing: %s\n", gb_summary_last_error());
        *bad = true;
        return NULL;
    }
    gb_summary_set_default(w);
    return w;
}

int main(int argc, char **argv) {
    /* Line by line, so the library's warnings on stderr fall between the
     * lines of this output when both go to one pipe. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    bool bad = false;
    gb_summary_writer *w = open_store(argc, argv, &bad);
    if (bad) {
        fprintf(stderr, "usage: retracing [--db PATH [--run NAME]]\n");
        return 2;
    }
    gb_scope_begin();
    printf("Why a gb_function traces again, and how to make it stop.\n");
    shape_and_dtype_changes();
    static_value_change();
    captured_variable_freed();
    rewrapped_in_a_loop();
    varying_dim();
    fix_input_signature();
    fix_reduce_retracing();
    gb_scope_end();
    if (w && gb_summary_writer_close(w) != GB_OK) {
        fprintf(stderr, "retracing: %s\n", gb_summary_last_error());
        return 1;
    }
    if (!gb_ok()) {
        fprintf(stderr, "retracing: %s\n", gb_error_string());
        return 1;
    }
    return 0;
}
