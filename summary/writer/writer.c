/* writer/writer.c — the summary writer's public calls.
 *
 * Everything here runs on the caller's thread and is cheap: arguments are
 * validated (so bad input fails at once with a clear message), data is
 * copied, and the event is appended to the in-memory queue. The background
 * thread (commit.c) does the SQLite work, the histogram arithmetic
 * and the PNG encoding. A full queue makes callers wait rather than drop.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "writer/internal.h"

static const gb_summary_options default_options = {
    .flush_every_events = 10000,
    .flush_every_ms = 250,
    .max_queue_events = 200000,
    .max_queue_bytes = (size_t)256 << 20,
    .histogram_buckets = 30,
    .busy_timeout_ms = 5000,
};

static gb_status fail(gb_status st, const char *what, const char *tag, const char *msg) {
    if (tag)
        gb__summary_fail("%s '%s': %s", what, tag, msg);
    else
        gb__summary_fail("%s: %s", what, msg);
    return st;
}

/* ---- events and their payloads ------------------------------------------------- */

gb__strings *gb__strings_new(int n, const char *const *src, size_t *bytes) {
    size_t total = sizeof(gb__strings) + (size_t)n * sizeof(char *);
    for (int i = 0; i < n; i++) total += strlen(src[i] ? src[i] : "") + 1;
    gb__strings *s = malloc(total);
    if (!s) return NULL;
    s->n = n;
    char *p = (char *)(s->s + n);
    for (int i = 0; i < n; i++) {
        size_t len = strlen(src[i] ? src[i] : "") + 1;
        memcpy(p, src[i] ? src[i] : "", len);
        s->s[i] = p;
        p += len;
    }
    if (bytes) *bytes = total;
    return s;
}

void gb__event_free(gb__event *ev) {
    if (ev->type == GB__EV_HISTOGRAM && ev->payload) {
        gb__histogram_free(&((gb__hist_payload *)ev->payload)->h);
    } else if (ev->type == GB__EV_IMAGE && ev->payload) {
        gb__image_payload *im = ev->payload;
        for (int i = 0; im->png && i < im->n; i++) free(im->png[i]);
        free(im->png);
        free(im->png_size);
    } else if (ev->type == GB__EV_TRACE && ev->payload) {
        free(((gb__trace_payload *)ev->payload)->text);
    } else if (ev->type == GB__EV_NUMERICS && ev->payload) {
        free(((gb__numerics_payload *)ev->payload)->text);
    } else if (ev->type == GB__EV_HEALTH && ev->payload) {
        free(((gb__health_payload *)ev->payload)->text);
    } else if (ev->type == GB__EV_PROFILE) {
        gb__writer_profile_payload_free(ev->payload);
    } else if (ev->type == GB__EV_FUNCTION && ev->payload) {
        free(((gb__function_payload *)ev->payload)->text);
    }   /* the other payloads are one allocation each */
    free(ev->payload);
    ev->payload = NULL;
}

gb_status gb__writer_step(const char *what, const char *tag, int64_t step, bool required,
                          int64_t *out) {
    if (step == GB_STEP_DEFAULT) {
        if (gb_summary_get_step(out)) return GB_OK;
        if (!required) {
            *out = GB_STEP_NONE;
            return GB_OK;
        }
        return fail(GB_ERR_STATE, what, tag,
                    "no step: pass one, or set the global step with gb_summary_set_step()");
    }
    if (step < -GB_STEP_LIMIT || step > GB_STEP_LIMIT) {
        char msg[128];
        snprintf(msg, sizeof msg, "step %lld is out of range (|step| <= 2^62)", (long long)step);
        return fail(GB_ERR_VALUE, what, tag, msg);
    }
    *out = step;
    return GB_OK;
}

static bool queue_full(const gb_summary_writer *w, size_t bytes) {
    return w->queue_len >= w->opt.max_queue_events ||
           (w->queue_len > 0 && w->queue_bytes + bytes > w->opt.max_queue_bytes);
}

