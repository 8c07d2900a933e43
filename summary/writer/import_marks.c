/* writer/import_marks.c — how far each TensorBoard event file was read
 * into a store (its imported_files table), so that importing again reads
 * only what was added since and never stores an event twice.
 *
 * An import loads the store's marks once (gb__import_marks_load), looks
 * each file up by its run and name, and queues a new mark behind each
 * record's values (gb__writer_import_mark); the writer stores a batch's
 * last mark in the transaction that stores the values it covers
 * (commit.c). A file is known by its name, not its path: TensorFlow's and
 * PyTorch's names hold a timestamp, host and pid, and a directory that
 * moves keeps them. Whether it is still the file that was read is told by
 * its bytes: it is at least as long as what was read, and the four bytes
 * before that point (the last record's masked CRC) are still the same.
 */
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

gb_status gb__writer_import_mark(gb_summary_writer *w, const char *file, int64_t bytes_read,
                                 uint32_t tail) {
    size_t n = strlen(file) + 1;
    gb__import_mark *m = malloc(sizeof *m + n);
    if (!m) return gb__writer_fail(GB_ERR_MEMORY, "gb_summary_import_tfevents", NULL, "out of memory");
    m->bytes_read = bytes_read;
    m->tail = tail;
    memcpy(m->file, file, n);
    gb__event ev = {.type = GB__EV_IMPORT_MARK, .step = GB_STEP_NONE, .wall_time = gb__wall_now(),
                    .payload = m};
    return gb__writer_push(w, "gb_summary_import_tfevents", NULL, GB_KIND_ANY, ev, sizeof *m + n);
}

static int by_run_and_file(const void *a, const void *b) {
    const gb__import_row *x = a, *y = b;
    int c = strcmp(x->run, y->run);
    return c ? c : strcmp(x->file, y->file);
}

static bool add_row(gb__import_marks *m, const char *run, const char *file, int64_t bytes_read,
                    int64_t tail, const char *status) {
    if (m->count == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 16;
        gb__import_row *rows = realloc(m->rows, cap * sizeof *rows);
        if (!rows) return false;
        m->rows = rows, m->cap = cap;
    }
    gb__import_row *r = &m->rows[m->count];
    r->run = strdup(run);
    r->file = strdup(file);
    r->bytes_read = bytes_read;
    r->tail = (uint32_t)tail;
    r->failed = status && !strcmp(status, "failed");
    r->killed = status && !strcmp(status, "killed");
    if (!r->run || !r->file) {
        free(r->run), free(r->file);
        return false;
    }
    m->count++;
    return true;
}

/* The rows of a store at schema 8 or later (db open); false on failure. */
static bool read_rows(sqlite3 *db, gb__import_marks *m) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT r.name, f.file, f.bytes_read, f.tail, r.status FROM imported_files f "
                           "JOIN runs r ON r.id = f.run_id",
                           -1, &st, NULL) != SQLITE_OK)
        return false;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (!add_row(m, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                     sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                     (const char *)sqlite3_column_text(st, 4))) {
            rc = SQLITE_NOMEM;
            break;
        }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE;
}

bool gb__import_marks_load(const char *what, const char *path, gb__import_marks *m) {
    *m = (gb__import_marks){0};
    sqlite3 *db;
    gb_store_status st = gb__store_connect(path, false, &db);
    if (st == GB_STORE_ERR_NOT_FOUND) return true;   /* a new store: nothing was read */
    /* Not a store, or unreadable: the writer's open says why, and no mark
     * is needed for a store that cannot be written. */
    if (st != GB_STORE_OK) return true;
    sqlite3_stmt *v;
    int version = 0;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &v, NULL) == SQLITE_OK) {
        if (sqlite3_step(v) == SQLITE_ROW) version = sqlite3_column_int(v, 0);
        sqlite3_finalize(v);
    }
    /* Before schema 8 no import recorded how far it read. */
    bool ok = version < 8 || read_rows(db, m);
    if (!ok) gb__summary_fail("%s: cannot read what was imported into '%s' before: %s", what, path,
                              sqlite3_errmsg(db));
    sqlite3_close(db);
    if (!ok) {
        gb__import_marks_free(m);
        return false;
    }
    if (m->count) qsort(m->rows, m->count, sizeof *m->rows, by_run_and_file);
    return true;
}

const gb__import_row *gb__import_marks_find(const gb__import_marks *m, const char *run,
                                            const char *file) {
    if (!m->count) return NULL;
    gb__import_row key = {.run = (char *)run, .file = (char *)file};
    return bsearch(&key, m->rows, m->count, sizeof *m->rows, by_run_and_file);
}

void gb__import_marks_free(gb__import_marks *m) {
    for (size_t i = 0; i < m->count; i++) free(m->rows[i].run), free(m->rows[i].file);
    free(m->rows);
    *m = (gb__import_marks){0};
}
