/* make_model_files.c — writes the seeds of the model-file fuzz target
 * (tests/fuzz/corpus/model_file/): small valid model files, each also in
 * the target's split shape ("<config.json>\0<the file>").
 *
 *   make_fuzz_model_files DIR
 *
 * Between them they hold every part of the format: a trained Sequential
 * (Adam slots and iterations), a functional model of two inputs and two
 * outputs (RMSprop on an ExponentialDecay, a loss per output, loss
 * weights, metrics), a convolutional Sequential compiled but never
 * trained (SGD with Nesterov momentum on a warm CosineDecay: iterations,
 * no slots), an uncompiled model with BatchNormalization's non-trainable
 * statistics, and an unbuilt model (a config and no tensors). Every
 * number in them is small (layer seeds, shapes) so the target builds
 * them (config_limits.h). Built with the tests so it cannot rot; run it
 * again when the format changes and copy DIR's files over the seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "io/internal.h"

static char dir[400];

/* One epoch on `n` seeded random samples of the model's one input. */
static bool train_once(gb_module *m, int n, int features, int classes) {
    gb_tensor *x = gb_random_uniform(GB_F32, GB_SHAPE(n, features), -1, 1, 1);
    gb_tensor *y = classes ? gb_random_uniform(GB_I32, GB_SHAPE(n), 0, classes, 2)
                           : gb_random_uniform(GB_F32, GB_SHAPE(n, 2), -1, 1, 2);
    gb_fit_options o = gb_fit_defaults();
    o.batch_size = 4;
    o.verbose = 0;
    o.seed = 3;
    gb_history *h = gb_model_fit(m, x, y, &o);
    gb_history_free(h);
    return h != NULL;
}

/* DIR/<name>.gbm, and DIR/<name>.split: its config.json, a NUL, the file. */
static bool write_seed(gb_module *m, const char *name) {
    char path[512], split[512];
    snprintf(path, sizeof path, "%s/%s.gbm", dir, name);
    snprintf(split, sizeof split, "%s/%s.split", dir, name);
    gb__ckpt_file f;
    if (!gb_model_save(m, path) || !gb__ckpt_read(path, &f)) return false;
    FILE *out = fopen(split, "wb");
    bool ok = out != NULL;
    for (int i = 0; ok && i < f.count; i++)
        if (strcmp(f.entries[i].path, "config.json") == 0)
            ok = fwrite(f.bytes + f.entries[i].offset, 1, f.entries[i].nbytes, out) == f.entries[i].nbytes;
    ok = ok && fputc(0, out) == 0 && fwrite(f.bytes, 1, f.size, out) == f.size;
    if (out) ok = fclose(out) == 0 && ok;
    gb__ckpt_close(&f);
    if (ok) printf("%s, %s\n", path, split);
    return ok;
}

static bool mlp_adam(void) {
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(4, &(gb_dense_options){.activation = GB_ACT_RELU, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = 2}));
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 3));
    gb_optimizer *opt = gb_adam(0.01);
    bool ok = gb_model_compile(m, &(gb_compile_options){.optimizer = opt,
                                                        .loss = {GB_LOSS_MEAN_SQUARED_ERROR},
                                                        .metrics = (const char *[]){"mae"}, .nmetrics = 1}) &&
              train_once(m, 8, 3, 0) && write_seed(m, "mlp_adam");
    gb_module_free(m);
    gb_optimizer_free(opt);
    return ok;
}

