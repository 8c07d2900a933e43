/* nan_hunt.c — a model that goes NaN the way real ones do, and how to find why.
 *
 * A small MLP on Fashion-MNIST with a hand-written cross-entropy,
 * -sum(onehot * log(softmax(logits))), trained with a learning-rate
 * warm-up that never stops (x1.04 a step). Once the rate is too high the
 * logits grow until softmax underflows to an exact 0,
 * log(0) is -Inf, 0 * -Inf is NaN, and from then on the loss curve is NaN.
 *
 *   nan_hunt                          the loss turns NaN; you learn only when
 *   nan_hunt --check-numerics         stops at the first op that made a NaN/Inf
 *                                     and says which, where, and from what inputs
 *   nan_hunt --check-numerics=record  keeps training; with --db every alert is
 *                                     stored and the dashboard's Numerics page
 *                                     lists them, the first one first
 *   ... --traced                      the step runs as a traced gb_function:
 *                                     each alert names the graph node, and the
 *                                     Numerics page links to it on the Graphs page
 *   nan_hunt --fit                    the same model through compile/fit with
 *                                     TerminateOnNaN: training stops at the
 *                                     first batch whose loss is NaN
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"
#include "gb_summary.h"
#include "glassbox.h"
#include "run_store.h"

typedef struct options {
    int steps;
    double lr;
    const char *db, *run, *data_dir;
    const char *check;        /* NULL off, "raise" or "record" */
    bool traced, fit;
} options;

/* Reads the flags into o (defaults already set). Returns EXAMPLE_RUN, or
 * the exit code after --help (0) or a mistake (2). */
static int parse(int argc, char **argv, options *o) {
    const example_flag flags[] = {
        {"--check-numerics", "raise|record", "check every op's outputs: stop at the first NaN/Inf "
         "(raise), or keep going and store every alert (record)", EXAMPLE_OPTIONAL, &o->check},
        {"--steps", "N", "training steps", EXAMPLE_INT, &o->steps},
        {"--lr", "X", "the learning rate the warm-up starts from", EXAMPLE_DOUBLE, &o->lr},
        {"--db", "FILE", "record the run (and the alerts) into this store", EXAMPLE_STRING, &o->db},
        {"--run", "NAME", "the run to write or continue (default: a new run 'nan_hunt')", EXAMPLE_STRING, &o->run},
        {"--data", "DIR", "the Fashion-MNIST IDX files", EXAMPLE_STRING, &o->data_dir},
        {"--traced", NULL, "run the train step as a traced function", EXAMPLE_SWITCH, &o->traced},
        {"--fit", NULL, "train through compile/fit with TerminateOnNaN", EXAMPLE_SWITCH, &o->fit},
    };
    const example_program p = {"nan_hunt", "A model whose loss turns NaN, and how to find the op that did it.",
                               flags, sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (o->check && !*o->check) o->check = "raise";   /* the bare flag */
    if (o->check && strcmp(o->check, "raise") && strcmp(o->check, "record"))
        return example_usage_error(&p, "--check-numerics is raise or record, not '%s'", o->check);
    if (o->steps < 1 || !(o->lr > 0)) return example_usage_error(&p, "--steps must be >= 1 and --lr > 0");
    return EXAMPLE_RUN;
}

/* 0 off, 1 raise, 2 record. */
static int check_mode(const options *o) { return !o->check ? 0 : !strcmp(o->check, "raise") ? 1 : 2; }

/* The cross-entropy people write by hand, per sample: fine until a
 * probability is 0. */
static gb_tensor *naive_per_sample(gb_tensor *labels, gb_tensor *logits, void *user) {
    (void)user;
    gb_name_scope_push("naive_cross_entropy");
    gb_tensor *probs = gb_softmax(logits, -1);
    gb_tensor *onehot = gb_one_hot(labels, GB_MNIST_CLASSES, 1.0, 0.0, GB_F32);
    gb_tensor *ll = gb_neg(gb_reduce_sum(gb_mul(onehot, gb_log(probs)), GB_AXES(1), false));
    gb_name_scope_pop();
    return ll;
}

static gb_tensor *naive_cross_entropy(gb_tensor *labels, gb_tensor *logits) {
    return gb_reduce_mean(naive_per_sample(labels, logits, NULL), GB_ALL_AXES, false);
}

typedef struct model {
    gb_module *net;
    gb_tensor *x, *y;    /* 2048 training images and labels */
} model;

static bool setup(const options *o, model *m) {
    gb_mnist data;
    if (!gb_mnist_load(o->data_dir, GB_MNIST_CLASSES, &data)) return false;
    gb_tensor *images = gb_images_to_float(data.train_images, GB_IMAGES_FLAT); /* [N,784] */
    m->x = gb_slice(images, GB_LIST(0, 0), GB_LIST(2048, -1));
    m->y = gb_slice(data.train_labels, GB_LIST(0), GB_LIST(2048));
    gb_nn_set_seed(7);
    m->net = gb_sequential_new("model");
    gb_sequential_add(m->net, gb_dense_new(64, &(gb_dense_options){.activation = GB_ACT_RELU}));
    gb_sequential_add(m->net, gb_dense_new(GB_MNIST_CLASSES, NULL));
    return gb_ok();
}

/* Forward, loss, gradients and the SGD update on a batch; the loss. */
static gb_tensor *update(model *m, gb_optimizer *opt, gb_tensor *x, gb_tensor *y) {
    gb_tape *tape = gb_tape_begin();
    gb_tensor *loss = naive_cross_entropy(y, gb_module_call(m->net, x, true));
    gb_tape_end(tape);
    int n = 0;
    gb_variable *const *vars = gb_module_trainable_variables(m->net, &n);
    gb_tensor *grads[8];
    gb_tape_gradient_vars(tape, loss, vars, n, grads);
    gb_optimizer_apply_gradients(opt, grads, n, vars, n);
    return loss;
}

typedef struct stepper {
    model *m;
    gb_optimizer *opt;
    gb_function *traced;      /* with --traced: update() traced into a graph */
} stepper;

static int traced_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    stepper *s = user;
    out[0] = update(s->m, s->opt, in[0], in[1]);
    return out[0] ? 1 : -1;
}