/* Appends ev (lock held); the caller handles errors. */
static gb_status append(gb_summary_writer *w, gb__event *ev, size_t bytes) {
    while (queue_full(w, bytes) && !w->error) {
        w->flush_requested = true;   /* commit now, whatever the batch size */
        pthread_cond_signal(&w->work);
        pthread_cond_wait(&w->space, &w->lock);
    }
    if (w->error) return w->error;
    if (w->queue_len == w->queue_cap) {
        size_t cap = w->queue_cap ? 2 * w->queue_cap : 1024;
        gb__event *q = realloc(w->queue, cap * sizeof *q);
        if (!q) return GB_ERR_MEMORY;
        w->queue = q;
        w->queue_cap = cap;
    }
    w->queue[w->queue_len++] = *ev;
    w->queue_bytes += bytes;
    w->enqueued++;
    if (w->queue_len == 1) {   /* the background thread arms its flush timer */
        w->queue_since_ms = gb__mono_ms();
        pthread_cond_signal(&w->work);
    }
    if (w->queue_len == (size_t)w->opt.flush_every_events) pthread_cond_signal(&w->work);
    return GB_OK;
}

gb_status gb__writer_push(gb_summary_writer *w, const char *what, const char *tag,
                          gb_summary_kind kind, gb__event ev, size_t payload_bytes) {
    if (!w) w = gb_summary_get_default();
    if (!w) {
        gb__event_free(&ev);
        return fail(GB_ERR_STATE, what, tag,
                    "no summary writer: pass one, or make one the default with "
                    "gb_summary_set_default()");
    }
    pthread_mutex_lock(&w->lock);
    gb_status st = w->closing ? GB_ERR_STATE : GB_OK;
    if (st == GB_OK && tag) {
        ev.tag = gb__writer_tag(w, tag, kind);
        if (ev.tag < 0) st = GB_ERR_MEMORY;
    }
    if (st == GB_OK) st = append(w, &ev, payload_bytes + sizeof ev);
    char msg[sizeof w->error_message + 64];
    if (st != GB_OK)
        snprintf(msg, sizeof msg, "%s",
                 st == GB_ERR_MEMORY ? "out of memory"
                 : st == GB_ERR_STATE && w->closing ? "the writer is closing"
                                                    : w->error_message);
    pthread_mutex_unlock(&w->lock);
    if (st == GB_OK) return GB_OK;
    gb__event_free(&ev);
    return fail(st, what, tag, msg);
}

/* ---- open, flush, close ---------------------------------------------------------- */

static bool valid_options(const gb_summary_options *o) {
    return o->flush_every_events >= 0 && o->flush_every_ms >= 0 && o->histogram_buckets >= 0 &&
           o->busy_timeout_ms >= 0 && o->histogram_buckets <= 100000;
}

static gb_summary_options with_defaults(const gb_summary_options *o) {
    gb_summary_options r = o ? *o : default_options;
    if (!r.flush_every_events) r.flush_every_events = default_options.flush_every_events;
    if (!r.flush_every_ms) r.flush_every_ms = default_options.flush_every_ms;
    if (!r.max_queue_events) r.max_queue_events = default_options.max_queue_events;
    if (!r.max_queue_bytes) r.max_queue_bytes = default_options.max_queue_bytes;
    if (!r.histogram_buckets) r.histogram_buckets = default_options.histogram_buckets;
    if (!r.busy_timeout_ms) r.busy_timeout_ms = default_options.busy_timeout_ms;
    return r;
}

/* "prog --flag value": /proc/self/cmdline with NULs as spaces. */
static void command_line(char *out, size_t n) {
    out[0] = 0;
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f) return;
    size_t len = fread(out, 1, n - 1, f);
    fclose(f);
    while (len > 0 && out[len - 1] == 0) len--;
    for (size_t i = 0; i < len; i++)
        if (!out[i]) out[i] = ' ';
    out[len] = 0;
}

/* Whether a run of this name is in the store; -1 on an SQLite error. */
static int run_exists(sqlite3 *db, const char *name) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM runs WHERE name = ?1", -1, &st, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* With new_run, w->run becomes the first of "<run>", "<run>_2", "<run>_3"
 * ... that the store lacks. Called inside open_run's IMMEDIATE
 * transaction, so two writers starting at once never take the same name. */
