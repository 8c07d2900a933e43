/* char_lm.c — a character-level transformer language model trained on
 * Debian's fortunes, showing what it learns to write while it trains.
 *
 * The corpus is every fortune file of /usr/share/games/fortunes (package
 * `fortunes`), read as records between "%" lines; every tenth fortune is
 * held out for validation, so both splits hold every category. Characters
 * are their ASCII codes (anything else is '?'), 128 ids. The model is a
 * GPT-style decoder: token Embedding + PositionEmbedding, --layers
 * pre-norm blocks (LayerNorm, causal MultiHeadAttention with 4 heads,
 * residual; LayerNorm, Dense 4*d GELU, Dense d, residual), a final
 * LayerNorm and a Dense to the 128 logits of the next character. It
 * trains with compile / fit (AdamW, biases and norms without weight
 * decay, cosine decay with warmup, global gradient clipping) on random
 * windows of the training text, each epoch a fixed number of steps.
 *
 * With --db the run holds, beside fit's losses and learning rate:
 * "perplexity" (exp of the loss, per batch and epoch, and val_), the
 * gradients' global norm per batch, one attention image per head and
 * layer of a fixed window every epoch, and every epoch a text summary of
 * 300 characters sampled from a fixed prompt — the Text page shows the
 * model learning to write.
 *
 * Sampling is a traced function, the loop a gb_while_loop: the prompt's
 * characters fill a buffer, each iteration runs the model on the last
 * `context` characters and draws the next one (Gumbel-max over the
 * logits / temperature; temperature <= 0 takes the likeliest). Its noise
 * has a fixed seed and, as any random op of a traced function, is drawn
 * anew at each call: every epoch's sample is a new draw, and a SavedModel
 * just loaded repeats, on its first call, the first text the program
 * wrote for the same prompt (as `glassbox saved-model run` does). The same
 * function is saved (--saved-model DIR) as the signature "generate"
 * (prompt [1] string, temperature float32, length int32 -> text [1]) and,
 * at temperature 0.8 and 300 characters, "serving_default" (prompt alone),
 * so with no model code:
 *
 *   echo 'The meaning of life is' > prompt.txt
 *   glassbox saved-model run --dir char_lm_model --input prompt=prompt.txt
 *
 *   char_lm [--epochs N] [--steps N] [--batch N] [--layers N] [--db FILE]
 *           [--serve PORT] [--saved-model DIR] ...
 */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flags.h"
#include "gb_board.h"
#include "gb_summary_callback.h"
#include "glassbox.h"
#include "run_store.h"

enum {
    VOCAB = 128,          /* ASCII */
    HEADS = 4,
    PROMPT_MAX = 1024,    /* characters of a prompt kept (its first ones) */
    LENGTH_MAX = 4096,    /* characters one call generates at most */
    SAMPLE_CHARS = 300,   /* the text summary's */
};
static const char SAMPLE_PROMPT[] = "The ";

typedef struct config {
    int epochs, layers, verbose, serve_port;
    int64_t steps, batch, context, d_model, val_windows;
    double lr, weight_decay, clipnorm;
    uint64_t seed;
    const char *dir, *db, *run, *saved_model;
    bool keep_serving;
} config;

/* ---- the corpus ------------------------------------------------------------------------ */

typedef struct text {
    char *s;
    int64_t n, cap;
} text;

static bool text_add(text *t, const char *p, int64_t len) {
    if (t->n + len + 1 > t->cap) {
        int64_t cap = t->cap ? t->cap * 2 : 1 << 20;
        while (cap < t->n + len + 1) cap *= 2;
        char *s = realloc(t->s, (size_t)cap);
        if (!s) return false;
        t->s = s, t->cap = cap;
    }
    memcpy(t->s + t->n, p, (size_t)len);
    t->n += len;
    t->s[t->n] = '\0';
    return true;
}

/* A fortune file's name: no dot (the .dat indexes and .u8 links have one). */
static int is_fortune_file(const struct dirent *e) { return e->d_name[0] != '.' && !strchr(e->d_name, '.'); }

