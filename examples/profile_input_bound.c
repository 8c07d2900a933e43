/* profile_input_bound.c — a training loop starved by its data pipeline,
 * profiled, and the same loop fed by a parallel one.
 *
 * A 784-256-128-10 MLP on Fashion-MNIST whose batches come through a
 * deliberately slow preprocessing step (it waits --map-us per batch, as
 * a map reading from slow storage or decoding would, then scales the
 * pixels to [0,1]). By default the step is a map behind a prefetch: one
 * thread makes batches, slower than the model eats them, so the Profile
 * page says "input-bound" and its trace shows the training thread
 * waiting in "next batch" while the prefetch thread maps. With
 * --parallel N the same work runs in a sequence of N worker threads
 * (gb_dataset_from_sequence), and the steps are no longer input-bound.
 *
 *     build/examples/profile_input_bound --db runs.db
 *     build/examples/profile_input_bound --db runs.db --parallel 8
 *     build/glassbox serve --db runs.db      # the Profile tab
 *
 * --steps steps are profiled (gb_profiler_start with a window of steps,
 * after --warmup steps), each marked with gb_set_step.
 *
 * Under `mpirun -np N` every rank trains on its share of the batches and
 * the gradients are averaged (allreduce, overlapping backward); every rank
 * profiles the same steps and rank 0 stores them all, one track per rank's
 * thread, with the allreduce waits:
 *
 *     mpirun -np 2 build/examples/profile_input_bound --db runs.db --parallel 4
 */
#include <stdio.h>
#include <time.h>

#include "flags.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "run_store.h"

typedef struct options {
    const char *data_dir, *db, *run;
    int64_t batch, steps, warmup, map_us;
    int parallel;
} options;

/* The images as uint8 [N,28,28] and labels, and what a batch costs. */
typedef struct source {
    gb_tensor *images, *labels;
    int64_t batch, nbatches, map_us;
} source;

static void wait_us(int64_t us) {
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The slow step: waits, then uint8 pixels -> float32 in [0,1]. */
static gb_tensor *preprocess(const source *src, gb_tensor *images) {
    wait_us(src->map_us);
    return gb_images_to_float(images, GB_IMAGES_FLAT);
}

static bool slow_map(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)nin;
    out[0] = preprocess(ctx, in[0]);
    out[1] = in[1];
    return out[0] != NULL;
}

/* The map behind a prefetch: one thread makes every batch. */
static gb_dataset *serial_pipeline(source *src) {
    gb_dataset *ds = gb_dataset_from_tensor_slices(2, (gb_tensor *[]){src->images, src->labels});
    if (gb_dist_size() > 1) ds = gb_dataset_shard(ds, gb_dist_size(), gb_dist_rank());
    ds = gb_dataset_batch(ds, src->batch, true);
    ds = gb_dataset_map(ds, slow_map, src, 2);
    return gb_dataset_prefetch(ds, 2);
}

/* This rank's batches: every size-th of them. */
static int64_t sequence_len(void *user) { return ((source *)user)->nbatches / gb_dist_size(); }

/* This rank's batch i, made on one of the sequence's workers. */
static bool sequence_item(void *user, int64_t i, gb_tensor **out) {
    source *src = user;
    int64_t b = src->batch;
    i = i * gb_dist_size() + gb_dist_rank();
    gb_tensor *images = gb_slice(src->images, (int64_t[]){i * b, 0, 0}, 3, (int64_t[]){b, -1, -1}, 3);
    out[0] = preprocess(src, images);
    out[1] = gb_slice(src->labels, (int64_t[]){i * b}, 1, (int64_t[]){b}, 1);
    return out[0] && out[1];
}

static gb_dataset *parallel_pipeline(source *src, int workers) {
    gb_sequence seq = {.len = sequence_len, .get_item = sequence_item, .user = src,
                       .ncomponents = 2};
    return gb_dataset_from_sequence(&seq, false, 0, workers);
}

