/* train/progbar.c — Keras' progress bar (ProgbarLogger), in Keras 3's
 * format:
 *
 *   Epoch 1/5
 *   469/469 ━━━━━━━━━━━━━━━━━━━━ 3s 6ms/step - accuracy: 0.8512 - loss: 0.4123
 *
 * While an epoch runs, a terminal sees the line redrawn in place (at most
 * every 50 ms) with the ETA instead of the elapsed time; the epoch's last
 * line stays. A file or pipe gets only each epoch's last line, without
 * colours: a log that reads well, not thousands of carriage returns
 * (Keras prints a line per update there). verbose 2 prints one line per
 * epoch: "469/469 - 3s - 6ms/step - accuracy: ...".
 *
 * The time per step leaves the first step out, as Keras does: it holds
 * the trace of the train step, which would skew the rate of all others.
 *
 * Callbacks print through the bar (gb_train_print, tqdm.write's scheme):
 * a line printed while the bar is live would otherwise land in its middle.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "train/internal.h"

/* ---- the clock ------------------------------------------------------------------------ */

static double (*fake_clock)(void);

void gb__train_set_clock(double (*now)(void)) { fake_clock = now; }

double gb__train_now(void) {
    if (fake_clock) return fake_clock();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- one line ---------------------------------------------------------------------------- */

enum { BAR_WIDTH = 20 };

typedef struct line {
    char *p;
    size_t n, len;
} line;

__attribute__((format(printf, 2, 3))) static void add(line *l, const char *fmt, ...) {
    if (l->len >= l->n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(l->p + l->len, l->n - l->len, fmt, ap);
    va_end(ap);
    if (k > 0) l->len = l->len + (size_t)k < l->n ? l->len + (size_t)k : l->n - 1;
}

/* text in a colour (an ANSI code) when colour is on. */
static void add_styled(line *l, bool colour, const char *code, const char *text) {
    if (colour) add(l, "\x1b[%sm%s\x1b[0m", code, text);
    else add(l, "%s", text);
}

static void add_bar(line *l, bool colour, int done) {
    char on[BAR_WIDTH * 3 + 1] = "", off[BAR_WIDTH * 3 + 1] = "";
    for (int i = 0; i < BAR_WIDTH; i++) strcat(i < done ? on : off, "━");
    if (done > 0) add_styled(l, colour, "32", on);
    add_styled(l, colour, "37", off);
}

static int digits(int64_t v) {
    int d = 1;
    while (v >= 10) v /= 10, d++;
    return d;
}

/* Keras' _format_time: whole seconds, milliseconds or microseconds. */
static void add_per_step(line *l, double t) {
    if (t >= 1 || t == 0) add(l, " %.0fs/step", t);
    else if (t >= 1e-3) add(l, " %.0fms/step", t * 1e3);
    else add(l, " %.0fus/step", t * 1e6);
}

static void add_eta(line *l, bool colour, double eta) {
    char b[32];
    if (eta > 3600)
        snprintf(b, sizeof b, "%d:%02d:%02d", (int)(eta / 3600), (int)fmod(eta, 3600) / 60,
                 (int)fmod(eta, 60));
    else if (eta > 60) snprintf(b, sizeof b, "%d:%02d", (int)(eta / 60), (int)fmod(eta, 60));
    else snprintf(b, sizeof b, "%ds", (int)eta);
    add(l, " ");
    add_styled(l, colour, "1", b);
}

static void add_logs(line *l, const gb_logs *logs) {
    for (int i = 0; logs && i < logs->n; i++) {
        double v = logs->value[i];
        add(l, fabs(v) > 1e-3 ? " - %s: %.4f" : " - %s: %.4e", logs->key[i], v);
    }
}

void gb__progbar_format(char *buf, size_t n, int verbose, int64_t current, int64_t target,
                        double elapsed, double per_step, bool finalize, const gb_logs *logs,
                        bool colour) {
    line l = {buf, n, 0};
    if (n) buf[0] = '\0';
    char count[48];
    if (target > 0)
        snprintf(count, sizeof count, "%*lld/%lld", digits(target), (long long)current,
                 (long long)target);
    else   /* a dataset of unknown length, in its first epoch (Keras' words) */
        snprintf(count, sizeof count, "%lld/Unknown", (long long)current);
    if (verbose == 2) {
        add(&l, "%s - %.0fs -", count, elapsed);
    } else {
        add_styled(&l, colour, "1", count);
        if (target > 0) {
            add(&l, " ");
            add_bar(&l, colour, (int)(BAR_WIDTH * (double)current / (double)target));
        }
        if (finalize) {
            char s[32];
            snprintf(s, sizeof s, "%.0fs", elapsed);
            add(&l, " ");
            add_styled(&l, colour, "1", s);
        } else if (target > 0) {
            add_eta(&l, colour, per_step * (double)(target - current));
        }
    }
    add_per_step(&l, per_step);
    add_logs(&l, logs);
}

/* Columns a line takes on a terminal: UTF-8 code points ("━" is three
 * bytes, one column), colour codes ("\x1b[...m") none. */
static int columns(const char *s) {
    int c = 0;
    while (*s) {
        if (*s == '\x1b') {
            while (*s && *s != 'm') s++;
            if (*s) s++;
            continue;
        }
        c += ((unsigned char)*s++ & 0xC0) != 0x80;
    }
    return c;
}

/* ---- the callback ------------------------------------------------------------------------ */

typedef struct progbar {
    FILE *out;
    int verbose;
    bool dynamic;             /* a terminal: redraw in place, with colours */
    int64_t seen;
    double start, after_first, last_draw;
    int prev_columns;
    bool open;                /* the live line is on screen, without its newline */
    char text[1024];          /* ... and reads this (gb_train_print draws it again) */
} progbar;

static bool force_terminal;   /* tests: treat any stream as a terminal */

void gb__progbar_force_terminal(bool on) { force_terminal = on; }

/* Writes text (and a newline) to `to` above p's live line, if it has one:
 * the line blanked, the text, the line drawn again below. */
static void print_above(progbar *p, FILE *to, const char *text) {
    bool open = p && p->open;
    if (open) {
        fprintf(p->out, "\r%*s\r", p->prev_columns, "");
        fflush(p->out);
    }
    fprintf(to, "%s\n", text);
    fflush(to);
    if (open) {
        fputs(p->text, p->out);
        fflush(p->out);
    }
}

/* The engine's warnings (stderr) while a bar is live on a terminal: above
 * it. The bar that is live, if any; set and cleared on the training thread. */
static progbar *_Atomic live_bar;

static void warn_above_bar(const char *text) { print_above(atomic_load(&live_bar), stderr, text); }

static void set_live(progbar *p, bool live) {
    if (live) {
        atomic_store(&live_bar, p);
        atomic_store_explicit(&gb__warn_hook, warn_above_bar, memory_order_release);
    } else {
        progbar *expected = p;
        atomic_compare_exchange_strong(&live_bar, &expected, NULL);
    }
}

/* Keras' _estimate_step_duration: from the end of the first step on. */
static double per_step(progbar *p, int64_t current, double now) {
    if (!current) return 0;
    double t = p->after_first > 0 && current > 1 ? (now - p->after_first) / (double)(current - 1)
                                                 : (now - p->start) / (double)current;
    if (current == 1) p->after_first = now;
    return t;
}

static void draw(progbar *p, const gb_train_state *s, int64_t current, bool finalize,
                 const gb_logs *logs) {
    double now = gb__train_now(), t = per_step(p, current, now);
    if (p->verbose == 2 && !finalize) return;
    if (p->verbose == 1 && !p->dynamic && !finalize) return;
    if (p->verbose == 1 && p->dynamic && !finalize && now - p->last_draw < 0.05) return;
    p->last_draw = now;
    char text[1024];
    gb__progbar_format(text, sizeof text, p->verbose, current, s->steps, now - p->start, t, finalize,
                       logs, p->dynamic);
    int cols = columns(text);
    /* On a terminal: back to the line's start, and spaces over what a
     * longer previous line left. */
    fprintf(p->out, "%s%s%*s%s", p->dynamic && p->verbose == 1 ? "\r" : "", text,
            p->dynamic && p->prev_columns > cols ? p->prev_columns - cols : 0, "",
            finalize ? "\n" : "");
    fflush(p->out);
    p->prev_columns = cols;
    p->open = p->dynamic && p->verbose == 1 && !finalize;
    if (p->open) snprintf(p->text, sizeof p->text, "%s", text);
    set_live(p, p->open);
}

static void pb_epoch_begin(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    (void)logs;
    progbar *p = gb_callback_state(cb);
    if (s->epochs > 1) fprintf(p->out, "Epoch %d/%d\n", epoch + 1, s->epochs);
    fflush(p->out);
    p->seen = 0;
    p->start = gb__train_now();
    p->after_first = p->last_draw = 0;
    p->prev_columns = 0;
    p->open = false;
    set_live(p, false);
}

static void pb_batch_end(gb_callback *cb, gb_train_state *s, int64_t batch, gb_logs *logs) {
    progbar *p = gb_callback_state(cb);
    p->seen = batch + 1;
    draw(p, s, p->seen, false, logs);
}

/* The epoch's last line: all its steps, or as far as it got when a
 * callback stopped it (Keras shows the full count either way). */
static void pb_epoch_end(gb_callback *cb, gb_train_state *s, int epoch, gb_logs *logs) {
    (void)epoch;
    progbar *p = gb_callback_state(cb);
    draw(p, s, p->seen, true, logs);
}

static void pb_free(gb_callback *cb) { set_live(gb_callback_state(cb), false); }

static const gb_callback_type PROGBAR = {
    .name = "ProgbarLogger",
    .state_size = sizeof(progbar),
    .free = pb_free,
    .on_epoch_begin = pb_epoch_begin,
    .on_epoch_end = pb_epoch_end,
    .on_batch_end = pb_batch_end,
};

gb_callback *gb__progbar_logger(FILE *out, int verbose) {
    gb_callback *cb = gb_callback_new(&PROGBAR);
    if (!cb) return NULL;
    progbar *p = gb_callback_state(cb);
    p->out = out ? out : stdout;
    p->verbose = verbose;
    p->dynamic = force_terminal || isatty(fileno(p->out));
    return cb;
}

void gb_train_print(gb_train_state *s, const char *fmt, ...) {
    progbar *p = s ? gb_callback_state(s->progress_bar) : NULL;
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    print_above(p, p ? p->out : stdout, text);
}