/* Splits one file's text into fortunes (the lines between "%" lines);
 * every tenth fortune of the whole corpus (counted in *k) goes to val.
 * Each fortune ends with a blank line, as the fortune program prints them. */
static bool split_records(const char *data, size_t len, int64_t *k, text *train, text *val) {
    const char *end = data + len, *rec = data;
    for (const char *line = data; line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line)), *next = nl ? nl + 1 : end;
        bool last = next == end, separator = (nl ? nl : end) - line == 1 && line[0] == '%';
        if (separator || last) {
            const char *stop = separator ? line : end;
            if (stop > rec) {
                text *to = (*k)++ % 10 == 9 ? val : train;
                if (!text_add(to, rec, stop - rec) || !text_add(to, "\n", 1)) return false;
            }
            rec = next;
        }
        line = next;
    }
    return true;
}

/* Every fortune file of dir, split; files in name order, so runs agree. */
static bool read_corpus(const char *dir, int64_t context, text *train, text *val) {
    struct dirent **names;
    int n = scandir(dir, &names, is_fortune_file, alphasort);
    if (n < 0) {
        fprintf(stderr, "char_lm: cannot read %s (install the Debian package fortunes)\n", dir);
        return false;
    }
    bool ok = true;
    int64_t k = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        struct stat st;
        FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
        char *data = f ? malloc((size_t)st.st_size + 1) : NULL;
        if (data && fread(data, 1, (size_t)st.st_size, f) == (size_t)st.st_size)
            ok = ok && split_records(data, (size_t)st.st_size, &k, train, val);
        free(data);
        if (f) fclose(f);
        free(names[i]);
    }
    free(names);
    if (ok && (train->n < 2 * context + 2 || val->n < context + 2)) {
        fprintf(stderr, "char_lm: %s holds too little text (%lld characters to train on, %lld held out) "
                "for windows of %lld\n", dir, (long long)train->n, (long long)val->n, (long long)context);
        return false;
    }
    return ok;
}

/* The id of a byte: its ASCII code for printable ones and newlines; other
 * control bytes (tabs, the backspaces of underlined words) are spaces,
 * anything beyond ASCII is '?'. */
static int32_t char_id(unsigned char c) {
    return c == '\n' ? '\n' : c < 32 || c == 127 ? ' ' : c < VOCAB ? (int32_t)c : '?';
}

/* 0 for the ids the corpus can hold, -1e30 for the rest: added to the
 * logits, so sampling never writes a control byte. */
static gb_tensor *writable_bias(void) {
    float b[VOCAB];
    for (int i = 0; i < VOCAB; i++) b[i] = char_id((unsigned char)i) == i ? 0.0f : -1e30f;
    return gb_tensor_from(GB_F32, b, 1, (int64_t[]){VOCAB});
}

/* n windows of context + 1 characters at offsets drawn from seed: inputs
 * x [n, context] and the next characters y [n, context], int32. */
static void windows(const text *t, int64_t n, int64_t context, uint64_t seed, gb_tensor **x, gb_tensor **y) {
    int32_t *xs = malloc((size_t)(n * context) * sizeof *xs), *ys = malloc((size_t)(n * context) * sizeof *ys);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;   /* the same windows everywhere */
        int64_t off = (int64_t)((s >> 11) % (uint64_t)(t->n - context - 1));
        for (int64_t j = 0; j < context; j++) {
            xs[i * context + j] = char_id((unsigned char)t->s[off + j]);
            ys[i * context + j] = char_id((unsigned char)t->s[off + j + 1]);
        }
    }
    *x = gb_tensor_from(GB_I32, xs, 2, (int64_t[]){n, context});
    *y = gb_tensor_from(GB_I32, ys, 2, (int64_t[]){n, context});
    free(xs), free(ys);
}

/* ---- the model ------------------------------------------------------------------------- */

