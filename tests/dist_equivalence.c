/* dist_equivalence.c — N ranks at batch B train the weights one process
 * trains at batch N*B (DESIGN §7), checked under mpirun (tests/dist.cmake).
 *
 * Every rank trains the Fashion-MNIST MLP twice from the same seed:
 *   the reference   alone (no communication): shuffle -> batch(N*B), the
 *                   tape's gradients, the update;
 *   data-parallel   shuffle (same seed) -> shard(N, rank) -> batch(B),
 *                   gb_dist_tape_gradient (buckets, allreduce overlapping
 *                   backward), the update. The ranks other than 0 start
 *                   from different weights (another seed), so only
 *                   gb_dist_broadcast_model makes the runs comparable.
 * Then it checks, and prints on rank 0:
 *   - the ranks' weights are bit-identical (max minus min over the ranks);
 *   - at every step, the averaged gradient against the gradient of the
 *     whole global batch at the same weights: within 1e-6;
 *   - the weights after all the steps against the reference's, within
 *     --tolerance.
 * The global batch holds the same images in both runs: only the order in
 * which float32 sums add them differs (the mean of 2 means of 64 instead
 * of one mean of 128; matrix products over 64 rows instead of 128), so a
 * step's gradient differs by rounding alone (measured 2.4e-7 at most, for
 * gradients up to ~0.04, whose float32 ulp is 3.7e-9: 1e-6 allows ~270
 * ulps, and is still four orders below a real fault). The weights differ
 * by that rounding carried along the steps. One thing can amplify it: a
 * ReLU whose input lies within rounding of 0 may switch on in one run and
 * off in the other, changing that sample's contribution outright; SGD
 * turns that into a small step, Adam (which divides by each element's
 * running RMS) into one of up to the learning rate. On this data order
 * none occurs within 50 steps (SGD 3.9e-7, Adam 3.2e-7); on others it can
 * (6,496 images with Adam: 0.02 after 51 steps, every step's gradient
 * still equal at equal weights), which is why the per-step check is the
 * general one and the weights' tolerance is this data order's.
 *
 * --fit trains both runs through gb_model_fit (the distributed one with
 * gb_fit_options.distributed; traced unless --eager).
 *
 * --depth D makes the MLP D Dense layers deep (784 -> 32, then D - 2 tanh
 * layers of 16, then 10): 2*D trainable variables, more than a traced
 * step once returned (62), so a traced distributed fit must return and
 * average every one; the run then also checks that every variable of
 * every rank moved from its initial value.
 *
 *   mpirun -np 2 dist_equivalence [--steps 50] [--global-batch 128]
 *          [--optimizer sgd|adam] [--tolerance X] [--no-overlap] [--bucket-kb K]
 *          [--fit [--eager]] [--depth D] [--no-broadcast]   (skips the broadcast: the check must fail)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"

typedef struct config {
    int steps;
    int64_t global_batch;
    const char *optimizer;
    double tolerance;
    bool no_overlap;
    bool no_broadcast;        /* the negative control: must fail */
    bool fit, eager;          /* train with gb_model_fit (traced unless eager) */
    int64_t bucket_kb;
    int depth;                /* Dense layers; 3: the Fashion-MNIST MLP */
} config;

/* The most trainable variables a run keeps arrays for. */
enum { MAX_VARS = 256 };

static bool parse(int argc, char **argv, config *c) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-overlap")) c->no_overlap = true;
        else if (!strcmp(a, "--no-broadcast")) c->no_broadcast = true;
        else if (!strcmp(a, "--fit")) c->fit = true;
        else if (!strcmp(a, "--eager")) c->eager = true;
        else if (!v) return false;
        else if (!strcmp(a, "--steps")) c->steps = atoi(argv[++i]);
        else if (!strcmp(a, "--global-batch")) c->global_batch = atoll(argv[++i]);
        else if (!strcmp(a, "--optimizer")) c->optimizer = argv[++i];
        else if (!strcmp(a, "--tolerance")) c->tolerance = atof(argv[++i]);
        else if (!strcmp(a, "--bucket-kb")) c->bucket_kb = atoll(argv[++i]);
        else if (!strcmp(a, "--depth")) c->depth = atoi(argv[++i]);
        else return false;
    }
    return c->steps > 0 && c->global_batch % gb_dist_size() == 0 && c->tolerance > 0 &&
           c->depth >= 3 && 2 * c->depth <= MAX_VARS;
}