/* One SGD step on batch `step`; returns the loss (NaN included) or NAN
 * with gb_ok() false when a check stopped it. */
static double train_step(stepper *s, int step) {
    int64_t first = (step * 64) % 2048;
    gb_tensor *x = gb_slice(s->m->x, GB_LIST(first, 0), GB_LIST(64, -1));
    gb_tensor *y = gb_slice(s->m->y, GB_LIST(first), GB_LIST(64));
    gb_tensor *loss = NULL;
    if (s->traced) gb_function_call(s->traced, (gb_tensor *[]){x, y}, 2, NULL, 0, &loss);
    else loss = update(s->m, s->opt, x, y);
    return gb_ok() && loss ? gb_item(loss) : NAN;
}

/* ---- the same through fit ----------------------------------------------------------- */

/* The warm-up that forgot to stop, as a LambdaCallback: x1.04 a step. */
static void warm_up(gb_train_state *s, int64_t batch, gb_logs *logs, void *user) {
    (void)batch, (void)logs;
    double lr0 = *(const double *)user;
    gb_optimizer_set_learning_rate(s->optimizer, lr0 * pow(1.04, (double)gb_optimizer_iterations(s->optimizer)));
}

static int run_fit(const options *o, model *m) {
    gb_optimizer *opt = gb_sgd(o->lr);
    gb_model_compile(m->net, &(gb_compile_options){
                                 .optimizer = opt,
                                 .loss = {GB_LOSS_CUSTOM, .fn = naive_per_sample,
                                          .name = "naive_cross_entropy"}});
    gb_callback *cbs[2] = {gb_lambda(&(gb_lambda_callback){.on_batch_begin = warm_up,
                                                           .user = (void *)&o->lr}),
                           gb_terminate_on_nan()};
    gb_fit_options f = gb_fit_defaults();
    f.epochs = (o->steps + 31) / 32; /* 2048 images, batches of 64 */
    f.batch_size = 64;
    f.shuffle = false;
    f.verbose = 2;
    f.callbacks = cbs;
    f.ncallbacks = 2;
    gb_history *h = gb_model_fit(m->net, m->x, m->y, &f);
    int code = h ? 0 : 1;
    if (h)
        printf("fit stopped after %d of %d epochs, at step %lld; the last loss: %g\n",
               gb_history_epochs(h), f.epochs, (long long)gb_optimizer_iterations(opt),
               gb_history_value(h, "loss", gb_history_epochs(h) - 1));
    else
        fprintf(stderr, "nan_hunt: %s\n", gb_error_string());
    gb_history_free(h);
    for (int i = 0; i < 2; i++) gb_callback_free(cbs[i]);
    gb_optimizer_free(opt);
    return code;
}