typedef struct lm {
    gb_module *model;                 /* tokens [B, context] -> logits [B, context, VOCAB] */
    gb_module *probe;                 /* the same layers -> each block's attention weights */
    int64_t context;
} lm;

static gb_sym *add(gb_sym *a, gb_sym *b, const char *name) {
    return gb_apply_n(gb_add_layer_new(name), 2, (gb_sym *[]){a, b});
}

static bool build_model(const config *c, lm *out) {
    char name[64];
    gb_sym *tokens = gb_input(GB_I32, 1, (int64_t[]){c->context}, "tokens");
    gb_sym *e = gb_apply(gb_embedding_new(VOCAB, c->d_model, &(gb_embedding_options){.name = "token_embedding"}),
                         tokens);
    gb_sym *h = add(e, gb_apply(gb_position_embedding_new(c->context, &(gb_position_embedding_options){
                                    .name = "position_embedding"}), e), "embed");
    gb_sym *scores[16];
    for (int l = 0; l < c->layers; l++) {
        snprintf(name, sizeof name, "block%d_norm1", l);
        gb_sym *a = gb_apply(gb_layer_norm_new(&(gb_layer_norm_options){.name = name, .epsilon = 1e-5}), h);
        snprintf(name, sizeof name, "block%d_attention", l);
        gb_sym *att = gb_apply(gb_multi_head_attention_new(HEADS, c->d_model / HEADS, &(gb_mha_options){
                                   .name = name, .use_causal_mask = true, .return_attention_scores = true}),
                               a);
        scores[l] = gb_sym_output(att, 1);
        snprintf(name, sizeof name, "block%d_residual1", l);
        h = add(h, gb_sym_output(att, 0), name);
        snprintf(name, sizeof name, "block%d_norm2", l);
        gb_sym *f = gb_apply(gb_layer_norm_new(&(gb_layer_norm_options){.name = name, .epsilon = 1e-5}), h);
        snprintf(name, sizeof name, "block%d_mlp_up", l);
        f = gb_apply(gb_dense_new(4 * c->d_model, &(gb_dense_options){.name = name, .activation = GB_ACT_GELU}), f);
        snprintf(name, sizeof name, "block%d_mlp_down", l);
        f = gb_apply(gb_dense_new(c->d_model, &(gb_dense_options){.name = name}), f);
        snprintf(name, sizeof name, "block%d_residual2", l);
        h = add(h, f, name);
    }
    h = gb_apply(gb_layer_norm_new(&(gb_layer_norm_options){.name = "final_norm", .epsilon = 1e-5}), h);
    gb_sym *logits = gb_apply(gb_dense_new(VOCAB, &(gb_dense_options){.name = "logits"}), h);
    out->model = gb_functional_new(1, &tokens, 1, &logits, "char_lm");
    out->probe = gb_functional_new(1, &tokens, c->layers, scores, "char_lm_attention");
    out->context = c->context;
    return out->model && out->probe;
}

/* ---- sampling: a traced gb_while_loop --------------------------------------------------- */

enum { V_I, V_BUF, V_N, V_LENGTH, V_TEMP, V_NOISE, NVARS };
enum { BUF = PROMPT_MAX + 1 + LENGTH_MAX };

static int more_to_write(void *user, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)user, (void)n;
    out[0] = gb_less(v[V_I], v[V_LENGTH]);
    return 1;
}

/* One character: the model on the last `context` ones of the buffer, the
 * next one drawn from the logits at the last filled position. */