static int choose_new_run(gb_summary_writer *w) {
    size_t n = strlen(w->run) + 24;
    char *name = malloc(n);
    if (!name) return SQLITE_NOMEM;
    snprintf(name, n, "%s", w->run);
    int exists;
    for (long k = 2; (exists = run_exists(w->db, name)) == 1; k++) snprintf(name, n, "%s_%ld", w->run, k);
    if (exists < 0) {
        free(name);
        return sqlite3_errcode(w->db);
    }
    free(w->run);
    w->run = name;
    return SQLITE_OK;
}

const char *gb_summary_writer_run(const gb_summary_writer *w) { return w ? w->run : NULL; }

bool gb_summary_writer_continues(const gb_summary_writer *w) { return w && w->continues; }

/* Creates the run row unless it exists (then keeps its metadata), or with
 * new_run under a name no run has. */
static int open_run(gb_summary_writer *w) {
    char host[256] = "", cmd[4096];
    gethostname(host, sizeof host - 1);
    command_line(cmd, sizeof cmd);
    double now = gb__wall_now();
    int rc = gb__begin_immediate(w->db);
    if (rc != SQLITE_OK) return rc;
    if (w->opt.new_run) rc = choose_new_run(w);
    sqlite3_stmt *st;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(w->db,
                            "INSERT OR IGNORE INTO runs(name, start_time, last_write_time, host, "
                            "pid, command_line) VALUES (?1, ?2, ?2, ?3, ?4, ?5)",
                            -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, w->run, -1, SQLITE_STATIC);
        sqlite3_bind_double(st, 2, now);
        sqlite3_bind_text(st, 3, host, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, getpid());
        sqlite3_bind_text(st, 5, cmd, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(w->db);
        w->continues = rc == SQLITE_OK && sqlite3_changes(w->db) == 0;   /* ignored: it was there */
        sqlite3_finalize(st);
    }
    /* Running from now until close, in this process: a reader that finds
     * it still running once the process is gone knows it was killed. */
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(w->db,
                                "UPDATE runs SET status = 'running', status_host = ?2, "
                                "status_pid = ?3 WHERE name = ?1",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, w->run, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, getpid());
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(w->db);
        sqlite3_finalize(st);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(w->db, "SELECT id FROM runs WHERE name = ?1", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, w->run, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_ROW ? SQLITE_OK : sqlite3_errcode(w->db);
        w->run_id = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    int end = sqlite3_exec(w->db, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc != SQLITE_OK ? rc : end;
}

static void writer_free(gb_summary_writer *w) {
    gb__checkpointer_stop(&w->checkpointer, w->db);
    for (int i = 0; i < GB__ST_COUNT; i++) sqlite3_finalize(w->st[i]);
    sqlite3_close(w->db);
    for (size_t i = 0; i < w->queue_len; i++) gb__event_free(&w->queue[i]);
    free(w->queue);
    for (int i = 0; i < w->nbg; i++) {
        free(w->bg[i]->points);
        free(w->bg[i]);
    }
    free(w->bg);
    gb__writer_tags_free(w);
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->siblings_lock);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->space);
    pthread_cond_destroy(&w->done);
    free(w->traced_graph);
    free(w->path);
    free(w->run);
    free(w);
}

/* Opens the connection and the run; the message is in err. */
static gb_status open_store(gb_summary_writer *w, char *err, size_t n) {
    int rc = sqlite3_open_v2(w->path, &w->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, n, "cannot open store '%s': %s", w->path,
                 w->db ? sqlite3_errmsg(w->db) : sqlite3_errstr(rc));
        return GB_ERR_IO;
    }
    sqlite3_busy_timeout(w->db, w->opt.busy_timeout_ms);
    if (gb__store_prepare_write(w->db, w->path, err, n) != GB_STORE_OK) return GB_ERR_IO;
    rc = open_run(w);
    if (rc == SQLITE_OK) rc = gb__writer_prepare_statements(w);
    if (rc == SQLITE_OK)
        rc = gb__checkpointer_start(&w->checkpointer, w->db, w->path, w->opt.busy_timeout_ms);
    if (rc != SQLITE_OK) {
        snprintf(err, n, "store '%s': %s", w->path, sqlite3_errmsg(w->db));
        return GB_ERR_IO;
    }
    return GB_OK;
}

