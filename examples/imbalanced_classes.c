/* imbalanced_classes.c — class_weight on a rare class, after the seeds'
 * fraud-detection example: find bags (Fashion-MNIST class 8) among all
 * the other clothes when only 0.5 % of the training images are bags.
 *
 * The same small model trains twice from the same initial weights: once
 * plainly, once with class_weight = {0: total / (2 * negatives), 1: total
 * / (2 * positives)}, the seeds' weighting, so each class weighs as much
 * in the loss as the other. Plain training learns that "never a bag" is
 * almost always right; the weighted one finds most bags, at the price of
 * some false alarms. Both are scored on the whole test set (1,000 bags,
 * 9,000 others): recall, precision, false alarms.
 *
 *   imbalanced_classes [--epochs N] [--data DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "glassbox.h"

enum { BAG = 8, KEEP_BAGS = 300 };

/* The training images: every non-bag and the first KEEP_BAGS bags; labels
 * 1.0 for a bag, 0.0 otherwise, as [n, 1]. */
static void rare_bags(gb_mnist *m, gb_tensor **x, gb_tensor **y, int64_t *npos, int64_t *nneg) {
    int64_t n = gb_dim(m->train_labels, 0), kept = 0, bags = 0;
    double *labels = malloc((size_t)n * sizeof *labels);
    int64_t *rows = malloc((size_t)n * sizeof *rows);
    float *target = malloc((size_t)n * sizeof *target);
    gb_to_f64(m->train_labels, labels);
    for (int64_t i = 0; i < n; i++) {
        bool bag = labels[i] == BAG;
        if (bag && bags == KEEP_BAGS) continue;
        bags += bag;
        target[kept] = bag ? 1.0f : 0.0f;
        rows[kept++] = i;
    }
    gb_tensor *all = gb_images_to_float(m->train_images, GB_IMAGES_FLAT);
    *x = gb_gather(all, gb_tensor_from(GB_I64, rows, GB_SHAPE(kept)), 0);
    *y = gb_from_f32(target, GB_SHAPE(kept, 1));
    *npos = bags;
    *nneg = kept - bags;
    free(labels), free(rows), free(target);
}

static gb_module *detector(void) {
    gb_nn_clear_session();
    gb_nn_set_seed(42);   /* both runs start from the same weights */
    gb_module *m = gb_sequential_new("detector");
    gb_sequential_add(m, gb_dense_new(64, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m, gb_dense_new(1, NULL));   /* a logit: is it a bag? */
    return m;
}

typedef struct score {
    int64_t found, missed, false_alarms;
} score;

static score evaluate_on_test(gb_module *m, gb_mnist *data) {
    gb_tensor *logits = gb_model_predict(m, gb_images_to_float(data->test_images, GB_IMAGES_FLAT), 1000);
    score s = {0};
    for (int64_t i = 0; logits && i < gb_size(logits); i++) {
        bool said_bag = gb_get(logits, i) > 0, bag = gb_get(data->test_labels, i) == BAG;
        s.found += said_bag && bag;
        s.missed += !said_bag && bag;
        s.false_alarms += said_bag && !bag;
    }
    return s;
}

static score train(gb_mnist *data, gb_tensor *x, gb_tensor *y, int epochs, const double *class_weight) {
    gb_module *m = detector();
    gb_optimizer *opt = gb_adam(1e-3);
    gb_model_compile(m, &(gb_compile_options){
                            .optimizer = opt,
                            .loss = {.kind = GB_LOSS_BINARY_CROSSENTROPY, .from_logits = true}});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.batch_size = 256;
    o.seed = 7;
    o.verbose = 2;
    o.class_weight = class_weight;
    o.nclass_weight = class_weight ? 2 : 0;
    gb_history_free(gb_model_fit(m, x, y, &o));
    score s = evaluate_on_test(m, data);
    gb_module_free(m);
    gb_optimizer_free(opt);
    return s;
}

static void report(const char *what, score s) {
    int64_t bags = s.found + s.missed, said = s.found + s.false_alarms;
    printf("%s: recall %.3f (%lld of %lld bags found), precision %.3f, %lld false alarms\n", what,
           bags ? (double)s.found / (double)bags : 0, (long long)s.found, (long long)bags,
           said ? (double)s.found / (double)said : 0, (long long)s.false_alarms);
}

int main(int argc, char **argv) {
    int epochs = 3;
    const char *dir = GB_FASHION_MNIST_DIR;
    const example_flag flags[] = {
        {"--epochs", "N", "passes over the training images", EXAMPLE_INT, &epochs},
        {"--data", "DIR", "the Fashion-MNIST IDX files", EXAMPLE_STRING, &dir},
    };
    const example_program p = {"imbalanced_classes", "Rare bags among Fashion-MNIST, found with class_weight.",
                               flags, 2, NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (epochs < 1) return example_usage_error(&p, "--epochs must be >= 1");
    gb_mnist data;
    if (!gb_mnist_load(dir, GB_MNIST_CLASSES, &data)) {
        fprintf(stderr, "imbalanced_classes: %s\n", gb_error_string());
        return 1;
    }
    gb_tensor *x, *y;
    int64_t pos, neg;
    rare_bags(&data, &x, &y, &pos, &neg);
    double total = (double)(pos + neg);
    const double class_weight[2] = {total / (2.0 * (double)neg), total / (2.0 * (double)pos)};
    printf("training on %lld images, %lld of them bags (%.2f %%); class_weight {0: %.3f, 1: %.2f}\n",
           (long long)(pos + neg), (long long)pos, 100.0 * (double)pos / total, class_weight[0],
           class_weight[1]);
    score plain = train(&data, x, y, epochs, NULL);
    score weighted = train(&data, x, y, epochs, class_weight);
    if (!gb_ok()) {
        fprintf(stderr, "imbalanced_classes: %s\n", gb_error_string());
        return 1;
    }
    report("without class_weight", plain);
    report("with class_weight   ", weighted);
    return weighted.found > plain.found ? 0 : 1;
}