static int write_one(void *user, gb_tensor *const *v, int n, gb_tensor **out) {
    (void)n;
    const lm *m = user;
    int64_t ctx = m->context;
    gb_tensor *filled = v[V_N];                                          /* int32 scalar */
    gb_tensor *start = gb_maximum(gb_sub(filled, gb_scalar(GB_I32, (double)ctx)), gb_scalar(GB_I32, 0));
    gb_tensor *window = gb_gather(v[V_BUF], gb_add(gb_arange(GB_I32, 0, (double)ctx, 1), start), 1);
    gb_tensor *logits = gb_module_call(m->model, window, false);         /* [1, ctx, VOCAB] */
    gb_tensor *last = gb_sub(gb_minimum(filled, gb_scalar(GB_I32, (double)ctx)), gb_scalar(GB_I32, 1));
    gb_tensor *row = gb_add(gb_reshape(gb_gather(logits, last, 1), 1, (int64_t[]){VOCAB}), writable_bias());
    gb_tensor *t = v[V_TEMP];
    gb_tensor *warm = gb_greater(t, gb_scalar(GB_F32, 0));
    gb_tensor *noisy = gb_add(gb_div(row, gb_where(warm, t, gb_scalar(GB_F32, 1))), gb_gather(v[V_NOISE], v[V_I], 0));
    gb_tensor *next = gb_cast(gb_argmax(gb_reshape(gb_where(warm, noisy, row), 2, (int64_t[]){1, VOCAB}), 1),
                              GB_I32);                                   /* [1] */
    gb_tensor *here = gb_equal(gb_arange(GB_I32, 0, BUF, 1), filled);
    out[V_I] = gb_add(v[V_I], gb_scalar(GB_I32, 1));
    out[V_BUF] = gb_where(here, next, v[V_BUF]);
    out[V_N] = gb_add(filled, gb_scalar(GB_I32, 1));
    for (int k = V_LENGTH; k < NVARS; k++) out[k] = v[k];
    return NVARS;
}

/* generate(prompt [1], temperature, length) -> text [1]: the prompt as the
 * model saw it (its first PROMPT_MAX characters, '?' for non-ASCII) and
 * what it wrote. */
static int generate_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)st, (void)nst, (void)nin;
    gb_tensor *cp, *splits;
    if (!gb_unicode_decode(in[0], GB_UNICODE_REPLACE, &cp, &splits)) return -1;
    cp = gb_where(gb_less(cp, gb_scalar(GB_I32, VOCAB)), cp, gb_scalar(GB_I32, '?'));
    /* A newline first, as every fortune follows one: an empty prompt has a
     * position to predict from. */
    gb_tensor *values = gb_concat((gb_tensor *[]){gb_tensor_from(GB_I32, (int32_t[]){'\n'}, 1, (int64_t[]){1}), cp},
                                  2, 0);
    gb_tensor *row = gb_ragged_to_tensor(values, gb_add(splits, gb_tensor_from(GB_I64, (int64_t[]){0, 1}, 1,
                                                                                (int64_t[]){2})),
                                         PROMPT_MAX + 1);               /* [1, PROMPT_MAX + 1] */
    gb_tensor *buf = gb_concat((gb_tensor *[]){gb_cast(row, GB_I32), gb_zeros(GB_I32, 2, (int64_t[]){1, LENGTH_MAX})},
                               2, 1);
    gb_tensor *filled = gb_minimum(gb_cast(gb_gather(splits, gb_scalar(GB_I64, 1), 0), GB_I32),
                                   gb_scalar(GB_I32, PROMPT_MAX));
    filled = gb_add(filled, gb_scalar(GB_I32, 1));
    gb_tensor *length = gb_maximum(gb_minimum(in[2], gb_scalar(GB_I32, LENGTH_MAX)), gb_scalar(GB_I32, 0));
    gb_tensor *noise = gb_neg(gb_log(gb_neg(gb_log(gb_random_uniform(GB_F32, 2, (int64_t[]){LENGTH_MAX, VOCAB},
                                                                        0, 1, 20261127)))));
    gb_tensor *vars[NVARS] = {gb_scalar(GB_I32, 0), buf, filled, length, in[1], noise};
    if (gb_while_loop(more_to_write, write_one, vars, NVARS,
                      &(gb_while_options){.user = user, .name = "sample", .max_iterations = LENGTH_MAX + 1},
                      vars) != NVARS)
        return -1;
    /* Rows of the buffer: the leading newline, the text, the unused rest. */
    gb_tensor *end = gb_cast(vars[V_N], GB_I64);
    gb_tensor *cuts = gb_concat((gb_tensor *[]){gb_tensor_from(GB_I64, (int64_t[]){0, 1}, 1, (int64_t[]){2}),
                                                gb_reshape(end, 1, (int64_t[]){1}),
                                                gb_tensor_from(GB_I64, (int64_t[]){BUF}, 1, (int64_t[]){1})},
                                3, 0);
    gb_tensor *texts = gb_unicode_encode(gb_reshape(vars[V_BUF], 1, (int64_t[]){BUF}), cuts, GB_UNICODE_REPLACE);
    out[0] = gb_gather(texts, gb_tensor_from(GB_I64, (int64_t[]){1}, 1, (int64_t[]){1}), 0);
    return out[0] ? 1 : -1;
}

