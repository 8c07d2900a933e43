/* io_bench.c — what hostile or huge files cost the loaders.
 *
 *   checkpoint_list_100k  ms to list a checkpoint of 100,000 tensors
 *                         (gb_checkpoint_list: header, index, duplicate
 *                         check, every entry's CRC), median of repeats;
 *                         checking duplicates pair by pair made this 63 s;
 *   reject_3gib_file      ms to refuse a 3 GiB (sparse) file that is not a
 *                         checkpoint, and reject_3gib_file_peak_memory, how
 *                         much the process's peak resident set grew doing
 *                         it (KiB): the header is read first, so neither
 *                         grows with the file.
 * No peer: these are costs of glassbox's own formats.
 */
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench_util.h"
#include "glassbox.h"

enum { ENTRIES = 100000, REPEATS = 5 };

static long peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* A checkpoint of ENTRIES one-value tensors, at path: variables of one
 * module (a checkpoint tracks a few objects, a module any number). */
static gb_tensor *identity(gb_module *m, gb_tensor *x, bool training) {
    (void)m, (void)training;
    return x;
}

static void write_many(const char *path) {
    static const gb_module_type bag = {.class_name = "Bag", .default_name = "bag",
                                       .call = identity};
    gb_scope_begin();
    gb_module *m = gb_module_new(&bag, "bag", 1);
    for (int i = 0; i < ENTRIES; i++) {
        char name[32];
        snprintf(name, sizeof name, "v%06d", i);
        gb_module_add_variable(m, gb_variable_new(name, gb_scalar(GB_F32, i), true));
    }
    gb_checkpoint *ck = gb_checkpoint_new();
    gb_checkpoint_track_module(ck, "model", m);
    if (!gb_checkpoint_write(ck, path)) {
        fprintf(stderr, "io_bench: %s\n", gb_error_string());
        exit(1);
    }
    gb_checkpoint_free(ck);
    gb_module_free(m);
    gb_scope_end();
}

/* Median ms of listing path; every listing must give `want` entries (-1:
 * must be refused). */
static double median_list_ms(const char *path, int want) {
    double ms[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        gb_checkpoint_entry *entries = NULL;
        double t0 = bench_now();
        int n = gb_checkpoint_list(path, &entries);
        ms[r] = (bench_now() - t0) * 1e3;
        free(entries);
        if (n != want) {
            fprintf(stderr, "io_bench: listed %d entries, not %d: %s\n", n, want, gb_error_string());
            exit(1);
        }
        if (r == 0 && n < 0) fprintf(stderr, "io_bench: %s\n", gb_error_string());
        gb_clear_error();
    }
    return bench_median(ms, REPEATS);
}

static void list_figure(const char *path) {
    write_many(path);
    bench_line_time("checkpoint_list_100k", median_list_ms(path, ENTRIES), "", 0, "ms");
    unlink(path);
}

static void reject_figure(const char *path) {
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)3 << 30) != 0) {
        fprintf(stderr, "io_bench: cannot make a 3 GiB file at %s\n", path);
        exit(1);
    }
    close(fd);
    long before = peak_rss_kib();
    bench_line_time("reject_3gib_file", median_list_ms(path, -1), "", 0, "ms");
    bench_line_time("reject_3gib_file_peak_memory", (double)(peak_rss_kib() - before), "", 0,
                    "KiB");
    unlink(path);
}

int main(void) {
    char path[] = "/tmp/glassbox_io_bench_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return 1;
    close(fd);
    list_figure(path);
    reject_figure(path);
    return 0;
}
