/* train/model_file.c — model files (Keras' model.save and
 * keras.models.load_model): a model's architecture, weights, compile
 * arguments and optimizer state in one file, so that a program without
 * the code that made the model rebuilds and recompiles it, and training
 * resumes exactly where the saved one stopped.
 *
 * ---- The format, version 1 ----
 *
 * A model file is a checkpoint file: the container of
 * io/checkpoint_file.c (magic "GBCKPT\r\n", the container's own version,
 * tensors by path with a CRC-32 each, header and index CRCs, written
 * atomically), holding
 *
 *   "config.json"            uint8[n], the document below (UTF-8 JSON)
 *   "model/<variable>"       each variable of the model ("model/sequential/dense/kernel")
 *   "optimizer/iterations"   int64 scalar         } when the model is compiled
 *   "optimizer/<slot>"       each slot variable   } (slots once it has stepped)
 *
 *   {"format": "glassbox.model",
 *    "format_version": 1,
 *    "model": {"class_name": "Sequential", "config": {...}},      gb_module_get_config
 *    "build": {"dtype": "float32", "input_shape": [-1, 784]},      null: not built
 *    "compile": {"optimizer": ..., "losses": ..., ...}}            null: not compiled;
 *                                                                  see compile_config.c
 *
 * Why the checkpoint container and not a format of its own: one tensor
 * serializer, one set of checks (bounds, CRCs, truncation), one atomic
 * write, and the tensors sit at the paths ModelCheckpoint's weights use,
 * so gb_checkpoint_restore reads a model file's weights as well (the
 * config is then one unexpected entry). The container's version covers
 * the bytes; format_version covers the document and the set of entries:
 * a reader refuses a newer one, naming both versions, rather than guess.
 *
 * Loading reads the whole file and checks the container, then the
 * config's CRC, parses the JSON strictly (an error gives the line and
 * column), checks the format and version, and only then rebuilds: the
 * model from its config (custom layer types must be registered:
 * gb_register_module_type), built for the saved input when its config
 * does not build it, compiled from the compile config (custom losses and
 * metric objects must be registered: custom_objects.c), then every
 * tensor restored all or nothing. A failure at any point frees what was
 * made, and its error names the file and what is wrong. Either way the
 * program's sequence of default layer seeds is where it was: a load
 * changes no layer the program builds after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "train/internal.h"

static const char *const CONFIG_ENTRY = "config.json";
static const char *const FORMAT = "glassbox.model";
enum { FORMAT_VERSION = 1 };

/* ---- saving ------------------------------------------------------------------------------- */

/* Every module of the tree has a from_config, so a loader can rebuild it. */
static bool rebuildable(gb_module *m) {
    if (!gb_module_get_type(m)->from_config) {
        gb__error(GB_ERR_VALUE, NULL,
                  "layer '%s' (class %s) has no from_config, so a model file could not rebuild "
                  "it; give its type get_config/from_config, or save the weights with a checkpoint",
                  gb_module_name(m), gb_module_class_name(m));
        return false;
    }
    for (int i = 0; i < gb_module_num_submodules(m); i++)
        if (!rebuildable(gb_module_submodule(m, i))) return false;
    return true;
}

static bool put_build(gb_config *doc, gb_module *m) {
    int64_t dims[GB_MAX_RANK];
    int rank = gb_module_input_shape(m, dims);
    if (rank < 0) return gb_config_put_null(doc, "build") != NULL;
    gb_config *b = gb_config_put_dict(doc, "build");
    return b && gb_config_put_string(b, "dtype", gb_dtype_name(gb_module_dtype(m))) &&
           gb_config_put_ints(b, "input_shape", rank, dims);
}

/* The document of config.json (NULL after an error). */
static gb_config *document(gb_module *m) {
    gb__compiled *c = gb__module_attached(m);
    gb_config *doc = gb_config_new();
    gb_config *model = doc && gb_config_put_string(doc, "format", FORMAT) &&
                               gb_config_put_int(doc, "format_version", FORMAT_VERSION)
                           ? gb_config_put_dict(doc, "model")
                           : NULL;
    bool ok = model && gb__module_config_into(m, model) && put_build(doc, m);
    if (ok && c) {
        gb_config *compile = gb_config_put_dict(doc, "compile");
        ok = compile && gb__compile_get_config(c, compile);
    } else if (ok) {
        ok = gb_config_put_null(doc, "compile") != NULL;
    }
    if (ok && gb_ok()) return doc;
    gb_config_free(doc);
    return NULL;
}

bool gb_model_save(gb_module *model, const char *path) {
    if (!gb_ok()) return false;
    if (!model || !path || !path[0]) {
        gb__error(GB_ERR_VALUE, NULL, "gb_model_save: %s", !model ? "the model is NULL" : "no path");
        return false;
    }
    gb_config *doc = rebuildable(model) ? document(model) : NULL;
    char *json = doc ? gb_config_to_json(doc, 0) : NULL;
    gb_config_free(doc);
    if (!json) return false;
    size_t n = strlen(json);
    gb__ckpt_entry e = {.dtype = GB_U8, .rank = 1, .dims = {(int64_t)n}, .data = json, .nbytes = n};
    snprintf(e.path, sizeof e.path, "%s", CONFIG_ENTRY);
    gb__compiled *c = gb__module_attached(model);
    bool ok = gb__state_write(model, c ? c->opts.optimizer : NULL, path, &e, 1);
    free(json);
    return ok;
}