/* serving_default: generate at temperature 0.8, SAMPLE_CHARS characters. */
static int serve_fn(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst, gb_tensor **out) {
    (void)nin;
    gb_tensor *args[3] = {in[0], gb_scalar(GB_F32, 0.8), gb_scalar(GB_I32, SAMPLE_CHARS)};
    return generate_fn(user, args, 3, st, nst, out);
}

static const gb_tensor_spec GENERATE_INPUTS[3] = {
    GB_SPEC("prompt", GB_STRING, 1), GB_SPEC("temperature", GB_F32), GB_SPEC("length", GB_I32)};

/* The text of one call of generate (a malloc'd C string), or NULL. */
static char *sample(gb_function *generate, const char *prompt, double temperature, int length) {
    gb_scope_begin();
    gb_tensor *in[3] = {gb_strings((const char *[]){prompt}, 1, (int64_t[]){1}),
                        gb_scalar(GB_F32, temperature), gb_scalar(GB_I32, length)};
    gb_tensor *out = NULL;
    char *s = NULL;
    if (gb_function_call(generate, in, 3, NULL, 0, &out) == 1) {
        const gb_string *str = gb_data_strings(out);
        s = malloc((size_t)str[0].len + 1);
        memcpy(s, str[0].data, (size_t)str[0].len);
        s[str[0].len] = '\0';
    }
    gb_scope_end();
    return s;
}

/* ---- what the run shows ------------------------------------------------------------------ */

typedef struct watch {
    const config *c;
    const lm *m;
    gb_function *generate;
    gb_tensor *probe_window;          /* [1, context]: the attention images' text */
    double first_step_end;            /* the train rate leaves out step 1 (the trace) */
    int64_t steps_timed;
    double timed_seconds;
} watch;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Perplexity beside every loss; the gradients' global norm each batch. */
static void on_batch_begin(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    (void)batch, (void)logs;
    watch *w = *(watch **)gb_callback_state(cb);
    s->want_gradients = w->c->db != NULL;   /* the norm is for the dashboard */
}

/* Steady train steps: from the end of the first step to the end of the
 * last, of the first epoch (later ones include sampling). */
static void time_step(watch *w, gb_train_state *s, int64_t batch) {
    double t = now();
    if (w->first_step_end == 0) {
        w->first_step_end = t;
    } else if (batch > 0 && w->steps_timed < s->steps - 1) {   /* batch 0 again: epoch 2 */
        w->steps_timed++;
        w->timed_seconds = t - w->first_step_end;
    }
}

static void on_batch_end(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    watch *w = *(watch **)gb_callback_state(cb);
    time_step(w, s, batch);
    double sq = 0;
    for (int i = 0; i < s->ngradients; i++) {
        if (!s->gradients[i]) continue;
        gb_tensor *g = gb_cast(s->gradients[i], GB_F64);
        const double *d = gb_data(g);
        for (int64_t j = 0; d && j < gb_size(g); j++) sq += d[j] * d[j];
    }
    gb_logs_set(logs, "perplexity", exp(gb_logs_get(logs, "loss")));
    if (s->ngradients) gb_logs_set(logs, "gradient_global_norm", sqrt(sq));
}

