/* gb_json.h — a small streaming JSON writer with a hard size bound.
 *
 * The dashboard's responses are built with it: commas and nesting are
 * tracked for the caller, strings are escaped (so a run name can never
 * break out of its quotes), non-finite numbers become the strings "NaN",
 * "Infinity" and "-Infinity" (JSON has no literal for them, and the
 * browser must still see them to draw markers). Every write is checked
 * against a byte limit: a response can never grow without bound, and an
 * overflow is sticky and reported once by gb__json_finish.
 */
#ifndef GB_JSON_H
#define GB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GB__JSON_MAX_DEPTH 32

typedef struct gb__json {
    char *buf;
    size_t len, cap, limit;
    bool failed;                          /* out of memory or over limit */
    int depth;
    bool need_comma[GB__JSON_MAX_DEPTH];  /* per nesting level */
    bool after_key;                       /* the next value follows a key */
} gb__json;

/* Starts an empty writer that refuses to grow past `limit` bytes. */
void gb__json_init(gb__json *j, size_t limit);
/* Frees the buffer (after an error, or when the caller does not take it). */
void gb__json_free(gb__json *j);
/* Hands the finished text to the caller (malloc'ed, NUL-terminated) and
 * its length; NULL when the writer failed or nesting is unbalanced. */
char *gb__json_finish(gb__json *j, size_t *len);

void gb__json_obj(gb__json *j);
void gb__json_obj_end(gb__json *j);
void gb__json_arr(gb__json *j);
void gb__json_arr_end(gb__json *j);
void gb__json_key(gb__json *j, const char *key);
void gb__json_str(gb__json *j, const char *s);
void gb__json_strn(gb__json *j, const char *s, size_t n);
void gb__json_int(gb__json *j, int64_t v);
/* Shortest text that reads back as the same double; NaN/Inf as strings. */
void gb__json_num(gb__json *j, double v);
/* A wall-clock time in seconds, to the microsecond (shorter than exact). */
void gb__json_time(gb__json *j, double seconds);
void gb__json_bool(gb__json *j, bool v);
void gb__json_null(gb__json *j);
/* Appends s[0..n), one JSON value already checked well-formed (a detail
 * span from the reader: gb_trace_detail_parse); false, writing nothing,
 * when it holds bytes that are not UTF-8. */
bool gb__json_raw(gb__json *j, const char *s, size_t n);

/* key + value shorthands for objects */
#define GB__JSON_KV(j, k, kind, v) (gb__json_key((j), (k)), gb__json_##kind((j), (v)))

#endif
