/* media/audio_dump.c — audio clips through the writer and the reader, for
 * tests/media/wav_check.py to read with Python's wave module and sox.
 *
 *   audio_dump STORE OUT_DIR SAMPLE_RATE K FRAMES CHANNELS MAX_OUTPUTS < samples
 *
 * stdin: K * FRAMES * CHANNELS values (%lf), the tensor [K, FRAMES,
 * CHANNELS] in row-major order, written as float32 by gb_summary_audio at
 * step 3. Each stored clip is read back (gb_store_audio_wav) into
 * OUT_DIR/clip<i>.wav, and one line per clip goes to stdout:
 * "clip <index> rate <r> channels <c> frames <f> clipped <n> bytes <b>".
 * A refused call prints the writer's message on stdout and exits 0, so
 * the checker can compare it word for word.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gb_summary.h"
#include "glassbox.h"

static int fail(const char *what, const char *msg) {
    fprintf(stderr, "audio_dump: %s: %s\n", what, msg);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 8) return fail("usage", "audio_dump STORE OUT_DIR RATE K FRAMES CHANNELS MAX_OUTPUTS");
    int rate = atoi(argv[3]), max_outputs = atoi(argv[7]);
    int64_t k = atoll(argv[4]), frames = atoll(argv[5]), channels = atoll(argv[6]);
    size_t n = (size_t)(k * frames * channels);
    float *v = malloc((n ? n : 1) * sizeof *v);
    if (!v) return fail("memory", "out of memory");
    for (size_t i = 0; i < n; i++) {
        double x;
        if (scanf("%lf", &x) != 1) return fail("stdin", "fewer values than K * FRAMES * CHANNELS");
        v[i] = (float)x;
    }
    gb_summary_writer *w;
    if (gb_summary_writer_open(argv[1], "run", NULL, &w) != GB_OK)
        return fail("open", gb_summary_last_error());
    gb_scope_begin();
    gb_status st = gb_summary_audio(w, "sound", gb_tensor_from(GB_F32, v, 3, (int64_t[]){k, frames, channels}),
                                    rate, max_outputs, 3);
    gb_scope_end();
    free(v);
    if (gb_summary_writer_close(w) != GB_OK) return fail("close", gb_summary_last_error());
    if (st != GB_OK) {
        printf("refused: %s\n", gb_summary_last_error());
        return 0;
    }
    gb_store *s;
    gb_audio_clips *clips;
    if (gb_store_open(argv[1], &s) != GB_STORE_OK ||
        gb_store_audio(s, "run", "sound", NULL, &clips) != GB_STORE_OK)
        return fail("read", gb_store_last_error());
    for (size_t i = 0; i < clips->count; i++) {
        const gb_audio_row *r = &clips->rows[i];
        gb_blob *wav;
        if (gb_store_audio_wav(s, "run", "sound", r->step, r->index, &wav) != GB_STORE_OK)
            return fail("read", gb_store_last_error());
        char path[4096];
        snprintf(path, sizeof path, "%s/clip%d.wav", argv[2], r->index);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(wav->data, 1, wav->size, f) != wav->size || fclose(f)) return fail(path, "cannot write");
        printf("clip %d rate %d channels %d frames %lld clipped %lld bytes %zu\n", r->index, r->sample_rate,
               r->channels, (long long)r->frames, (long long)r->clipped, wav->size);
        gb_store_free(wav);
    }
    gb_store_free(clips);
    gb_store_close(s);
    return 0;
}
