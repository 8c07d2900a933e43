/* cli/model/saved_model_run.c — `glassbox saved-model run --dir D
 * [--signature NAME] [--input NAME=FILE[;NAME=FILE...]]
 * [--input-exprs NAME=VALUE[;...]] [--output-dir DIR]`: runs a signature
 * on tensors from files, or on values written out, as `saved_model_cli
 * run` does (its --input_exprs takes Python expressions; here a value is
 * one number, or the text of one string, for an input of one element:
 * a temperature, a length, a prompt).
 *
 * An input file is .npy (by its name; NumPy's byte 'S' and unicode 'U'
 * strings are string tensors), .txt (a string tensor, one element per
 * line: raw text into a model that takes strings) or IDX, gzip-compressed
 * or not (the Fashion-MNIST files run as they are). Each output is
 * printed — name, dtype, shape and its first values, strings quoted as
 * bytes — and, with --output-dir, written as <name>.npy for NumPy, a
 * string output also as <name>.txt, one line per element (the directory
 * is created when missing, with its parents).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model/model.h"

enum { DIR_, SIGNATURE, INPUT, INPUT_EXPRS, OUTPUT_DIR, PRINT };

static bool ends_with(const char *s, const char *tail) {
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && strcmp(s + a - b, tail) == 0;
}

/* A .txt file's lines as a string tensor [lines]. */
static gb_tensor *read_lines(const char *file) {
    gb_dataset *ds = gb_dataset_from_text_files(file, NULL);
    int64_t n = ds ? gb_dataset_cardinality(ds) : 0;
    if (!ds) return NULL;
    if (n == 0) {
        gb_dataset_free(ds);
        return gb_strings(NULL, 1, &n);
    }
    ds = gb_dataset_batch(ds, n, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *lines = NULL, *t = NULL;
    if (gb_iterator_next(it, &lines)) t = gb_add(lines, gb_string_scalar("")); /* its own bytes */
    gb_iterator_free(it);
    gb_dataset_free(ds);
    return t;
}

static gb_tensor *read_tensor(const char *file) {
    if (ends_with(file, ".txt")) return read_lines(file);
    return ends_with(file, ".npy") ? gb_npy_read(file) : gb_idx_read(file);
}

/* One value written out, for an input of one element (every known dim
 * 1): a number of the input's dtype, or the text of a string. NULL after
 * an error, printed. */
static gb_tensor *read_value(const gb__cli_command *cmd, const gb_tensor_spec *spec, const char *text) {
    char shape[160];
    for (int d = 0; d < spec->rank; d++)
        if (spec->shape[d] > 1) {
            gb__cli_print(stderr, "glassbox %s: input '%s' is %s; --input-exprs gives one value (use --input)",
                          cmd->name, spec->name,
                          gb__cli_spec_text(spec->dtype, spec->rank, spec->shape, shape, sizeof shape));
            return NULL;
        }
    gb_tensor *t = NULL;
    if (spec->dtype == GB_STRING) {
        t = gb_string_scalar(text);
    } else {
        char *end = NULL;
        double v = strtod(text, &end);
        const bool integral = spec->dtype != GB_F32 && spec->dtype != GB_F64;
        if (!*text || *end || (integral && v != (double)(long long)v)) {
            gb__cli_print(stderr, "glassbox %s: input '%s' takes %s: '%s' is not %s", cmd->name, spec->name,
                          gb_dtype_name(spec->dtype), text, integral ? "an integer" : "a number");
            return NULL;
        }
        t = gb_scalar(spec->dtype, v);
    }
    int64_t ones[GB_MAX_RANK];
    for (int d = 0; d < spec->rank; d++) ones[d] = 1;
    return t && spec->rank ? gb_reshape(t, spec->rank, ones) : t;
}

/* "a=x.npy;b=y.idx" (files) or "t=0.5;p=The " (values) into in[], in the
 * signature's order. */
static int parse_inputs(const gb__cli_command *cmd, const char *text, bool values, const gb_tensor_spec *specs,
                        int n, gb_tensor **in) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", text);
    const char *flag = values ? "--input-exprs" : "--input";
    for (char *save = NULL, *item = strtok_r(buf, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) return gb__cli_usage_error(cmd, "%s takes NAME=%s, not '%s'", flag, values ? "VALUE" : "FILE", item);
        *eq = '\0';
        int k = 0;
        while (k < n && strcmp(specs[k].name, item)) k++;
        if (k == n) return gb__cli_usage_error(cmd, "the signature has no input '%s'", item);
        if (in[k]) return gb__cli_usage_error(cmd, "input '%s' is given twice", item);
        if (values) {
            if (!(in[k] = read_value(cmd, &specs[k], eq + 1))) return gb_ok() ? 1 : gb__cli_engine_failed(cmd);
            continue;
        }
        if (!(in[k] = read_tensor(eq + 1))) return gb__cli_engine_failed(cmd);
        if (gb_tensor_dtype(in[k]) != specs[k].dtype) {
            gb__cli_print(stderr, "glassbox %s: input '%s' from %s is %s; the signature takes %s", cmd->name,
                          item, eq + 1, gb_dtype_name(gb_tensor_dtype(in[k])), gb_dtype_name(specs[k].dtype));
            return 1;
        }
    }
    return GB__CLI_RUN;
}