gb_status gb_summary_writer_open(const char *path, const char *run,
                                 const gb_summary_options *opts, gb_summary_writer **out) {
    static const char what[] = "gb_summary_writer_open";
    if (!out) return fail(GB_ERR_VALUE, what, NULL, "out is NULL");
    *out = NULL;
    if (!path || !*path) return fail(GB_ERR_VALUE, what, NULL, "the store path is NULL or empty");
    if (!run || !*run) return fail(GB_ERR_VALUE, what, NULL, "the run name is NULL or empty");
    if (opts && !valid_options(opts))
        return fail(GB_ERR_VALUE, what, NULL,
                    "invalid options: counts and times must be >= 0, histogram_buckets <= 100000");
    gb_summary_writer *w = calloc(1, sizeof *w);
    if (!w) return fail(GB_ERR_MEMORY, what, NULL, "out of memory");
    w->opt = with_defaults(opts);
    w->path = strdup(path);
    w->run = strdup(run);
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->siblings_lock, NULL);
    pthread_condattr_t monotonic;   /* the flush timer must not jump with the clock */
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&w->work, &monotonic);
    pthread_condattr_destroy(&monotonic);
    pthread_cond_init(&w->space, NULL);
    pthread_cond_init(&w->done, NULL);
    char err[1024] = "out of memory";
    gb_status st = w->path && w->run ? open_store(w, err, sizeof err) : GB_ERR_MEMORY;
    if (st == GB_OK) {
        if (pthread_create(&w->thread, NULL, gb__writer_thread, w) == 0)
            w->thread_started = true;
        else
            st = GB_ERR_INTERNAL, snprintf(err, sizeof err, "cannot start the writer thread");
    }
    if (st != GB_OK) {
        writer_free(w);
        gb__summary_fail("%s: %s", what, err);
        return st;
    }
    *out = w;
    return GB_OK;
}

/* Waits until the events queued so far are committed; the sticky error. */
static gb_status wait_committed(gb_summary_writer *w, char *msg, size_t n) {
    pthread_mutex_lock(&w->lock);
    uint64_t target = w->enqueued;
    w->flush_requested = true;
    pthread_cond_signal(&w->work);
    while (w->committed < target) pthread_cond_wait(&w->done, &w->lock);
    gb_status st = w->error;
    snprintf(msg, n, "%s", w->error_message);
    pthread_mutex_unlock(&w->lock);
    return st;
}

gb_status gb_summary_flush(gb_summary_writer *w) {
    if (!w) w = gb_summary_get_default();
    if (!w) return fail(GB_ERR_STATE, "gb_summary_flush", NULL, "no writer given and no default");
    if (w == gb_summary_get_default()) gb_function_flush_counters(); /* the calls so far */
    char msg[sizeof w->error_message];
    gb_status st = wait_committed(w, msg, sizeof msg);
    if (st != GB_OK) return fail(st, "gb_summary_flush", NULL, msg);
    return gb__writer_siblings_flush(w);
}

gb_status gb_summary_writer_close(gb_summary_writer *w) {
    if (!w) return fail(GB_ERR_VALUE, "gb_summary_writer_close", NULL, "writer is NULL");
    gb__writer_forget_default(w);
    gb_status siblings = gb__writer_siblings_close(w);
    if (!w->status_said) gb__writer_push_status(w, "done");   /* its failure is the sticky error */
    pthread_mutex_lock(&w->lock);
    w->closing = true;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    if (w->thread_started) pthread_join(w->thread, NULL);
    gb_status st = w->error;
    char msg[sizeof w->error_message];
    snprintf(msg, sizeof msg, "%s", w->error_message);
    writer_free(w);
    if (st != GB_OK) return fail(st, "gb_summary_writer_close", NULL, msg);
    return siblings;
}

