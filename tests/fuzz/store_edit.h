/* store_edit.h — turns a fuzz input into a store file: a damaged copy of
 * the base store tests/fuzz/stores/every_kind.sqlite (make_store.c), for
 * the reader's target (fuzz_summary_reader_store.c).
 *
 * Why edits rather than raw bytes: libFuzzer mutating a whole SQLite file
 * mostly breaks its page structure, which SQLite reports as corruption
 * before the reader sees a row. The reader's own decisions — what a
 * damaged row is, extreme steps, bucket and chunk sizes, PNGs, rollups,
 * JSON details — are reached by rows SQLite reads fine but that hold what
 * no writer writes. So an input is a list of edits of the base store:
 * row edits give any column of any row any type and value, or delete or
 * copy a row; byte patches and a cut of the file, applied after them,
 * keep page-level damage in reach. Every input is a valid edit list, and
 * the seeds are a few bytes each. To let a column hold NULL, as a damaged
 * file can, the base's schema loses its NOT NULL constraints when loaded
 * (the reader never relies on them).
 *
 * An input that is itself an SQLite file (it starts with the magic
 * "SQLite format 3") is the store whole, so a damaged store found
 * elsewhere can go into regressions/ as it is.
 *
 * The edit list, edits one after another (an edit cut short by the end
 * of the input is dropped):
 *   op (1 byte), op % 13:
 *   0-8  set one column of one row: column (1 byte: which of the columns
 *        of `tables`, in order), row (1 byte, modulo the table's rows in
 *        key order), then by op:
 *          0 NULL             1 int64 (8 bytes, little-endian)
 *          2 int (1 byte, signed)   3 an extreme int (1 byte: of `extremes`)
 *          4 double (8 bytes)  5 text (length byte, bytes)
 *          6 BLOB (length byte, bytes)
 *          7 the value as a BLOB, 8 bytes at 8 * (1 byte) overwritten (a
 *            point's step, an edge, a count) by the next 8 (it may grow)
 *          8 the value as a BLOB, cut to 8 * (1 byte) bytes
 *   9    delete a row: column (1 byte, its table), row (1 byte)
 *   10   copy a row into a new one: column (1 byte, its table), row (1 byte)
 *   11   patch the file: offset (2 bytes, little-endian, modulo the
 *        size), the new byte
 *   12   cut the file to 16 * (2 bytes, little-endian) bytes, if shorter
 */
#ifndef GB_FUZZ_STORE_EDIT_H
#define GB_FUZZ_STORE_EDIT_H

#include <sqlite3.h>
#include <stdbool.h>

#include "fuzz_target.h"

/* Each table, the columns picking its k-th row (`key`, in order), and
 * the columns a copy takes (all but an INTEGER PRIMARY KEY id, which a
 * copy gets anew). */
typedef struct edit_table {
    const char *name, *key, *columns;
} edit_table;

static const edit_table edit_tables[] = {
    {"runs", "rowid", "id, name, start_time, last_write_time, host, pid, command_line"},
    {"hparams", "run_id, key", "run_id, key, value, is_number, number"},
    {"tags", "rowid",
     "id, run_id, name, kind, count, min_step, max_step, last_wall_time, max_chunk_span"},
    {"scalar_chunks", "rowid", "id, tag_id, first_step, last_step, count, points"},
    {"scalar_rollups", "tag_id, level, bucket",
     "tag_id, level, bucket, first_step, last_step, first_value, last_value, min, max, sum, "
     "count, nan_count, posinf_count, neginf_count, last_wall_time"},
    {"histograms", "rowid",
     "id, tag_id, step, wall_time, min, max, count, sum, sum_squares, nan_count, posinf_count, "
     "neginf_count, bucket_count, buckets"},
    {"images", "rowid", "id, tag_id, step, wall_time, sample_index, width, height, channels, png"},
    {"texts", "rowid", "id, tag_id, step, wall_time, value"},
    {"graphs", "rowid", "id, tag_id, step, wall_time, format, content"},
    {"traces", "rowid",
     "id, run_id, step, wall_time, function, is_retrace, reason, signature, duration_us, "
     "nodes_before, nodes_after, detail"},
    {"numerics", "rowid",
     "id, run_id, step, wall_time, op_type, op_name, function, scope_path, forward_op, "
     "nan_count, posinf_count, neginf_count, message, detail"},
    {"op_timings", "rowid", "id, run_id, step, wall_time, op_type, op_name, device, duration_us"},
    {"messages", "rowid", "id, run_id, step, wall_time, kind, op_type, op_name, device, message"},
    /* Tables of later schema versions go last: columns keep their numbers. */
    {"function_stats", "rowid",
     "run_id, function, wall_time, calls, cache_hits, traces, trace_ms, concrete"},
};
#define EDIT_TABLES (sizeof edit_tables / sizeof edit_tables[0])

