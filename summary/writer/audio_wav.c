/* writer/audio_wav.c — gb_summary_audio: clips as 16-bit PCM WAV files.
 *
 * tf.summary.audio encodes each clip as WAV; so does this, with the
 * canonical 44-byte header (RIFF, "fmt " chunk of PCM, "data" chunk) that
 * every reader takes, Python's wave module and sox included. A sample x
 * becomes round(x * 32767) after clipping to [-1, 1]; each clipped sample
 * is counted and the count stored beside the clip, because a model whose
 * output leaves [-1, 1] sounds distorted and the person listening should
 * be told why. A NaN or infinity has no sound: it is refused by name.
 * One event per clip, built on the caller's thread. A clip that comes in
 * encoded (an imported event file's) is kept as it is, its rate, channels
 * and frames read from its header (store/wav_info.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

static const char what[] = "gb_summary_audio";

#define WAV_HEADER 44

static gb_status check_clips(const char *tag, const gb_tensor *t, int sample_rate,
                             int max_outputs) {
    char shape[96], msg[256];
    gb_dtype dt = gb_tensor_dtype(t);
    if (dt != GB_F32 && dt != GB_F64)
        return gb__writer_fail(GB_ERR_DTYPE, what, tag, "audio must be float32 or float64");
    int r = gb_rank(t);
    const int64_t *d = gb_shape(t);
    if ((r != 2 && r != 3) || d[1] < 1 || (r == 3 && d[2] < 1)) {
        snprintf(msg, sizeof msg,
                 "expected [k, frames, channels] or [k, frames] with frames, channels >= 1, "
                 "got %s", gb_shape_str(t, shape, sizeof shape));
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    int64_t channels = r == 3 ? d[2] : 1;
    if (channels > GB_SUMMARY_AUDIO_MAX_CHANNELS) {
        snprintf(msg, sizeof msg, "%lld channels: at most %d", (long long)channels,
                 GB_SUMMARY_AUDIO_MAX_CHANNELS);
        return gb__writer_fail(GB_ERR_SHAPE, what, tag, msg);
    }
    if (d[1] > GB_SUMMARY_AUDIO_MAX_BYTES / 2 / channels) {
        snprintf(msg, sizeof msg, "a clip of %lld frames x %lld channels is more than the %lld "
                 "bytes of 16-bit samples allowed", (long long)d[1], (long long)channels,
                 (long long)GB_SUMMARY_AUDIO_MAX_BYTES);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    if (sample_rate < 1 || sample_rate > GB_SUMMARY_AUDIO_MAX_RATE) {
        snprintf(msg, sizeof msg, "sample_rate must be in 1..%d Hz, got %d",
                 GB_SUMMARY_AUDIO_MAX_RATE, sample_rate);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    if (max_outputs < 1) {
        snprintf(msg, sizeof msg, "max_outputs must be >= 1, got %d", max_outputs);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    return GB_OK;
}

static void put_u16(unsigned char *p, unsigned v) {
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)(v >> 8);
}

static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* The canonical 44-byte header of a PCM WAV file with data_bytes of samples. */
static void wav_header(unsigned char *h, int sample_rate, int channels, uint32_t data_bytes) {
    memcpy(h, "RIFF", 4);
    put_u32(h + 4, 36 + data_bytes);
    memcpy(h + 8, "WAVEfmt ", 8);
    put_u32(h + 16, 16);                                  /* fmt chunk size */
    put_u16(h + 20, 1);                                   /* PCM */
    put_u16(h + 22, (unsigned)channels);
    put_u32(h + 24, (uint32_t)sample_rate);
    put_u32(h + 28, (uint32_t)sample_rate * (uint32_t)channels * 2);   /* bytes per second */
    put_u16(h + 32, (unsigned)channels * 2);              /* block align */
    put_u16(h + 34, 16);                                  /* bits per sample */
    memcpy(h + 36, "data", 4);
    put_u32(h + 40, data_bytes);
}

/* Clip k's samples (frames * channels from element `first`) as
 * little-endian int16 into out; counts clipped samples. Returns false at
 * the first non-finite value (its index in *bad). */
static bool encode_samples(int dt, const void *data, int64_t first, int64_t count,
                           unsigned char *out, int64_t *clipped, int64_t *bad) {
    *clipped = 0;
    for (int64_t i = 0; i < count; i++) {
        double x = gb__element(dt, data, first + i);
        if (!isfinite(x)) {
            *bad = i;
            return false;
        }
        if (x > 1 || x < -1) {
            (*clipped)++;
            x = x > 1 ? 1 : -1;
        }
        int v = (int)lround(x * 32767);
        put_u16(out + 2 * i, (unsigned)(uint16_t)(int16_t)v);
    }
    return true;
}

