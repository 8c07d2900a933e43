/* fortune_topics.c — which file of Debian's fortunes a fortune came from:
 * text classification from raw strings, end to end.
 *
 * The fortunes of ten categories (/usr/share/games/fortunes: computers,
 * food, law, ...; package `fortunes`) are read as records between "%"
 * lines, with their file's index as the label (gb_dataset_from_text_files
 * with a brace pattern). A fixed shuffle splits them 80/20. The model
 * takes raw strings and is Keras' text classifier: TextVectorization
 * (int mode, each fortune's first 96 tokens padded with 0, the vocabulary
 * adapted on the training split only) -> Embedding(mask_zero) ->
 * GlobalAveragePooling1D (the mean over the real tokens: the mask keeps
 * the padding out of it) -> Dense(classes). Trained with fit on the
 * strings; the accuracy on the test split is printed beside the
 * majority-class baseline. --saved-model DIR saves a SavedModel whose signature takes
 * raw strings and gives each one's category name (and the logits), so
 *
 *   glassbox saved-model run --dir DIR --input text=fortunes.txt
 *
 * classifies a text file's lines with no model code; --save FILE writes
 * a model file (the vocabulary is in its config); --checkpoint FILE a
 * checkpoint (the vocabulary is one of its tensors, so a model restored
 * from it needs no adapt).
 *
 *   fortune_topics [--epochs N] [--dir DIR] [--save FILE] [--saved-model DIR]
 *                  [--checkpoint FILE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "glassbox.h"

static const char *const categories[] = {"computers", "food",   "law",     "literature", "love",
                                         "medicine",  "people", "politics", "science",   "sports"};
enum { NCAT = sizeof categories / sizeof categories[0], MAX_TOKENS = 20000, SEQUENCE = 96 };

/* Every fortune of the categories: strings [n] and int64 labels [n]. */
static bool read_fortunes(const char *dir, gb_tensor **text, gb_tensor **label) {
    char pattern[1024];
    int k = snprintf(pattern, sizeof pattern, "%s/{", dir);
    for (int c = 0; c < NCAT; c++)
        k += snprintf(pattern + k, sizeof pattern - (size_t)k, "%s%s", c ? "," : "", categories[c]);
    snprintf(pattern + k, sizeof pattern - (size_t)k, "}");
    gb_dataset *ds = gb_dataset_from_text_files(
        pattern, &(gb_text_options){.record_separator = "%", .with_file_index = true});
    if (!ds) return false;
    int64_t n = gb_dataset_cardinality(ds);
    ds = gb_dataset_batch(ds, n, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e[2];
    gb_scope_begin();
    bool ok = gb_iterator_next(it, e);
    if (ok) { /* copies that outlive the dataset */
        *text = gb_keep(gb_add(e[0], gb_string_scalar("")));
        *label = gb_keep(gb_add_scalar(e[1], 0));
    }
    gb_scope_end();
    gb_iterator_free(it);
    gb_dataset_free(ds);
    return ok && gb_ok();
}

/* The rows of a fixed permutation: the first 80 % train, the rest test. */
static void split(gb_tensor *text, gb_tensor *label, gb_tensor **xs, gb_tensor **ys) {
    int64_t n = gb_size(text), ntrain = n * 8 / 10;
    int64_t *perm = malloc((size_t)n * sizeof *perm);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    uint64_t s = 12345;
    for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates with an LCG: the same split everywhere */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int64_t j = (int64_t)((s >> 33) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    gb_tensor *tr = gb_tensor_from(GB_I64, perm, GB_SHAPE(ntrain));
    gb_tensor *te = gb_tensor_from(GB_I64, perm + ntrain, GB_SHAPE(n - ntrain));
    xs[0] = gb_gather(text, tr, 0), ys[0] = gb_gather(label, tr, 0);
    xs[1] = gb_gather(text, te, 0), ys[1] = gb_gather(label, te, 0);
    free(perm);
}

static double majority_baseline(gb_tensor *train_y, gb_tensor *test_y, int *majority) {
    int64_t count[NCAT] = {0}, hits = 0;
    for (int64_t i = 0; i < gb_size(train_y); i++) count[(int)gb_get(train_y, i)]++;
    *majority = 0;
    for (int c = 1; c < NCAT; c++)
        if (count[c] > count[*majority]) *majority = c;
    for (int64_t i = 0; i < gb_size(test_y); i++) hits += (int)gb_get(test_y, i) == *majority;
    return (double)hits / (double)gb_size(test_y);
}

/* The serving signature: text [n] -> (category names [n], logits [n, classes]). */
static int classify(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    gb_tensor *logits = gb_module_call(user, in[0], false);
    gb_tensor *names = gb_strings(categories, GB_SHAPE(NCAT));
    out[0] = gb_gather(names, gb_argmax(logits, 1), 0);
    out[1] = logits;
    return out[0] && out[1] ? 2 : -1;
}

static bool save_saved_model(gb_module *m, const char *dir) {
    gb_function *f = gb_function_new("classify", classify, &(gb_function_options){.user = m});
    gb_saved_model_signature sig = {
        .name = "serving_default", .function = f,
        .inputs = (gb_tensor_spec[]){GB_SPEC("text", GB_STRING, -1)}, .ninputs = 1,
        .output_names = (const char *const[]){"topic", "logits"}};
    bool ok = gb_saved_model_save(dir, &sig, 1);
    gb_function_free(f);
    return ok;
}

static bool write_checkpoint(gb_module *m, const char *path) {
    gb_checkpoint *ck = gb_checkpoint_new();
    bool ok = ck && gb_checkpoint_track_module(ck, "model", m) && gb_checkpoint_write(ck, path);
    gb_checkpoint_free(ck);
    return ok;
}

static double accuracy(gb_module *m, gb_tensor *x, gb_tensor *y) {
    gb_tensor *logits = gb_model_predict(m, x, 256);
    gb_tensor *pred = gb_argmax(logits, 1);
    int64_t hits = 0;
    for (int64_t i = 0; pred && i < gb_size(y); i++) hits += gb_get(pred, i) == gb_get(y, i);
    return (double)hits / (double)gb_size(y);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    int epochs = 5;
    const char *dir = "/usr/share/games/fortunes", *save = NULL, *saved_model = NULL, *ckpt = NULL;
    const example_flag flags[] = {
        {"--epochs", "N", "passes over the training fortunes", EXAMPLE_INT, &epochs},
        {"--dir", "DIR", "the fortune files (Debian package fortunes)", EXAMPLE_STRING, &dir},
        {"--save", "FILE", "save the trained model (it takes raw strings) to this model file",
         EXAMPLE_STRING, &save},
        {"--saved-model", "DIR", "save a SavedModel taking raw strings, giving category names",
         EXAMPLE_STRING, &saved_model},
        {"--checkpoint", "FILE", "write a checkpoint of the model (weights and vocabulary)",
         EXAMPLE_STRING, &ckpt},
    };
    const example_program p = {"fortune_topics", "Classifies fortunes by their file, from raw text.",
                               flags, sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (epochs < 1) return example_usage_error(&p, "--epochs must be >= 1");

    gb_tensor *text, *label, *x[2], *y[2];
    if (!read_fortunes(dir, &text, &label)) {
        fprintf(stderr, "fortune_topics: %s\n", gb_error_string());
        return 1;
    }
    split(text, label, x, y);
    int majority;
    double baseline = majority_baseline(y[0], y[1], &majority);
    printf("%lld fortunes in %d categories: %lld to train on, %lld to test\n",
           (long long)gb_size(text), NCAT, (long long)gb_size(x[0]), (long long)gb_size(x[1]));

    gb_nn_set_seed(7);
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .name = "vectorize", .max_tokens = MAX_TOKENS, .output_sequence_length = SEQUENCE});
    if (!gb_text_vectorization_adapt_tensor(tv, x[0])) {
        fprintf(stderr, "fortune_topics: %s\n", gb_error_string());
        return 1;
    }
    printf("vocabulary: %lld tokens\n", (long long)gb_text_vectorization_vocabulary_size(tv));
    gb_module *m = gb_sequential_new("fortune_topics");
    gb_sequential_add(m, tv);
    gb_sequential_add(m, gb_embedding_new(gb_text_vectorization_vocabulary_size(tv), 64,
                                          &(gb_embedding_options){.name = "embedding", .mask_zero = true}));
    gb_sequential_add(m, gb_global_avg_pool1d_new("average"));
    gb_sequential_add(m, gb_dense_new(NCAT, &(gb_dense_options){.name = "topic"}));
    gb_optimizer *opt = gb_adam(1e-2);
    gb_model_compile(m, &(gb_compile_options){
                            .optimizer = opt,
                            .loss = {.kind = GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                            .metrics = (const char *const[]){"accuracy"},
                            .nmetrics = 1});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.batch_size = 64;
    o.seed = 11;
    o.verbose = 2;
    gb_history_free(gb_model_fit(m, x[0], y[0], &o));
    double acc = accuracy(m, x[1], y[1]);
    if (!gb_ok()) {
        fprintf(stderr, "fortune_topics: %s\n", gb_error_string());
        return 1;
    }
    printf("test accuracy %.3f; majority baseline ('%s' always) %.3f\n", acc, categories[majority],
           baseline);
    if (save && !gb_model_save(m, save)) {
        fprintf(stderr, "fortune_topics: %s\n", gb_error_string());
        return 1;
    }
    if (save) printf("saved to %s\n", save);
    if (saved_model && !save_saved_model(m, saved_model)) {
        fprintf(stderr, "fortune_topics: %s\n", gb_error_string());
        return 1;
    }
    if (saved_model) printf("SavedModel in %s\n", saved_model);
    if (ckpt && !write_checkpoint(m, ckpt)) {
        fprintf(stderr, "fortune_topics: %s\n", gb_error_string());
        return 1;
    }
    if (ckpt) printf("checkpoint %s\n", ckpt);
    gb_module_free(m);
    gb_optimizer_free(opt);
    return acc > baseline ? 0 : 1;
}
