/* numerics/internal.h — what the Numerics dashboard's files share: a
 * run's alerts read in first-occurrence order, and one alert as JSON.
 *
 *   plugin.c  the routes (/api/numerics/...) and the plugin descriptor
 *   query.c   the alerts in first-occurrence order, filtered and windowed
 *   detail.c  one alert as the API's JSON, its stored detail parsed by
 *             the reader (gb_numerics_detail_parse)
 *
 * The store keeps numerics alerts in arrival order (by id) and the reader
 * pages them by id. The dashboard needs them in the order they happened —
 * by step, then by arrival within a step — filtered and windowed, plus a
 * few totals. query.c builds that on the reader in two bounded passes
 * (see there).
 */
#ifndef GB_WEBUI_NUMERICS_INTERNAL_H
#define GB_WEBUI_NUMERICS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board_internal.h"
#include "gb_reader.h"

/* ---- a run's alerts in first-occurrence order -------------------------------- */

/* Rows read per request at most: the engine bounds the alerts a process
 * records (1000 by default), so this is far above any real run. Past it
 * the answer covers the first rows by id and says it is truncated. */
#define GB__NUMERICS_SCAN_MAX 200000

typedef struct gb__numerics_filter {
    const char *op_type;            /* NULL: every op type */
    int64_t step_min, step_max;     /* inclusive; alerts without a step only
                                       match when both sides are open */
    int64_t after_id;               /* the window holds alerts with id > after_id */
    size_t offset, limit;           /* the window; limit 0: no rows, totals only */
    size_t scan_max;                /* 0: GB__NUMERICS_SCAN_MAX */
} gb__numerics_filter;

typedef struct gb__numerics_type_count {
    char *op_type;
    int64_t count;
} gb__numerics_type_count;

typedef struct gb__numerics_view {
    int64_t total;                  /* alerts of the run (read) */
    int64_t matched;                /* of those, matching op_type and steps */
    int64_t window_matched;         /* of those, with id > after_id */
    int64_t last_id;                /* greatest id read; 0 when none */
    int64_t first_step, last_step;  /* of every alert with a step; GB_STEP_NONE when none */
    bool truncated;                 /* the run has more than scan_max alerts */
    gb_numerics_row *first;         /* the run's first alert (any filter); NULL when none */
    size_t type_count;              /* op types of the run, most alerts first */
    gb__numerics_type_count *types;
    size_t count;                   /* the window, in first-occurrence order */
    gb_numerics_row **rows;
} gb__numerics_view;

/* Reads run's alerts into *out (free it with gb__numerics_view_free, also
 * after a failure). Errors are the reader's (NO_RUN for an unknown run). */
gb_store_status gb__numerics_read(gb_store *s, const char *run, const gb__numerics_filter *f,
                                  gb__numerics_view *out);
void gb__numerics_view_free(gb__numerics_view *v);

/* true when run has at least one alert (one indexed row read). */
bool gb__numerics_any(gb_store *s, const char *run);

/* ---- one alert as JSON (detail.c) ----------------------------------------------- */

/* A step, null when the alert has none. */
void gb__numerics_write_step(gb__json *j, int64_t step);
/* One alert: its columns and its parsed detail (see plugin.c for the fields). */
void gb__numerics_write_alert(gb__json *j, const gb_numerics_row *r);

#endif
