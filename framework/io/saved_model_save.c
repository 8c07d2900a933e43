/* io/saved_model_save.c — writing a SavedModel directory
 * (tf.saved_model.save).
 *
 *   <dir>/saved_model.json         format, version, variables, signatures
 *   <dir>/variables/variables.ckpt each variable's value, by its name
 *   <dir>/constants.ckpt           the graphs' constant values
 *   <dir>/fingerprint.json         a hash of each file and of the whole
 *
 * Each file is replaced atomically; the fingerprint is written last, so a
 * crash between two files leaves a directory whose fingerprint does not
 * match, which the loader refuses instead of running a half-new model.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "io/internal.h"

static bool check_signatures(const gb_saved_model_signature *sigs, int n) {
    const char *why = NULL, *name = "";
    if (!sigs || n < 1 || n > 64) why = "1 to 64 signatures are needed";
    for (int i = 0; !why && i < n; i++) {
        name = sigs[i].name ? sigs[i].name : "";
        if (!name[0] || strlen(name) >= 64 || strchr(name, '/'))
            why = "a signature's name must be 1 to 63 characters without '/'";
        else if (!sigs[i].function) why = "a signature needs a function";
        else if (sigs[i].ninputs < 0 || (sigs[i].ninputs > 0 && !sigs[i].inputs))
            why = "a signature's inputs are missing";
        for (int k = 0; !why && k < i; k++)
            if (strcmp(sigs[k].name, name) == 0) why = "two signatures have the same name";
    }
    if (why) gb__error(GB_ERR_VALUE, NULL, "gb_saved_model_save: %s ('%s')", why, name);
    return why == NULL;
}

/* The variables' entries for the checkpoint and their list in the JSON;
 * a name taken by an earlier variable gets "_<k>" appended. */
static bool put_variables(gb_config *root, const gb__saved_tables *t, gb__ckpt_entry *e) {
    gb_config *list = gb_config_put_list(root, "variables");
    bool ok = list != NULL;
    for (int k = 0; ok && k < t->nvars; k++) {
        gb_variable *v = gb__variable_by_id(t->var_ids[k]);
        if (!v) {
            gb__error(GB_ERR_STATE, NULL, "gb_saved_model_save: a variable the graphs read was freed");
            return false;
        }
        snprintf(e[k].path, sizeof e[k].path, "%s", gb_variable_name(v));
        for (int j = 0, n = 1; j < k; j++)
            if (strcmp(e[j].path, e[k].path) == 0)
                snprintf(e[k].path, sizeof e[k].path, "%s_%d", gb_variable_name(v), n++), j = -1;
        gb_tensor *x = gb_variable_value(v);
        if (!x) return false;
        e[k].dtype = gb_tensor_dtype(x);
        e[k].rank = gb_rank(x);
        memcpy(e[k].dims, gb_shape(x), (size_t)e[k].rank * sizeof e[k].dims[0]);
        e[k].data = gb_data(x);
        e[k].nbytes = (uint64_t)gb_size(x) * gb_dtype_size(e[k].dtype);
        gb_config *d = gb_config_put_dict(list, NULL);
        ok = d && gb_config_put_string(d, "name", e[k].path) &&
             gb_config_put_string(d, "dtype", gb_dtype_name(e[k].dtype)) &&
             gb_config_put_ints(d, "shape", e[k].rank, e[k].dims) &&
             gb_config_put_bool(d, "trainable", gb_variable_trainable(v));
    }
    return ok;
}

static bool write_files(const char *dir, gb_config *root, gb__saved_tables *t) {
    char path[4096];
    gb__ckpt_entry *vars = calloc((size_t)t->nvars + 1, sizeof *vars);
    if (!vars) return gb__error(GB_ERR_MEMORY, NULL, "gb_saved_model_save: out of memory"), false;
    gb_scope_begin();
    bool ok = put_variables(root, t, vars);
    snprintf(path, sizeof path, "%s/variables", dir);
    ok = ok && gb_make_dirs(path);
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_VARIABLES, dir);
    ok = ok && gb__ckpt_write(path, vars, t->nvars);
    gb_scope_end();
    free(vars);
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_CONSTANTS, dir);
    ok = ok && gb__ckpt_write(path, t->consts, t->nconsts);
    char *json = ok ? gb_config_to_json_flat(root, 1, 4) : NULL;   /* a node a line */
    snprintf(path, sizeof path, "%s/" GB__SAVED_MODEL_JSON, dir);
    ok = json && gb__write_file_atomic(path, json, strlen(json), "SavedModel");
    free(json);
    return ok && gb__fingerprint_write(dir);
}

bool gb_saved_model_save(const char *dir, const gb_saved_model_signature *sigs, int nsigs) {
    if (!gb_ok()) return false;
    if (!dir || !dir[0] || strlen(dir) > 3000) {
        gb__error(GB_ERR_VALUE, NULL, "gb_saved_model_save: a directory path is needed");
        return false;
    }
    if (!check_signatures(sigs, nsigs) || !gb_make_dirs(dir)) return false;
    gb_config *root = gb_config_new();
    gb__saved_tables t = {0};
    bool ok = root && gb_config_put_string(root, "format", GB__SAVED_MODEL_FORMAT) &&
              gb_config_put_int(root, "version", GB_SAVED_MODEL_VERSION);
    gb_config *list = ok ? gb_config_put_list(root, "signatures") : NULL;
    ok = list != NULL;
    for (int i = 0; ok && i < nsigs; i++) {
        const gb_saved_model_signature *s = &sigs[i];
        gb_concrete_function *cf = gb_function_get_concrete(s->function, s->inputs, s->ninputs, NULL, 0);
        ok = cf && gb__saved_graph_put(list, s->name, cf, s, &t);
    }
    ok = ok && write_files(dir, root, &t);
    gb__saved_tables_free(&t);
    gb_config_free(root);
    return ok;
}
