/* numerics.h — what the Numerics dashboard's files share: the parsed
 * detail of an alert, and a run's alerts read in first-occurrence order.
 *
 * The store keeps numerics alerts in arrival order (by id) and the reader
 * pages them by id. The dashboard needs them in the order they happened —
 * by step, then by arrival within a step — filtered and windowed, plus a
 * few totals. numerics_query.c builds that on the reader in two bounded
 * passes (see there); numerics_detail.c reads the JSON detail the writer
 * stores with each alert (output dtype and shape, first bad index,
 * created or received, forward or backward, the inputs' summaries).
 */
#ifndef GB_WEBUI_NUMERICS_H
#define GB_WEBUI_NUMERICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gb_reader.h"

/* ---- the detail of an alert ------------------------------------------------ */

#define GB__NUMERICS_MAX_RANK 8     /* as the engine's tensors */
#define GB__NUMERICS_MAX_INPUTS 8   /* inputs an alert summarizes */

typedef struct gb__numerics_tensor {
    char dtype[16];                 /* "" when unknown */
    int rank;                       /* -1 when the shape is unknown */
    int64_t shape[GB__NUMERICS_MAX_RANK];
} gb__numerics_tensor;

typedef struct gb__numerics_input {
    gb__numerics_tensor tensor;
    double min, max;                /* over finite values; NaN when none */
    int64_t nan_count, inf_count;
} gb__numerics_input;

/* A three-valued flag: the detail may not say. */
typedef enum gb__tristate { GB__UNKNOWN = -1, GB__NO = 0, GB__YES = 1 } gb__tristate;

typedef struct gb__numerics_detail {
    int output_index;               /* -1 when unknown */
    gb__numerics_tensor output;
    int64_t first_index;            /* flat index of the first bad element; -1 unknown */
    gb__tristate created;           /* YES: every input finite, the op made the NaN/Inf */
    gb__tristate backward;          /* YES: made by a gradient function */
    char forward_op_type[64];       /* backward: the forward op's type, "" unknown */
    int ninputs;
    gb__numerics_input inputs[GB__NUMERICS_MAX_INPUTS];
} gb__numerics_detail;

/* Parses an alert's detail JSON. Fields absent from it keep their
 * "unknown" value; unknown fields are skipped. Returns false (and a
 * detail of unknowns) for anything that is not a well-formed JSON object
 * of the expected shape, so a damaged row never breaks a response. */
bool gb__numerics_detail_parse(const char *json, gb__numerics_detail *out);

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

#endif
