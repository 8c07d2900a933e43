/* dist/profile_gather.c — every rank's profiler capture, on rank 0.
 *
 * Only rank 0 writes the store, so at gb_profiler_stop (which every rank
 * calls alike, as every collective) each rank flattens its capture into
 * bytes — the record structs as they are (one build on every rank), each
 * followed by its three strings — the ranks agree on the largest size
 * (an allreduce), and rank 0 gathers them, reads them back and merges
 * them into one capture whose threads are "rank r: training" and so on,
 * each rank's times moved onto the clock of the rank that started first,
 * by the difference of the captures' wall-clock starts. The Profile page then shows every rank's
 * tracks, and their allreduce waits, on one timeline.
 */
#include <stdlib.h>

#include "dist/internal.h"

typedef struct header {
    uint64_t count, nthreads;
    double wall_time, duration_us, gemm_peak_flops;
    uint64_t dropped;
} header;

static size_t str_size(const char *s) { return strlen(s ? s : "") + 1; }

static size_t flat_size(const gb_profile *p) {
    size_t n = sizeof(header);
    for (int t = 0; t < p->nthreads; t++) n += str_size(p->threads[t]);
    for (size_t i = 0; i < p->count; i++) {
        const gb_profile_record *r = &p->records[i];
        n += sizeof *r + str_size(r->name) + str_size(r->op_type) + str_size(r->function);
    }
    return n;
}

static char *put_str(char *at, const char *s) {
    size_t k = str_size(s);
    memcpy(at, s ? s : "", k);
    return at + k;
}

static void flatten(const gb_profile *p, char *at) {
    header h = {p->count, (uint64_t)p->nthreads, p->wall_time, p->duration_us,
                p->gemm_peak_flops, p->dropped};
    memcpy(at, &h, sizeof h);
    at += sizeof h;
    for (int t = 0; t < p->nthreads; t++) at = put_str(at, p->threads[t]);
    for (size_t i = 0; i < p->count; i++) {
        const gb_profile_record *r = &p->records[i];
        memcpy(at, r, sizeof *r);
        at += sizeof *r;
        at = put_str(at, r->name);
        at = put_str(at, r->op_type);
        at = put_str(at, r->function);
    }
}

/* A view of a flattened capture: its strings point into the bytes. */
static bool unflatten(const char *at, gb_profile *p) {
    header h;
    memcpy(&h, at, sizeof h);
    at += sizeof h;
    *p = (gb_profile){.wall_time = h.wall_time, .duration_us = h.duration_us,
                      .nthreads = (int)h.nthreads, .count = h.count, .dropped = h.dropped,
                      .gemm_peak_flops = h.gemm_peak_flops};
    p->threads = calloc(h.nthreads + 1, sizeof(char *));
    p->records = malloc((h.count + 1) * sizeof(gb_profile_record));
    if (!p->threads || !p->records) return false;
    for (uint64_t t = 0; t < h.nthreads; t++) {
        p->threads[t] = at;
        at += strlen(at) + 1;
    }
    for (uint64_t i = 0; i < h.count; i++) {
        gb_profile_record *r = &p->records[i];
        memcpy(r, at, sizeof *r);
        at += sizeof *r;
        r->name = at, at += strlen(at) + 1;
        r->op_type = at, at += strlen(at) + 1;
        r->function = at, at += strlen(at) + 1;
    }
    return true;
}

/* Rank 0: the merged capture of the gathered bytes (own for itself). */
static gb_profile *merge_gathered(gb_profile *own, const char *all, size_t block, int size) {
    gb_profile *views = calloc((size_t)size, sizeof *views);
    const gb_profile **parts = calloc((size_t)size, sizeof *parts);
    double *shift = calloc((size_t)size, sizeof *shift);
    bool ok = views && parts && shift;
    double first = own->wall_time;
    for (int r = 0; ok && r < size; r++) {
        ok = r == 0 || unflatten(all + (size_t)r * block, &views[r]);
        parts[r] = r == 0 ? own : &views[r];
        if (parts[r]->wall_time < first) first = parts[r]->wall_time;
    }
    for (int r = 0; ok && r < size; r++) shift[r] = (parts[r]->wall_time - first) * 1e6;
    gb_profile *merged = ok ? gb__prof_merge(parts, shift, size) : NULL;
    if (!ok) gb__error(GB_ERR_MEMORY, NULL, "gb_profiler_stop: out of memory for %d ranks", size);
    for (int r = 1; views && r < size; r++) {
        free((void *)views[r].threads);
        free(views[r].records);
    }
    free(views);
    free(parts);
    free(shift);
    return merged;
}

static gb_profile *gather_profiles(gb_profile *own) {
    const gb__dist *job = gb__dist_job();
    int64_t most = (int64_t)flat_size(own);
    bool ok = gb__comm_done(gb__comm_iallreduce(&most, 1, GB_I64, GB_DIST_MAX,
                                                 "the size of the ranks' profiles"));
    char *send = ok ? calloc(1, (size_t)most) : NULL;
    char *all = ok && job->rank == 0 ? malloc((size_t)most * (size_t)job->size) : NULL;
    if (send) flatten(own, send);
    /* every rank takes part, even one short of memory: the others wait */
    ok = ok && gb__comm_done(gb__comm_igather(send ? send : (char[1]){0}, send ? (size_t)most : 1,
                                              all, 0, "the gather of the ranks' profiles"));
    gb_profile *merged = NULL;
    if (ok && job->rank == 0 && send && all) merged = merge_gathered(own, all, (size_t)most, job->size);
    else if (ok && (!send || (job->rank == 0 && !all)))
        gb__error(GB_ERR_MEMORY, NULL, "gb_profiler_stop: out of memory gathering %lld bytes",
                  (long long)most);
    free(send);
    free(all);
    gb_profile_release(own);
    return merged;
}

void gb__dist_profile_gather_install(void) {
    atomic_store(&gb__prof_merge_hook, gather_profiles);
}
