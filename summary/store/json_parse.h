/* store/json_parse.h — the JSON pull parser the detail readers share
 * (store/json_parse.c). Every function skips white space first, consumes
 * what it read, and returns false (or -1) when the text is not that. */
#ifndef GB_STORE_JSON_PARSE_H
#define GB_STORE_JSON_PARSE_H

#include "store/internal.h"

#define GB__JP_MAX_DEPTH 16   /* of nested values skipped */

typedef struct gb__jp {
    const char *p;
    int depth;
} gb__jp;

void gb__jp_ws(gb__jp *ps);
/* Consumes c (after white space) if it is next. */
bool gb__jp_eat(gb__jp *ps, char c);
bool gb__jp_word(gb__jp *ps, const char *w);
/* A string into out (NULL: skipped): its decoded length (out holds at most
 * size - 1 bytes, NUL-terminated), or -1 if it is not a valid string. */
long gb__jp_string(gb__jp *ps, char *out, size_t size);
/* A string that must fit out entirely. */
bool gb__jp_string_into(gb__jp *ps, char *out, size_t size);
/* A number (strict grammar); null reads as NaN when allow_null. */
bool gb__jp_number(gb__jp *ps, double *out, bool allow_null);
/* An integer in [lo, hi] (whole numbers only; exact below 2^53). */
bool gb__jp_integer(gb__jp *ps, int64_t lo, int64_t hi, int64_t *out);
bool gb__jp_boolean(gb__jp *ps, gb_tristate *out);
/* Any value, checked and skipped (at most GB__JP_MAX_DEPTH deep). */
bool gb__jp_skip_value(gb__jp *ps);
/* Calls member(ps, key, ctx) for each member (it must consume the value);
 * keys longer than 31 bytes are skipped as unknown. */
typedef bool (*gb__jp_member_fn)(gb__jp *ps, const char *key, void *ctx);
bool gb__jp_object(gb__jp *ps, gb__jp_member_fn member, void *ctx);
/* Calls element(ps, i, ctx) for each element of an array. */
typedef bool (*gb__jp_element_fn)(gb__jp *ps, size_t i, void *ctx);
bool gb__jp_array(gb__jp *ps, gb__jp_element_fn element, void *ctx);

#endif
