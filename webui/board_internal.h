/* board_internal.h — what the dashboard server's files share: the request
 * a handler sees, typed parameter specs, the plugin descriptor, the
 * embedded static files, and the live-update stream.
 *
 * A dashboard is one plugin (TensorBoard's model): a name that is both its
 * route prefix (/api/<name>/...) and its static/<name>/ folder, an
 * is_active(store) check that decides whether its tab is shown, and a
 * table of routes. Each route declares its parameters; the core validates
 * every query parameter against that declaration before a handler runs,
 * so handlers only ever see checked, typed values, which they bind to the
 * reader API (never paste into SQL).
 *
 * Adding a dashboard = one webui/plugin_<name>.c defining
 * `const gb__plugin gb__plugin_<name>` (or, when its server side spans
 * several files, a folder webui/<name>/ whose plugin.c defines it) + one
 * static/<name>/index.js; the build finds both (see webui/CMakeLists.txt).
 */
#ifndef GB_BOARD_INTERNAL_H
#define GB_BOARD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "gb_json.h"
#include "gb_reader.h"

/* ---- bounds --------------------------------------------------------------- */
#define GB__MAX_PARAMS 8                      /* per route */
#define GB__MAX_TEXT_PARAM 512                /* bytes of a run/tag parameter */
#define GB__MAX_RESPONSE (16u * 1024 * 1024)  /* bytes of any JSON response */
#define GB__MAX_POINTS 10000                  /* points per series request */
#define GB__DEFAULT_POINTS 1000

/* ---- limits on what a client sends (http_api.md, "Limits") -------------------
 * Each is checked as soon as what it bounds has arrived, and refused at once
 * with the status given. */
#define GB__MAX_TARGET 8192          /* bytes of the request target (path and query): 414 */
#define GB__MAX_QUERY_PARAMS (2 * GB__MAX_PARAMS) /* query parameters (twice what a
                                                    route takes): 400 */
#define GB__MAX_HEADER_FIELDS 100    /* header fields: 431 */
#define GB__MAX_HEAD 16384           /* bytes of the request line and headers: 431 */
/* libmicrohttpd's memory per connection, which holds the request head as
 * it comes in. It must hold a head within the limits above whole (with one
 * 64-byte record per parameter and header field), and is generous beyond
 * that so that most heads over them are still read whole and refused by
 * our checks, with a JSON body; a head that does not fit at all is refused
 * by libmicrohttpd itself (414 or 431, a short HTML body). */
#define GB__CONNECTION_MEMORY (64u * 1024)
#define GB__DEFAULT_HEADER_TIMEOUT_MS 10000   /* the header deadline (gb_board_options) */
#define GB__DEFAULT_MAX_CONNECTIONS 1024

/* Milliseconds on the monotonic clock, for deadlines and keep-alives. */
static inline int64_t gb__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- parameters ------------------------------------------------------------ */
typedef enum gb__param_kind {
    GB__PARAM_TEXT,  /* valid UTF-8, no control characters, 1..max bytes */
    GB__PARAM_INT,   /* decimal integer in [min, max] */
    GB__PARAM_FLOAT, /* finite decimal number in [min, max] */
} gb__param_kind;

typedef struct gb__param_spec {
    const char *name;
    gb__param_kind kind;
    bool required;
    double min, max;   /* value range (INT/FLOAT) or byte length (TEXT) */
    double fallback;   /* value of an absent optional INT/FLOAT */
} gb__param_spec;

/* The common parameters, so every route spells them the same way. */
#define GB__P_RUN {"run", GB__PARAM_TEXT, true, 1, GB__MAX_TEXT_PARAM, 0}
#define GB__P_RUN_OPT {"run", GB__PARAM_TEXT, false, 1, GB__MAX_TEXT_PARAM, 0}
#define GB__P_TAG {"tag", GB__PARAM_TEXT, true, 1, GB__MAX_TEXT_PARAM, 0}
/* points: rows wanted (scalar points/buckets, or steps for other kinds). */
#define GB__P_POINTS_UPTO(max, fallback) {"points", GB__PARAM_INT, false, 1, max, fallback}
#define GB__P_POINTS GB__P_POINTS_UPTO(GB__MAX_POINTS, GB__DEFAULT_POINTS)
/* The int64 extremes as bounds: (double)INT64_MAX is 2^63, which params.c
 * reads as "no upper bound" (and clang would warn about the rounding). */
#define GB__P_INT64_MIN ((double)INT64_MIN)
#define GB__P_INT64_MAX ((double)INT64_MAX)
#define GB__P_SINCE {"since", GB__PARAM_INT, false, -1, GB__P_INT64_MAX, -1}
#define GB__P_STEP_MIN                                                                      \
    {"min_step", GB__PARAM_INT, false, GB__P_INT64_MIN, GB__P_INT64_MAX, GB__P_INT64_MIN}
#define GB__P_STEP_MAX                                                                      \
    {"max_step", GB__PARAM_INT, false, GB__P_INT64_MIN, GB__P_INT64_MAX, GB__P_INT64_MAX}
/* since, min_step, max_step: the step range of a series route. */
#define GB__P_STEP_RANGE GB__P_SINCE, GB__P_STEP_MIN, GB__P_STEP_MAX
#define GB__P_END {NULL, 0, false, 0, 0, 0}

/* ---- requests -------------------------------------------------------------- */
typedef struct gb__route gb__route;

