/* text_bench.c — TextVectorization's speed on real text: every fortune of
 * Debian's `fortunes` (records between "%" lines, all categories) turned
 * into 64 token ids each (output_mode int, padded or cut; vocabulary of
 * 20,000 adapted once), in strings per second, against Python tokenization of the same
 * corpus as a PyTorch pipeline does it (bench/text_peer.py), in the same run.
 * The call is eager, in batches of 1024 fortunes: standardize, split,
 * look up and count, all through the dispatcher.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "glassbox.h"

enum { REPEATS = 5, BATCH = 1024 };
#define FORTUNES "/usr/share/games/fortunes"

/* FORTUNES/{a,b,...}: every file whose name has no dot (not the .dat
 * indexes, not the .u8 links), as the peer reads them. */
static void corpus_pattern(char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "%s/{", FORTUNES);
    DIR *d = opendir(FORTUNES);
    for (struct dirent *e; d && (e = readdir(d)) && k < n;)
        if (!strchr(e->d_name, '.')) k += (size_t)snprintf(buf + k, n - k, "%s,", e->d_name);
    if (d) closedir(d);
    if (k < n && k > 0) buf[k - 1] = '}';
}

int main(void) {
    char pattern[8192];
    corpus_pattern(pattern, sizeof pattern);
    gb_dataset *ds = gb_dataset_from_text_files(pattern, &(gb_text_options){.record_separator = "%"});
    if (!ds) {
        fprintf(stderr, "text_bench: no corpus (%s): install Debian's fortunes\n", gb_error_string());
        return 0;
    }
    gb_set_error_mode(GB_ERRORS_ABORT);
    char peer[4096] = "";
    if (!bench_run_peer("/usr/bin/python3 " GB_SOURCE_DIR "/bench/text_peer.py " FORTUNES
                        " 2>/dev/null", peer, sizeof peer))
        fprintf(stderr, "text_bench: Python peer unavailable; figures without ratio\n");
    int64_t n = gb_dataset_cardinality(ds);
    gb_scope_begin();
    gb_iterator *it = gb_iterator_new(gb_dataset_ref(ds));
    gb_tensor *all;
    gb_iterator_next(it, &all);
    gb_dataset *batched = gb_dataset_batch(gb_dataset_ref(ds), BATCH, false);
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .max_tokens = 20000, .output_mode = GB_TV_INT, .output_sequence_length = 64});
    gb_text_vectorization_adapt(tv, batched);
    double rate[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        gb_iterator *bi = gb_iterator_new(batched);
        gb_tensor *b;
        double t0 = bench_now();
        for (;;) {
            gb_scope_begin();
            bool more = gb_iterator_next(bi, &b);
            if (more) gb_module_call(tv, b, false);
            gb_scope_end();
            if (!more) break;
        }
        rate[r] = (double)n / (bench_now() - t0);
        gb_iterator_free(bi);
    }
    bench_line_rate("text_vectorize", bench_median(rate, REPEATS), "python",
                    bench_peer_value(peer, "text_vectorize_strings_per_s"), "strings/s");
    gb_module_free(tv);
    gb_iterator_free(it);
    gb_dataset_free(batched);
    gb_dataset_free(ds);
    gb_scope_end();
    return 0;
}