/* Indents every line by four spaces: a markdown code block keeps the
 * sample's line breaks and shows any markdown in it as written. */
static char *as_code_block(const char *prompt_and_text) {
    size_t n = strlen(prompt_and_text), lines = 1;
    for (size_t i = 0; i < n; i++) lines += prompt_and_text[i] == '\n';
    char *o = malloc(n + 4 * lines + 1), *p = o;
    p += sprintf(p, "    ");
    for (size_t i = 0; i < n; i++) {
        *p++ = prompt_and_text[i];
        if (prompt_and_text[i] == '\n') p += sprintf(p, "    ");
    }
    *p = '\0';
    return o;
}

static void on_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    watch *w = *(watch **)gb_callback_state(cb);
    gb_logs_set(logs, "perplexity", exp(gb_logs_get(logs, "loss")));
    if (gb_logs_has(logs, "val_loss")) gb_logs_set(logs, "val_perplexity", exp(gb_logs_get(logs, "val_loss")));
    char *written = sample(w->generate, SAMPLE_PROMPT, 0.8, SAMPLE_CHARS);
    if (!written) {
        gb_train_print(s, "char_lm: sampling failed: %s", gb_error_string());
        s->stop_training = true;
        return;
    }
    gb_train_print(s, "epoch %d sample: %s", epoch + 1, written);
    if (gb_summary_get_default()) {
        char *md = as_code_block(written);
        gb_summary_text(NULL, "samples/generated", md, epoch);
        free(md);
        gb_scope_begin();
        gb_tensor *att[16];
        if (gb_module_call_n(w->m->probe, 1, &w->probe_window, att, false) == w->c->layers)
            for (int l = 0; l < w->c->layers; l++) {
                char tag[64];
                snprintf(tag, sizeof tag, "attention/block%d", l);
                gb_summary_attention(NULL, tag, att[l], epoch);
            }
        gb_scope_end();
    }
    free(written);
}

static const gb_callback_type watch_type = {
    .name = "CharLMWatch", .state_size = sizeof(watch *),
    .on_batch_begin = on_batch_begin, .on_batch_end = on_batch_end, .on_epoch_end = on_epoch_end};

/* ---- main ---------------------------------------------------------------------------------- */

static int parse(int argc, char **argv, config *c) {
    const example_flag flags[] = {
        {"--epochs", "N", "epochs of --steps steps each", EXAMPLE_INT, &c->epochs},
        {"--steps", "N", "train steps per epoch", EXAMPLE_INT64, &c->steps},
        {"--batch", "N", "windows per step", EXAMPLE_INT64, &c->batch},
        {"--layers", "N", "transformer blocks (1 to 16)", EXAMPLE_INT, &c->layers},
        {"--context", "N", "characters the model sees", EXAMPLE_INT64, &c->context},
        {"--d-model", "N", "width of the model (a multiple of 4)", EXAMPLE_INT64, &c->d_model},
        {"--val-windows", "N", "held-out windows evaluated each epoch", EXAMPLE_INT64, &c->val_windows},
        {"--lr", "RATE", "peak learning rate (AdamW, cosine decay after warmup)", EXAMPLE_DOUBLE, &c->lr},
        {"--seed", "N", "weights' seed", EXAMPLE_UINT64, &c->seed},
        {"--dir", "DIR", "the fortune files (Debian package fortunes)", EXAMPLE_STRING, &c->dir},
        {"--db", "FILE", "write the run's summaries to this store", EXAMPLE_STRING, &c->db},
        {"--run", "NAME", "the run's name in the store", EXAMPLE_STRING, &c->run},
        {"--serve", "PORT", "serve the live dashboard on PORT (needs --db; -1: none)", EXAMPLE_INT, &c->serve_port},
        {"--keep-serving", NULL, "after training, serve until Ctrl-C", EXAMPLE_SWITCH, &c->keep_serving},
        {"--saved-model", "DIR", "save a SavedModel with the generate signature", EXAMPLE_STRING, &c->saved_model},
        {"--verbose", "N", "0 quiet, 1 a progress bar, 2 a line per epoch", EXAMPLE_INT, &c->verbose},
    };
    const example_program p = {"char_lm", "Trains a character-level transformer on fortunes and samples from it.",
                               flags, sizeof flags / sizeof flags[0], NULL, 0};
    int rc = example_parse_flags(&p, argc, argv);
    if (rc != EXAMPLE_RUN) return rc;
    if (c->epochs < 1 || c->steps < 1 || c->batch < 1 || c->val_windows < 1)
        return example_usage_error(&p, "--epochs, --steps, --batch and --val-windows must be >= 1");
    if (c->layers < 1 || c->layers > 16) return example_usage_error(&p, "--layers must be in [1, 16]");
    if (c->context < 2 || c->context > 1024) return example_usage_error(&p, "--context must be in [2, 1024]");
    if (c->d_model < HEADS || c->d_model % HEADS)
        return example_usage_error(&p, "--d-model must be a positive multiple of %d", HEADS);
    if (!(c->lr > 0)) return example_usage_error(&p, "--lr must be > 0");
    if (c->serve_port >= 0 && !c->db) return example_usage_error(&p, "--serve needs --db FILE");
    return EXAMPLE_RUN;
}