typedef struct gb__request {
    gb_store *store;              /* a read-only reader owned by this thread */
    const gb__route *route;
    const char *text[GB__MAX_PARAMS]; /* validated values, route->params order */
    double num[GB__MAX_PARAMS];
    bool present[GB__MAX_PARAMS];
    /* The response: JSON by default; a handler may instead set body,
     * body_len (malloc'ed, freed by the server) and content_type. */
    gb__json json;
    char *body;
    size_t body_len;
    const char *content_type;
    char error[320];
} gb__request;

/* A route handler: returns the HTTP status (200, or the code given to
 * gb__fail). */
typedef int (*gb__handler)(gb__request *req);

struct gb__route {
    const char *path;               /* after /api/<plugin>/; "" = /api/<plugin> */
    gb__handler handle;
    gb__param_spec params[GB__MAX_PARAMS + 1]; /* ends with GB__P_END */
};

/* Value of a declared parameter (NULL / the fallback when absent). */
const char *gb__param_text(const gb__request *req, const char *name);
int64_t gb__param_int(const gb__request *req, const char *name);
double gb__param_float(const gb__request *req, const char *name);
bool gb__param_present(const gb__request *req, const char *name);

/* Records a client-facing error message and returns status, e.g.
 *   return gb__fail(req, 404, "unknown run '%s'", run); */
int gb__fail(gb__request *req, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Checks every query parameter of a request against route->params:
 * unknown, repeated, missing, malformed or out-of-range values are
 * rejected with a message in req->error. `get(i, &name, &value)` yields
 * the i-th raw parameter (false past the last). Returns true if valid. */
bool gb__validate_params(gb__request *req, bool (*get)(void *ctx, size_t i, const char **name,
                                                       const char **value),
                         void *ctx);

/* ---- helpers shared by the plugins (api_common.c) ----------------------------- */

/* Turns a failed reader call into a response: unknown run/tag/row -> 404,
 * bad argument -> 400, a damaged row -> 500, anything else -> 503; the
 * reader's message is kept (without the store's file name). Returns the
 * status. */
int gb__reply_store_error(gb__request *req, gb_store_status st);
/* {"runs": [name]}: the store's runs for which has(store, run) holds (a
 * dashboard's list of the runs it has something to show for). */
int gb__reply_runs_where(gb__request *req, bool (*has)(gb_store *store, const char *run));

/* {"run", "tag", "steps": [{"step", "wall", <key>: [item, ...]}, ...]}:
 * a reader's rows, sorted by step, grouped by step (the images' samples,
 * the audio clips). rows holds count rows of stride bytes, each with its
 * step (int64_t) and wall time (double) at the given offsets; item writes
 * one row's object. */
typedef struct gb__step_rows {
    const void *rows;
    size_t count, stride, step_at, wall_at;
    const char *key;
    void (*item)(gb__json *j, const void *row);
} gb__step_rows;
int gb__reply_step_rows(gb__request *req, const gb__step_rows *r);

/* The step range and row budget of a request: min_step, max_step, since
 * (since = s means steps after s) and points, whichever the route has. */
gb_query gb__query_of(const gb__request *req);

/* GET /api/<plugin>/tags?run=: {"runs": {run: [{tag, count, min_step,
 * max_step, last_wall_time}, ...]}} for the tags of one kind. */
int gb__respond_tags(gb__request *req, gb_summary_kind kind);

/* Answers with a stored file (the blob is freed): a PNG, a WAV, an
 * embedding's vectors. Files are bounded by their writers; one above
 * `max` bytes (a store some other program wrote) is refused with 413. */
int gb__reply_blob(gb__request *req, gb_blob *blob, const char *content_type, size_t max);

/* true when the store holds at least one tag of this kind. */
bool gb__has_kind(gb_store *store, gb_summary_kind kind);

/* ---- plugins ---------------------------------------------------------------- */
typedef struct gb__plugin {
    const char *name;    /* route prefix and static folder */
    const char *title;   /* tab label; NULL for API-only plugins (runs) */
    int order;           /* tab position, ascending */
    bool (*is_active)(gb_store *store); /* NULL = always */
    const gb__route *routes;
    size_t n_routes;
} gb__plugin;

/* Generated at build time from webui/plugin_<name>.c and webui/<name>/plugin.c. */
extern const gb__plugin *const gb__plugins[];
extern const size_t gb__plugin_count;

/* Finds the route for an /api/... path; NULL if none. */
const gb__route *gb__find_route(const char *path);

/* ---- embedded static files (generated at build time from static/) ----------- */
typedef struct gb__static_file {
    const char *path;            /* "index.html", "app.js", ... */
    const char *content_type;
    const unsigned char *data;
    size_t size;
} gb__static_file;

extern const gb__static_file gb__static_files[];
extern const size_t gb__static_file_count;

const gb__static_file *gb__find_static(const char *path);

/* ---- reader pool --------------------------------------------------------------- */
typedef struct gb__reader_pool gb__reader_pool;
gb__reader_pool *gb__pool_new(const char *db_path, int size, char *err, size_t err_size);
/* A pool that lends every thread the one handle `shared` (a logdir's),
 * which it owns from now on (closed by gb__pool_free, or at once on failure). */
gb__reader_pool *gb__pool_new_shared(gb_store *shared, char *err, size_t err_size);
gb_store *gb__pool_acquire(gb__reader_pool *pool);
void gb__pool_release(gb__reader_pool *pool, gb_store *store);
void gb__pool_free(gb__reader_pool *pool);

#endif