/* ---- hyperparameters ------------------------------------------------------------------ */

static gb_status hparam(gb_summary_writer *w, const char *what, const char *key, const char *text,
                        bool is_number, double number) {
    if (!key || !*key) return fail(GB_ERR_VALUE, what, NULL, "key is NULL or empty");
    if (!text) return fail(GB_ERR_VALUE, what, key, "value is NULL");
    size_t bytes;
    gb__strings *s = gb__strings_new(2, (const char *[]){key, text}, &bytes);
    if (!s) return fail(GB_ERR_MEMORY, what, key, "out of memory");
    gb__event ev = {.type = GB__EV_HPARAM, .tag = is_number, .step = GB_STEP_NONE,
                    .wall_time = gb__wall_now(), .value = number, .payload = s};
    return gb__writer_push(w, what, NULL, GB_KIND_ANY, ev, bytes);
}

gb_status gb_summary_hparam_str(gb_summary_writer *w, const char *key, const char *value) {
    return hparam(w, "gb_summary_hparam_str", key, value, false, NAN);
}

gb_status gb_summary_hparam_num(gb_summary_writer *w, const char *key, double value) {
    char text[64];
    gb__shortest_double(text, sizeof text, value);
    return hparam(w, "gb_summary_hparam_num", key, text, true, value);
}

/* ---- summaries ----------------------------------------------------------------------- */

static gb_status check_tag(const char *what, const char *tag) {
    if (!tag) return fail(GB_ERR_VALUE, what, NULL, "tag is NULL");
    if (!*tag) return fail(GB_ERR_VALUE, what, NULL, "tag is empty");
    return GB_OK;
}

/* The common checks of a tensor argument: present and with data. */
static gb_status check_tensor(const char *what, const char *tag, const gb_tensor *t) {
    if (!t) return fail(GB_ERR_VALUE, what, tag, "tensor is NULL (did an earlier op fail?)");
    if (!gb_data(t))
        return fail(GB_ERR_STATE, what, tag,
                    "the tensor is symbolic (inside a traced function): it has no value to write");
    return GB_OK;
}

gb_status gb__writer_fail(gb_status st, const char *what, const char *tag, const char *msg) {
    return fail(st, what, tag, msg);
}

gb_status gb__writer_check_tensor(const char *what, const char *tag, const gb_tensor *t) {
    return check_tensor(what, tag, t);
}

/* Tag and step checks shared by every summary; fills *step. */
gb_status gb__writer_check_summary(const char *what, const char *tag, int64_t *step) {
    gb_status st = check_tag(what, tag);
    return st != GB_OK ? st : gb__writer_step(what, tag, *step, true, step);
}

gb_status gb__writer_scalar_at(gb_summary_writer *w, const char *tag, double value, int64_t step,
                               double wall_time) {
    gb_status st = gb__writer_check_summary("gb_summary_scalar", tag, &step);
    if (st != GB_OK) return st;
    gb__event ev = {.type = GB__EV_SCALAR, .step = step, .wall_time = wall_time, .value = value};
    return gb__writer_push(w, "gb_summary_scalar", tag, GB_KIND_SCALAR, ev, 0);
}

gb_status gb__writer_histogram_at(gb_summary_writer *w, const char *tag, int64_t step,
                                  double wall_time, const gb__histogram *h) {
    static const char what[] = "gb_summary_histogram";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st != GB_OK) return st;
    size_t doubles = 2 * (size_t)h->bucket_count + 1;
    gb__hist_payload *p = malloc(sizeof *p);
    double *edges = malloc(doubles * sizeof *edges);
    if (!p || !edges) {
        free(p);
        free(edges);
        return fail(GB_ERR_MEMORY, what, tag, "out of memory");
    }
    memcpy(edges, h->edges, ((size_t)h->bucket_count + 1) * sizeof *edges);
    memcpy(edges + h->bucket_count + 1, h->counts, (size_t)h->bucket_count * sizeof *edges);
    *p = (gb__hist_payload){.h = *h, .ready = true};
    p->h.edges = edges;
    p->h.counts = edges + h->bucket_count + 1;
    gb__event ev = {.type = GB__EV_HISTOGRAM, .step = step, .wall_time = wall_time, .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_HISTOGRAM, ev, sizeof *p + doubles * sizeof *edges);
}

