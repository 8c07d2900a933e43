/* functional_tickets.c — a functional model of several inputs and
 * outputs, after the seeds' ticket-ranking example: from a ticket's title
 * and body (token ids) and its tags (a multi-hot vector), predict its
 * priority (a score) and the department that should handle it (4 classes).
 *
 *   title [10] ─ Embedding ─ Flatten ─ Dense ─┐
 *   body [100] ─ Embedding ─ Flatten ─ Dense ─┼─ Concatenate ─┬─ Dense "priority" (1)
 *   tags [12] ───────────────────────────────┘               ├─ Dense "department" (4)
 *                                                             └─ "features" (no loss)
 *
 * The two embeddings are one shared layer, as title and body share a
 * vocabulary. compile takes one loss per output with loss weights (1.0 on
 * priority, 0.2 on department, as in the seeds) and none for "features",
 * an output kept for inspection that takes no target. The data is random,
 * as in the seeds: the point is the wiring, the logs ("priority_loss",
 * "department_accuracy") and that the loss goes down.
 *
 *   functional_tickets [--epochs N] [--samples N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "glassbox.h"

enum { NUM_WORDS = 1000, NUM_TAGS = 12, NUM_DEPARTMENTS = 4, TITLE_LEN = 10, BODY_LEN = 100 };

/* Token ids -> the shared embedding -> one feature vector of `units`. */
static gb_sym *text_features(gb_module *embedding, gb_sym *tokens, int64_t units, const char *name) {
    gb_sym *flat = gb_apply(gb_flatten_new(NULL), gb_apply(embedding, tokens));
    return gb_apply(gb_dense_new(units, &(gb_dense_options){.activation = GB_ACT_RELU, .name = name}), flat);
}

static gb_module *build_model(void) {
    gb_sym *title = gb_input(GB_I32, GB_SHAPE(TITLE_LEN), "title");
    gb_sym *body = gb_input(GB_I32, GB_SHAPE(BODY_LEN), "body");
    gb_sym *tags = gb_input(GB_F32, GB_SHAPE(NUM_TAGS), "tags");
    gb_module *words = gb_embedding_new(NUM_WORDS, 16, &(gb_embedding_options){.name = "words"});
    gb_module_retain(words);   /* applied twice: the second call shares it */
    gb_sym *t = text_features(words, title, 32, "title_features");
    gb_sym *b = text_features(words, body, 32, "body_features");
    gb_module_free(words);
    gb_sym *features = gb_apply_n(gb_concatenate_new(-1, "features"), 3, (gb_sym *[]){t, b, tags});
    gb_sym *priority = gb_apply(gb_dense_new(1, &(gb_dense_options){.name = "priority"}), features);
    gb_sym *department =
        gb_apply(gb_dense_new(NUM_DEPARTMENTS, &(gb_dense_options){.name = "department"}), features);
    return gb_functional_new(3, (gb_sym *[]){title, body, tags}, 3,
                             (gb_sym *[]){priority, department, features}, "ticket_classifier");
}

/* Random data shaped like the seeds': token ids, 0/1 tags, a priority in
 * [0, 1) and a department label. */
typedef struct tickets {
    gb_tensor *title, *body, *tags, *priority, *department;
} tickets;

static tickets make_data(int64_t n) {
    gb_tensor *ids = gb_random_uniform(GB_F32, GB_SHAPE(n, TITLE_LEN + BODY_LEN), 0, NUM_WORDS, 1);
    gb_tensor *all = gb_cast(ids, GB_I32)   /* truncation: ids in [0, NUM_WORDS) */;
    return (tickets){
        .title = gb_slice(all, (int64_t[]){0, 0}, 2, (int64_t[]){n, TITLE_LEN}, 2),
        .body = gb_slice(all, (int64_t[]){0, TITLE_LEN}, 2, (int64_t[]){n, BODY_LEN}, 2),
        .tags = gb_cast(gb_greater(gb_random_uniform(GB_F32, GB_SHAPE(n, NUM_TAGS), 0, 1, 2),
                                   gb_scalar(GB_F32, 0.5)),
                        GB_F32),
        .priority = gb_random_uniform(GB_F32, GB_SHAPE(n, 1), 0, 1, 3),
        .department = gb_cast(gb_random_uniform(GB_F32, GB_SHAPE(n), 0, NUM_DEPARTMENTS, 4),
                              GB_I32),
    };
}

int main(int argc, char **argv) {
    int epochs = 2;
    int64_t samples = 1280;
    const example_flag flags[] = {
        {"--epochs", "N", "passes over the tickets", EXAMPLE_INT, &epochs},
        {"--samples", "N", "tickets made up to train on", EXAMPLE_INT64, &samples},
    };
    const example_program p = {"functional_tickets",
                               "A functional model of three inputs and three outputs, trained through fit.",
                               flags, 2, NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (epochs < 1 || samples < 1) return example_usage_error(&p, "--epochs and --samples must be >= 1");
    gb_nn_set_seed(42);
    gb_module *model = build_model();
    gb_optimizer *opt = gb_adam(1e-3);
    static const gb_loss_spec losses[3] = {
        {.kind = GB_LOSS_BINARY_CROSSENTROPY, .from_logits = true},
        {.kind = GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
        {.kind = GB_LOSS_NONE},   /* "features": inspected, not trained */
    };
    gb_model_compile(model, &(gb_compile_options){.optimizer = opt, .losses = losses, .nlosses = 3,
                                                  .loss_weights = (const double[]){1.0, 0.2, 0},
                                                  .metrics = (const char *[]){"accuracy"},
                                                  .nmetrics = 1});
    if (gb_ok()) gb_module_summary(model, stdout);
    tickets d = make_data(samples);
    gb_fit_options o = gb_fit_defaults();
    o.epochs = epochs;
    o.verbose = 2;
    gb_history *h = gb_model_fit_arrays(
        model,
        (gb_data_arrays){.nx = 3, .ny = 3,
                         .x = (gb_tensor *[]){d.title, d.body, d.tags},
                         .y = (gb_tensor *[]){d.priority, d.department, NULL}},
        &o);
    gb_tensor *out[GB_NN_MAX_IO];
    int n = gb_model_predict_arrays(model, 3, (gb_tensor *[]){d.title, d.body, d.tags}, 256, out);
    if (!gb_ok() || !h || n != 3) {
        fprintf(stderr, "functional_tickets: %s\n", gb_error_string());
        return 1;
    }
    char a[64], b[64], c[64];
    printf("predictions: priority %s, department %s, features %s\n", gb_shape_str(out[0], a, sizeof a),
           gb_shape_str(out[1], b, sizeof b), gb_shape_str(out[2], c, sizeof c));
    double first = gb_history_value(h, "loss", 0), last = gb_history_value(h, "loss", epochs - 1);
    printf("loss %.4f -> %.4f (priority_loss %.4f, department_loss %.4f)\n", first, last,
           gb_history_value(h, "priority_loss", epochs - 1),
           gb_history_value(h, "department_loss", epochs - 1));
    gb_history_free(h);
    gb_module_free(model);
    gb_optimizer_free(opt);
    return last < first ? 0 : 1;
}
