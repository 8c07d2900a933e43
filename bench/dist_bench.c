/* dist_bench.c — data-parallel training on 2 ranks (MPI, shared memory)
 * against PyTorch DistributedDataParallel (gloo, 2 processes), same run.
 *
 *   allreduce_overlap  the share of a 2-rank step spent waiting for the
 *                      gradients' allreduce after backward: with overlap
 *                      (buckets leave while backward runs) and without
 *                      (everything sent after backward); ratio = the
 *                      share without / with (> 1: overlap waits less).
 *                      Measured on the Fashion-MNIST CNN: its gradients
 *                      are mostly the dense layer's, which backward
 *                      finishes before the convolutions' long backward,
 *                      so there is something to overlap with. (The MLP's
 *                      biggest gradient is its first layer's, finished
 *                      last: nothing is left to hide it behind; its shares
 *                      go to stderr.)
 *   ddp_mlp_step       samples/s of both ranks together training the
 *                      Fashion-MNIST MLP (784-256-128-10) at batch 64 per
 *                      rank with Adam, data in memory: glassbox (its hand
 *                      loop: gb_dist_tape_gradient, overlap on) against
 *                      bench/ddp_peer.py (DDP, gloo, one torch thread per
 *                      process, in its strongest allocator settings).
 *
 * Run without arguments, it starts itself under mpirun -np 2 (--child)
 * and reads the figures rank 0 prints. Runs of the two modes alternate so
 * the machine's load falls on both alike; medians of the repeats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fmnist_models.h"
#include "glassbox.h"

enum { IMAGES = 20000, BATCH = 64, STEPS = 300, CNN_STEPS = 40, REPEATS = 5 };

#define MPIRUN_FLAGS "--oversubscribe --bind-to none --mca btl self,vader"
#define TUNED_MALLOC                                                                         \
    "MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TOP_PAD_=268435456 "                             \
    "MALLOC_TRIM_THRESHOLD_=17179869184 OMP_WAIT_POLICY=PASSIVE "

/* ---- a rank ------------------------------------------------------------------------- */

typedef struct job {
    gb_module *model;
    gb_optimizer *opt;
    gb_tensor *x, *y;          /* the images in one shuffled order (the same on every rank) */
    int64_t step, steps_per_pass;
    int steps;                 /* per timed run */
} job;