static gb_module *mlp(uint64_t seed, int depth) {
    gb_nn_clear_session();   /* the same layer names and initializer sequence each time */
    gb_nn_set_seed(seed);
    gb_module *m = gb_sequential_new("mlp");
    if (depth == 3) {
        gb_sequential_add(m, gb_dense_new(256, &(gb_dense_options){.activation = GB_ACT_RELU}));
        gb_sequential_add(m, gb_dense_new(128, &(gb_dense_options){.activation = GB_ACT_RELU}));
    } else {
        gb_sequential_add(m, gb_dense_new(32, &(gb_dense_options){.activation = GB_ACT_RELU}));
        for (int i = 0; i < depth - 2; i++)
            gb_sequential_add(m, gb_dense_new(16, &(gb_dense_options){.activation = GB_ACT_TANH}));
    }
    gb_sequential_add(m, gb_dense_new(10, NULL));
    gb_module_build(m, GB_F32, 2, (int64_t[]){-1, 784});
    return m;
}

static gb_optimizer *optimizer(const config *c) {
    return !strcmp(c->optimizer, "adam") ? gb_adam(1e-3) : gb_sgd_momentum(0.05, 0.9, false);
}

typedef struct run {
    gb_module *model;
    gb_optimizer *opt;
    gb_tensor *first_grads[MAX_VARS];   /* kept: the first step's gradients */
    int nvars;
    double step_grad_diff;        /* distributed: the largest per-step gradient difference */
} run;

/* Largest |a - b| over matching tensors. */
static double max_diff(gb_tensor *const *a, gb_tensor *const *b, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        gb_scope_begin();
        double d = gb_item(gb_reduce_max(gb_abs(gb_sub(a[i], b[i])), GB_ALL_AXES, false));
        worst = d > worst ? d : worst;
        gb_scope_end();
    }
    return worst;
}

/* The tape's gradients of the batch's mean loss, averaged over the ranks
 * when distributed. */
static bool gradients(run *r, gb_tensor *const *b, gb_variable *const *vars, bool distributed,
                      gb_tensor **g) {
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_loss_sparse_categorical_crossentropy(
        b[1], gb_module_call(r->model, b[0], true), true, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    return distributed ? gb_dist_tape_gradient(tape, loss, vars, r->nvars, g)
                       : gb_tape_gradient_vars(tape, loss, vars, r->nvars, g);
}

/* `steps` steps over ds; distributed: averaged gradients, each compared
 * with the gradient of the whole global batch (from `whole`, the
 * unsharded batches) at the same weights — rounding apart, they are the
 * same whatever the weights have become. */
static bool train(run *r, gb_dataset *ds, gb_dataset *whole, int steps, bool distributed) {
    gb_variable *const *vars = gb_module_trainable_variables(r->model, &r->nvars);
    gb_iterator *it = gb_iterator_new(ds), *all = whole ? gb_iterator_new(whole) : NULL;
    gb_tensor *b[2], *wb[2], *g[MAX_VARS], *want[MAX_VARS];
    for (int s = 0; s < steps && it && gb_ok(); s++) {
        gb_scope_begin();
        if (!gb_iterator_next(it, b) || (all && !gb_iterator_next(all, wb))) {
            fprintf(stderr, "the data ended at step %d\n", s);
            gb_scope_end();
            break;
        }
        if (all && gradients(r, wb, vars, false, want) && gradients(r, b, vars, true, g)) {
            double d = max_diff(g, want, r->nvars);
            if (d > r->step_grad_diff) r->step_grad_diff = d;
        } else if (!all) {
            gradients(r, b, vars, distributed, g);
        }
        gb_optimizer_apply_gradients(r->opt, g, r->nvars, vars, r->nvars);
        for (int i = 0; s == 0 && i < r->nvars; i++) r->first_grads[i] = gb_keep(gb_mul_scalar(g[i], 1));
        gb_scope_end();
    }
    gb_iterator_free(it);
    gb_iterator_free(all);
    return gb_ok() && gb_optimizer_iterations(r->opt) == steps;
}

/* The same steps through gb_model_fit: one epoch of the data at batch
 * `batch` (per rank when distributed); its first gradients are not
 * looked at. */
static bool fit(run *r, const config *c, gb_tensor *x, gb_tensor *y, int64_t batch,
                bool distributed) {
    gb_model_compile(r->model, &(gb_compile_options){
                                   .optimizer = r->opt,
                                   .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true},
                                   .run_eagerly = c->eager});
    gb_fit_options o = gb_fit_defaults();
    o.batch_size = batch;
    o.seed = 42;
    o.verbose = 0;
    o.distributed = distributed;
    gb_history *h = gb_model_fit(r->model, x, y, &o);
    gb_history_free(h);
    r->nvars = 0;
    return h && gb_optimizer_iterations(r->opt) == c->steps;
}