static void print_strings(gb_tensor *t, int max) {
    for (int64_t i = 0; i < gb_size(t) && i < max; i++) {
        gb_tensor *one = gb_reshape(gb_gather(gb_reshape(t, 1, (int64_t[]){gb_size(t)}),
                                              gb_scalar(GB_I64, (double)i), 0), 0, NULL);
        char repr[1024];
        gb_tensor_repr(one, repr, sizeof repr);
        /* "tf.Tensor(b'...', shape=(), dtype=string)": the b'...' alone */
        char *start = strchr(repr, '(') + 1, *end = strstr(repr, ", shape=()");
        if (end) *end = '\0';
        gb__cli_print(stdout, "    %s", start);
    }
    if (gb_size(t) > max) gb__cli_print(stdout, "    ...");
}

static void print_values(gb_tensor *t, int max) {
    if (gb_tensor_dtype(t) == GB_STRING) {
        print_strings(t, max);
        return;
    }
    char line[4096];
    size_t k = 0;
    int64_t n = gb_size(t);
    gb_tensor *d = gb_cast(t, GB_F64);
    const double *v = d ? gb_data(d) : NULL;
    for (int64_t i = 0; v && i < n && i < max && k < sizeof line - 64; i++)
        k += (size_t)snprintf(line + k, sizeof line - k, "%s%.6g", i ? " " : "", v[i]);
    if (n > max && k < sizeof line - 8) snprintf(line + k, sizeof line - k, " ...");
    gb__cli_print(stdout, "    [%s]", k ? line : "");
}

/* A string tensor's elements, one per line. */
static bool write_lines(const char *path, gb_tensor *t) {
    FILE *f = fopen(path, "wb");
    const gb_string *s = gb_data_strings(t);
    bool ok = f && s;
    for (int64_t i = 0; ok && i < gb_size(t); i++)
        ok = fwrite(s[i].data, 1, (size_t)s[i].len, f) == (size_t)s[i].len && fputc('\n', f) != EOF;
    if (f) ok = fclose(f) == 0 && ok;
    if (!ok) gb__cli_print(stderr, "glassbox saved-model run: cannot write %s", path);
    return ok;
}

static int write_outputs(const gb__cli_command *cmd, const char *dir, const gb_tensor_spec *specs,
                         gb_tensor **out, int n) {
    if (!gb_make_dirs(dir)) return gb__cli_engine_failed(cmd);
    for (int i = 0; i < n; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%s.npy", dir, specs[i].name);
        if (!gb_npy_write(path, out[i])) return gb__cli_engine_failed(cmd);
        gb__cli_print(stdout, "wrote %s", path);
        if (gb_tensor_dtype(out[i]) != GB_STRING) continue;
        snprintf(path, sizeof path, "%s/%s.txt", dir, specs[i].name);
        if (!write_lines(path, out[i])) return 1;
        gb__cli_print(stdout, "wrote %s", path);
    }
    return 0;
}