static bool heads_rmsprop(void) {
    gb_sym *a = gb_input(GB_F32, GB_SHAPE(2), "a");
    gb_sym *b = gb_input(GB_F32, GB_SHAPE(3), "b");
    gb_sym *ab = gb_apply_n(gb_concatenate_new(-1, "joined"), 2, (gb_sym *[]){a, b});
    gb_sym *h = gb_apply(gb_dense_new(3, &(gb_dense_options){.activation = GB_ACT_TANH, .seed = 3,
                                                             .name = "trunk"}), ab);
    gb_sym *kind = gb_apply(gb_dense_new(3, &(gb_dense_options){.seed = 4, .name = "kind"}), h);
    gb_sym *score = gb_apply(gb_dense_new(1, &(gb_dense_options){.seed = 5, .name = "score"}), h);
    gb_module *m = gb_functional_new(2, (gb_sym *[]){a, b}, 2, (gb_sym *[]){kind, score}, "heads");
    gb_optimizer *opt = gb_rmsprop_ex(&(gb_rmsprop_options){
        .learning_rate = gb_lr_exponential_decay(0.01, 3, 0.5, true), .rho = 0.9, .momentum = 0.5,
        .centered = true, .epsilon = 1e-7});
    bool ok = gb_model_compile(m, &(gb_compile_options){
        .optimizer = opt,
        .losses = (gb_loss_spec[]){{GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                   {GB_LOSS_HUBER, .delta = 2}},
        .nlosses = 2, .loss_weights = (double[]){1, 0.5},
        .metrics = (const char *[]){"accuracy"}, .nmetrics = 1});
    gb_tensor *x[2] = {gb_random_uniform(GB_F32, GB_SHAPE(8, 2), -1, 1, 4),
                       gb_random_uniform(GB_F32, GB_SHAPE(8, 3), -1, 1, 5)};
    gb_tensor *y[2] = {gb_random_uniform(GB_I32, GB_SHAPE(8), 0, 3, 6),
                       gb_random_uniform(GB_F32, GB_SHAPE(8, 1), -1, 1, 7)};
    gb_fit_options o = gb_fit_defaults();
    o.batch_size = 4;
    o.verbose = 0;
    gb_history *hist = ok ? gb_model_fit_arrays(m, (gb_data_arrays){2, 2, x, y}, &o) : NULL;
    ok = hist && write_seed(m, "heads_rmsprop");
    gb_history_free(hist);
    gb_module_free(m);
    gb_optimizer_free(opt);
    return ok;
}

static bool cnn_sgd(void) {
    gb_module *m = gb_sequential_new("cnn");
    gb_sequential_add(m, gb_conv2d_new(2, 3, 3, &(gb_conv2d_options){.padding = GB_PADDING_SAME, .seed = 6}));
    gb_sequential_add(m, gb_max_pool2d_new(NULL));
    gb_sequential_add(m, gb_flatten_new(NULL));
    gb_sequential_add(m, gb_dropout_new(0.5, 7, NULL));
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = 8}));
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 4, 4, 1));
    gb_optimizer *opt = gb_sgd_ex(&(gb_sgd_options){
        .learning_rate = gb_lr_cosine_decay_warmup(0.01, 10, 0.1, 0.05, 2), .momentum = 0.9,
        .nesterov = true});
    bool ok = gb_model_compile(m, &(gb_compile_options){
                  .optimizer = opt, .loss = {GB_LOSS_CATEGORICAL_CROSSENTROPY, .from_logits = true}}) &&
              write_seed(m, "cnn_sgd");
    gb_module_free(m);
    gb_optimizer_free(opt);
    return ok;
}

static bool plain_and_lazy(void) {
    gb_module *m = gb_sequential_new("plain");
    gb_sequential_add(m, gb_dense_new(3, &(gb_dense_options){.seed = 9}));
    gb_sequential_add(m, gb_batch_norm_new(NULL));
    gb_module_build(m, GB_F32, GB_SHAPE(-1, 2));
    gb_module *lazy = gb_sequential_new("lazy");
    gb_sequential_add(lazy, gb_dense_new(2, &(gb_dense_options){.seed = 10}));
    bool ok = write_seed(m, "plain") && write_seed(lazy, "lazy");
    gb_module_free(m);
    gb_module_free(lazy);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_fuzz_model_files DIR\n");
        return 2;
    }
    snprintf(dir, sizeof dir, "%s", argv[1]);
    gb_nn_set_seed(1);
    gb_scope_begin();
    bool ok = mlp_adam() && heads_rmsprop() && cnn_sgd() && plain_and_lazy();
    gb_scope_end();
    if (!ok) fprintf(stderr, "make_fuzz_model_files: %s\n", gb_error_string());
    return ok ? 0 : 1;
}
