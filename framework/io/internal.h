/* io/internal.h — what the io/ sources share: atomic file replacement
 * (atomic_file.c), the checkpoint file's entries and its reader and writer
 * (checkpoint_file.c), and the SavedModel's graphs (saved_model_graph.c).
 */
#ifndef GB_IO_INTERNAL_H
#define GB_IO_INTERNAL_H

#include <stdio.h>

#include "gb_io.h"
#include "gb_saved_model.h"
#include "graph/internal.h"

#define GB__CKPT_VERSION 1

/* ---- atomic_file.c ---- */

/* A file being replaced: written to tmp, renamed over path on commit. */
typedef struct gb__atomic_file {
    FILE *f;
    const char *path, *what;     /* what: "checkpoint", in error messages */
    char tmp[4096];
} gb__atomic_file;
/* Opens "<path>.tmp" for writing; false with a GB_ERR_IO error. */
bool gb__atomic_open(gb__atomic_file *a, const char *path, const char *what);
/* ok: everything was written. Flushes, fsyncs, renames over path and
 * fsyncs the directory; on any failure (or !ok) removes the temporary and
 * returns false with an error naming the file. */
bool gb__atomic_commit(gb__atomic_file *a, bool ok);
bool gb__write_file_atomic(const char *path, const void *bytes, size_t n, const char *what);
/* A GB_ERR_IO error "<path>: <what>: <strerror(errno)>"; false. */
bool gb__io_fail(const char *path, const char *what);

/* One tensor of a checkpoint file. Writing: path, dtype, rank, dims,
 * data and nbytes are the caller's; offset and crc are filled in. */
typedef struct gb__ckpt_entry {
    char path[256];
    gb_dtype dtype;
    int rank;
    int64_t dims[GB_MAX_RANK];
    uint64_t offset, nbytes;
    uint32_t crc;
    const void *data;
} gb__ckpt_entry;

/* Writes the entries to path atomically (temp file, fsync, rename, fsync
 * of the directory); false with a GB_ERR_IO error naming the file. */
bool gb__ckpt_write(const char *path, gb__ckpt_entry *e, int n);

/* A checkpoint read into memory, its index checked. */
typedef struct gb__ckpt_file {
    char path[512];
    unsigned char *bytes;
    size_t size;
    gb__ckpt_entry *entries;
    int count;
} gb__ckpt_file;

/* false with a GB_ERR_IO error naming the file and what is wrong
 * (truncated, bad magic, newer version, corrupt header or index). */
bool gb__ckpt_read(const char *path, gb__ckpt_file *out);
/* The same on bytes already read (malloc'd; *out takes them over, also
 * on failure); path names them in errors. */
bool gb__ckpt_parse(const char *path, unsigned char *bytes, size_t size, gb__ckpt_file *out);
/* An entry's bytes after checking its CRC; NULL with an error naming the
 * tensor when they do not match. */
const void *gb__ckpt_data(const gb__ckpt_file *f, const gb__ckpt_entry *e);
void gb__ckpt_close(gb__ckpt_file *f);

/* ---- the SavedModel's files (saved_model_save.c, saved_model_load.c) ---- */

#define GB__SAVED_MODEL_FORMAT "glassbox.saved_model"
#define GB__SAVED_MODEL_JSON "saved_model.json"
#define GB__SAVED_MODEL_VARIABLES "variables/variables.ckpt"
#define GB__SAVED_MODEL_CONSTANTS "constants.ckpt"
#define GB__SAVED_MODEL_FINGERPRINT "fingerprint.json"
enum { GB__SAVED_MODEL_NFILES = 3 };
/* The files the fingerprint covers, in its order: json, variables, constants. */
extern const char *const gb__saved_model_files[GB__SAVED_MODEL_NFILES];

/* saved_model_fingerprint.c: 64-bit FNV-1a; fingerprint.json from the
 * files in dir; the check of the files' hashes (in gb__saved_model_files'
 * order) against it, giving the model's hash in hex. */
uint64_t gb__fnv1a64(const void *p, size_t n);
bool gb__fingerprint_write(const char *dir);
bool gb__fingerprint_check(const char *dir, const uint64_t *hashes, char hex[17]);

/* saved_model_load.c: a model from its files' contents (read, and their
 * fingerprint checked, by gb_saved_model_load; made in memory by the fuzz
 * target). consts is taken over, also on failure; NULL after an error. */
gb_saved_model *gb__saved_model_assemble(const char *dir, const char *json, size_t size,
                                         const gb__ckpt_file *vars, gb__ckpt_file *consts);

/* ---- saved_model_graph.c: a signature's graph as JSON ---- */

/* The variables and constants the graphs of a SavedModel share while it
 * is written: variables by engine id (a graph names them by their index
 * here), constants as checkpoint entries viewing the nodes' values. */
typedef struct gb__saved_tables {
    int64_t *var_ids;
    int nvars, capvars;
    gb__ckpt_entry *consts;
    int nconsts, capconsts;
} gb__saved_tables;
void gb__saved_tables_free(gb__saved_tables *t);

/* Appends to list `sigs` the JSON of one signature: its name, inputs,
 * outputs, and the live nodes of cf's graph as traced. false (error naming
 * the node) for a node that cannot be saved (If, While). */
bool gb__saved_graph_put(gb_config *sigs, const char *name, const gb_concrete_function *cf,
                         const gb_saved_model_signature *sig, gb__saved_tables *t);

/* One node of a loaded graph; attrs.vars hold indices into the model's
 * variables, const_index (Const) an entry of the constants file. */
typedef struct gb__saved_node {
    gb_op_id op;
    char name[192];
    int nin, nout;
    gb_edge *in;                 /* nin of them, malloc'd with out */
    gb_out_desc *out;
    gb_attrs attrs;
    int const_index;
    int32_t value0;
} gb__saved_node;

typedef struct gb__saved_graph {
    char name[64];
    gb_tensor_spec inputs[GB_FUNCTION_MAX_INPUTS];
    char input_names[GB_FUNCTION_MAX_INPUTS][64];
    int ninputs;
    gb_tensor_spec outputs[GB_FUNCTION_MAX_OUTPUTS];
    char output_names[GB_FUNCTION_MAX_OUTPUTS][64];
    int noutputs;
    gb__saved_node *nodes;
    int n, nvalues;
    gb_edge out_edges[GB_FUNCTION_MAX_OUTPUTS];
} gb__saved_graph;

/* Reads and checks one signature's JSON: every op known and loadable,
 * inputs from earlier nodes, attributes in range, variables below nvars,
 * constants below nconsts. what names the file in errors. */
bool gb__saved_graph_parse(const gb_config *sig, int nvars, int nconsts, const char *what,
                           gb__saved_graph *g);
void gb__saved_graph_free(gb__saved_graph *g);
/* A {"dtype", "shape"} dict (a variable's), checked; what names the file. */
bool gb__saved_spec_read(const gb_config *c, const char *what, gb_dtype *dt, int *rank, int64_t *shape);
/* A dtype from its name ("float32"); false for an unknown one. */
bool gb__dtype_from_name(const char *name, gb_dtype *out);

#endif
