/* tfevents_bench.c — TensorBoard event files coming in, and a live run
 * followed as it grows.
 *
 *   tfevents_import   records/s of a whole import of a 200,000-record file
 *                     (one scalar each, as tf.summary.scalar writes them)
 *                     into a new store; no peer
 *   tfevents_follow   ms for a board following that run to take in 100 new
 *                     records: what `glassbox serve --logdir` does on each
 *                     change (a copy of the store it made last, and the
 *                     import reading on from where that one stopped); peer:
 *                     the whole file converted again into a new store, what
 *                     each change cost before stores kept how far they read
 *
 * Medians of several repeats, in a temporary directory deleted at the end.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"
#include "gb_summary.h"
#include "gb_tfevents.h"

enum { RECORDS = 200000, NEW_RECORDS = 100, REPEATS = 7 };

static char dir[64], events[128], file[192];
static int64_t next_step;

static void append_records(int n) {
    gb_tf_buf b = {0};
    for (int i = 0; i < n; i++, next_step++)
        gb_tf_put_scalar(&b, 1.7e9 + (double)next_step, next_step, "loss", 1.0 / (double)(next_step + 1));
    FILE *f = fopen(file, "ab");
    if (b.failed || !f || fwrite(b.data, 1, b.len, f) != b.len) {
        fprintf(stderr, "tfevents_bench: cannot write %s\n", file);
        exit(1);
    }
    fclose(f);
    gb_tf_buf_free(&b);
}

/* Imports the run into the store at db; returns the seconds it took. */
static double import_into(const char *db) {
    gb_tfevents_report r;
    double t = bench_now();
    if (gb_summary_import_tfevents_run(events, "tb", db, &r) != GB_OK) {
        fprintf(stderr, "tfevents_bench: %s\n", gb_summary_last_error());
        exit(1);
    }
    return bench_now() - t;   /* the writer closed: no side files remain */
}

/* The kernel copies the store (copy_file_range), as fast as a copy goes. */
static void copy_store(const char *from, const char *to) {
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    struct stat st;
    bool ok = in >= 0 && out >= 0 && !fstat(in, &st);
    for (off_t left = ok ? st.st_size : 0; ok && left > 0;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
        ok = n > 0;
        left -= n;
    }
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (!ok) {
        fprintf(stderr, "tfevents_bench: cannot copy %s\n", from);
        exit(1);
    }
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/gb_tfevents_bench_XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(events, sizeof events, "%s/tb", dir);
    snprintf(file, sizeof file, "%s/events.out.tfevents.1700000000.bench", events);
    mkdir(events, 0700);
    append_records(RECORDS);
    char base[128], work[128], fresh[128];
    snprintf(base, sizeof base, "%s/base.db", dir);
    snprintf(work, sizeof work, "%s/work.db", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh.db", dir);

    double whole[REPEATS], follow[REPEATS];
    for (int i = 0; i < REPEATS; i++) {
        unlink(fresh);
        whole[i] = import_into(fresh);
    }
    double import_s = bench_median(whole, REPEATS);
    bench_line_rate("tfevents_import", RECORDS / import_s, NULL, 0, "records/s");

    import_into(base);
    for (int i = 0; i < REPEATS; i++) {
        append_records(NEW_RECORDS);
        double t = bench_now();
        copy_store(base, work);
        import_into(work);
        rename(work, base);
        follow[i] = bench_now() - t;
        unlink(fresh);
        whole[i] = import_into(fresh);
    }
    bench_line_time("tfevents_follow", 1e3 * bench_median(follow, REPEATS), "full_reimport",
                    1e3 * bench_median(whole, REPEATS), "ms");
    unlink(base);
    unlink(fresh);
    unlink(file);
    rmdir(events);
    rmdir(dir);
    return 0;
}
