/* store/internal.h — what the store's sources share with each other and
 * with the writer (summary/writer/), and nobody else sees.
 *
 * The schema and its checks, the scalar-point and rollup records and their
 * byte layout, the thread-local error message of the reader, and the
 * result arena of the reader. Only SQLite and libc: the store never
 * reaches the engine. Public API: gb_reader.h.
 */
#ifndef GB_STORE_INTERNAL_H
#define GB_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdarg.h>

#include "gb_reader.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the store's BLOB layout is little-endian; add byte swapping for this target"
#endif

#define GB__APPLICATION_ID 0x47424F58   /* 'GBOX' */
#define GB__ROLLUP_LEVELS 15            /* level L: buckets of 16^L steps */
#define GB__ROLLUP_MIN_LEVEL 2          /* 16-step buckets cost more to write than
                                           to aggregate from chunks when read */
#define GB__ROLLUP_SHIFT 4              /* log2(16) */
#define GB__CHUNK_POINTS 512            /* scalar points per chunk row, at most */

/* ---- errors (error.c) ------------------------------------------------------- */

/* Formats this thread's last reader error message (gb_store_last_error). */
void gb__store_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- schema (schema.c) ----------------------------------------------- */

extern const char gb__schema_sql[];   /* schema.sql, generated at build time */

/* Makes db (opened read-write) a current-version store: creates the schema
 * in an empty database, migrates an older one, refuses a newer one or a
 * foreign database, then turns on WAL. On failure returns the status and
 * writes the message into err. */
gb_store_status gb__store_prepare_write(sqlite3 *db, const char *path, char *err, size_t n);
/* Checks that db (read-only) is a store this library can read. */
gb_store_status gb__store_check_read(sqlite3 *db, const char *path, int *version, char *err,
                                     size_t n);
/* BEGIN IMMEDIATE, retrying while another process holds the write lock. */
int gb__begin_immediate(sqlite3 *db);

/* A trace's graphs live in trace_graphs, not in its detail (schema 3).
 * What the writer does to each new trace and the 2 -> 3 migration to each
 * old one, as SQL over a detail x (a column or a parameter): whether it
 * holds a graph, each graph as JSON text, and the detail without them,
 * marked with has_graph and has_graph_traced. */
#define GB__DETAIL_HAS_GRAPHS(x)                                                       \
    "(json_valid(" x ") AND json_type(" x ") = 'object' AND (json_type(" x ", '$.graph') " \
    "IS NOT NULL OR json_type(" x ", '$.graph_traced') IS NOT NULL))"
#define GB__DETAIL_GRAPH(x, key) "(" x " -> '$." key "')"
#define GB__DETAIL_WITHOUT_GRAPHS(x)                                                   \
    "json_set(json_remove(" x ", '$.graph', '$.graph_traced'), '$.has_graph', "         \
    "json(iif(json_type(" x ", '$.graph') IS NULL, 'false', 'true')), "                 \
    "'$.has_graph_traced', json(iif(json_type(" x ", '$.graph_traced') IS NULL, "       \
    "'false', 'true')))"

/* ---- scalar points and rollups (rollup.c) ------------------------------------ */

/* One raw scalar point as stored in scalar_chunks.points (24 bytes). */
typedef struct gb__point {
    int64_t step;
    double wall_time;
    double value;
} gb__point;
_Static_assert(sizeof(gb__point) == 24, "chunk records are 24 bytes");

/* The aggregate of some points (a rollup row, a query bucket). */
typedef struct gb__rollup {
    int64_t first_step, last_step;
    double first_value, last_value;
    double min, max, sum;          /* over finite values (min/max valid if finite > 0) */
    int64_t count, nan_count, posinf_count, neginf_count;
    double last_wall_time;
} gb__rollup;

static inline int64_t gb__rollup_finite(const gb__rollup *r) {
    return r->count - r->nan_count - r->posinf_count - r->neginf_count;
}
/* r = the aggregate of one point. */
void gb__rollup_point(gb__rollup *r, const gb__point *p);
/* r += o (o's points are merged in; ties keep r's first, take o's last). */
void gb__rollup_merge(gb__rollup *r, const gb__rollup *o);
/* floor(step / 16^level). */
static inline int64_t gb__rollup_bucket(int64_t step, int level) {
    return step >> (GB__ROLLUP_SHIFT * level);   /* arithmetic shift = floor */
}

