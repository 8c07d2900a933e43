/* io/internal.h — what the io/ sources share: writing a file atomically
 * (atomic_file.c), the checkpoint file's entries and its reader and writer
 * (checkpoint_file.c), and the SavedModel's files and graphs
 * (saved_model_*.c).
 */
#ifndef GB_IO_INTERNAL_H
#define GB_IO_INTERNAL_H

#include <stdio.h>

#include "gb_io.h"
#include "gb_saved_model.h"
#include "graph/internal.h"

#define GB__CKPT_VERSION 1

/* ---- atomic writes (atomic_file.c) ---- */

/* The suffix of the temporary file a write goes to before its rename. */
#define GB__ATOMIC_SUFFIX ".tmp"

/* A file being written to "<path>.tmp" (an older one, left by a process
 * killed mid-write, is overwritten); kind names it in errors
 * ("checkpoint"). */
typedef struct gb__atomic_file {
    FILE *f;
    const char *kind;
    char path[4096], tmp[4096 + sizeof GB__ATOMIC_SUFFIX];
} gb__atomic_file;

/* Creates the temporary file; false with a GB_ERR_IO error naming it. */
bool gb__atomic_open(gb__atomic_file *a, const char *path, const char *kind);
/* When written (every write of the caller succeeded): flushes and fsyncs
 * the temporary file, renames it over path and fsyncs the directory.
 * Otherwise, or when any of that fails, removes the temporary file and
 * returns false with a GB_ERR_IO error naming the file. Closes it either way. */
bool gb__atomic_commit(gb__atomic_file *a, bool written);
/* Closes and removes the temporary file (a write given up). */
void gb__atomic_abort(gb__atomic_file *a);
/* All of bytes to path atomically (open, write, commit). */
bool gb__write_file_atomic(const char *path, const void *bytes, size_t n, const char *kind);
/* A GB_ERR_IO error "<path>: <what>: <strerror(errno)>"; false. */
bool gb__io_fail(const char *path, const char *what);

/* ---- the checkpoint file (checkpoint_file.c) ---- */

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
/* The header's checks alone, on a file's first bytes and its size (a
 * gb_file_head_fn, for gb__file_read_checked): every reader of the
 * container looks at its header before reading the rest. */
bool gb__ckpt_head_ok(const char *path, const unsigned char *head, size_t n, uint64_t file_size);
enum { GB__CKPT_HEADER_BYTES = 40 };
/* An entry's bytes after checking its CRC; NULL with an error naming the
 * tensor when they do not match. */
const void *gb__ckpt_data(const gb__ckpt_file *f, const gb__ckpt_entry *e);
void gb__ckpt_close(gb__ckpt_file *f);
/* Whether entry e (of file) fits a tensor of this dtype and shape; false
 * with an error showing both (a DtypeError when the dtypes differ, else a
 * ShapeError), note appended to it when not NULL. */
bool gb__ckpt_fits(const char *file, const gb__ckpt_entry *e, gb_dtype dt, int rank,
                   const int64_t *dims, const char *note);

/* ---- the CheckpointManager's state file (checkpoint_state.c) ---- */

enum { GB__CKPT_NAME_BYTES = 256 };
/* The latest wall time a state file takes (seconds since the epoch, in
 * the year 5138): every time has a date. */
#define GB__CKPT_MAX_TIME 1e11

/* One checkpoint a manager keeps: its file in the directory, the step it
 * was saved at, the wall time of the save, whether the every-N-hours rule
 * keeps it for good; path is the manager's (directory/name). */
typedef struct gb__ckpt_record {
    char name[GB__CKPT_NAME_BYTES];
    int64_t step;
    double time;
    bool preserved;
    int line;              /* where the state file listed it; 0: saved by this manager */
    char path[4096 + GB__CKPT_NAME_BYTES];
} gb__ckpt_record;

/* The checkpoints kept, oldest first, and when the every-N-hours rule
 * last preserved one (-1: a state file read did not say). */
typedef struct gb__ckpt_state {
    gb__ckpt_record *v;
    int n, cap;
    double last_preserved;
} gb__ckpt_state;

/* Whether name[0..len) can name a checkpoint file in the directory: 1 to
 * 255 bytes, no '/', '#', blank or control character, no leading '.'. */
bool gb__ckpt_name_ok(const char *name, size_t len);
/* The state in text[0..size) (path names it in errors); false with a
 * GB_ERR_IO error "<path>:<line>: <what is wrong>", *out then empty. */
bool gb__ckpt_state_parse(const char *path, const char *text, size_t size, gb__ckpt_state *out);
/* The same from the file at path. */
bool gb__ckpt_state_read(const char *path, gb__ckpt_state *out);
/* The text of s (malloc'd into *text, *size bytes); false when out of memory. */
bool gb__ckpt_state_format(const gb__ckpt_state *s, char **text, size_t *size);
/* Writes that text to path atomically (atomic_file.c). */
bool gb__ckpt_state_write(const char *path, const gb__ckpt_state *s);
bool gb__ckpt_state_add(gb__ckpt_state *s, const gb__ckpt_record *r);
void gb__ckpt_state_remove(gb__ckpt_state *s, int i);
/* The index of the record named name, or -1. */
int gb__ckpt_state_find(const gb__ckpt_state *s, const char *name);
void gb__ckpt_state_free(gb__ckpt_state *s);

/* ---- delayed restoration (checkpoint_delayed.c) ---- */

/* Counts one more tensor of a kind in a restore status (missing,
 * unexpected, ...), keeping the path of the first. */
static inline void gb__status_count(int *count, char *first, size_t n, const char *path) {
    if (!(*count)++) snprintf(first, n, "%s", path);
}

