/* health_ranks.c — the training-health checks of a data-parallel fit,
 * under mpirun -np 2 (tests/dist.cmake).
 *
 * Two ranks fit a small MLP on their halves of the data (traced, batch 16
 * each, checks every 2 steps). Rank 0 alone reports: rank 1 listens for
 * health events too and must see none. Rank 0's per-layer gradient norms
 * must be those of the averaged gradients: a reference fit in one process
 * on the same global batches (rows 32k..32k+31: rank r's batch k is the
 * r-th 16 of them) from the same weights gives the same figures, within
 * float32 rounding of a mean of two means against one mean. And each
 * check step has both ranks' own norms as scalars of the runs "rank_0"
 * and "rank_1", which differ from the averaged one. Prints "health_ranks:
 * ok" on rank 0, or what differs (exit 1).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"

enum { N = 128, D = 16, C = 4, B = 16, MAX = 1024 };

typedef struct seen {
    char tag[96], run[16];
    int64_t step;
    double value;
} seen;

static seen figures[MAX];
static int nfigures, nalerts;

static void on_event(const gb_event *ev, void *user) {
    (void)user;
    if (ev->kind == GB_EVENT_HEALTH) {
        nalerts++;
        return;
    }
    const gb_scalar_event *s = ev->detail;
    if (strncmp(s->tag, "health/", 7) || nfigures == MAX) return;
    seen *f = &figures[nfigures++];
    snprintf(f->tag, sizeof f->tag, "%s", s->tag);
    snprintf(f->run, sizeof f->run, "%s", s->run ? s->run : "");
    f->step = s->step, f->value = s->value;
}

static const seen *find(const seen *in, int n, const char *tag, const char *run, int64_t step) {
    for (int i = 0; i < n; i++)
        if (!strcmp(in[i].tag, tag) && !strcmp(in[i].run, run) && in[i].step == step) return &in[i];
    return NULL;
}

static gb_module *model(void) {
    gb_nn_clear_session();
    gb_module *m = gb_sequential_new("mlp");
    gb_sequential_add(m, gb_dense_new(8, &(gb_dense_options){.name = "hidden", .activation = GB_ACT_RELU, .seed = 1}));
    gb_sequential_add(m, gb_dense_new(C, &(gb_dense_options){.name = "out", .seed = 2}));
    gb_model_compile(m, &(gb_compile_options){
                            .optimizer = gb_sgd(0.1),
                            .loss = {GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}});
    return m;
}

static void fit(gb_module *m, const float *x, const int32_t *y, int64_t n, int64_t batch, bool dist) {
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 1, o.batch_size = batch, o.verbose = 0, o.shuffle = false, o.distributed = dist;
    gb_history *h = gb_model_fit(m, gb_from_f32(x, GB_SHAPE(n, D)), gb_tensor_from(GB_I32, y, GB_SHAPE(n)), &o);
    if (!h) fprintf(stderr, "health_ranks: fit: %s\n", gb_error_string());
    gb_history_free(h);
}

int main(int argc, char **argv) {
    gb_set_error_mode(GB_ERRORS_ABORT);
    gb_dist_init(&argc, &argv);
    gb_scope_begin();
    int rank = gb_dist_rank();
    static float x[N * D];
    static int32_t y[N];
    for (int i = 0; i < N * D; i++) x[i] = (float)sin(0.37 * i + 1.1);
    for (int i = 0; i < N; i++) y[i] = (i * 7) % C;
    gb_health_enable(&(gb_health_options){.interval = 2});
    gb_observer_add(on_event, NULL, GB_EVENT_HEALTH | GB_EVENT_SCALAR);
    gb_module *m = model();
    gb_optimizer *opt = gb_model_optimizer(m);
    fit(m, x, y, N, B, true);
    int mine = nfigures + nalerts;
    double counts[2] = {rank == 1 ? mine : 0, 0};
    gb_dist_allreduce_doubles(counts, 2, GB_DIST_SUM);
    gb_module_free(m);
    gb_optimizer_free(opt);
    if (rank != 0) {
        gb_scope_end();
        gb_dist_finalize();
        return 0;
    }
    int bad = 0;
    if (counts[0] != 0) printf("rank 1 saw %g health events\n", counts[0]), bad++;
    static seen dist[MAX];
    int ndist = nfigures;
    memcpy(dist, figures, sizeof dist);
    /* The reference: fit's global batch k is rows [2Bk, 2B(k+1)), rank r
     * taking the r-th B of them, so one process at batch 2B sees the same. */
    nfigures = 0;
    m = model();
    opt = gb_model_optimizer(m);
    fit(m, x, y, N, 2 * B, false);
    int checked = 0;
    for (int i = 0; i < nfigures; i++) {
        if (!strstr(figures[i].tag, "grad_norm")) continue;
        const seen *d = find(dist, ndist, figures[i].tag, "", figures[i].step);
        const seen *r0 = find(dist, ndist, figures[i].tag, "rank_0", figures[i].step);
        const seen *r1 = find(dist, ndist, figures[i].tag, "rank_1", figures[i].step);
        if (!d || !r0 || !r1) {
            printf("%s at step %lld: missing (averaged %d, rank_0 %d, rank_1 %d)\n", figures[i].tag,
                   (long long)figures[i].step, !!d, !!r0, !!r1);
            bad++;
            continue;
        }
        checked++;
        if (fabs(d->value - figures[i].value) > 1e-5 * fabs(figures[i].value))
            printf("%s at step %lld: averaged %.9g, one process %.9g\n", d->tag, (long long)d->step,
                   d->value, figures[i].value), bad++;
        if (fabs(r0->value - d->value) < 1e-6 * d->value || fabs(r1->value - d->value) < 1e-6 * d->value)
            printf("%s at step %lld: a rank's own norm equals the averaged one\n", d->tag,
                   (long long)d->step), bad++;
    }
    if (checked < 4) printf("only %d grad_norm figures compared\n", checked), bad++;
    printf(bad ? "health_ranks: %d failures\n" : "health_ranks: ok (%d figures)\n", bad ? bad : checked);
    gb_module_free(m);
    gb_optimizer_free(opt);
    gb_scope_end();
    gb_dist_finalize();
    return bad ? 1 : 0;
}