/* Forward, backward and Adam's update of one batch. */
static bool train_step(gb_module *model, gb_optimizer *opt, gb_tensor *x, gb_tensor *y) {
    gb_tape *tape = gb_tape_begin();
    gb_tensor *logits = gb_module_call(model, x, true);
    gb_tensor *loss = gb_loss_sparse_categorical_crossentropy(y, logits, true, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    int n;
    gb_variable *const *vars = gb_module_trainable_variables(model, &n);
    gb_tensor *grads[16];
    if (n > 16) return false;
    gb_dist_tape_gradient(tape, loss, vars, n, grads);   /* one rank: the tape's own */
    gb_optimizer_apply_gradients(opt, grads, n, vars, n);
    return gb_ok();
}

static int parse(int argc, char **argv, options *o) {
    const example_flag flags[] = {
        {"--data", "DIR", "the Fashion-MNIST IDX files", EXAMPLE_STRING, &o->data_dir},
        {"--db", "FILE", "record the profile into this store", EXAMPLE_STRING, &o->db},
        {"--run", "NAME", "the run (a new one named after the program when absent)",
         EXAMPLE_STRING, &o->run},
        {"--batch", "N", "images per step", EXAMPLE_INT64, &o->batch},
        {"--steps", "N", "steps profiled", EXAMPLE_INT64, &o->steps},
        {"--warmup", "N", "steps before the profile", EXAMPLE_INT64, &o->warmup},
        {"--map-us", "US", "what preprocessing a batch waits, in microseconds", EXAMPLE_INT64,
         &o->map_us},
        {"--parallel", "N", "preprocess on N worker threads (0: one map behind a prefetch)",
         EXAMPLE_INT, &o->parallel},
    };
    const example_program p = {"profile_input_bound",
                               "A training loop starved by a slow map, profiled (and fed in parallel).",
                               flags, sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (o->batch < 1 || o->steps < 1 || o->warmup < 0 || o->map_us < 0 || o->parallel < 0 ||
        o->parallel > 64)
        return example_usage_error(&p, "--batch and --steps must be >= 1, --warmup and --map-us "
                                       ">= 0, --parallel 0..64");
    return EXAMPLE_RUN;
}

static bool fail(const char *what) {
    fprintf(stderr, "profile_input_bound: %s: %s\n", what,
            gb_ok() ? gb_summary_last_error() : gb_error_string());
    return false;
}

/* Trains warmup + steps + 1 batches, profiling the steps in between. */
static bool train(const options *o, source *src, gb_summary_writer *w) {
    gb_nn_set_seed(42);
    gb_module *model = gb_sequential_new("mlp");
    gb_sequential_add(model, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(model, gb_dense_new(GB_MNIST_CLASSES, NULL));
    gb_optimizer *opt = gb_adam(1e-3);
    gb_dataset *ds = o->parallel ? parallel_pipeline(src, o->parallel) : serial_pipeline(src);
    gb_iterator *it = gb_iterator_new(ds);
    bool ok = true;
    for (int64_t step = 0; ok && step <= o->warmup + o->steps; step++) {
        if (step == o->warmup && (w || gb_dist_size() > 1))
            ok = gb_profiler_start(&(gb_profiler_options){.steps = o->steps,
                                                          .all_ranks = true}) == GB_OK;
        gb_set_step(step);   /* marks the step; ends the window at warmup + steps */
        gb_scope_begin();
        gb_tensor *b[2];
        ok = ok && gb_iterator_next(it, b) && train_step(model, opt, b[0], b[1]);
        gb_scope_end();
    }
    if (!ok) fail("training");
    gb_iterator_free(it);
    gb_dataset_free(ds);
    gb_optimizer_free(opt);
    gb_module_free(model);
    return ok;
}

int main(int argc, char **argv) {
    options o = {.data_dir = GB_FASHION_MNIST_DIR, .batch = 128, .steps = 20, .warmup = 3,
                 .map_us = 6000};
    if (!gb_dist_init(&argc, &argv)) return fail("joining the MPI job"), 1;   /* mpirun -np N */
    int rc = parse(argc, argv, &o);
    if (rc != EXAMPLE_RUN) return rc;
    gb_scope_begin();
    gb_mnist data;
    if (!gb_mnist_load(o.data_dir, GB_MNIST_CLASSES, &data)) return fail("loading"), 1;
    int64_t n = gb_dim(data.train_images, 0);
    source src = {.images = data.train_images,
                  .labels = data.train_labels, .batch = o.batch, .nbatches = n / o.batch,
                  .map_us = o.map_us};
    if (src.nbatches / gb_dist_size() < o.warmup + o.steps + 1) {
        fprintf(stderr, "profile_input_bound: %lld batches of %lld are fewer than the %lld steps\n",
                (long long)src.nbatches, (long long)o.batch, (long long)(o.warmup + o.steps + 1));
        return 2;
    }
    gb_summary_writer *w = NULL;   /* rank 0 stores every rank's capture */
    if (o.db && gb_dist_rank() == 0 && !example_open_writer("profile_input_bound", o.db, o.run, &w))
        return 1;
    if (w) gb_summary_set_default(w);   /* it stores the capture */
    if (gb_dist_rank() == 0)
        printf("%s pipeline, %lld us of preprocessing per batch of %lld; profiling %lld steps\n",
           o.parallel ? "parallel" : "serial", (long long)o.map_us, (long long)o.batch,
           (long long)o.steps);
    bool ok = train(&o, &src, w);
    gb_scope_end();
    if (w) {
        gb_summary_set_default(NULL);
        ok = gb_summary_writer_close(w) == GB_OK && ok;
    }
    gb_dist_finalize();
    return ok ? 0 : 1;
}