/* Integers where arithmetic on steps and counts goes wrong if anywhere. */
static const int64_t edit_extremes[16] = {
    INT64_MIN, INT64_MIN + 1, -((int64_t)1 << 62), -1, 0, 1, 2, 16, 255, 256, 65536,
    (int64_t)1 << 20, (int64_t)1 << 31, (int64_t)1 << 62, INT64_MAX - 1, INT64_MAX,
};

typedef struct edit_column {
    const edit_table *table;
    char name[32];
} edit_column;

typedef struct edit_state {
    unsigned char *base;   /* the base store, NOT NULL dropped (sqlite3_malloc'ed) */
    sqlite3_int64 base_size;
    edit_column columns[160];
    size_t ncolumns;
} edit_state;

static edit_state edit_base;

/* ---- reading the input -------------------------------------------------------- */

typedef struct edit_input {
    const uint8_t *p, *end;
} edit_input;

static bool edit_take(edit_input *in, void *out, size_t n) {
    if ((size_t)(in->end - in->p) < n) return false;
    memcpy(out, in->p, n);
    in->p += n;
    return true;
}

static bool edit_byte(edit_input *in, uint8_t *out) { return edit_take(in, out, 1); }

/* ---- the base store --------------------------------------------------------------- */

static sqlite3 *edit_open_copy(const unsigned char *bytes, sqlite3_int64 size) {
    sqlite3 *db = NULL;
    unsigned char *copy = sqlite3_malloc64((sqlite3_uint64)size);
    FUZZ_CHECK(copy && sqlite3_open(":memory:", &db) == SQLITE_OK, "opening a memory database");
    memcpy(copy, bytes, (size_t)size);
    FUZZ_CHECK(sqlite3_deserialize(db, "main", copy, size, size,
                                   SQLITE_DESERIALIZE_FREEONCLOSE |
                                       SQLITE_DESERIALIZE_RESIZEABLE) == SQLITE_OK,
               "loading a store into memory: %s", sqlite3_errmsg(db));
    return db;
}

static void edit_list_columns(void) {
    for (size_t t = 0; t < EDIT_TABLES; t++)
        for (const char *c = edit_tables[t].columns; *c;) {
            size_t n = strcspn(c, ",");
            edit_column *col = &edit_base.columns[edit_base.ncolumns++];
            FUZZ_CHECK(n < sizeof col->name && edit_base.ncolumns <= 160, "column list");
            col->table = &edit_tables[t];
            memcpy(col->name, c, n);
            col->name[n] = '\0';
            c += n + strspn(c + n, ", ");
        }
}

/* Loads the base store (path) and drops its NOT NULL constraints. */
static void edit_load_base(const char *path) {
    FILE *f = fopen(path, "rb");
    FUZZ_CHECK(f != NULL, "cannot read the base store %s", path);
    static unsigned char bytes[1 << 20];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    FUZZ_CHECK(n > 0 && n < sizeof bytes, "the base store %s is empty or too large", path);
    sqlite3 *db = edit_open_copy(bytes, (sqlite3_int64)n);
    FUZZ_CHECK(sqlite3_exec(db,
                            "PRAGMA writable_schema = ON;"
                            "UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '') "
                            "WHERE type = 'table';"
                            "PRAGMA writable_schema = OFF;",
                            NULL, NULL, NULL) == SQLITE_OK,
               "relaxing the base store: %s", sqlite3_errmsg(db));
    edit_base.base = sqlite3_serialize(db, "main", &edit_base.base_size, 0);
    FUZZ_CHECK(edit_base.base != NULL, "serializing the base store");
    sqlite3_close(db);
    edit_list_columns();
}

/* ---- row edits ------------------------------------------------------------------------ */

/* Runs sql (its ?1 bound by bind, ?2 the row offset); a refused edit
 * (a UNIQUE constraint, a type mismatch) is simply not made. */
static void edit_run(sqlite3 *db, const char *sql, sqlite3_int64 offset,
                     void (*bind)(sqlite3_stmt *, const void *), const void *value) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return;
    if (bind) bind(st, value);
    sqlite3_bind_int64(st, 2, offset);
    sqlite3_step(st);
    sqlite3_finalize(st);
}

