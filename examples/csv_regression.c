/* csv_regression.c — regression from a CSV file, the tf.data way: house
 * prices (examples/data/house_prices.csv, made by
 * scripts/make_house_prices.py: area, rooms, age, distance, price; some
 * ages unknown) predicted by a small MLP.
 *
 *   CSV -> (area, rooms, age, distance, price) scalars, an empty age
 *   taking the default --> map: features [4] standardized, price [1] in
 *   hundreds --> take 800 for training (cached, shuffled, batched) and the
 *   other 200 for validation --> fit on the datasets --> mean absolute
 *   error against the baseline that always says the mean price.
 *
 * The standardization statistics come from one pass over the training
 * rows first (Keras' Normalization.adapt).
 *
 *   csv_regression [--csv FILE] [--epochs N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "glassbox.h"

enum { FEATURES = 4, TRAIN = 800 };

typedef struct stats {
    double mean[FEATURES], std[FEATURES];
    double price_mean;
} stats;

/* The CSV's columns: four features and the price; an unknown age is 45. */
static gb_dataset *houses(const char *path) {
    static const gb_csv_column cols[] = {
        {.name = "area"}, {.name = "rooms"}, {.name = "age", .default_value = "45"},
        {.name = "distance"}, {.name = "price"}};
    return gb_dataset_from_csv(path, &(gb_csv_options){.header = true, .columns = cols, .ncolumns = 5});
}

/* Means and standard deviations of the first TRAIN rows (adapt). */
static bool adapt(gb_dataset *ds, stats *st) {
    double sum[FEATURES + 1] = {0}, sq[FEATURES + 1] = {0};
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *row[FEATURES + 1];
    int n = 0;
    for (gb_scope_begin(); n < TRAIN && gb_iterator_next(it, row); gb_scope_end(), gb_scope_begin(), n++)
        for (int k = 0; k <= FEATURES; k++) {
            double v = gb_item(row[k]);
            sum[k] += v, sq[k] += v * v;
        }
    gb_scope_end();
    gb_iterator_free(it);
    for (int k = 0; k < FEATURES && n > 0; k++) {
        st->mean[k] = sum[k] / n;
        st->std[k] = sqrt(fmax(sq[k] / n - st->mean[k] * st->mean[k], 1e-12));
    }
    st->price_mean = n ? sum[FEATURES] / n : 0;
    return gb_ok() && n == TRAIN;
}

/* (area, rooms, age, distance, price) -> (standardized features [4], price / 100 [1]). */
static bool to_example(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)nin;
    const stats *st = ctx;
    float x[FEATURES];
    for (int k = 0; k < FEATURES; k++) x[k] = (float)((gb_item(in[k]) - st->mean[k]) / st->std[k]);
    out[0] = gb_from_f32(x, GB_SHAPE(FEATURES));
    out[1] = gb_reshape(gb_mul_scalar(in[FEATURES], 0.01), 1, (int64_t[]){1});
    return out[0] && out[1];
}

int main(int argc, char **argv) {
    const char *path = "examples/data/house_prices.csv";
    int epochs = 40;
    const example_flag flags[] = {
        {"--csv", "FILE", "the house prices", EXAMPLE_STRING, &path},
        {"--epochs", "N", "passes over the training houses", EXAMPLE_INT, &epochs},
    };
    const example_program p = {"csv_regression", "House prices from a CSV file, through a dataset into fit.",
                               flags, 2, NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (epochs < 1) return example_usage_error(&p, "--epochs must be >= 1");
    stats st = {0};
    gb_dataset *rows = houses(path);
    if (!rows || !adapt(rows, &st)) {
        fprintf(stderr, "csv_regression: %s\n", gb_ok() ? "fewer than 800 rows" : gb_error_string());
        gb_dataset_free(rows);
        return 1;
    }
    gb_dataset *examples = gb_dataset_map(rows, to_example, &st, 2);
    gb_dataset *train = gb_dataset_batch(
        gb_dataset_shuffle(gb_dataset_cache(gb_dataset_take(gb_dataset_ref(examples), TRAIN), NULL),
                           TRAIN, 7),
        32, false);
    gb_dataset *val = gb_dataset_batch(gb_dataset_skip(examples, TRAIN), 256, false);

    gb_nn_set_seed(42);
    gb_module *model = gb_sequential_new("price_mlp");
    gb_sequential_add(model, gb_dense_new(32, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(16, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(1, NULL));
    gb_optimizer *opt = gb_adam(3e-3);
    gb_model_compile(model, &(gb_compile_options){.optimizer = opt,
                                                  .loss = {.kind = GB_LOSS_MEAN_SQUARED_ERROR},
                                                  .metrics = (const char *[]){"mae"},
                                                  .nmetrics = 1});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.verbose = 0;
    o.val_dataset = val;
    gb_history *h = gb_model_fit_dataset(model, train, &o);

    /* The baseline: always the mean training price. */
    double baseline = 0;
    int n = 0;
    gb_iterator *it = gb_iterator_new(val);
    gb_tensor *b[2];
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin())
        for (int64_t i = 0; i < gb_size(b[1]); i++, n++) baseline += fabs(gb_get(b[1], i) * 100 - st.price_mean);
    gb_scope_end();
    gb_iterator_free(it);
    int ok = h && gb_ok() && n > 0;
    if (ok) {
        baseline /= n;
        double mae = 100 * gb_history_value(h, "val_mae", epochs - 1);
        printf("%d validation houses: mean absolute error %.1f thousand (always the mean price: %.1f)\n",
               n, mae, baseline);
        printf("loss %.4f -> %.4f over %d epochs\n", gb_history_value(h, "loss", 0),
               gb_history_value(h, "loss", epochs - 1), epochs);
        ok = mae < 0.35 * baseline;
    } else {
        fprintf(stderr, "csv_regression: %s\n", gb_error_string());
    }
    gb_history_free(h);
    gb_dataset_free(train);
    gb_dataset_free(val);
    gb_module_free(model);
    gb_optimizer_free(opt);
    return ok ? 0 : 1;
}
