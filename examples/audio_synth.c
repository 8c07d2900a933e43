/* audio_synth.c — a tiny generator learns to play a chord, and the Audio
 * page lets a person hear it improve.
 *
 *   audio_synth --db runs.db --epochs 200
 *   glassbox serve --db runs.db        (the Audio tab: one clip per epoch)
 *
 * The model maps a fixed noise vector (16 values) through Dense(64, tanh)
 * to Dense(samples, tanh): the waveform itself, 0.25 s at 8 kHz. The
 * target is an A major chord (A4 440 Hz, C#5 554.37 Hz, E5 659.26 Hz) at
 * a third of full scale each. fit minimizes the squared error with Adam;
 * every --every epochs the writer stores the generated clip (tag
 * "synth/output") and its loss, so the first clips are hiss and the last
 * the chord; the target is stored once ("synth/target"). The run fails
 * (exit 3) unless the final error is below --max-loss, so the example is
 * its own test. A few hundred epochs take seconds. --volume X scales the
 * logged clips: above 1 they leave [-1, 1], are clipped, and the Audio
 * page says how many samples were.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "flags.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "run_store.h"

#define SAMPLE_RATE 8000
#define NOISE 16

typedef struct config {
    const char *db, *run;
    int epochs, every, samples;
    double lr, max_loss, volume;
    uint64_t seed;
} config;

static int parse(int argc, char **argv, config *c) {
    const example_flag flags[] = {
        {"--epochs", "N", "training epochs (one step each)", EXAMPLE_INT, &c->epochs},
        {"--every", "N", "log the generated clip every N epochs", EXAMPLE_INT, &c->every},
        {"--samples", "N", "samples of the clip at 8 kHz", EXAMPLE_INT, &c->samples},
        {"--lr", "X", "Adam's learning rate", EXAMPLE_DOUBLE, &c->lr},
        {"--seed", "N", "the noise and the initial weights", EXAMPLE_UINT64, &c->seed},
        {"--max-loss", "X", "exit 3 when the final mean squared error is above X", EXAMPLE_DOUBLE,
         &c->max_loss},
        {"--volume", "X", "scale the logged clips by X (above 1 they clip)", EXAMPLE_DOUBLE, &c->volume},
        {"--db", "FILE", "record the run into this store", EXAMPLE_STRING, &c->db},
        {"--run", "NAME", "the run to write or continue (default: a new run 'audio_synth')",
         EXAMPLE_STRING, &c->run},
    };
    const example_program p = {"audio_synth",
                               "Trains a tiny generator to play a chord, logging its audio each epoch.",
                               flags, sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (c->epochs < 1 || c->every < 1 || c->samples < 64 || c->samples > 80000 || !(c->lr > 0) ||
        !(c->volume > 0 && c->volume <= 100))
        return example_usage_error(&p, "--epochs and --every must be >= 1, --samples in 64..80000, "
                                       "--lr > 0, --volume in (0, 100]");
    return EXAMPLE_RUN;
}

/* The chord: three sines at a third of full scale each, so the sum stays
 * inside [-1, 1]. */
static gb_tensor *chord(int samples) {
    static const double hz[3] = {440.0, 554.37, 659.26};
    float *v = malloc((size_t)samples * sizeof *v);
    if (!v) return NULL;
    for (int i = 0; i < samples; i++) {
        double t = (double)i / SAMPLE_RATE, s = 0;
        for (int k = 0; k < 3; k++) s += sin(2 * M_PI * hz[k] * t) / 3.2;
        v[i] = (float)s;
    }
    gb_tensor *out = gb_tensor_from(GB_F32, v, GB_SHAPE(1, samples));
    free(v);
    return out;
}

/* The generated clip [1, samples] as the audio summary's [1, samples, 1]. */
static void log_clip(gb_summary_writer *w, const char *tag, gb_tensor *wave, int samples,
                     double volume, int64_t step) {
    if (volume != 1) wave = gb_mul(wave, gb_scalar(GB_F32, volume));
    gb_summary_audio(w, tag, gb_reshape(wave, GB_SHAPE(1, samples, 1)), SAMPLE_RATE, 1, step);
}

typedef struct logger {
    gb_summary_writer *w;
    gb_module *model;
    gb_tensor *noise;
    int every, samples;
    double volume;
} logger;

static void on_epoch_end(gb_train_state *s, int epoch, gb_logs *logs, void *user) {
    (void)s;
    logger *l = user;
    if (!l->w || (epoch + 1) % l->every) return;
    gb_scope_begin();
    gb_summary_scalar(l->w, "synth/loss", gb_logs_get(logs, "loss"), epoch + 1);
    log_clip(l->w, "synth/output", gb_model_predict(l->model, l->noise, 1), l->samples, l->volume,
             epoch + 1);
    gb_scope_end();
}

int main(int argc, char **argv) {
    config c = {.epochs = 200, .every = 5, .samples = SAMPLE_RATE / 4, .lr = 5e-4, .seed = 7,
                .max_loss = 0.01, .volume = 1};
    int rc = parse(argc, argv, &c);
    if (rc != EXAMPLE_RUN) return rc;
    gb_set_error_mode(GB_ERRORS_ABORT);
    gb_nn_set_seed(c.seed);
    gb_scope_begin();
    gb_summary_writer *w = NULL;
    if (c.db && !example_open_writer("audio_synth", c.db, c.run, &w)) return 1;
    gb_tensor *noise = gb_random_normal(GB_F32, GB_SHAPE(1, NOISE), 0, 1, c.seed);
    gb_tensor *target = chord(c.samples);
    if (w) log_clip(w, "synth/target", target, c.samples, 1, 0);

    gb_module *model = gb_sequential_new("synth");
    gb_sequential_add(model, gb_dense_new(64, &(gb_dense_options){.activation = GB_ACT_TANH}));
    gb_sequential_add(model, gb_dense_new(c.samples, &(gb_dense_options){.activation = GB_ACT_TANH}));
    gb_adam_options ao = gb_adam_defaults();
    ao.learning_rate = gb_lr_constant(c.lr);
    gb_optimizer *opt = gb_adam_ex(&ao);
    gb_model_compile(model, &(gb_compile_options){.optimizer = opt, .loss = {GB_LOSS_MEAN_SQUARED_ERROR}});
    logger l = {w, model, noise, c.every, c.samples, c.volume};
    gb_callback *cb = gb_lambda(&(gb_lambda_callback){.on_epoch_end = on_epoch_end, .user = &l});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = c.epochs;
    o.batch_size = 1;
    o.verbose = 0;
    o.callbacks = &cb;
    o.ncallbacks = 1;
    gb_history *h = gb_model_fit(model, noise, target, &o);
    gb_tensor *out = gb_model_predict(model, noise, 1);
    double mse = gb_item(gb_reduce_mean(gb_square(gb_sub(out, target)), NULL, 0, false));
    printf("after %d epochs: mean squared error %.5f (the silence would score %.5f)\n", c.epochs,
           mse, gb_item(gb_reduce_mean(gb_square(target), NULL, 0, false)));
    gb_history_free(h);
    gb_callback_free(cb);
    gb_optimizer_free(opt);
    gb_module_free(model);
    if (w) gb_summary_writer_close(w);
    gb_scope_end();
    if (mse > c.max_loss) {
        fprintf(stderr, "audio_synth: the error %.5f is above --max-loss %.5f\n", mse, c.max_loss);
        return 3;
    }
    return 0;
}