/* The weights of a model, read now. */
static void values(gb_module *m, gb_tensor **out, int *n) {
    gb_variable *const *vars = gb_module_trainable_variables(m, n);
    for (int i = 0; i < *n; i++) out[i] = gb_variable_value(vars[i]);
}

/* Max over the ranks of (max - min over the ranks) of every weight. */
static double spread_over_ranks(gb_tensor *const *w, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        gb_scope_begin();
        gb_tensor *hi = gb_dist_allreduce(w[i], GB_DIST_MAX), *lo = gb_dist_allreduce(w[i], GB_DIST_MIN);
        double d = gb_item(gb_reduce_max(gb_sub(hi, lo), GB_ALL_AXES, false));
        worst = d > worst ? d : worst;
        gb_scope_end();
    }
    return worst;
}

static gb_dataset *data(gb_tensor *x, gb_tensor *y, int64_t batch, bool shard) {
    gb_dataset *ds = gb_dataset_from_tensor_slices(2, (gb_tensor *[]){x, y});
    ds = gb_dataset_shuffle(ds, gb_dim(x, 0), 42);
    if (shard) ds = gb_dataset_shard(ds, gb_dist_size(), gb_dist_rank());
    return gb_dataset_batch(ds, batch, false);
}

int main(int argc, char **argv) {
    if (!gb_dist_init(&argc, &argv)) {
        fprintf(stderr, "dist_equivalence: %s\n", gb_error_string());
        return 1;
    }
    config c = {.steps = 50, .global_batch = 128, .optimizer = "sgd", .tolerance = 1e-5, .depth = 3};
    if (!parse(argc, argv, &c)) {
        fprintf(stderr, "usage: mpirun -np N %s [--steps N] [--global-batch G (a multiple of N)] "
                        "[--optimizer sgd|adam] [--tolerance X] [--no-overlap] [--bucket-kb K]\n",
                argv[0]);
        return 2;
    }
    gb_dist_set_options(&(gb_dist_options){.no_overlap = c.no_overlap,
                                           .bucket_bytes = c.bucket_kb * 1024});
    int size = gb_dist_size(), rank = gb_dist_rank();
    gb_scope_begin();
    gb_mnist m;
    int64_t n = c.steps * c.global_batch;
    bool ok = gb_mnist_load(GB_FASHION_MNIST_DIR, GB_MNIST_CLASSES, &m);
    gb_tensor *x = ok ? gb_images_to_float(m.train_images, GB_IMAGES_FLAT) : NULL;
    x = gb_slice(x, (int64_t[]){0, 0}, 2, (int64_t[]){n, -1}, 2);
    gb_tensor *y = gb_slice(m.train_labels, (int64_t[]){0}, 1, (int64_t[]){n}, 1);

    run ref = {.model = mlp(42, c.depth), .opt = optimizer(&c)};
    run dp = {.model = mlp(rank == 0 ? 42 : 1000 + (uint64_t)rank, c.depth), .opt = optimizer(&c)};
    gb_tensor *w0[MAX_VARS];   /* rank 0's initial weights, which every rank starts from */
    int nv0 = 0;
    values(ref.model, w0, &nv0);
    for (int i = 0; i < nv0; i++) w0[i] = gb_mul_scalar(w0[i], 1);   /* a copy: reads share memory */
    if (c.fit) {   /* fit broadcasts rank 0's weights itself */
        ok = ok && fit(&ref, &c, x, y, c.global_batch, false) &&
             fit(&dp, &c, x, y, c.global_batch / size, true);
    } else {
        gb_dataset *ds = data(x, y, c.global_batch, false);
        ok = ok && train(&ref, ds, NULL, c.steps, false);
        gb_dataset_free(ds);
        ok = ok && (c.no_broadcast || gb_dist_broadcast_model(dp.model, NULL, 0));
        ds = data(x, y, c.global_batch / size, true);
        gb_dataset *whole = data(x, y, c.global_batch, false);
        ok = ok && train(&dp, ds, whole, c.steps, true);
        gb_dataset_free(ds);
        gb_dataset_free(whole);
    }

    gb_tensor *wr[MAX_VARS], *wd[MAX_VARS];
    int nv = 0;
    values(ref.model, wr, &nv);
    values(dp.model, wd, &nv);
    /* Variables this rank's training left where they started (none may). */
    int unmoved = 0;
    for (int i = 0; ok && i < nv; i++) unmoved += max_diff(&wd[i], &w0[i], 1) == 0;
    double unmoved_all = unmoved;
    ok = ok && gb_dist_allreduce_doubles(&unmoved_all, 1, GB_DIST_SUM);
    double diff[3] = {ok && !c.fit ? max_diff(ref.first_grads, dp.first_grads, nv) : 0,
                      ok ? max_diff(wr, wd, nv) : NAN, dp.step_grad_diff};
    ok = ok && gb_dist_allreduce_doubles(diff, 3, GB_DIST_MAX);
    double spread = ok ? spread_over_ranks(wd, nv) : NAN;
    ok = ok && gb_ok();
    if (!ok) fprintf(stderr, "dist_equivalence: rank %d: %s\n", rank, gb_error_string());
    /* Every step's gradient: rounding alone (float32 sums of ~0.05-sized
     * terms: 1e-6 is some 20 ulps of the largest). */
    bool pass = ok && spread == 0 && diff[1] <= c.tolerance && diff[2] <= 1e-6 && unmoved_all == 0;
    if (rank == 0 && ok)
        printf("equivalence%s: %d ranks x batch %lld vs 1 process x batch %lld, %d steps, %s, "
               "overlap %s: first gradient max abs diff %.3g, every step's gradient %.3g (at the "
               "same weights), weights max abs diff %.3g (tolerance %g), ranks' weights %s, "
               "%d trainable variables, %d left unmoved\n",
               c.fit ? c.eager ? " (fit, eager)" : " (fit, traced)" : "", size,
               (long long)(c.global_batch / size), (long long)c.global_batch, c.steps, c.optimizer,
               c.no_overlap ? "off" : "on", diff[0], diff[2], diff[1], c.tolerance,
               spread == 0 ? "identical" : "DIFFER", nv, (int)unmoved_all);
    gb_module_free(ref.model);
    gb_module_free(dp.model);
    gb_optimizer_free(ref.opt);
    gb_optimizer_free(dp.opt);
    gb_scope_end();
    if (!ok && size > 1) gb_dist_abort(1);
    gb_dist_finalize();
    return pass ? 0 : 1;
}