static gb_status push_clip(gb_summary_writer *w, const char *tag, const gb_tensor *t, int64_t k,
                           int sample_rate, int64_t step) {
    int64_t frames = gb_shape(t)[1], channels = gb_rank(t) == 3 ? gb_shape(t)[2] : 1;
    int64_t count = frames * channels;
    size_t data_bytes = (size_t)count * 2, bytes = sizeof(gb__audio_payload) + WAV_HEADER + data_bytes;
    gb__audio_payload *p = malloc(bytes);
    if (!p) return gb__writer_fail(GB_ERR_MEMORY, what, tag, "out of memory");
    *p = (gb__audio_payload){.index = (int)k, .sample_rate = sample_rate,
                             .channels = (int)channels, .frames = frames,
                             .wav_size = WAV_HEADER + data_bytes};
    int64_t bad = 0;
    if (!encode_samples(gb_tensor_dtype(t), gb_data(t), k * count, count, p->wav + WAV_HEADER,
                        &p->clipped, &bad)) {
        char msg[160];
        snprintf(msg, sizeof msg, "clip %lld, frame %lld, channel %lld is %g: audio must be finite",
                 (long long)k, (long long)(bad / channels), (long long)(bad % channels),
                 gb__element(gb_tensor_dtype(t), gb_data(t), k * count + bad));
        free(p);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, msg);
    }
    wav_header(p->wav, sample_rate, (int)channels, (uint32_t)data_bytes);
    gb__event ev = {.type = GB__EV_AUDIO, .step = step, .wall_time = gb__wall_now(), .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_AUDIO, ev, bytes);
}

gb_status gb__writer_wav_at(gb_summary_writer *w, const char *tag, int64_t step, double wall_time,
                            int index, const void *wav, size_t size) {
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st != GB_OK) return st;
    gb_tf_wav info;
    char why[160];
    if (size > (size_t)GB_SUMMARY_AUDIO_MAX_BYTES + 4096) {
        snprintf(why, sizeof why, "a clip of %zu bytes is more than the %lld allowed", size,
                 (long long)GB_SUMMARY_AUDIO_MAX_BYTES);
        return gb__writer_fail(GB_ERR_VALUE, what, tag, why);
    }
    if (!gb_tf_wav_info(wav, size, &info, why, sizeof why)) return gb__writer_fail(GB_ERR_VALUE, what, tag, why);
    size_t bytes = sizeof(gb__audio_payload) + size;
    gb__audio_payload *p = malloc(bytes);
    if (!p) return gb__writer_fail(GB_ERR_MEMORY, what, tag, "out of memory");
    *p = (gb__audio_payload){.index = index, .sample_rate = info.sample_rate, .channels = info.channels,
                             .frames = info.frames, .wav_size = size};
    memcpy(p->wav, wav, size);
    gb__event ev = {.type = GB__EV_AUDIO, .step = step, .wall_time = wall_time, .payload = p};
    return gb__writer_push(w, what, tag, GB_KIND_AUDIO, ev, bytes);
}

gb_status gb_summary_audio(gb_summary_writer *w, const char *tag, const gb_tensor *clips,
                           int sample_rate, int max_outputs, int64_t step) {
    gb_status st = gb__writer_check_summary(what, tag, &step);
    if (st == GB_OK) st = gb__writer_check_tensor(what, tag, clips);
    if (st == GB_OK) st = check_clips(tag, clips, sample_rate, max_outputs);
    if (st != GB_OK) return st;
    int64_t k = gb_shape(clips)[0] < max_outputs ? gb_shape(clips)[0] : max_outputs;
    /* Every clip is checked before any is queued, so a bad one writes none. */
    for (int64_t i = 0; i < k; i++) {
        int64_t count = gb_shape(clips)[1] * (gb_rank(clips) == 3 ? gb_shape(clips)[2] : 1);
        for (int64_t j = 0; j < count; j++) {
            double x = gb__element(gb_tensor_dtype(clips), gb_data(clips), i * count + j);
            if (!isfinite(x)) return push_clip(w, tag, clips, i, sample_rate, step);  /* refuses it, naming the value */
        }
    }
    for (int64_t i = 0; st == GB_OK && i < k; i++)
        st = push_clip(w, tag, clips, i, sample_rate, step);
    return st;
}