gb_status gb__writer_png_at(gb_summary_writer *w, const char *tag, int64_t step, double wall_time,
                            const void *png, size_t size, int width, int height, int channels) {
    static const char what[] = "gb_summary_image";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st != GB_OK) return st;
    gb__image_payload *p = malloc(sizeof *p);
    unsigned char **pngs = calloc(1, sizeof *pngs);
    size_t *sizes = calloc(1, sizeof *sizes);
    unsigned char *copy = malloc(size ? size : 1);
    if (!p || !pngs || !sizes || !copy) {
        free(p), free(pngs), free(sizes), free(copy);
        return fail(GB_ERR_MEMORY, what, tag, "out of memory");
    }
    if (size) memcpy(copy, png, size);
    pngs[0] = copy;
    sizes[0] = size;
    *p = (gb__image_payload){.n = 1, .h = height, .w = width, .c = channels, .ready = true,
                             .png = pngs, .png_size = sizes};
    gb__event ev = {.type = GB__EV_IMAGE, .step = step, .wall_time = wall_time, .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_IMAGE, ev, sizeof *p + size);
}

gb_status gb__writer_text_at(gb_summary_writer *w, const char *tag, const char *text, int64_t step,
                             double wall_time) {
    static const char what[] = "gb_summary_text";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st != GB_OK) return st;
    char *copy = strdup(text);
    if (!copy) return fail(GB_ERR_MEMORY, what, tag, "out of memory");
    gb__event ev = {.type = GB__EV_TEXT, .step = step, .wall_time = wall_time, .payload = copy};
    return gb__writer_push(w, what, tag, GB_KIND_TEXT, ev, strlen(copy) + 1);
}

gb_status gb_summary_scalar(gb_summary_writer *w, const char *tag, double value, int64_t step) {
    return gb__writer_scalar_at(w, tag, value, step, gb__wall_now());
}

gb_status gb_summary_scalar_tensor(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                                   int64_t step) {
    static const char what[] = "gb_summary_scalar_tensor";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = check_tensor(what, tag, t);
    if (st != GB_OK) return st;
    if (gb_size(t) != 1) {
        char shape[96], msg[160];
        snprintf(msg, sizeof msg, "expected one element, got shape %s",
                 gb_shape_str(t, shape, sizeof shape));
        return fail(GB_ERR_SHAPE, what, tag, msg);
    }
    return gb_summary_scalar(w, tag, gb_get(t, 0), step);
}

gb_status gb_summary_histogram(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                               int64_t step) {
    static const char what[] = "gb_summary_histogram";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = check_tensor(what, tag, t);
    if (st != GB_OK) return st;
    int64_t n = gb_size(t);
    if (n == 0)
        return fail(GB_ERR_VALUE, what, tag, "the tensor is empty: a histogram needs values");
    size_t bytes = gb_nbytes(t);
    gb__hist_payload *p = malloc(sizeof *p + bytes);
    if (!p) return fail(GB_ERR_MEMORY, what, tag, "out of memory");
    *p = (gb__hist_payload){.dtype = gb_tensor_dtype(t), .n = n};
    memcpy(p->data, gb_data(t), bytes);
    gb__event ev = {.type = GB__EV_HISTOGRAM, .step = step, .wall_time = gb__wall_now(),
                    .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_HISTOGRAM, ev, sizeof *p + bytes);
}

