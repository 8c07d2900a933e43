/* store/wav_info.c — what a WAV file holds, read from its chunks: the
 * sample rate, channels and frames the store keeps beside an audio clip
 * that came in encoded (a TensorBoard event file's), and whether it is a
 * WAV file at all.
 *
 * A WAV file is "RIFF", a size, "WAVE", then chunks: a four-letter id, a
 * little-endian size, the bytes (padded to an even count). "fmt " gives
 * the format (PCM 1, IEEE float 3, or the extensible 0xFFFE), channels,
 * rate and the bytes of one frame (block align); "data" the samples.
 * Chunks a writer adds beside them (LIST, fact) are skipped, as players
 * skip them; a data chunk cut short (a file written while it streamed)
 * counts the frames that are there.
 */
#include <stdio.h>
#include <string.h>

#include "gb_tfevents.h"
#include "store/internal.h"

static uint32_t le(const unsigned char *p, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

bool gb_tf_wav_info(const unsigned char *wav, size_t size, gb_tf_wav *out, char *why, size_t why_size) {
    if (size < 12 || memcmp(wav, "RIFF", 4) || memcmp(wav + 8, "WAVE", 4)) {
        snprintf(why, why_size, "not a WAV file (no RIFF/WAVE header)");
        return false;
    }
    bool has_fmt = false;
    unsigned block = 0, format = 0;
    for (size_t at = 12; at + 8 <= size;) {
        const unsigned char *c = wav + at;
        size_t n = le(c + 4, 4), body = size - at - 8;
        if (!memcmp(c, "fmt ", 4) && n >= 16 && n <= body) {
            format = le(c + 8, 2);
            out->channels = (int)le(c + 10, 2);
            out->sample_rate = (int)le(c + 12, 4);
            block = le(c + 20, 2);
            has_fmt = true;
        } else if (!memcmp(c, "data", 4) && has_fmt) {
            if (format != 1 && format != 3 && format != 0xFFFE) {
                snprintf(why, why_size, "WAV format %u is neither PCM nor IEEE float", format);
                return false;
            }
            if (out->channels < 1 || out->channels > GB_SUMMARY_AUDIO_MAX_CHANNELS ||
                out->sample_rate < 1 || out->sample_rate > GB_SUMMARY_AUDIO_MAX_RATE ||
                block < (unsigned)out->channels) {
                snprintf(why, why_size, "a WAV of %d channels at %d Hz, %u bytes a frame, is not played",
                         out->channels, out->sample_rate, block);
                return false;
            }
            out->frames = (int64_t)((n < body ? n : body) / block);
            return true;
        }
        if (n > body) break;
        at += 8 + n + (n & 1);
    }
    snprintf(why, why_size, has_fmt ? "the WAV file has no data chunk" : "the WAV file has no format chunk");
    return false;
}