static volatile sig_atomic_t stop_serving;
static void on_signal(int sig) {
    (void)sig;
    stop_serving = 1;
}

static bool save_model(const config *c, gb_function *generate, gb_function *serve) {
    gb_saved_model_signature sigs[2] = {
        {.name = "generate", .function = generate, .inputs = GENERATE_INPUTS, .ninputs = 3,
         .output_names = (const char *const[]){"text"}},
        {.name = "serving_default", .function = serve, .inputs = GENERATE_INPUTS, .ninputs = 1,
         .output_names = (const char *const[]){"text"}},
    };
    if (!gb_saved_model_save(c->saved_model, sigs, 2)) return false;
    printf("SavedModel in %s (signatures generate and serving_default)\n", c->saved_model);
    return true;
}

static bool train(const config *c, lm *m, const text *tr, const text *va, gb_function *generate) {
    gb_tensor *x, *y, *vx, *vy;
    windows(tr, c->steps * c->batch, c->context, c->seed * 2 + 1, &x, &y);
    windows(va, c->val_windows, c->context, 99991, &vx, &vy);
    gb_adam_options ao = gb_adamw_defaults();
    ao.weight_decay = c->weight_decay;
    int64_t total = c->epochs * c->steps, warmup = total / 20 + 1;
    int64_t decay = total - warmup > 1 ? total - warmup : 1;
    ao.learning_rate = gb_lr_cosine_decay_warmup(c->lr / 10, decay, 0.1, c->lr, warmup);
    gb_optimizer *opt = gb_adam_ex(&ao);
    bool ok = opt && gb_optimizer_exclude_vectors_from_weight_decay(opt) &&
              gb_optimizer_set_clipping(opt, (gb_gradient_clipping){.global_clipnorm = c->clipnorm}) &&
              gb_model_compile(m->model, &(gb_compile_options){
                                             .optimizer = opt,
                                             .loss = {.kind = GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY,
                                                      .from_logits = true}});
    watch w = {.c = c, .m = m, .generate = generate,
               .probe_window = gb_slice(vx, (int64_t[]){0, 0}, 2, (int64_t[]){1, c->context}, 2)};
    gb_callback *mine = gb_callback_new(&watch_type);
    *(watch **)gb_callback_state(mine) = &w;
    gb_callback *summary = c->db ? gb_summary_callback(NULL, &(gb_summary_callback_options){.update_freq = 1})
                                 : NULL;
    gb_callback *cbs[2] = {mine, summary};
    gb_fit_options o = gb_fit_defaults();
    o.epochs = c->epochs;
    o.batch_size = c->batch;
    o.seed = c->seed + 7;
    o.verbose = c->verbose;
    o.val_x = vx, o.val_y = vy;
    o.callbacks = cbs, o.ncallbacks = summary ? 2 : 1;
    gb_history *h = ok ? gb_model_fit(m->model, x, y, &o) : NULL;
    if (h && w.steps_timed > 0)
        printf("train: %.1f tokens/s (steps 2 to %lld of epoch 1, traced)\n",
               (double)(w.steps_timed * c->batch * c->context) / w.timed_seconds, (long long)(w.steps_timed + 1));
    if (h) {
        int last = gb_history_epochs(h) - 1;
        printf("final val_loss %.4f nats/char (perplexity %.3f)\n", gb_history_value(h, "val_loss", last),
               exp(gb_history_value(h, "val_loss", last)));
    }
    ok = h != NULL;
    gb_history_free(h);
    gb_callback_free(mine);
    if (summary) gb_callback_free(summary);
    gb_optimizer_free(opt);
    return ok;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    config c = {.epochs = 5, .steps = 100, .batch = 32, .layers = 4, .context = 128, .d_model = 128,
                .val_windows = 128, .lr = 3e-3, .weight_decay = 0.01, .clipnorm = 1.0, .seed = 29,
                .dir = "/usr/share/games/fortunes", .serve_port = -1, .verbose = 1};
    int rc = parse(argc, argv, &c);
    if (rc != EXAMPLE_RUN) return rc;
    text tr = {0}, va = {0};
    if (!read_corpus(c.dir, c.context, &tr, &va)) return 1;
    printf("fortunes: %lld characters to train on, %lld held out\n", (long long)tr.n, (long long)va.n);
    gb_nn_set_seed(c.seed);
    lm m = {0};
    gb_summary_writer *w = NULL;
    gb_board *board = NULL;
    gb_function *generate = NULL, *serve = NULL;
    int code = 1;
    gb_scope_begin();
    if (!build_model(&c, &m)) goto fail;
    generate = gb_function_new("generate", generate_fn, &(gb_function_options){.user = &m});
    serve = gb_function_new("serving_default", serve_fn, &(gb_function_options){.user = &m});
    if (c.db) {
        if (!example_open_writer("char_lm", c.db, c.run, &w)) goto done;
        gb_summary_set_default(w);
        char about[512];
        snprintf(about, sizeof about,
                 "# char_lm\n\nA character-level transformer on Debian's fortunes: %d blocks, %d heads, "
                 "d_model %lld, context %lld; AdamW, peak learning rate %g; %d epochs of %lld steps "
                 "of %lld windows. Each epoch's sample is %d characters from the prompt \"%s\".\n",
                 c.layers, HEADS, (long long)c.d_model, (long long)c.context, c.lr, c.epochs,
                 (long long)c.steps, (long long)c.batch, SAMPLE_CHARS, SAMPLE_PROMPT);
        gb_summary_text(NULL, "run/about", about, 0);
        if (c.serve_port >= 0) {
            if (!(board = gb_board_start(c.db, "127.0.0.1", c.serve_port, NULL))) {
                fprintf(stderr, "char_lm: dashboard: %s\n", gb_board_last_error());
                goto done;
            }
            printf("dashboard: %s\n", gb_board_url(board));
        }
    }
    if (!train(&c, &m, &tr, &va, generate)) goto fail;
    if (c.saved_model && !save_model(&c, generate, serve)) goto fail;
    code = 0;
    if (w) gb_summary_flush(w);
    if (board && c.keep_serving) {
        printf("training done; still serving %s — press Ctrl-C to stop\n", gb_board_url(board));
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        while (!stop_serving) pause();
    }
    goto done;
fail:
    fprintf(stderr, "char_lm: %s\n", gb_error_string());
done:
    gb_board_stop(board);
    if (w) gb_summary_writer_close(w);
    gb_function_free(generate);
    gb_function_free(serve);
    gb_module_free(m.probe);
    gb_module_free(m.model);
    gb_scope_end();
    free(tr.s), free(va.s);
    return code;
}