int main(int argc, char **argv) {
    options o = {.steps = 150, .lr = 0.2, .data_dir = GB_FASHION_MNIST_DIR};
    int rc = parse(argc, argv, &o);
    if (rc != EXAMPLE_RUN) return rc;
    gb_summary_writer *writer = NULL;
    if (o.db) {
        if (!example_open_writer("nan_hunt", o.db, o.run, &writer)) return 1;
        gb_summary_set_default(writer);
        gb_summary_hparam_num(NULL, "learning_rate", o.lr);
        gb_summary_hparam_str(NULL, "check_numerics", (const char *[]){"off", "raise", "record"}[check_mode(&o)]);
    }
    gb_scope_begin();
    model m = {0};
    gb_optimizer *opt = gb_sgd(o.lr);
    int code = 0, first_nan = -1;
    if (!setup(&o, &m)) {
        fprintf(stderr, "nan_hunt: %s\n", gb_error_string());
        code = 1;
    }
    if (code == 0 && o.fit) code = run_fit(&o, &m);
    if (o.fit) o.steps = 0; /* fit did the training */
    stepper st = {.m = &m, .opt = opt};
    if (code == 0 && o.traced)
        st.traced = gb_function_new("train_step", traced_body, &(gb_function_options){.user = &st});
    if (check_mode(&o) == 1) gb_enable_check_numerics();
    if (check_mode(&o) == 2) gb_enable_check_numerics_mode(GB_NUMERICS_RECORD, 1000);
    for (int step = 0; code == 0 && step < o.steps; step++) {
        gb_set_step(step);
        double lr = o.lr * pow(1.04, step); /* the warm-up that forgot to stop */
        gb_optimizer_set_learning_rate(opt, lr);
        gb_scope_begin();
        double loss = train_step(&st, step);
        gb_scope_end();
        if (!gb_ok()) {
            printf("step %d: stopped by the numerics check:\n  %s\n", step, gb_error_string());
            code = 3;
            break;
        }
        if (writer) {
            gb_summary_scalar(NULL, "train/loss", loss, step);
            gb_summary_scalar(NULL, "learning_rate", lr, step);
        }
        if (isnan(loss) && first_nan < 0) first_nan = step;
        if (step % 20 == 0 || step == first_nan)
            printf("step %d: learning rate %.3g, loss %g\n", step, lr, loss);
    }
    if (code == 0 && first_nan >= 0 && check_mode(&o) == 0)
        printf("the loss became NaN at step %d; rerun with --check-numerics to find the op "
               "that made it\n", first_nan);
    if (check_mode(&o) == 2)
        printf("bad outputs seen: %lld; the first %lld are stored as alerts\n",
               (long long)gb_numerics_alert_count(),
               (long long)(gb_numerics_alert_count() < 1000 ? gb_numerics_alert_count() : 1000));
    gb_disable_check_numerics();
    gb_function_free(st.traced);
    gb_optimizer_free(opt);
    gb_module_free(m.net);
    gb_scope_end();
    if (writer) gb_summary_writer_close(writer);
    return code;
}
