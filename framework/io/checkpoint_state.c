/* io/checkpoint_state.c — the CheckpointManager's state file: the text
 * file "checkpoint" in a manager's directory that lists the checkpoints
 * it keeps, for the next manager on that directory and for people.
 *
 *   # glassbox CheckpointManager state: the checkpoints kept in this
 *   # directory, oldest first. ...
 *   format: 1
 *   latest: ckpt-7
 *   last_preserved_time: 1700000000.000   # 2023-11-14 22:13:20 UTC
 *   checkpoint: ckpt-3 step 3 time 1700000000.000 preserved   # 2023-11-14 22:13:20 UTC
 *   checkpoint: ckpt-7 step 7 time 1700007200.000   # 2023-11-15 00:13:20 UTC
 *
 * One "key: value" per line; '#' starts a comment (the UTC dates are
 * comments: the seconds are what is read back). "format" comes first;
 * "latest" names the last checkpoint listed (absent when none is);
 * "last_preserved_time" is when keep_checkpoint_every_n_hours last kept
 * one for good; "preserved" marks those, which the manager never deletes.
 * Times are seconds since the epoch with milliseconds, the wall clock of
 * each save.
 *
 * The manager deletes files this text names, so the reader is strict: a
 * name is a plain file name in the directory (no '/', no "..", no
 * spaces or control characters), every line must parse, and an error
 * names the file and the line. It is a fuzz target (tests/fuzz/
 * fuzz_io_checkpoint_state.c).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "io/internal.h"

enum { STATE_VERSION = 1, LINE_BYTES = 1024 };

/* The comment that opens the file, for people who find it. */
static const char HEADER[] =
    "# glassbox CheckpointManager state: the checkpoints kept in this directory,\n"
    "# oldest first. Written at each save (atomically); read when a manager\n"
    "# opens the directory. Times: seconds since the epoch ('#' starts a comment).\n";

/* ---- names --------------------------------------------------------------------------------- */

bool gb__ckpt_name_ok(const char *name, size_t len) {
    if (len == 0 || len >= GB__CKPT_NAME_BYTES || name[0] == '.') return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c <= ' ' || c == 0x7f || c == '/' || c == '#') return false;
    }
    return true;
}

/* ---- the list ------------------------------------------------------------------------------ */

bool gb__ckpt_state_add(gb__ckpt_state *s, const gb__ckpt_record *r) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        gb__ckpt_record *grown = realloc(s->v, (size_t)cap * sizeof *grown);
        if (!grown) {
            gb__error(GB_ERR_MEMORY, NULL, "checkpoint state: out of memory");
            return false;
        }
        s->v = grown;
        s->cap = cap;
    }
    s->v[s->n++] = *r;
    return true;
}

void gb__ckpt_state_remove(gb__ckpt_state *s, int i) {
    memmove(&s->v[i], &s->v[i + 1], (size_t)(s->n - i - 1) * sizeof *s->v);
    s->n--;
}

int gb__ckpt_state_find(const gb__ckpt_state *s, const char *name) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i].name, name) == 0) return i;
    return -1;
}