/* What one restore keeps after it returns: its status, kept up to date,
 * and the values it found for weights of tracked modules that were not
 * built yet, assigned when a build makes those weights. */
typedef struct gb__delayed gb__delayed;

/* A record for the restore of file; NULL after an out-of-memory error. */
gb__delayed *gb__delayed_new(const char *file);
/* Whether every module of root's tree is built (else a restore waits in it). */
bool gb__module_tree_built(gb_module *root);
/* Waits in root, tracked under name: its variables that exist now are the
 * restore's to account for; those its builds make later are matched with
 * kept values (or counted missing). Takes a reference to root. */
bool gb__delayed_watch(gb__delayed *d, const char *name, gb_module *root);
/* Whether path lies under a root d waits in: a value kept for it will do. */
bool gb__delayed_covers(const gb__delayed *d, const char *path);
/* Keeps a copy of entry e's data (checked already) until its weight exists. */
bool gb__delayed_keep(gb__delayed *d, const gb__ckpt_entry *e, const void *data);
/* The restore is done and reported st (its pending count is set here):
 * from now on builds deliver the kept values. */
void gb__delayed_start(gb__delayed *d, gb_restore_status *st);
/* The restore's status as of now; roots fully built since give up their
 * values nothing claimed (counted unexpected). */
void gb__delayed_status(gb__delayed *d, gb_restore_status *st);
/* Stops waiting, releases the roots and the kept values. NULL is fine. */
void gb__delayed_free(gb__delayed *d);

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
    unsigned char **owned;       /* entries' bytes made for the file (strings, tables) */
    int nowned, capowned;
} gb__saved_tables;
void gb__saved_tables_free(gb__saved_tables *t);

/* Appends to list `sigs` the JSON of one signature: its name, inputs,
 * outputs, and the live nodes of cf's graph as traced. false (error naming
 * the node) for a node that cannot be saved (If, While). */
/* n strings as one uint8 entry (n int64 lengths, then the bytes), and
 * back into a tensor of `shape` (every length checked; GB_ERR_IO naming
 * `what` for a bad entry). */
bool gb__strings_encode(const gb_string *s, int64_t n, unsigned char **blob, uint64_t *nbytes);
gb_tensor *gb__strings_decode(const unsigned char *blob, uint64_t nbytes, int rank,
                              const int64_t *shape, const char *what);

bool gb__saved_graph_put(gb_config *sigs, const char *name, const gb_concrete_function *cf,
                         const gb_saved_model_signature *sig, gb__saved_tables *t);

/* One node of a loaded graph; attrs.vars hold indices into the model's
 * variables, const_index (Const) an entry of the constants file. */
/* How deep If and While nodes may nest in a saved graph. */
#define GB__SAVED_MAX_DEPTH 8

typedef struct gb__saved_graph gb__saved_graph;

typedef struct gb__saved_node {
    gb_op_id op;
    char name[192];
    int nin, nout;
    gb_edge *in;                 /* nin of them, malloc'd with out */
    gb_out_desc *out;
    gb_attrs attrs;
    int const_index;
    bool strings;                /* a string Const: its entry is gb__strings_encode's */
    int64_t table[3];            /* LookupTableFindV2: keys entry, values entry, default */
    int32_t value0;
    /* If: the branches (true, false); While: its cond and body. */
    gb__saved_graph *sub[2];
    int64_t max_iterations;      /* While */
    /* The loaded model, for the sub-graphs' replay: gb_cond and
     * gb_while_loop keep their user pointer for the gradient, which may
     * be traced long after the call, so it points here, not at the stack. */
    const gb_saved_model *model;
} gb__saved_node;

struct gb__saved_graph {
    char name[64];
    /* Sized to the file (malloc'd, freed by gb__saved_graph_free): up to
     * a function's limits, and every If and While has two of these. */
    gb_tensor_spec *inputs;
    char (*input_names)[64];
    int ninputs;
    gb_tensor_spec *outputs;
    char (*output_names)[64];
    int noutputs;
    gb__saved_node *nodes;
    int n, nvalues;
    gb_edge *out_edges;
};

/* Reads and checks one signature's JSON, of the file's format version:
 * every op known and loadable, inputs from earlier nodes, attributes in
 * range, variables below nvars, constants below nconsts. what names the
 * file in errors. */
bool gb__saved_graph_parse(const gb_config *sig, int version, int nvars, int nconsts, const char *what,
                           gb__saved_graph *g);
void gb__saved_graph_free(gb__saved_graph *g);
/* A {"dtype", "shape"} dict (a variable's), checked; what names the file. */
bool gb__saved_spec_read(const gb_config *c, const char *what, gb_dtype *dt, int *rank, int64_t *shape);
/* A dtype from its name ("float32"); false for an unknown one. */
bool gb__dtype_from_name(const char *name, gb_dtype *out);

/* gb_checkpoint_write with extra entries beside the tracked tensors (a
 * model file's config, fit's position): each with its path, dtype, rank,
 * dims, data and nbytes set; a path a tracked tensor has is an error. */
bool gb__checkpoint_write_with(gb_checkpoint *c, const char *path, const gb__ckpt_entry *extra,
                               int nextra);
/* gb_checkpoint_restore from a file already read, all or nothing: the
 * file's tensors and the tracked ones must match exactly (but for the
 * entries whose paths are in own[0..nown), which the caller reads
 * itself), else an error naming the first missing and unexpected tensor
 * (gb_restore_assert_consumed's), and nothing is assigned. */
bool gb__checkpoint_restore_exact(gb_checkpoint *c, const gb__ckpt_file *f, const char *const *own,
                                  int nown);

#endif