/* ---- reader results (reader_arena.c) ------------------------------------------------ */

/* An arena whose first allocation is the result object handed out; the
 * arena header sits just before it, so gb_store_free(result) finds it. */
typedef struct gb__arena gb__arena;
/* A new arena holding a zeroed result object of `size` bytes. */
void *gb__result_new(size_t size, gb__arena **arena);
/* n zeroed bytes, 16-aligned, alive as long as the arena; NULL when out of memory. */
void *gb__arena_alloc(gb__arena *a, size_t n);
/* A copy of s (NULL -> "") in the arena. */
const char *gb__arena_strdup(gb__arena *a, const char *s);
/* Growable row arrays built while stepping a statement. */
typedef struct gb__rows {
    void *data;
    size_t count, cap, elem;
} gb__rows;
void *gb__rows_push(gb__rows *r);     /* a zeroed new row; NULL when out of memory */
void gb__rows_release(gb__rows *r);
/* Moves the rows into the arena (one block); returns it (NULL if empty). */
void *gb__rows_into(gb__arena *a, gb__rows *r);

/* Makes `result` (another query's result object) part of a's result: it
 * is freed with it. false when out of memory (result then left as is). */
bool gb__arena_adopt_result(gb__arena *a, void *result);

/* ---- connecting (reader_open.c) ------------------------------------------------------- */

/* A read-only connection to the store file at path (a regular file; see
 * reader_open.c for how read-only directories are read). On failure *db
 * is NULL and the message is set. A `snapshot` connection is for one
 * quick read of a store nobody is writing: it is opened immutable (no
 * locks, no side files) when the store has no log to read, as it would be
 * where the reader may not write; its caller checks that the file did not
 * change while it read. */
gb_store_status gb__store_connect(const char *path, bool snapshot, sqlite3 **db);
/* gb_store_open through a snapshot connection (above). */
gb_store_status gb__store_open_snapshot(const char *path, gb_store **out);

/* ---- the reader handle (reader.c) ---------------------------------------------------- */

/* Runs a cached prepared statement for the handle: returns it reset and
 * cleared, or NULL (error set). `sql` must be a string literal: its address
 * is the cache key. */
sqlite3_stmt *gb__store_stmt(gb_store *s, const char *sql);
/* Resolves run (and, when tag != NULL, tag of kind) to ids. */
gb_store_status gb__store_resolve(gb_store *s, const char *run, const char *tag,
                                  gb_summary_kind kind, int64_t *run_id, int64_t *tag_id);
/* gb_store_runs and gb_store_tags, the handle's lock already held (for
 * queries made of several: reader_hparams.c). */
gb_store_status gb__store_runs(gb_store *s, gb_runs **out);
gb_store_status gb__store_tags(gb_store *s, const char *run, gb_summary_kind kind, gb_tags **out);
/* Records a SQLite failure of s as GB_STORE_ERR_IO. */
gb_store_status gb__store_sql_error(gb_store *s, const char *what);
/* The status of a finished step loop: DONE -> OK, NOMEM -> MEMORY, else IO. */
gb_store_status gb__store_done(gb_store *s, int rc, const char *what);
gb_store_status gb__store_null_args(const char *what);
void gb__store_lock(gb_store *s);
void gb__store_unlock(gb_store *s);
/* The body of every public query: the handle's lock around one call. */
#define GB__LOCKED(s, call)                    \
    do {                                       \
        gb__store_lock(s);                     \
        gb_store_status locked_st_ = (call);   \
        gb__store_unlock(s);                   \
        return locked_st_;                     \
    } while (0)
const char *gb__store_path(const gb_store *s);
/* Read transactions around multi-statement queries (one consistent snapshot). */
void gb__store_read_begin(gb_store *s);
void gb__store_read_end(gb_store *s);
/* The column as a double, NULL read back as NaN. */
double gb__col_double(sqlite3_stmt *st, int col);

