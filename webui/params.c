/* params.c — validation of query parameters against a route's declaration.
 *
 * Nothing from a URL reaches a handler unchecked: every parameter must be
 * declared by the route, appear at most once, and parse as its kind
 * within its range; text must be valid UTF-8 without control characters
 * and of bounded length. Handlers then pass these values to the reader
 * API as bound values, never as SQL text.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "board_internal.h"
#include "utf8.h"

int gb__fail(gb__request *req, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(req->error, sizeof req->error, fmt, ap);
    va_end(ap);
    return status;
}

static int spec_index(const gb__route *route, const char *name) {
    for (int i = 0; i < GB__MAX_PARAMS && route->params[i].name; i++)
        if (!strcmp(route->params[i].name, name)) return i;
    return -1;
}

static const char *check_text(const char *v, const gb__param_spec *spec) {
    size_t len = strlen(v);
    if (len < (size_t)spec->min) return "must not be empty";
    if (len > (size_t)spec->max) return "is too long";
    for (const unsigned char *p = (const unsigned char *)v, *end = p + len; p < end;) {
        unsigned cp;
        size_t n = gb_utf8_decode(p, (size_t)(end - p), &cp);
        if (!n) return "is not valid UTF-8";
        if (gb__is_control(cp)) return "contains a control character";
        p += n;
    }
    return NULL;
}

static const char *check_int(const char *v, const gb__param_spec *spec, double *out) {
    if (!*v || strlen(v) > 20) return "is not an integer";
    errno = 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*end || errno == ERANGE || (v[0] != '-' && (v[0] < '0' || v[0] > '9')))
        return "is not an integer";
    /* Compare in long long where the bounds are the int64 extremes. */
    if ((spec->min > (double)INT64_MIN && (double)x < spec->min) ||
        (spec->max < (double)INT64_MAX && (double)x > spec->max))
        return "is out of range";
    *out = (double)x;
    return NULL;
}

static const char *check_float(const char *v, const gb__param_spec *spec, double *out) {
    if (!*v || strlen(v) > 40) return "is not a number";
    char *end;
    double x = strtod(v, &end);
    if (*end || !isfinite(x) || strchr(v, 'x') || strchr(v, 'X')) return "is not a number";
    if (x < spec->min || x > spec->max) return "is out of range";
    *out = x;
    return NULL;
}

/* " (expected an integer in [1, 10000])", " (expected an integer >= -1)"...
 * for numeric parameters; "" for text, whose messages say it all. */
static void describe_range(const gb__param_spec *spec, char *buf, size_t size) {
    buf[0] = '\0';
    if (spec->kind == GB__PARAM_TEXT) return;
    const char *what = spec->kind == GB__PARAM_INT ? "an integer" : "a number";
    bool lo = spec->min > (double)INT64_MIN, hi = spec->max < (double)INT64_MAX;
    if (lo && hi) snprintf(buf, size, " (expected %s in [%.15g, %.15g])", what, spec->min, spec->max);
    else if (lo) snprintf(buf, size, " (expected %s >= %.15g)", what, spec->min);
    else if (hi) snprintf(buf, size, " (expected %s <= %.15g)", what, spec->max);
    else snprintf(buf, size, " (expected %s)", what);
}

/* Lists the accepted parameter names of a route into buf. */
static void accepted(const gb__route *route, char *buf, size_t size) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < GB__MAX_PARAMS && route->params[i].name; i++)
        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", i ? ", " : "",
                                route->params[i].name);
    if (!route->params[0].name) snprintf(buf, size, "none");
}

bool gb__validate_params(gb__request *req,
                         bool (*get)(void *ctx, size_t i, const char **name, const char **value),
                         void *ctx) {
    const gb__route *route = req->route;
    const char *name, *value;
    for (size_t i = 0; get(ctx, i, &name, &value); i++) {
        if (i >= GB__MAX_QUERY_PARAMS) {
            gb__fail(req, 400, "more than %d query parameters", GB__MAX_QUERY_PARAMS);
            return false;
        }
        if (check_text(name, &(gb__param_spec){.min = 1, .max = 64})) {
            gb__fail(req, 400, "malformed parameter name");
            return false;
        }
        int k = spec_index(route, name);
        if (k < 0) {
            char list[160];
            accepted(route, list, sizeof list);
            gb__fail(req, 400, "unknown parameter '%s' (accepted: %s)", name, list);
            return false;
        }
        if (req->present[k]) {
            gb__fail(req, 400, "parameter '%s' given more than once", name);
            return false;
        }
        const gb__param_spec *spec = &route->params[k];
        const char *why = !value                          ? "has no value"
                          : spec->kind == GB__PARAM_TEXT  ? check_text(value, spec)
                          : spec->kind == GB__PARAM_INT   ? check_int(value, spec, &req->num[k])
                                                          : check_float(value, spec, &req->num[k]);
        if (why) {
            char range[96];
            describe_range(spec, range, sizeof range);
            gb__fail(req, 400, "parameter '%s' %s%s", name, why, range);
            return false;
        }
        req->present[k] = true;
        req->text[k] = value;
    }
    for (int k = 0; k < GB__MAX_PARAMS && route->params[k].name; k++) {
        if (req->present[k]) continue;
        if (route->params[k].required) {
            gb__fail(req, 400, "missing required parameter '%s'", route->params[k].name);
            return false;
        }
        req->num[k] = route->params[k].fallback;
    }
    return true;
}

const char *gb__param_text(const gb__request *req, const char *name) {
    int k = spec_index(req->route, name);
    return k >= 0 && req->present[k] ? req->text[k] : NULL;
}

int64_t gb__param_int(const gb__request *req, const char *name) {
    int k = spec_index(req->route, name);
    if (k < 0) return 0;
    /* Exact for the extremes, which doubles cannot hold exactly. */
    if (req->present[k]) return strtoll(req->text[k], NULL, 10);
    double f = req->route->params[k].fallback;
    if (f <= (double)INT64_MIN) return INT64_MIN;
    if (f >= (double)INT64_MAX) return INT64_MAX;
    return (int64_t)f;
}

double gb__param_float(const gb__request *req, const char *name) {
    int k = spec_index(req->route, name);
    return k >= 0 ? req->num[k] : 0;
}

bool gb__param_present(const gb__request *req, const char *name) {
    int k = spec_index(req->route, name);
    return k >= 0 && req->present[k];
}
