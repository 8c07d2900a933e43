/* gb_profiler.h — the profiler: where each step's time and memory go.
 *
 * Between gb_profiler_start and gb_profiler_stop (or for a window of
 * steps) the engine records, per thread: every op it runs, eagerly or in
 * a traced function's executor (start, duration, name, type, function,
 * input shapes, FLOPs where the op knows them, bytes its outputs took,
 * the thread's scopes' live bytes after it), the data pipeline's work
 * (map calls, prefetch, the consumer's wait for the next element), the
 * optimizer's update, collectives and their waits, and step boundaries
 * (gb_set_step). Op times are the kernel times op timing measures
 * (gb_set_op_timing), taken once for both.
 *
 * The capture leaves the engine as one GB_EVENT_PROFILE observer event
 * whose detail is the gb_profile below; the summary writer stores it, so
 * gb_summary_trace_on(w, true) / gb_summary_trace_export profile too.
 * Off, the dispatcher pays nothing beyond the flag word it reads anyway.
 */
#ifndef GB_PROFILER_H
#define GB_PROFILER_H

#include "gb_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gb_profile_kind {
    GB_PROFILE_OP,          /* an op's kernel */
    GB_PROFILE_STEP,        /* a step began (gb_set_step); dur 0 */
    GB_PROFILE_INPUT_WAIT,  /* the consumer waited for the pipeline's next element */
    GB_PROFILE_MAP,         /* a map function call on one element */
    GB_PROFILE_PREFETCH,    /* a prefetch thread made one element */
    GB_PROFILE_OPTIMIZER,   /* an optimizer's update of its variables */
    GB_PROFILE_COLLECTIVE,  /* a collective issued (allreduce of a bucket, ...) */
    GB_PROFILE_COMM_WAIT,   /* a wait for collectives to finish */
    GB_PROFILE_KIND_COUNT
} gb_profile_kind;

/* "op", "step", "input_wait", "map", "prefetch", "optimizer",
 * "collective", "comm_wait"; NULL for a kind out of range. */
const char *gb_profile_kind_name(gb_profile_kind kind);

enum { GB_PROFILE_MAX_SHAPES = 3, GB_PROFILE_MAX_RANK = 4 };

typedef struct gb_profile_record {
    double start_us;         /* since the capture started */
    double dur_us;
    const char *name;        /* op: its name ("dense/MatMul"); else what ran */
    const char *op_type;     /* op: "MatMul"; "" otherwise */
    const char *function;    /* the traced function running it; "" eager */
    double flops;            /* 0 when the op does not say */
    int64_t bytes;           /* bytes of the op's outputs */
    int64_t live_bytes;      /* the thread's scopes' bytes in use after it */
    int64_t step;            /* the step set when it ran; -1 none */
    int32_t thread;          /* index into gb_profile.threads */
    uint8_t kind;            /* gb_profile_kind */
    bool backward;           /* an op of a backward pass */
    int8_t nshapes;          /* input shapes kept (up to GB_PROFILE_MAX_SHAPES) */
    int8_t rank[GB_PROFILE_MAX_SHAPES];   /* -1: rank above GB_PROFILE_MAX_RANK */
    int64_t dims[GB_PROFILE_MAX_SHAPES][GB_PROFILE_MAX_RANK];
} gb_profile_record;

/* One capture: records by thread, each thread's in start order. */
typedef struct gb_profile {
    double wall_time;        /* seconds since the epoch at start */
    double duration_us;
    int rank;                /* the MPI rank (0 alone) */
    int nthreads;
    const char **threads;    /* names: "training", "prefetch", "data worker", ... */
    size_t count;
    gb_profile_record *records;
    size_t dropped;          /* records lost to a full buffer */
    double gemm_peak_flops;  /* a 256x256 GEMM's FLOP/s, measured once per process */
} gb_profile;

typedef struct gb_profiler_options {
    int64_t steps;           /* > 0: stop by itself at the step after this many (gb_set_step) */
    /* Under mpirun: every rank starts and stops this capture alike (the
     * stop is then a collective) and rank 0 emits one capture of all the
     * ranks, a track per rank's thread. false: each rank keeps its own
     * (a capture rank 0 alone runs, as trace_on on its writer). */
    bool all_ranks;
} gb_profiler_options;

/* Starts a capture (options may be NULL); GB_ERR_STATE when one runs. */
gb_status gb_profiler_start(const gb_profiler_options *options);
/* Ends it and emits GB_EVENT_PROFILE; GB_ERR_STATE when none runs. */
gb_status gb_profiler_stop(void);
bool gb_profiler_active(void);

/* A profile stays alive while an observer keeps a reference to it. */
void gb_profile_retain(const gb_profile *p);
void gb_profile_release(const gb_profile *p);

/* The input shapes of r as text: "[32,784] [784,128]" (into buf of n). */
const char *gb_profile_shapes_text(const gb_profile_record *r, char *buf, size_t n);

/* ---- call sites (GB_AT, gb_base.h) ------------------------------------------------------ */
#if !defined(GB_BUILDING_LIBRARY)
#define gb_profiler_start(...) GB_AT(gb_profiler_start, __VA_ARGS__)
#define gb_profiler_stop(...) GB_AT(gb_profiler_stop, __VA_ARGS__)
#define gb_profile_shapes_text(...) GB_AT(gb_profile_shapes_text, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