gb_status gb__writer_check_image(const char *what, const char *tag, const gb_tensor *t,
                                 int max_outputs) {
    char shape[96], msg[256];
    gb_dtype dt = gb_tensor_dtype(t);
    if (gb_rank(t) != 4) {
        snprintf(msg, sizeof msg, "expected a rank-4 tensor [N,H,W,C], got rank %d %s",
                 gb_rank(t), gb_shape_str(t, shape, sizeof shape));
        return fail(GB_ERR_SHAPE, what, tag, msg);
    }
    const int64_t *d = gb_shape(t);
    if (d[3] != 1 && d[3] != 3 && d[3] != 4) {
        snprintf(msg, sizeof msg, "expected C = 1, 3 or 4 channels in [N,H,W,C], got %s",
                 gb_shape_str(t, shape, sizeof shape));
        return fail(GB_ERR_SHAPE, what, tag, msg);
    }
    if (d[1] > INT_MAX / 8 || d[2] > INT_MAX / 8 || (d[0] > 0 && (d[1] == 0 || d[2] == 0))) {
        snprintf(msg, sizeof msg, "image height and width must be >= 1, got %s",
                 gb_shape_str(t, shape, sizeof shape));
        return fail(GB_ERR_SHAPE, what, tag, msg);
    }
    if (dt != GB_U8 && dt != GB_F32 && dt != GB_F64) {
        snprintf(msg, sizeof msg, "expected uint8, float32 or float64 pixels, got %s",
                 gb_dtype_name(dt));
        return fail(GB_ERR_DTYPE, what, tag, msg);
    }
    if (max_outputs < 1) {
        snprintf(msg, sizeof msg, "max_outputs must be >= 1, got %d", max_outputs);
        return fail(GB_ERR_VALUE, what, tag, msg);
    }
    return GB_OK;
}

gb_status gb_summary_image(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                           int max_outputs, int64_t step) {
    static const char what[] = "gb_summary_image";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = check_tensor(what, tag, t);
    if (st == GB_OK) st = gb__writer_check_image(what, tag, t, max_outputs);
    if (st != GB_OK) return st;
    const int64_t *d = gb_shape(t);
    int64_t n = d[0] < max_outputs ? d[0] : max_outputs;
    if (n == 0) return GB_OK;   /* as tf.summary.image: an empty batch writes nothing */
    size_t pixels = (size_t)(n * d[1] * d[2] * d[3]);
    gb__image_payload *p = malloc(sizeof *p + pixels);
    if (!p) return fail(GB_ERR_MEMORY, what, tag, "out of memory");
    *p = (gb__image_payload){.n = (int)n, .h = (int)d[1], .w = (int)d[2], .c = (int)d[3]};
    gb__image_to_u8(gb_tensor_dtype(t), gb_data(t), n, d[1], d[2], (int)d[3], p->pixels);
    gb__event ev = {.type = GB__EV_IMAGE, .step = step, .wall_time = gb__wall_now(),
                    .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_IMAGE, ev, sizeof *p + pixels);
}

gb_status gb_summary_text(gb_summary_writer *w, const char *tag, const char *text, int64_t step) {
    static const char what[] = "gb_summary_text";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st != GB_OK) return st;
    if (!text) return fail(GB_ERR_VALUE, what, tag, "text is NULL");
    char *copy = strdup(text);
    if (!copy) return fail(GB_ERR_MEMORY, what, tag, "out of memory");
    gb__event ev = {.type = GB__EV_TEXT, .step = step, .wall_time = gb__wall_now(),
                    .payload = copy};
    return gb__writer_push(w, what, tag, GB_KIND_TEXT, ev, strlen(copy) + 1);
}

gb_status gb_summary_graph(gb_summary_writer *w, const char *tag, const char *format,
                           const char *content, int64_t step) {
    static const char what[] = "gb_summary_graph";
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st != GB_OK) return st;
    if (!format || !*format) return fail(GB_ERR_VALUE, what, tag, "format is NULL or empty");
    if (!content) return fail(GB_ERR_VALUE, what, tag, "content is NULL");
    /* Checked here, where the caller can be told: a stored graph the
     * server cannot hand on would only be a damaged one there. */
    if (!strcmp(format, "json") && !gb_json_is_value(content))
        return fail(GB_ERR_VALUE, what, tag, "content of format 'json' is not one JSON value in UTF-8");
    if (!gb_utf8_valid(format, strlen(format)) || !gb_utf8_valid(content, strlen(content)))
        return fail(GB_ERR_VALUE, what, tag, "format or content is not UTF-8");
    size_t bytes;
    gb__strings *s = gb__strings_new(2, (const char *[]){format, content}, &bytes);
    if (!s) return fail(GB_ERR_MEMORY, what, tag, "out of memory");
    gb__event ev = {.type = GB__EV_GRAPH, .step = step, .wall_time = gb__wall_now(), .payload = s};
    return gb__writer_push(w, what, tag, GB_KIND_GRAPH, ev, bytes);
}