/* One step on this rank's 64 of the next global batch. */
static bool step(job *j) {
    int64_t k = j->step++ % j->steps_per_pass, ranks = gb_dist_size();
    int64_t first = (k * ranks + gb_dist_rank()) * BATCH;
    gb_scope_begin();
    int64_t begin[4] = {first}, size[4] = {BATCH, -1, -1, -1};
    gb_tensor *x = gb_slice(j->x, begin, gb_rank(j->x), size, gb_rank(j->x));
    gb_tensor *y = gb_slice(j->y, (int64_t[]){first}, 1, (int64_t[]){BATCH}, 1);
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = gb_loss_sparse_categorical_crossentropy(y, gb_module_call(j->model, x, true),
                                                              true, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(j->model, &n);
    gb_tensor *g[8];
    gb_dist_tape_gradient(tape, loss, vars, n, g);
    gb_optimizer_apply_gradients(j->opt, g, n, vars, n);
    gb_scope_end();
    return gb_ok();
}

typedef struct figures {
    double rate, share;
} figures;

/* j->steps steps in one mode: both ranks' samples/s and the wait share
 * (the ranks' mean). */
static figures timed(job *j, bool overlap) {
    gb_dist_set_options(&(gb_dist_options){.no_overlap = !overlap});
    gb_dist_barrier();
    gb_dist_reset_stats();
    double t0 = bench_now();
    for (int s = 0; s < j->steps && step(j); s++) {}
    gb_dist_barrier();
    double secs = bench_now() - t0;
    gb_dist_stats st = gb_dist_get_stats();
    double share = st.total_allreduce_ms / st.total_step_ms;
    gb_dist_allreduce_doubles(&share, 1, GB_DIST_MEAN);
    return (figures){(double)j->steps * BATCH * gb_dist_size() / secs, share};
}

static gb_tensor *shuffled_rows(gb_tensor *t, const int64_t *perm, int64_t n) {
    gb_tensor *idx = gb_tensor_from(GB_I64, perm, 1, &n);
    return gb_gather(t, idx, 0);
}

static int child(int argc, char **argv) {
    if (!gb_dist_init(&argc, &argv)) return 1;
    bool cnn = argc > 2 && !strcmp(argv[2], "cnn");
    gb_mnist m;
    if (!gb_mnist_load(GB_FASHION_MNIST_DIR, GB_MNIST_CLASSES, &m)) return 1;
    gb_nn_set_seed(42);
    job j = {.model = fmnist_model(cnn), .opt = gb_adam(1e-3),
             .steps_per_pass = IMAGES / (BATCH * gb_dist_size()),
             .steps = cnn ? CNN_STEPS : STEPS};
    gb_dist_broadcast_model(j.model, NULL, 0);
    int64_t *perm = malloc(IMAGES * sizeof *perm);
    uint64_t s = 42;
    for (int64_t i = 0; i < IMAGES; i++) perm[i] = i;
    for (int64_t i = IMAGES - 1; i > 0; i--) {   /* Fisher-Yates, an LCG: every rank alike */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int64_t k = (int64_t)((s >> 33) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[k], perm[k] = t;
    }
    gb_tensor *x = gb_images_to_float(m.train_images, cnn ? GB_IMAGES_NHWC : GB_IMAGES_FLAT);
    int64_t begin[4] = {0}, size[4] = {IMAGES, -1, -1, -1};
    j.x = shuffled_rows(gb_slice(x, begin, gb_rank(x), size, gb_rank(x)), perm, IMAGES);
    j.y = shuffled_rows(gb_slice(m.train_labels, (int64_t[]){0}, 1, (int64_t[]){IMAGES}, 1), perm,
                        IMAGES);
    free(perm);
    for (int w = 0; w < j.steps / 5; w++) step(&j);   /* warm up */
    double rate[2][REPEATS], share[2][REPEATS];
    for (int r = 0; r < REPEATS && gb_ok(); r++)
        for (int mode = 0; mode < 2; mode++) {
            figures f = timed(&j, mode == 0);
            rate[mode][r] = f.rate, share[mode][r] = f.share;
        }
    if (!gb_ok()) {
        fprintf(stderr, "dist_bench: rank %d: %s\n", gb_dist_rank(), gb_error_string());
        gb_dist_abort(1);
    }
    if (gb_dist_rank() == 0) {
        printf("overlap_share %.4f\nno_overlap_share %.4f\n", bench_median(share[0], REPEATS),
               bench_median(share[1], REPEATS));
        printf("samples_per_s %.1f\nsamples_per_s_no_overlap %.1f\n",
               bench_median(rate[0], REPEATS), bench_median(rate[1], REPEATS));
    }
    gb_module_free(j.model);
    gb_optimizer_free(j.opt);
    gb_dist_finalize();
    return 0;
}

/* ---- the benchmark --------------------------------------------------------------------- */

/* Runs the ranks of `model` under mpirun -np 2; their figures into out. */
static bool ranks(const char *model, char *out, size_t n) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun " MPIRUN_FLAGS
             " -np 2 %s/bench/dist_bench --child %s 2>&1",
             GB_BUILD_DIR, model);
    if (bench_run_peer(cmd, out, n)) return true;
    fprintf(stderr, "dist_bench: the glassbox ranks (%s) failed:\n%s\n", model, out);
    return false;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--child")) return child(argc, argv);
    if (!gb_dist_available()) {
        fprintf(stderr, "dist_bench: built without MPI; nothing to measure\n");
        return 0;
    }
    char ours[4096], cnn[4096], theirs[4096], cmd[1024];
    if (!ranks("mlp", ours, sizeof ours) || !ranks("cnn", cnn, sizeof cnn)) return 1;
    snprintf(cmd, sizeof cmd,
             "env " TUNED_MALLOC "/usr/bin/python3 %s/bench/ddp_peer.py --images %d --steps %d "
             "--repeats %d 2>/dev/null",
             GB_SOURCE_DIR, IMAGES, STEPS, REPEATS);
    double torch = bench_run_peer(cmd, theirs, sizeof theirs) ? bench_peer_value(theirs, "samples_per_s")
                                                              : -1;
    double with = bench_peer_value(cnn, "overlap_share");
    double without = bench_peer_value(cnn, "no_overlap_share");
    fprintf(stderr,
            "dist: MLP samples/s %.0f with overlap, %.0f without (wait share %.3f, %.3f); "
            "CNN samples/s %.0f with overlap, %.0f without; PyTorch DDP MLP %.0f\n",
            bench_peer_value(ours, "samples_per_s"), bench_peer_value(ours, "samples_per_s_no_overlap"),
            bench_peer_value(ours, "overlap_share"), bench_peer_value(ours, "no_overlap_share"),
            bench_peer_value(cnn, "samples_per_s"), bench_peer_value(cnn, "samples_per_s_no_overlap"),
            torch);
    printf("bench allreduce_overlap glassbox=%.4g no_overlap=%.4g ratio=%.2f unit=share\n", with,
           without, with > 0 ? without / with : 0);
    fflush(stdout);
    bench_line_rate("ddp_mlp_step", bench_peer_value(ours, "samples_per_s"), "pytorch", torch,
                    "samples/s");
    return 0;
}