/* The offset of the row'th row of table (modulo its rows); -1 if empty. */
static sqlite3_int64 edit_row(sqlite3 *db, const edit_table *t, uint8_t row) {
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", t->name);
    sqlite3_stmt *st;
    sqlite3_int64 n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n > 0 ? row % n : -1;
}

/* "(key) IN (SELECT key FROM table ORDER BY key LIMIT 1 OFFSET ?2)" */
static void edit_where(char *buf, size_t size, const edit_table *t) {
    snprintf(buf, size, "(%s) IN (SELECT %s FROM %s ORDER BY %s LIMIT 1 OFFSET ?2)", t->key,
             t->key, t->name, t->key);
}

typedef struct edit_value {
    int type;   /* SQLITE_NULL, _INTEGER, _FLOAT, _TEXT, _BLOB */
    int64_t i;
    double d;
    const void *bytes;
    int n;
} edit_value;

static void edit_bind_value(sqlite3_stmt *st, const void *value) {
    const edit_value *v = value;
    switch (v->type) {
    case SQLITE_INTEGER: sqlite3_bind_int64(st, 1, v->i); break;
    case SQLITE_FLOAT: sqlite3_bind_double(st, 1, v->d); break;
    case SQLITE_TEXT: sqlite3_bind_text(st, 1, v->bytes, v->n, SQLITE_TRANSIENT); break;
    case SQLITE_BLOB: sqlite3_bind_blob(st, 1, v->n ? v->bytes : "", v->n, SQLITE_TRANSIENT); break;
    default: sqlite3_bind_null(st, 1);
    }
}

static void edit_set(sqlite3 *db, const edit_column *c, sqlite3_int64 offset, const edit_value *v) {
    char where[256], sql[512];
    edit_where(where, sizeof where, c->table);
    snprintf(sql, sizeof sql, "UPDATE %s SET %s = ?1 WHERE %s", c->table->name, c->name, where);
    edit_run(db, sql, offset, edit_bind_value, v);
}

/* The column's value as a BLOB, in buf (at most size bytes); its length. */
static int edit_get_blob(sqlite3 *db, const edit_column *c, sqlite3_int64 offset,
                         unsigned char *buf, int size) {
    char where[256], sql[512];
    edit_where(where, sizeof where, c->table);
    snprintf(sql, sizeof sql, "SELECT CAST(%s AS BLOB) FROM %s WHERE %s", c->name, c->table->name,
             where);
    sqlite3_stmt *st;
    int n = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 2, offset);
        if (sqlite3_step(st) == SQLITE_ROW) {
            n = sqlite3_column_bytes(st, 0);
            if (n > size) n = size;
            if (n) memcpy(buf, sqlite3_column_blob(st, 0), (size_t)n);
        }
    }
    sqlite3_finalize(st);
    return n;
}

/* The column's value as a BLOB with 8 bytes at 8 * at overwritten (it
 * may grow), or (cut) cut to 8 * at bytes; into blob, its size. */
static int edit_blob_of(sqlite3 *db, const edit_column *c, sqlite3_int64 offset, uint8_t at,
                        const uint8_t bytes[8], unsigned char *blob) {
    int n = edit_get_blob(db, c, offset, blob, 1 << 16), pos = 8 * at;
    if (!bytes) return pos < n ? pos : n;
    if (pos > n) pos = n;
    memcpy(blob + pos, bytes, 8);
    return pos + 8 > n ? pos + 8 : n;
}

/* Reads the value an op 0-8 sets; false when the input ends first. */
static bool edit_read_value(edit_input *in, int op, sqlite3 *db, const edit_column *c,
                            sqlite3_int64 offset, unsigned char *blob, edit_value *v) {
    static const int types[9] = {SQLITE_NULL, SQLITE_INTEGER, SQLITE_INTEGER, SQLITE_INTEGER,
                                 SQLITE_FLOAT, SQLITE_TEXT,   SQLITE_BLOB,    SQLITE_BLOB,
                                 SQLITE_BLOB};
    uint8_t b, bytes[8];
    *v = (edit_value){.type = types[op]};
    if (op == 1) return edit_take(in, &v->i, 8);
    if (op == 4) return edit_take(in, &v->d, 8);
    if (op == 0 || !edit_byte(in, &b)) return op == 0;
    if (op == 2) v->i = (int8_t)b;
    if (op == 3) v->i = edit_extremes[b % 16];
    if (op == 5 || op == 6) {
        if ((size_t)(in->end - in->p) < b) return false;
        v->bytes = in->p;
        v->n = b;
        in->p += b;
    }
    if (op == 7 && !edit_take(in, bytes, 8)) return false;
    if (op >= 7) {
        v->n = edit_blob_of(db, c, offset, b, op == 7 ? bytes : NULL, blob);
        v->bytes = blob;
    }
    return true;
}

