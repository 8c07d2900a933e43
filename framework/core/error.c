/* core/error.c — sticky errors and warnings, one record per thread.
 *
 * The first error wins (later ones would only be consequences of it), as
 * SQLite's sticky error on a handle. Each records the op, the name-scope
 * path and the user's call site. Library code never exits on a user
 * error; only the opt-in GB_ERRORS_ABORT mode, meant for scripts, does.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"

static _Thread_local gb_error tl_error;
static _Thread_local bool tl_has_error;
/* The call sites of the wrapped calls in progress (gb_base.h): entry 0
 * holds the last finished one, entry d the call at depth d. Past the end
 * the deepest entry is overwritten, so the top is always the latest. */
enum { SITE_DEPTH = 64 };
static _Thread_local gb_call_site tl_sites[SITE_DEPTH];
static _Thread_local int tl_site_depth;
static _Thread_local char tl_error_text[1400];
static _Thread_local char tl_warning[2048];
static _Thread_local int tl_warning_count;
static _Thread_local const char *tl_context;
static gb_error_mode error_mode = GB_ERRORS_STICKY;

static const char *const status_names[] = {
    [GB_OK] = "OK",
    [GB_ERR_SHAPE] = "ShapeError",
    [GB_ERR_DTYPE] = "DtypeError",
    [GB_ERR_VALUE] = "ValueError",
    [GB_ERR_STATE] = "StateError",
    [GB_ERR_NO_GRADIENT] = "NoGradientError",
    [GB_ERR_NUMERIC] = "NumericError",
    [GB_ERR_IO] = "IOError",
    [GB_ERR_MEMORY] = "MemoryError",
    [GB_ERR_INTERNAL] = "InternalError",
    [GB_ERR_UNAVAILABLE] = "UnavailableError",
};

const char *gb_status_name(gb_status s) {
    return (unsigned)s <= GB_ERR_UNAVAILABLE ? status_names[s] : "UnknownError";
}

bool gb_ok(void) { return !tl_has_error; }

const gb_error *gb_last_error(void) { return tl_has_error ? &tl_error : NULL; }

void gb_clear_error(void) {
    tl_has_error = false;
    memset(&tl_error, 0, sizeof tl_error);
}

void gb_set_error_mode(gb_error_mode mode) { error_mode = mode; }

static gb_call_site *site_top(void) {
    return &tl_sites[tl_site_depth < SITE_DEPTH ? tl_site_depth : SITE_DEPTH - 1];
}

void gb_set_call_site(const char *file, int line) { *site_top() = (gb_call_site){file, line}; }

int gb__site_enter(const char *file, int line) {
    tl_site_depth++;
    *site_top() = (gb_call_site){file, line};
    return tl_site_depth;
}

void gb__site_leave(const int *depth) {
    gb_call_site done = *site_top();
    tl_site_depth = *depth - 1;
    if (tl_site_depth <= 0) {
        tl_site_depth = 0;
        tl_sites[0] = done; /* an unwrapped call after it names the last wrapped one */
    }
}

const char *gb__site_file_name(const char *file) {
    const char *slash = file ? strrchr(file, '/') : NULL;
    return slash ? slash + 1 : file;
}

const char *gb__call_site_text(char *buf, size_t n) {
    const gb_call_site *s = site_top();
    if (s->file)
        snprintf(buf, n, "%s:%d", gb__site_file_name(s->file), s->line);
    else if (n)
        buf[0] = '\0';
    return buf;
}

gb_call_site gb__call_site(void) { return *site_top(); }

void gb__call_site_restore(gb_call_site site) { *site_top() = site; }

const char *gb_error_string(void) {
    if (!tl_has_error) return "";
    const gb_error *e = &tl_error;
    int n = snprintf(tl_error_text, sizeof tl_error_text, "%s: %s", gb_status_name(e->code),
                     e->message);
    if (n < 0 || (size_t)n >= sizeof tl_error_text) return tl_error_text;
    size_t used = (size_t)n;
    if (e->file)
        used += (size_t)snprintf(tl_error_text + used, sizeof tl_error_text - used,
                                 " (at %s:%d)", gb__site_file_name(e->file), e->line);
    if (used < sizeof tl_error_text && e->scope_path[0])
        snprintf(tl_error_text + used, sizeof tl_error_text - used, " [scope %s]",
                 e->scope_path);
    return tl_error_text;
}

static void copy_str(char *dst, size_t n, const char *src) {
    if (!src) src = "";
    snprintf(dst, n, "%s", src);
}

void gb__verror(gb_status code, const char *op_type, const char *op_name, const char *fmt,
                va_list ap) {
    if (tl_has_error) return;
    tl_has_error = true;
    gb_error *e = &tl_error;
    e->code = code;
    copy_str(e->op_type, sizeof e->op_type, op_type);
    copy_str(e->op_name, sizeof e->op_name, op_name);
    copy_str(e->scope_path, sizeof e->scope_path, gb_name_scope_path());
    e->file = site_top()->file;
    e->line = site_top()->line;
    int at = tl_context ? snprintf(e->message, sizeof e->message, "%s: ", tl_context) : 0;
    if (at < 0 || (size_t)at >= sizeof e->message) at = 0;
    vsnprintf(e->message + at, sizeof e->message - (size_t)at, fmt, ap);
    if (error_mode == GB_ERRORS_ABORT) {
        fprintf(stderr, "glassbox: %s\n", gb_error_string());
        exit(1);
    }
}

const char *gb__error_context(const char *context) {
    const char *before = tl_context;
    tl_context = context;
    return before;
}

void gb__error(gb_status code, const char *op_type, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gb__verror(code, op_type, NULL, fmt, ap);
    va_end(ap);
}

void gb__warn(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_warning, sizeof tl_warning, fmt, ap);
    va_end(ap);
    tl_warning_count++;
    fprintf(stderr, "glassbox warning: %s\n", tl_warning);
    gb_event ev = {.kind = GB_EVENT_WARNING, .message = tl_warning};
    gb_observer_emit(&ev);
}

const char *gb_last_warning(void) { return tl_warning; }

int gb_warning_count(void) { return tl_warning_count; }

const char *gb__shape_fmt(int rank, const int64_t *shape, char *buf, size_t n) {
    size_t used = 0;
    used += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (used < n) snprintf(buf + used, n - used, "]");
    return buf;
}
