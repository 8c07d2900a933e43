/* gb_observer.h — the engine's one way out: events to observers.
 *
 * The engine knows nothing of SQLite or HTTP. What a person should see —
 * executed ops and their timings, warnings, traces and retraces, numerics
 * alerts — leaves the engine as a gb_event passed to every observer that
 * subscribed to its kind. The summary writer subscribes when it becomes
 * the default writer; tests subscribe to count. Observers run on the
 * thread that caused the event and must be quick.
 */
#ifndef GB_OBSERVER_H
#define GB_OBSERVER_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gb_event_kind {
    GB_EVENT_OP = 1u << 0,        /* an op ran (only while op timing is on; gb_op_event) */
    GB_EVENT_PLACEMENT = 1u << 1, /* an op was placed on a device */
    GB_EVENT_WARNING = 1u << 2,   /* a warning (message) */
    GB_EVENT_TRACE = 1u << 3,     /* a function was traced (gb_trace_event) */
    GB_EVENT_NUMERICS = 1u << 4,  /* a NaN/Inf was found (detail: later) */
    GB_EVENT_FUNCTION = 1u << 5,  /* a function's call counters (gb_function_event) */
    GB_EVENT_SCALAR = 1u << 6,    /* a number the engine measured (gb_scalar_event) */
    GB_EVENT_PROFILE = 1u << 7,   /* a profiler capture ended (detail: gb_profile, gb_profiler.h) */
    GB_EVENT_HEALTH = 1u << 8,    /* a training-health finding (detail: gb_health_alert, gb_health.h) */
    GB_EVENT_ALL = 0xffffffffu
} gb_event_kind;

typedef struct gb_event {
    gb_event_kind kind;
    double wall_time;        /* seconds since the Unix epoch */
    const char *op_type;     /* NULL when not about an op */
    const char *op_name;
    const char *device;      /* "/device:CPU:0" */
    const char *message;     /* human-readable summary, never NULL */
    double duration_us;      /* GB_EVENT_OP: kernel time */
    const void *detail;      /* kind-specific struct, documented with the kind */
} gb_event;

/* GB_EVENT_OP's detail: the traced function whose graph ran the op (NULL
 * when it ran eagerly), so a function's own op timings can be told from
 * those of another graph, or of eager code, that names its ops alike. */
typedef struct gb_op_event {
    const char *function;
} gb_op_event;

/* GB_EVENT_SCALAR's detail: a value of a series, as a summary scalar —
 * e.g. each rank's step time in data-parallel training (gb_dist.h). run
 * NULL: the observer's own run; else a run of its own beside it, named
 * "<the observer's run>/<run>" ("rank_1"), so a chart overlays them. */
typedef struct gb_scalar_event {
    const char *tag;
    double value;
    int64_t step;
    const char *run;
} gb_scalar_event;

typedef void (*gb_observer_fn)(const gb_event *ev, void *user);

/* Subscribes fn to the kinds in `kinds` (a mask); returns an id > 0, or 0
 * when the table is full. */
int gb_observer_add(gb_observer_fn fn, void *user, unsigned kinds);
void gb_observer_remove(int id);
/* Sends ev to the observers of its kind; the engine's own emit path. */
void gb_observer_emit(const gb_event *ev);
/* Whether any observer subscribed to one of `kinds` (one load: emitters
 * skip building events nobody reads). */
bool gb_observer_wants(unsigned kinds);

/* The training step that events are stamped with (tf.summary's step):
 * set it once per step; gb_get_step returns false while none is set. */
void gb_set_step(int64_t step);
void gb_clear_step(void);
bool gb_get_step(int64_t *step);

/* tf.debugging.set_log_device_placement: log each op and its device. */
void gb_set_log_device_placement(bool on);
/* Time every kernel and emit GB_EVENT_OP events with the duration. */
void gb_set_op_timing(bool on);

#ifdef __cplusplus
}
#endif
#endif
