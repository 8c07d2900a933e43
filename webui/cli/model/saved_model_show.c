/* cli/model/saved_model_show.c — `glassbox saved-model show --dir D`:
 * what `saved_model_cli show --all` prints for TensorFlow — every
 * signature with its inputs' and outputs' names, dtypes and shapes — and
 * the variables, the graph sizes and the fingerprint.
 */
#include <stdio.h>

#include "cli/model/model.h"

enum { DIR_ };

static void show_specs(const char *what, const gb_tensor_spec *s, int n) {
    gb__cli_print(stdout, "  %s:", what);
    for (int i = 0; i < n; i++) {
        char spec[160];
        gb__cli_print(stdout, "    %-16s %s", s[i].name,
                      gb__cli_spec_text(s[i].dtype, s[i].rank, s[i].shape, spec, sizeof spec));
    }
}

static void show_variables(gb_saved_model *m) {
    int n = 0;
    gb_variable *const *v = gb_saved_model_variables(m, &n);
    int64_t params = 0;
    for (int i = 0; i < n; i++) params += gb_variable_size(v[i]);
    gb__cli_print(stdout, "variables: %d (%lld values)", n, (long long)params);
    for (int i = 0; i < n; i++) {
        char spec[160];
        gb__cli_print(stdout, "  %-46s %s%s", gb_variable_name(v[i]),
                      gb__cli_spec_text(gb_variable_dtype(v[i]), gb_variable_rank(v[i]),
                                        gb_variable_shape(v[i]), spec, sizeof spec),
                      gb_variable_trainable(v[i]) ? "" : "  (not trainable)");
    }
}

static int show(const gb__cli_command *cmd, const char *const *values) {
    gb_saved_model *m = gb_saved_model_load(values[DIR_]);
    if (!m) return gb__cli_engine_failed(cmd);
    gb__cli_print(stdout, "SavedModel %s (format %d, fingerprint %s)", values[DIR_], GB_SAVED_MODEL_VERSION,
                  gb_saved_model_fingerprint(m));
    show_variables(m);
    for (int i = 0; i < gb_saved_model_signature_count(m); i++) {
        const char *name = gb_saved_model_signature_name(m, i);
        int nin = 0, nout = 0;
        const gb_tensor_spec *in = gb_saved_model_inputs(m, name, &nin);
        const gb_tensor_spec *out = gb_saved_model_outputs(m, name, &nout);
        fputc('\n', stdout);
        gb__cli_print(stdout, "signature '%s' (%d nodes):", name, gb_saved_model_node_count(m, name));
        show_specs("inputs", in, nin);
        show_specs("outputs", out, nout);
    }
    gb_saved_model_free(m);
    return 0;
}

static const gb__cli_option options[] = {
    {.name = "--dir", .metavar = "DIR", .help = "the SavedModel directory", .required = true},
};
_Static_assert(sizeof options / sizeof options[0] <= GB__CLI_MAX_OPTIONS,
               "more options than the parser holds (cli.h)");

const gb__cli_command gb__cli_saved_model_show = {
    .name = "saved-model show",
    .summary = "Shows a SavedModel's signatures (inputs, outputs) and variables",
    .details = "The model is loaded and checked as a program would load it: a damaged or "
               "changed directory is an error (exit 1).",
    .options = options,
    .noptions = sizeof options / sizeof options[0],
    .run = show,
};