/* Damaged rows. A check says why a column cannot be read as what it must
 * hold (a static reason), or returns NULL; gb__out_of_memory is the reason
 * when reading it ran out of memory. gb__store_damaged then records
 * "store 'x.db': damaged <table> row (<where>): <why>" as
 * GB_STORE_ERR_DATA, `where` naming the run, tag and step. */
extern const char gb__out_of_memory[];
gb_store_status gb__store_damaged(gb_store *s, const char *table, const char *where,
                                  const char *why);
/* Text must be stored as text (not NULL, not a BLOB) without NUL bytes. */
const char *gb__text_damage(sqlite3_stmt *st, int col);

/* ---- many stores as one (logdir.c) ------------------------------------------------------ */

typedef struct gb__logdir gb__logdir;
/* The logdir behind a handle from gb_store_open_logdir, or NULL (s NULL too). */
gb__logdir *gb__store_logdir(const gb_store *s);
gb_store_status gb__logdir_new(const char *const *patterns, size_t count, gb__logdir **out);
void gb__logdir_free(gb__logdir *ld);

/* A run of the logdir named by its member store's connection and its name
 * there, held (not closed as idle) until gb__logdir_leave. */
typedef struct gb__member_ref {
    gb_store *store;
    const char *run;   /* points into the name given to gb__logdir_enter */
    void *member;
} gb__member_ref;
gb_store_status gb__logdir_enter(gb__logdir *ld, const char *run, gb__member_ref *ref);
void gb__logdir_leave(gb__logdir *ld, gb__member_ref *ref);

/* The merged listings behind gb_store_runs, _tags, _scalar_summaries,
 * _hparams_config and _data_version of a logdir handle. */
gb_store_status gb__logdir_runs(gb__logdir *ld, gb_runs **out);
gb_store_status gb__logdir_tags(gb__logdir *ld, const char *run, gb_summary_kind kind,
                                gb_tags **out);
gb_store_status gb__logdir_scalar_summaries(gb__logdir *ld, const char *tag,
                                            gb_scalar_summaries **out);
gb_store_status gb__logdir_hparams_config(gb__logdir *ld, gb_hparams_config **out);
gb_store_status gb__logdir_data_version(gb__logdir *ld, uint64_t *out);
int64_t gb__logdir_pages_read(gb__logdir *ld);
gb_store_status gb__logdir_has_events(gb__logdir *ld, gb_event_table table, bool *out);

/* The first line of every public query that names a run: on a logdir
 * handle, the same query on the member store that holds the run, under its
 * name there (fn's arguments after the run follow). */
#define GB__VIA_MEMBER(s, run, fn, ...)                                    \
    do {                                                                   \
        gb__logdir *via_ld_ = gb__store_logdir(s);                         \
        if (via_ld_) {                                                     \
            gb__member_ref via_ref_;                                       \
            gb_store_status via_st_ = gb__logdir_enter(via_ld_, run, &via_ref_); \
            if (via_st_ == GB_STORE_OK) {                                  \
                via_st_ = fn(via_ref_.store, via_ref_.run, __VA_ARGS__);   \
                gb__logdir_leave(via_ld_, &via_ref_);                      \
            }                                                              \
            return via_st_;                                                \
        }                                                                  \
    } while (0)

/* ---- scalar raw reads (reader_scalars.c) ----------------------------------------------- */

typedef struct gb__tag_info {
    int64_t id, count, min_step, max_step, max_chunk_span;
    const char *run, *tag;   /* the names asked for, for messages */
} gb__tag_info;

/* The downsampling grid (reader_scalars.c): steps [a, b] cut into at
 * most n equal intervals, the same for every tag given the same a, b and
 * n, so the series of several tags line up interval by interval (the
 * heat map of reader_health.c). gb__scalar_grid_size says how many
 * intervals; gb__scalar_grid merges tag ti's points of each into out[k]
 * (zeroed by the caller), exactly, from the rollups, and counts them. */
size_t gb__scalar_grid_size(int64_t a, int64_t b, size_t n);
gb_store_status gb__scalar_grid(gb_store *s, const gb__tag_info *ti, int64_t a, int64_t b,
                                size_t n, gb__rollup *out, int64_t *total);

#endif