void gb__ckpt_state_free(gb__ckpt_state *s) {
    free(s->v);
    *s = (gb__ckpt_state){0};
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct reader {
    const char *path;
    int line;
    char text[LINE_BYTES];   /* the line, comment and outer blanks removed */
} reader;

/* "<path>:<line>: <message>" as a GB_ERR_IO error; false. */
__attribute__((format(printf, 2, 3)))
static bool bad(const reader *r, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gb__error(GB_ERR_IO, NULL, "%s:%d: %s", r->path, r->line, msg);
    return false;
}

enum { SHOWN_BYTES = 80 };

/* Text from the file for an error: at most 60 bytes, anything unprintable
 * as '?' (buf holds SHOWN_BYTES). */
static const char *shown(const char *text, char *buf) {
    size_t len = strlen(text), k = 0;
    for (size_t i = 0; i < len && i < 60; i++) {
        unsigned char c = (unsigned char)text[i];
        buf[k++] = c >= ' ' && c < 0x7f ? (char)c : '?';
    }
    if (len > 60) buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
    buf[k] = '\0';
    return buf;
}

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Takes the next line of [*p, end) into r->text; false at the end or
 * after an error (r->line counts lines from 1). */
static bool next_line(reader *r, const char **p, const char *end, bool *error) {
    if (*p >= end) return false;
    const char *nl = memchr(*p, '\n', (size_t)(end - *p));
    const char *stop = nl ? nl : end, *cut = memchr(*p, '#', (size_t)(stop - *p));
    const char *a = *p, *b = cut ? cut : stop;
    *p = nl ? nl + 1 : end;
    r->line++;
    r->text[0] = '\0';
    while (a < b && is_blank(*a)) a++;
    while (b > a && is_blank(b[-1])) b--;
    if (memchr(a, '\0', (size_t)(stop - a))) {
        *error = true;
        return bad(r, "a NUL byte in the line");
    }
    if (b - a >= LINE_BYTES) {
        *error = true;
        return bad(r, "the line is longer than %d bytes", LINE_BYTES - 1);
    }
    memcpy(r->text, a, (size_t)(b - a));
    r->text[b - a] = '\0';
    return true;
}

/* Seconds since the epoch: a finite number, the whole token, from 0 up
 * to GB__CKPT_MAX_TIME (so it has a date). */
static bool read_time(const char *tok, double *out) {
    char *end;
    *out = strtod(tok, &end);
    return end != tok && *end == '\0' && *out >= 0 && *out <= GB__CKPT_MAX_TIME;
}

/* A step or a version: digits only (no sign, no blanks), up to 18 of them. */
static bool read_count(const char *tok, int64_t *out) {
    size_t len = strlen(tok);
    if (len == 0 || len > 18 || strspn(tok, "0123456789") != len) return false;
    *out = strtoll(tok, NULL, 10);
    return true;
}

/* The blank-separated tokens of s (changed in place); their count, or
 * max + 1 when there are more. */
static int split(char *s, char **tok, int max) {
    int n = 0;
    for (char *save = NULL, *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
        if (n == max) return max + 1;
        tok[n++] = t;
    }
    return n;
}

static bool read_checkpoint(reader *r, char *value, gb__ckpt_state *s) {
    char *tok[6], line[SHOWN_BYTES];
    int n = split(value, tok, 6);
    gb__ckpt_record rec = {.line = r->line};
    if (!(n == 5 || (n == 6 && strcmp(tok[5], "preserved") == 0)) || strcmp(tok[1], "step") != 0 ||
        strcmp(tok[3], "time") != 0 || !read_count(tok[2], &rec.step) || !read_time(tok[4], &rec.time))
        return bad(r, "expected 'checkpoint: <name> step <n> time <seconds> [preserved]', got '%s'",
                   shown(r->text, line));
    if (!gb__ckpt_name_ok(tok[0], strlen(tok[0])))
        return bad(r, "'%s' is not a checkpoint file name (a name in the directory, without '/', "
                      "'#', blanks or a leading '.')", shown(tok[0], line));
    if (gb__ckpt_state_find(s, tok[0]) >= 0) return bad(r, "'%s' is listed twice", tok[0]);
    snprintf(rec.name, sizeof rec.name, "%s", tok[0]);
    rec.preserved = n == 6;
    return gb__ckpt_state_add(s, &rec);
}

/* What the lines before the current one said. */
typedef struct seen_so_far {
    bool format;
    int latest_line, preserved_line;   /* 0: not seen */
    char latest[GB__CKPT_NAME_BYTES];
} seen_so_far;

static bool read_format(reader *r, const char *key, const char *value) {
    char line[SHOWN_BYTES];
    int64_t version = 0;
    if (strcmp(key, "format") != 0 || !read_count(value, &version) || version == 0)
        return bad(r, "expected 'format: %d' first, got '%s'", STATE_VERSION, shown(r->text, line));
    if (version > STATE_VERSION)
        return bad(r, "written by a newer glassbox (state format %lld; this build reads up to %d)",
                   (long long)version, STATE_VERSION);
    return true;
}

/* One "key: value" line (blanks around both ignored). */
static bool read_line(reader *r, gb__ckpt_state *s, seen_so_far *seen) {
    char work[LINE_BYTES], line[SHOWN_BYTES];
    memcpy(work, r->text, sizeof work);   /* r->text stays whole for errors */
    char *colon = strchr(work, ':');
    if (!colon) return bad(r, "expected 'key: value', got '%s'", shown(r->text, line));
    char *key = work, *value = colon + 1;
    *colon = '\0';
    for (char *k = colon; k > key && is_blank(k[-1]);) *--k = '\0';
    while (is_blank(*value)) value++;
    if (!seen->format) return (seen->format = read_format(r, key, value));
    if (strcmp(key, "checkpoint") == 0) return read_checkpoint(r, value, s);
    if (strcmp(key, "latest") == 0) {
        if (seen->latest_line)
            return bad(r, "a second 'latest' (the first is on line %d)", seen->latest_line);
        if (!gb__ckpt_name_ok(value, strlen(value)))
            return bad(r, "'latest' names '%s', not a checkpoint file name", shown(value, line));
        snprintf(seen->latest, sizeof seen->latest, "%s", value);
        seen->latest_line = r->line;
        return true;
    }
    if (strcmp(key, "last_preserved_time") == 0) {
        if (seen->preserved_line)
            return bad(r, "a second 'last_preserved_time' (the first is on line %d)",
                       seen->preserved_line);
        seen->preserved_line = r->line;
        return read_time(value, &s->last_preserved) ||
               bad(r, "'last_preserved_time' is not a number of seconds since the epoch");
    }
    return bad(r, "unknown key '%s'", shown(key, line));
}

/* After the last line: there was a format line, and 'latest' names the
 * last checkpoint listed, present when one is. */
static bool check_end(reader *r, const gb__ckpt_state *s, const seen_so_far *seen) {
    if (!seen->format) {
        r->line = 1;
        return bad(r, "empty: no 'format: %d' line", STATE_VERSION);
    }
    if (s->n == 0 && !seen->latest_line) return true;
    if (s->n == 0) {
        r->line = seen->latest_line;
        return bad(r, "'latest' names '%s', but no checkpoint is listed", seen->latest);
    }
    const gb__ckpt_record *last = &s->v[s->n - 1];
    if (!seen->latest_line) return bad(r, "no 'latest' line (it would name '%s')", last->name);
    r->line = seen->latest_line;
    return strcmp(seen->latest, last->name) == 0 ||
           bad(r, "'latest' names '%s', but the last checkpoint listed is '%s' (line %d)",
               seen->latest, last->name, last->line);
}

bool gb__ckpt_state_parse(const char *path, const char *text, size_t size, gb__ckpt_state *out) {
    *out = (gb__ckpt_state){.last_preserved = -1};
    reader r = {.path = path};
    seen_so_far seen = {0};
    const char *p = text, *end = text + size;
    bool error = false;
    while (!error && next_line(&r, &p, end, &error))
        if (r.text[0]) error = !read_line(&r, out, &seen);
    if (!error && check_end(&r, out, &seen)) return true;
    gb__ckpt_state_free(out);
    return false;
}

bool gb__ckpt_state_read(const char *path, gb__ckpt_state *out) {
    size_t size = 0;
    char *text = gb__file_read(path, "a checkpoint state file", &size);
    bool ok = text && gb__ckpt_state_parse(path, text, size, out);
    free(text);
    return ok;
}

/* ---- writing ------------------------------------------------------------------------------- */

/* "   # 2023-11-14 22:13:20 UTC" for time t as written ("%.3f"), or ""
 * when it has no date. The date is the written seconds', not t's: 699.9998
 * is written 700.000, and a comment of 00:11:39 would read back as 00:11:40,
 * so the file would change each time it is rewritten. */
static const char *utc_comment(double t, char *buf, size_t n) {
    static const char lead[] = "   # ";
    char written[64];
    snprintf(written, sizeof written, "%.3f", t);
    time_t secs = (time_t)floor(strtod(written, NULL));
    struct tm tm;
    if (n <= sizeof lead || !gmtime_r(&secs, &tm)) return "";
    memcpy(buf, lead, sizeof lead);
    size_t at = sizeof lead - 1;
    return strftime(buf + at, n - at, "%Y-%m-%d %H:%M:%S UTC", &tm) ? buf : "";
}

bool gb__ckpt_state_format(const gb__ckpt_state *s, char **text, size_t *size) {
    *text = NULL;
    FILE *f = open_memstream(text, size);
    char c[64];
    bool ok = f && fprintf(f, "%sformat: %d\n", HEADER, STATE_VERSION) > 0;
    if (ok && s->n) ok = fprintf(f, "latest: %s\n", s->v[s->n - 1].name) > 0;
    if (ok && s->last_preserved >= 0)
        ok = fprintf(f, "last_preserved_time: %.3f%s\n", s->last_preserved,
                     utc_comment(s->last_preserved, c, sizeof c)) > 0;
    for (int i = 0; ok && i < s->n; i++)
        ok = fprintf(f, "checkpoint: %s step %lld time %.3f%s%s\n", s->v[i].name,
                     (long long)s->v[i].step, s->v[i].time, s->v[i].preserved ? " preserved" : "",
                     utc_comment(s->v[i].time, c, sizeof c)) > 0;
    if (f && fclose(f) != 0) ok = false;
    if (ok) return true;
    free(*text);
    *text = NULL;
    gb__error(GB_ERR_MEMORY, NULL, "checkpoint state: out of memory");
    return false;
}

bool gb__ckpt_state_write(const char *path, const gb__ckpt_state *s) {
    char *text;
    size_t size;
    gb__atomic_file a;
    if (!gb__ckpt_state_format(s, &text, &size)) return false;
    bool ok = gb__atomic_open(&a, path, "checkpoint state") &&
              gb__atomic_commit(&a, fwrite(text, 1, size, a.f) == size);
    free(text);
    return ok;
}
