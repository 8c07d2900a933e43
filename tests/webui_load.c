/* webui_load.c — the dashboard server under load: 50 concurrent keep-alive
 * clients for 10 s against an in-process server while a writer appends
 * scalars to the same store. Loopback only; every loop is bounded by the
 * deadline. Fails on any 5xx, any transport failure or any unexpected
 * status; prints requests/s and latency percentiles.
 *
 *   webui_load [seconds=10] [clients=50]
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gb_board.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "webui_http.h"

#define MAX_SAMPLES 400000

static int port;
static double deadline;
static atomic_int writer_step;
static atomic_long requests, failures, server_errors;
static double *latencies;    /* ms, shared array filled by index */
static atomic_long n_latencies;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The mix a dashboard produces: metadata, full series, live increments,
 * other kinds, and the page itself. */
static void next_path(unsigned *seed, char *path, size_t size) {
    static const char *const runs[] = {"load-a", "load-b"};
    const char *run = runs[rand_r(seed) % 2];
    int step = atomic_load(&writer_step);
    switch (rand_r(seed) % 8) {
    case 0: snprintf(path, size, "/api/runs"); break;
    case 1: snprintf(path, size, "/api/plugins"); break;
    case 2: snprintf(path, size, "/api/scalars/tags?run=%s", run); break;
    case 3: snprintf(path, size, "/api/scalars/series?run=%s&tag=loss&points=500", run); break;
    case 4:
        snprintf(path, size, "/api/scalars/series?run=%s&tag=loss&since=%d", run,
                 step > 50 ? step - 50 : 0);
        break;
    case 5: snprintf(path, size, "/api/histograms/series?run=%s&tag=weights&points=20", run); break;
    case 6: snprintf(path, size, "/api/scalars/series?run=%s&tag=accuracy&points=200", run); break;
    default: snprintf(path, size, "/"); break;
    }
}

static void *client(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u;
    int fd = -1;
    char path[256], req[512];
    while (now_s() < deadline) {
        if (fd < 0 && (fd = http_connect(port, 5000)) < 0) {
            atomic_fetch_add(&failures, 1);
            usleep(10000);
            continue;
        }
        next_path(&seed, path, sizeof path);
        snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
        http_response r;
        double t0 = now_s();
        bool ok = http_exchange(fd, req, false, &r);
        double ms = (now_s() - t0) * 1000.0;
        atomic_fetch_add(&requests, 1);
        if (!ok || r.status != 200) {
            if (ok && r.status >= 500) atomic_fetch_add(&server_errors, 1);
            atomic_fetch_add(&failures, 1);
            fprintf(stderr, "load: GET %s -> %s %d\n", path, ok ? "status" : "transport failure",
                    r.status);
        }
        long k = atomic_fetch_add(&n_latencies, 1);
        if (k < MAX_SAMPLES) latencies[k] = ms;
        bool closed = !ok || r.closed;
        http_free(&r);
        if (closed) {
            close(fd);
            fd = -1;
        }
    }
    if (fd >= 0) close(fd);
    return NULL;
}

/* Appends to both runs every 2 ms until the deadline; flushes every 50 ms. */
static void *writer(void *arg) {
    gb_summary_writer **w = arg;
    int step = atomic_load(&writer_step);
    double last_flush = now_s();
    while (now_s() < deadline) {
        step++;
        for (int i = 0; i < 2; i++) {
            gb_summary_scalar(w[i], "loss", 1.0 / step, step);
            gb_summary_scalar(w[i], "accuracy", 1.0 - 1.0 / step, step);
        }
        atomic_store(&writer_step, step);
        if (now_s() - last_flush > 0.05) {
            gb_summary_flush(w[0]);
            gb_summary_flush(w[1]);
            last_flush = now_s();
        }
        usleep(2000);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    int clients = argc > 2 ? atoi(argv[2]) : 50;
    if (seconds <= 0 || seconds > 60 || clients < 1 || clients > 200) {
        fprintf(stderr, "usage: webui_load [seconds<=60] [clients<=200]\n");
        return 2;
    }
    char db[256];
    snprintf(db, sizeof db, "%s/webui_load_%d.db", P_tmpdir, (int)getpid());
    unlink(db);

    /* A store with history: 5000 points per series, some histograms. */
    gb_summary_writer *w[2] = {NULL, NULL};
    const char *names[2] = {"load-a", "load-b"};
    for (int i = 0; i < 2; i++) {
        if (gb_summary_writer_open(db, names[i], NULL, &w[i]) != GB_OK) {
            fprintf(stderr, "load: %s\n", gb_summary_last_error());
            return 1;
        }
        gb_scope_begin();
        for (int s = 0; s < 5000; s++) {
            gb_summary_scalar(w[i], "loss", 1.0 / (s + 1), s);
            gb_summary_scalar(w[i], "accuracy", s / 5000.0, s);
            if (s % 250 == 0) {
                float v[256];
                for (int k = 0; k < 256; k++) v[k] = sinf((float)(k + s));
                gb_summary_histogram(w[i], "weights", gb_tensor_from(GB_F32, v, 1, (int64_t[]){256}), s);
            }
        }
        gb_scope_end();
        if (gb_summary_flush(w[i]) != GB_OK) {
            fprintf(stderr, "load: %s\n", gb_summary_last_error());
            return 1;
        }
    }
    atomic_store(&writer_step, 4999);

    gb_board *board = gb_board_start(db, "127.0.0.1", 0, NULL);
    if (!board) {
        fprintf(stderr, "load: %s\n", gb_board_last_error());
        return 1;
    }
    port = gb_board_port(board);
    latencies = calloc(MAX_SAMPLES, sizeof *latencies);
    pthread_t *threads = calloc((size_t)clients, sizeof *threads);
    if (!latencies || !threads) return 1;

    double t0 = now_s();
    deadline = t0 + seconds;
    pthread_t wt;
    pthread_create(&wt, NULL, writer, w);
    for (int i = 0; i < clients; i++) pthread_create(&threads[i], NULL, client, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < clients; i++) pthread_join(threads[i], NULL);
    double elapsed = now_s() - t0;
    pthread_join(wt, NULL);

    gb_board_stop(board);
    int final_step = atomic_load(&writer_step);
    for (int i = 0; i < 2; i++) gb_summary_writer_close(w[i]);

    long n = atomic_load(&requests), kept = atomic_load(&n_latencies);
    if (kept > MAX_SAMPLES) kept = MAX_SAMPLES;
    qsort(latencies, (size_t)kept, sizeof *latencies, cmp_double);
    double p50 = kept ? latencies[kept / 2] : NAN;
    double p99 = kept ? latencies[(size_t)((double)kept * 0.99)] : NAN;
    double max = kept ? latencies[kept - 1] : NAN;
    long failed = atomic_load(&failures), s5xx = atomic_load(&server_errors);
    printf("load: %d clients, %.1f s, %ld requests, %.0f requests/s, p50 %.2f ms, p99 %.2f ms, "
           "max %.2f ms, %ld failed, %ld 5xx; writer reached step %d\n",
           clients, elapsed, n, (double)n / elapsed, p50, p99, max, failed, s5xx, final_step);
    bool ok = failed == 0 && s5xx == 0 && n > 0 && final_step > 5000;
    printf("%d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    free(latencies);
    free(threads);
    unlink(db);
    char side[300];
    snprintf(side, sizeof side, "%s-wal", db);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", db);
    unlink(side);
    return ok ? 0 : 1;
}