/* Parses the inputs into in[nin], runs the signature into out[nout]. */
static int run_io(const gb__cli_command *cmd, const char *const *values, gb_saved_model *m,
                  const gb_tensor_spec *in_specs, int nin, gb_tensor **in,
                  const gb_tensor_spec *out_specs, int nout, gb_tensor **out) {
    const char *sig = values[SIGNATURE];
    int max = 0;
    if (!gb__cli_int(cmd, values, PRINT, 0, 1 << 20, &max)) return GB__CLI_USAGE;
    for (int i = 0; i < nin; i++) in[i] = NULL;
    int rc = values[INPUT] ? parse_inputs(cmd, values[INPUT], false, in_specs, nin, in) : GB__CLI_RUN;
    if (rc == GB__CLI_RUN && values[INPUT_EXPRS])
        rc = parse_inputs(cmd, values[INPUT_EXPRS], true, in_specs, nin, in);
    if (rc != GB__CLI_RUN) return rc;
    for (int i = 0; i < nin; i++)
        if (!in[i])
            return gb__cli_usage_error(cmd, "input '%s' is missing from --input and --input-exprs",
                                       in_specs[i].name);
    if (gb_saved_model_call(m, sig, in, nin, out) != nout) return gb__cli_engine_failed(cmd);
    for (int i = 0; i < nout; i++) {
        char spec[160];
        gb__cli_print(stdout, "output '%s': %s", out_specs[i].name,
                      gb__cli_spec_text(gb_tensor_dtype(out[i]), gb_rank(out[i]), gb_shape(out[i]), spec,
                                        sizeof spec));
        if (max) print_values(out[i], max);
    }
    return values[OUTPUT_DIR] ? write_outputs(cmd, values[OUTPUT_DIR], out_specs, out, nout) : 0;
}

static int run_signature(const gb__cli_command *cmd, const char *const *values, gb_saved_model *m) {
    const char *sig = values[SIGNATURE];
    int nin = 0, nout = 0;
    const gb_tensor_spec *in_specs = gb_saved_model_inputs(m, sig, &nin);
    const gb_tensor_spec *out_specs = gb_saved_model_outputs(m, sig, &nout);
    if (!in_specs) return gb__cli_usage_error(cmd, "the model has no signature '%s'", sig);
    /* Sized to the signature: a function takes and returns up to
     * thousands of tensors. */
    gb_tensor **in = calloc((size_t)nin + 1, sizeof *in), **out = calloc((size_t)nout + 1, sizeof *out);
    int rc = in && out ? run_io(cmd, values, m, in_specs, nin, in, out_specs, nout, out)
                       : gb__cli_engine_failed(cmd);
    free(in);
    free(out);
    return rc;
}

static int run(const gb__cli_command *cmd, const char *const *values) {
    gb_saved_model *m = gb_saved_model_load(values[DIR_]);
    if (!m) return gb__cli_engine_failed(cmd);
    gb_scope_begin();
    int rc = run_signature(cmd, values, m);
    gb_scope_end();
    gb_saved_model_free(m);
    return rc;
}

static const gb__cli_option options[] = {
    {.name = "--dir", .metavar = "DIR", .help = "the SavedModel directory", .required = true},
    {.name = "--signature", .metavar = "NAME", .help = "the signature to run", .fallback = "serving_default"},
    {.name = "--input", .metavar = "NAME=FILE[;...]", .help = "each input from a .npy (numbers or strings), .txt (strings, one per line) or IDX file"},
    {.name = "--input-exprs", .metavar = "NAME=VALUE[;...]", .help = "an input of one element from a value: a number, or the text of a string"},
    {.name = "--output-dir", .metavar = "DIR", .help = "also write each output there as <name>.npy (strings also as <name>.txt)"},
    {.name = "--print", .metavar = "N", .help = "values printed per output", .fallback = "10"},
};
_Static_assert(sizeof options / sizeof options[0] <= GB__CLI_MAX_OPTIONS,
               "more options than the parser holds (cli.h)");

const gb__cli_command gb__cli_saved_model_run = {
    .name = "saved-model run",
    .summary = "Runs a SavedModel's signature on .npy, .txt or IDX files",
    .details = "Inputs are matched by name, each given once by --input or --input-exprs; a "
               "file's dtype must be the input's. Exit 1 when the model, a file, a value or the "
               "run fails.",
    .options = options,
    .noptions = sizeof options / sizeof options[0],
    .run = run,
};
