/* lstm_bench.c — an LSTM's traced train step against PyTorch's.
 *
 *   bench lstm_step        tokens/s (batch * length per second) of one
 *                          train step as one traced function: LSTM(256,
 *                          return_sequences) over x [32, 64, 256], mean
 *                          squared error against a target, the tape's
 *                          gradients through time, Adam 1e-3; against
 *                          torch.nn.LSTM on the same workload
 *                          (bench/lstm_peer.py) in its strongest
 *                          configuration of this run: the faster of eager
 *                          and torch.jit.trace, at 1 and at 2 threads,
 *                          with the tuned allocator and passive OpenMP
 *                          waiting. glassbox too runs at 1 and at 2
 *                          threads (GB_NUM_THREADS, in a child process of
 *                          its own) and each side's better figure counts:
 *                          on a loaded machine one thread wins for both.
 *                          The four runs alternate (glassbox, PyTorch,
 *                          glassbox, PyTorch) so load drifts hit both.
 *   bench lstm_step_matmul_share   the share of the traced step's kernel
 *                          time in MatMul ops (the input projection, its
 *                          two gradients and the recurrent kernel's
 *                          gradient), from one profiled block of steps;
 *   bench lstm_step_recurrence_share   the share in BlockLSTM and
 *                          BlockLSTMGrad: the time loop, each step's
 *                          product with the recurrent kernel and the
 *                          cell's arithmetic fused. The rest is the loss
 *                          and the optimizer. (The share of all matrix
 *                          products, inside the loop too, is perf's to
 *                          tell: the profiler times ops, not BLAS calls.)
 */
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "fmnist_peer.h"
#include "glassbox.h"

enum { BATCH = 32, LENGTH = 64, FEATURES = 256, UNITS = 256, STEPS = 10, REPEATS = 3 };

typedef struct lstm_model {
    gb_module *lstm;
    gb_optimizer *opt;
} lstm_model;

static int step_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    lstm_model *m = user;
    gb_tape *tape = gb_tape_begin();
    gb_tensor *y = gb_module_call(m->lstm, in[0], true);
    out[0] = gb_loss_mean_squared_error(in[1], y, GB_REDUCTION_MEAN);
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m->lstm, &n);
    gb_tensor *grads[3];
    gb_tape_gradient_vars(tape, out[0], vars, n, grads);
    gb_optimizer_apply_gradients(m->opt, grads, n, vars, n);
    return 1;
}

static void run_steps(gb_function *f, gb_tensor *const *in, int steps) {
    for (int i = 0; i < steps; i++) {
        gb_tensor *loss;
        gb_scope_begin();
        gb_function_call(f, in, 2, NULL, 0, &loss);
        gb_scope_end();
    }
}

/* The profile's kernel time: all ops', the MatMul ops' and the recurrence's. */
typedef struct gemm_share {
    double all_us, gemm_us, loop_us;
} gemm_share;

static void on_profile(const gb_event *ev, void *user) {
    gemm_share *g = user;
    const gb_profile *p = ev->detail;
    for (size_t i = 0; i < p->count; i++) {
        const gb_profile_record *r = &p->records[i];
        if (r->kind != GB_PROFILE_OP) continue;
        g->all_us += r->dur_us;
        if (strcmp(r->op_type, "MatMul") == 0) g->gemm_us += r->dur_us;
        if (strncmp(r->op_type, "BlockLSTM", 9) == 0) g->loop_us += r->dur_us;
    }
}

/* tokens/s of this process' glassbox at its thread setting: the median
 * of REPEATS blocks of STEPS traced steps, after warm-up steps. */
static double our_rate(gb_function *f, gb_tensor *const *in) {
    run_steps(f, in, 3); /* trace, arenas, Adam's slots */
    double rates[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        double t0 = bench_now();
        run_steps(f, in, STEPS);
        rates[r] = (double)BATCH * LENGTH * STEPS / (bench_now() - t0);
    }
    return gb_ok() ? bench_median(rates, REPEATS) : -1;
}

/* The same figure from a child process at `threads` threads, or -1. */
static double child_rate(int threads) {
    char cmd[1024], out[256];
    snprintf(cmd, sizeof cmd, "GB_NUM_THREADS=%d /proc/%d/exe --rate-only", threads, (int)getpid());
    return bench_run_peer(cmd, out, sizeof out) ? bench_peer_value(out, "tokens_per_s") : -1;
}

/* PyTorch's tokens/s at `threads` threads (the faster of eager and jit), or -1. */
static double peer_rate(int threads) {
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd,
             "env " TUNED_MALLOC "OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 %s/bench/lstm_peer.py "
             "--steps %d --repeats %d --threads %d 2>/dev/null",
             GB_SOURCE_DIR, STEPS, REPEATS, threads);
    if (!bench_run_peer(cmd, out, sizeof out)) return -1;
    double r = bench_peer_value(out, "tokens_per_s");
    fprintf(stderr, "lstm_bench: PyTorch at %d thread(s): %.1f tokens/s (%s)\n", threads, r,
            strstr(out, "variant jit") ? "jit" : "eager");
    return r;
}

static double better(double a, double b) { return a > b ? a : b; }

int main(int argc, char **argv) {
    bool rate_only = argc > 1 && strcmp(argv[1], "--rate-only") == 0;
    gb_nn_set_seed(1);
    lstm_model m = {gb_lstm_new(UNITS, &(gb_rnn_options){.return_sequences = true}), gb_adam(1e-3)};
    gb_tensor *in[2] = {gb_random_normal(GB_F32, GB_SHAPE(BATCH, LENGTH, FEATURES), 0, 1, 7),
                        gb_random_normal(GB_F32, GB_SHAPE(BATCH, LENGTH, UNITS), 0, 1, 8)};
    gb_function *f = gb_function_new("lstm_train_step", step_fn, &(gb_function_options){.user = &m});
    double ours = our_rate(f, in);
    if (rate_only) {
        printf("tokens_per_s %.1f\n", ours);
        return ours > 0 ? 0 : 1;
    }
    if (ours <= 0) {
        fprintf(stderr, "lstm_bench: %s\n", gb_error_string());
        return 1;
    }
    fprintf(stderr, "lstm_bench: glassbox at its default threads: %.1f tokens/s\n", ours);
    double theirs = peer_rate(1);
    double one = child_rate(1);
    fprintf(stderr, "lstm_bench: glassbox at 1 thread: %.1f tokens/s\n", one);
    theirs = better(theirs, peer_rate(2));
    gemm_share g = {0};
    int id = gb_observer_add(on_profile, &g, GB_EVENT_PROFILE);
    gb_profiler_start(NULL);
    run_steps(f, in, STEPS);
    gb_profiler_stop();
    gb_observer_remove(id);
    bench_line_rate("lstm_step", better(ours, one), "pytorch", theirs, "tokens/s");
    if (g.all_us > 0) {
        bench_line("lstm_step_matmul_share", 100.0 * g.gemm_us / g.all_us, "", 0, "%", true);
        bench_line("lstm_step_recurrence_share", 100.0 * g.loop_us / g.all_us, "", 0, "%", true);
    }
    gb_function_free(f);
    gb_module_free(m.lstm);
    gb_optimizer_free(m.opt);
    return gb_ok() ? 0 : 1;
}