/* ---- loading ------------------------------------------------------------------------------ */

static bool check_format(const char *path, const gb_config *doc) {
    const char *format = gb_config_string(gb_config_get(doc, "format"));
    const gb_config *version = gb_config_get(doc, "format_version");
    if (!format || strcmp(format, FORMAT) != 0) {
        gb__error(GB_ERR_IO, NULL, "%s: not a glassbox model file (its %s has no \"format\": \"%s\")",
                  path, CONFIG_ENTRY, FORMAT);
        return false;
    }
    if (gb_config_kind_of(version) != GB_CONFIG_INT || gb_config_int(version) < 1) {
        gb__error(GB_ERR_IO, NULL, "%s: %s: 'format_version' must be a positive integer", path,
                  CONFIG_ENTRY);
        return false;
    }
    if (gb_config_int(version) > FORMAT_VERSION) {
        gb__error(GB_ERR_IO, NULL,
                  "%s: written by a newer glassbox (model format version %lld; this build reads up "
                  "to %d)",
                  path, (long long)gb_config_int(version), FORMAT_VERSION);
        return false;
    }
    return true;
}

/* A model not built by its config (a custom type) is built for the input it was saved with. */
static bool build_as_saved(gb_module *m, const gb_config *build) {
    if (gb_module_built(m) || gb_config_kind_of(build) == GB_CONFIG_NULL) return true;
    gb_dtype dt = GB_F32;
    int64_t dims[GB_MAX_RANK];
    int rank = gb_config_read_ints(build, "build", "input_shape", GB_MAX_RANK, dims);
    if (rank < 1 || !gb__config_read_dtype(build, "build", "dtype", &dt)) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "build config: 'input_shape' is missing or empty");
        return false;
    }
    return gb_module_build(m, dt, rank, dims);
}

/* The model of the document: made, built, compiled; NULL after an error. */
static gb_module *rebuild(const gb_config *doc) {
    gb_module *m = gb_module_from_config(gb_config_get(doc, "model"));
    const gb_config *compile = gb_config_get(doc, "compile");
    bool ok = m && build_as_saved(m, gb_config_get(doc, "build")) &&
              (gb_config_kind_of(compile) == GB_CONFIG_NULL || gb__compile_from_config(m, compile));
    if (ok && gb_ok()) return m;
    gb_module_free(m);
    return NULL;
}

gb_module *gb__model_from_parts(const char *path, const char *json, size_t n,
                                const gb__ckpt_file *f) {
    char what[600];
    snprintf(what, sizeof what, "%s: %s", path, CONFIG_ENTRY);
    gb_config *doc = gb_config_from_json(json, n, what);
    gb_module *m = NULL;
    uint64_t seeds = gb__nn_seed_position();
    if (doc && check_format(path, doc)) {
        /* The layers' and compile's own errors know no file: name it. */
        const char *before = gb__error_context(path);
        m = rebuild(doc);
        gb__error_context(before);
    }
    /* Layers whose configs carry no seed (they draw none) took some from
     * the program's sequence: loading leaves it where it was. */
    gb__nn_seed_rewind(seeds);
    gb__compiled *c = m ? gb__module_attached(m) : NULL;
    const char *const own[] = {CONFIG_ENTRY};
    if (m && !gb__state_restore(m, c ? c->opts.optimizer : NULL, f, own, 1)) {
        gb_module_free(m);
        m = NULL;
    }
    gb_config_free(doc);
    return m;
}

/* A model from a container read into f (closed here). */
static gb_module *from_container(gb__ckpt_file *f) {
    bool has_config = false;
    for (int i = 0; i < f->count && !has_config; i++) has_config = strcmp(f->entries[i].path, CONFIG_ENTRY) == 0;
    size_t n = 0;
    const char *json = NULL;
    if (!has_config)
        gb__error(GB_ERR_IO, NULL,
                  "%s: not a model file: it has no %s (a checkpoint of weights? restore those "
                  "with gb_checkpoint_restore)",
                  f->path, CONFIG_ENTRY);
    else
        json = gb__state_entry(f, CONFIG_ENTRY, GB_U8, 1, &n);
    gb_module *m = json ? gb__model_from_parts(f->path, json, n, f) : NULL;
    gb__ckpt_close(f);
    return m;
}

gb_module *gb__model_parse(const char *path, unsigned char *bytes, size_t size) {
    gb__ckpt_file f;
    return gb__ckpt_parse(path, bytes, size, &f) ? from_container(&f) : NULL;
}

gb_module *gb_model_load(const char *path) {
    if (!gb_ok()) return NULL;
    if (!path || !path[0]) {
        gb__error(GB_ERR_VALUE, NULL, "gb_model_load: no path");
        return NULL;
    }
    size_t size = 0;
    unsigned char *bytes = gb__file_read_checked(path, "a model file", GB__CKPT_HEADER_BYTES,
                                                 gb__ckpt_head_ok, &size);
    return bytes ? gb__model_parse(path, bytes, size) : NULL;
}