/* Deletes (copy false) or copies the offset'th row of t. */
static void edit_row_op(sqlite3 *db, const edit_table *t, sqlite3_int64 offset, bool copy) {
    char where[256], sql[768];
    edit_where(where, sizeof where, t);
    /* A copy takes every column but the id, which it gets anew. */
    const char *cols = strncmp(t->columns, "id, ", 4) ? t->columns : t->columns + 4;
    if (copy)
        snprintf(sql, sizeof sql, "INSERT INTO %s (%s) SELECT %s FROM %s WHERE %s", t->name, cols,
                 cols, t->name, where);
    else
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE %s", t->name, where);
    edit_run(db, sql, offset, NULL, NULL);
}

/* ---- the whole input ---------------------------------------------------------------------- */

typedef struct edit_patch {
    bool cut;
    uint32_t at;
    uint8_t byte;
} edit_patch;

/* Applies one row edit (op 0-10); false when the input ends first. */
static bool edit_row_edit(edit_input *in, sqlite3 *db, uint8_t op) {
    static unsigned char blob[(1 << 16) + 8];
    uint8_t col, row;
    if (!edit_byte(in, &col) || !edit_byte(in, &row)) return false;
    const edit_column *c = &edit_base.columns[col % edit_base.ncolumns];
    sqlite3_int64 offset = edit_row(db, c->table, row);
    if (op >= 9) {
        if (offset >= 0) edit_row_op(db, c->table, offset, op == 10);
        return true;
    }
    edit_value v;
    /* Reading the value needs no row, but an empty table has none to set. */
    if (!edit_read_value(in, op, db, c, offset < 0 ? 0 : offset, blob, &v)) return false;
    if (offset >= 0) edit_set(db, c, offset, &v);
    return true;
}

/* The store the input describes, as bytes (sqlite3_malloc'ed) and size. */
static unsigned char *edit_apply(const uint8_t *data, size_t size, sqlite3_int64 *out_size) {
    sqlite3 *db = edit_open_copy(edit_base.base, edit_base.base_size);
    edit_input in = {data, data + size};
    edit_patch patches[256];
    size_t npatches = 0;
    uint8_t op;
    while (edit_byte(&in, &op)) {
        op %= 13;
        if (op <= 10) {
            if (!edit_row_edit(&in, db, op)) break;
            continue;
        }
        uint16_t at;
        uint8_t byte = 0;
        if (!edit_take(&in, &at, 2) || (op == 11 && !edit_byte(&in, &byte))) break;
        if (npatches < sizeof patches / sizeof patches[0])
            patches[npatches++] = (edit_patch){op == 12, at, byte};
    }
    unsigned char *bytes = sqlite3_serialize(db, "main", out_size, 0);
    sqlite3_close(db);
    FUZZ_CHECK(bytes != NULL, "serializing an edited store");
    for (size_t i = 0; i < npatches; i++) {
        if (patches[i].cut && 16 * (sqlite3_int64)patches[i].at < *out_size)
            *out_size = 16 * (sqlite3_int64)patches[i].at;
        else if (!patches[i].cut && *out_size > 0)
            bytes[patches[i].at % *out_size] = patches[i].byte;
    }
    return bytes;
}

/* Writes the store the input describes to path. */
static void edit_write_store(const uint8_t *data, size_t size, const char *path) {
    static const char magic[16] = "SQLite format 3";
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "cannot write %s", path);
    if (size >= sizeof magic && !memcmp(data, magic, sizeof magic)) {
        FUZZ_CHECK(fwrite(data, 1, size, f) == size, "writing %s", path);
    } else {
        sqlite3_int64 n;
        unsigned char *bytes = edit_apply(data, size, &n);
        FUZZ_CHECK(fwrite(bytes, 1, (size_t)n, f) == (size_t)n, "writing %s", path);
        sqlite3_free(bytes);
    }
    FUZZ_CHECK(fclose(f) == 0, "closing %s", path);
}

#endif
