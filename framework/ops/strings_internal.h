/* ops/strings_internal.h — what the string ops share with the other op
 * families (binary.c's run kernels for Add / Equal / NotEqual on strings,
 * the regex and decoding ops, lookup tables). */
#ifndef GB_OPS_STRINGS_INTERNAL_H
#define GB_OPS_STRINGS_INTERNAL_H

#include "ops/internal.h"

/* Whether input i is a string tensor; false after an error naming it. */
bool gb__need_strings(const gb_op_call *c, int i);
/* The code point at p (n bytes left) in *cp and its length in bytes, or
 * -1 for an invalid sequence (overlong, surrogate, past U+10FFFF, cut). */
int gb__utf8_next(const unsigned char *p, int64_t n, int32_t *cp);
/* Code point v (a valid one) as UTF-8 into b (room for 4); its length. */
int gb__utf8_put(int32_t v, char *b);
/* A string's 64-bit hash, the same on every machine and run (FNV-1a). */
uint64_t gb__string_hash(gb_string s);
/* Sets a's string attribute from a C string; false after an error naming
 * `fn` and `what` when it is NULL or longer than the attribute holds. */
bool gb__attr_string(gb_attrs *a, const char *fn, const char *what, const char *value);

/* A lookup table of the tokens of a vocabulary file's text (len bytes):
 * what gb_lookup_table_from_file parses, apart so it can be fuzzed; `what`
 * names the source in errors. */
gb_lookup_table *gb__vocabulary_parse(const char *what, const char *text, size_t len,
                                      int64_t default_value);

/* The id graphs name table t by. */
int64_t gb__lookup_table_id(const gb_lookup_table *t);

/* The table graphs name by id (NULL once freed); a table from n keys and
 * values (a repeat is an error naming `what`); a table's entries into
 * keys and values (gb_lookup_table_size of each; the keys view its bytes)
 * and its default. */
gb_lookup_table *gb__lookup_table_by_id(int64_t id);
gb_lookup_table *gb__lookup_table_make(const char *what, const gb_string *keys, const int64_t *values,
                                       int64_t n, int64_t default_value);
bool gb__lookup_table_export(const gb_lookup_table *t, gb_string *keys, int64_t *values,
                             int64_t *default_value);

/* Inputs 0 and 1 as ragged rows (values, int64 row_splits): the splits
 * start at 0, never decrease and end at the values' count; false after an
 * error naming the first bad split (ops/ragged.c). */
bool gb__check_row_splits(const gb_op_call *c);

/* Run kernels (ops/elementwise_types.h's gb_ew_run_fn) of string operands. */
void gb__string_concat_run(int layout, int64_t n, const void *a, const void *b, void *r);
void gb__string_equal_run(int layout, int64_t n, const void *a, const void *b, void *r);
void gb__string_not_equal_run(int layout, int64_t n, const void *a, const void *b, void *r);

#endif
