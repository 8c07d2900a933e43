/* replay_main.c — runs a fuzz target without libFuzzer.
 *
 * Linked with a tests/fuzz/fuzz_<name>.c in the ordinary builds (gcc, and
 * the ASan + UBSan build), it feeds each file named on the command line,
 * and each file of each directory named, once to LLVMFuzzerTestOneInput.
 * CTest runs it over a target's seed corpus and its regressions, so every
 * input that once crashed is replayed on every `make test`, fuzzer or not.
 * A target's checks abort on failure; this driver only reports what it
 * ran, and fails when it finds nothing to run (a misnamed folder would
 * otherwise pass silently).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional in a target, as under libFuzzer. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Feeds one file to the target; false if it cannot be read. */
static bool replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return false;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *data = malloc(cap);
    for (size_t r; data && (r = fread(data + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n < cap) continue;
        uint8_t *more = realloc(data, cap *= 2);
        if (!more) free(data);
        data = more;
    }
    fclose(f);
    if (!data) {
        fprintf(stderr, "%s: out of memory\n", path);
        return false;
    }
    LLVMFuzzerTestOneInput(data, n);
    free(data);
    return true;
}

/* Feeds every regular file of dir, in name order; the count, or -1. */
static int replay_dir(const char *dir) {
    struct dirent **entries;
    int n = scandir(dir, &entries, NULL, alphasort);
    if (n < 0) {
        perror(dir);
        return -1;
    }
    int count = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, entries[i]->d_name);
        if (count >= 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
            count = replay_file(path) ? count + 1 : -1;
        free(entries[i]);
    }
    free(entries);
    return count;
}

/* A file or a directory of files; the inputs replayed, or -1. */
static int replay_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) return replay_dir(path);
    return replay_file(path) ? 1 : -1;
}

int main(int argc, char **argv) {
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...: feeds each input to the fuzz target\n", argv[0]);
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        int n = replay_path(argv[i]);
        if (n <= 0) {
            fprintf(stderr, "%s: %s\n", argv[i], n < 0 ? "cannot be replayed" : "no inputs");
            return 1;
        }
        printf("%s: %d input%s replayed\n", argv[i], n, n == 1 ? "" : "s");
    }
    return 0;
}
