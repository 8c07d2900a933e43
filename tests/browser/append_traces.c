/* append_traces.c — traces a model-like function into a store and exits:
 * the Traces page's browser test uses it for what the retracing example
 * lacks. A stack of 20 dense layers (40 variables, each captured by the
 * graph) traced with reduce_retracing on batches of 8, 16, 32 and 8: two
 * traces, one concrete function cached (the relaxed one replaced the
 * first). It is called CALLS times and closes the writer while the
 * function is alive, so the store's counters must come from the close.
 *   append_traces DB RUN CALLS */
#include <stdio.h>
#include <stdlib.h>

#include "glassbox.h"
#include "gb_summary.h"

enum { LAYERS = 20, WIDTH = 4 };

static gb_variable *vars[2 * LAYERS];

static int dense_stack(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *x = in[0];
    for (int i = 0; i < LAYERS; i++)
        x = gb_add(gb_matmul(x, gb_variable_value(vars[2 * i])), gb_variable_value(vars[2 * i + 1]));
    out[0] = x;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: append_traces DB RUN CALLS\n");
        return 2;
    }
    long calls = strtol(argv[3], NULL, 10);
    gb_summary_writer *w = NULL;
    if (gb_summary_writer_open(argv[1], argv[2], NULL, &w) != GB_OK) {
        fprintf(stderr, "append_traces: %s\n", gb_summary_last_error());
        return 1;
    }
    gb_summary_set_default(w);
    char name[32];
    for (int i = 0; i < LAYERS; i++) {
        snprintf(name, sizeof name, "dense_%d/kernel", i);
        vars[2 * i] = gb_variable_new(name, gb_fill(GB_F32, GB_SHAPE(WIDTH, WIDTH), 0.25), true);
        snprintf(name, sizeof name, "dense_%d/bias", i);
        vars[2 * i + 1] = gb_variable_new(name, gb_zeros(GB_F32, GB_SHAPE(WIDTH)), true);
    }
    gb_function *f = gb_function_new("dense_stack", dense_stack,
        &(gb_function_options){.input_names = (const char *[]){"x"}, .ninput_names = 1,
                               .reduce_retracing = true});
    const int64_t batches[] = {8, 16, 32, 8};
    for (long i = 0; i < calls && gb_ok(); i++) {
        gb_scope_begin();
        gb_tensor *y;
        gb_function_call(f, (gb_tensor *[]){gb_ones(GB_F32, GB_SHAPE(batches[i % 4], WIDTH))}, 1,
                         NULL, 0, &y);
        gb_scope_end();
    }
    bool ok = gb_ok();
    if (!ok) fprintf(stderr, "append_traces: %s\n", gb_error_string());
    /* Closed with the function alive: its last counts leave with the close. */
    if (gb_summary_writer_close(w) != GB_OK) ok = false;
    gb_function_free(f);
    for (int i = 0; i < 2 * LAYERS; i++) gb_variable_free(vars[i]);
    return ok ? 0 : 1;
}