/* ---- engine events ---------------------------------------------------------------------- */

gb_status gb_summary_trace(gb_summary_writer *w, const gb_trace_record *r, int64_t step) {
    static const char what[] = "gb_summary_trace";
    if (!r || !r->function || !*r->function)
        return fail(GB_ERR_VALUE, what, NULL, "the record or its function name is NULL");
    gb_status st = gb__writer_step(what, r->function, step, false, &step);
    if (st != GB_OK) return st;
    size_t bytes;
    gb__trace_payload *p = malloc(sizeof *p);
    gb__strings *s =
        gb__strings_new(4, (const char *[]){r->function, r->reason, r->signature, r->detail_json},
                        &bytes);
    if (!p || !s) {
        free(p);
        free(s);
        return fail(GB_ERR_MEMORY, what, r->function, "out of memory");
    }
    *p = (gb__trace_payload){r->is_retrace, r->duration_us, r->nodes_before, r->nodes_after, s};
    gb__event ev = {.type = GB__EV_TRACE, .step = step, .wall_time = gb__wall_now(), .payload = p};
    return gb__writer_push(w, what, NULL, GB_KIND_ANY, ev, bytes + sizeof *p);
}

gb_status gb_summary_function_stats(gb_summary_writer *w, const gb_function_record *r) {
    static const char what[] = "gb_summary_function_stats";
    if (!r || !r->function || !*r->function)
        return fail(GB_ERR_VALUE, what, NULL, "the record or its function name is NULL");
    size_t bytes;
    gb__function_payload *p = malloc(sizeof *p);
    gb__strings *s = gb__strings_new(1, (const char *[]){r->function}, &bytes);
    if (!p || !s) {
        free(p);
        free(s);
        return fail(GB_ERR_MEMORY, what, r->function, "out of memory");
    }
    *p = (gb__function_payload){*r, s};
    p->r.function = s->s[0];
    gb__event ev = {.type = GB__EV_FUNCTION, .step = GB_STEP_NONE, .wall_time = gb__wall_now(),
                    .payload = p};
    return gb__writer_push(w, what, NULL, GB_KIND_ANY, ev, bytes + sizeof *p);
}

gb_status gb_summary_numerics(gb_summary_writer *w, const gb_numerics_record *r, int64_t step) {
    static const char what[] = "gb_summary_numerics";
    if (!r || !r->op_type || !*r->op_type)
        return fail(GB_ERR_VALUE, what, NULL, "the record or its op_type is NULL");
    gb_status st = gb__writer_step(what, r->op_type, step, false, &step);
    if (st != GB_OK) return st;
    size_t bytes;
    gb__numerics_payload *p = malloc(sizeof *p);
    gb__strings *s = gb__strings_new(
        7,
        (const char *[]){r->op_type, r->op_name, r->function, r->scope_path, r->forward_op,
                         r->message, r->detail_json},
        &bytes);
    if (!p || !s) {
        free(p);
        free(s);
        return fail(GB_ERR_MEMORY, what, r->op_type, "out of memory");
    }
    *p = (gb__numerics_payload){r->nan_count, r->posinf_count, r->neginf_count, s};
    gb__event ev = {.type = GB__EV_NUMERICS, .step = step, .wall_time = gb__wall_now(),
                    .payload = p};
    return gb__writer_push(w, what, NULL, GB_KIND_ANY, ev, bytes + sizeof *p);
}
