/* test_ops_strings.c — string tensors (GB_STRING) and the string ops.
 *
 * The dtype: creation from C strings and from bytes with NUL, reading
 * elements back, ownership (the bytes are the tensor's own; gb_keep and a
 * function's outputs take them along), printing as TensorFlow does, and
 * non-differentiability. Each op against hand-computed values, eagerly
 * and traced (bit for bit the same, through assert_calls_like_eager), on
 * empty strings, NUL bytes, a 1 MB string and invalid UTF-8, and each
 * error word for word.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glassbox.h"
#include "graph_test_util.h"
#include "ops/internal.h"
#include "test_util.h"

#define STRS(shape, ...) gb_strings((const char *const[]){__VA_ARGS__}, GB_SHAPE shape)

/* Element i of t is exactly the len bytes at want. */
static void assert_bytes(const gb_tensor *t, int64_t i, const char *want, int64_t len) {
    ck_assert_msg(t != NULL, "NULL tensor: %s", gb_error_string());
    gb_string s = gb_get_string(t, i);
    ck_assert_msg(s.len == len && memcmp(s.data, want, (size_t)len) == 0,
                  "element %lld: got %lld bytes '%.*s', want %lld '%.*s'", (long long)i,
                  (long long)s.len, (int)(s.len > 0 ? s.len : 0), s.data, (long long)len,
                  (int)len, want);
}
#define ASSERT_STR(t, i, lit) assert_bytes((t), (i), (lit), (int64_t)strlen(lit))

static void assert_repr(const gb_tensor *t, const char *want) {
    char buf[512];
    ck_assert_str_eq(gb_tensor_repr(t, buf, sizeof buf), want);
}

/* ---- eager against traced ---------------------------------------------------------------- */

typedef gb_tensor *(*unary_fn)(gb_tensor *x);

static int apply_unary(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = ((unary_fn)user)(in[0]);
    return out[0] ? 1 : -1;
}

/* fn(x) eagerly and in a traced function, the same bytes; returns the
 * eager result. */
static gb_tensor *both(unary_fn fn, gb_tensor *x) {
    gb_function *f = gb_function_new("strings_op", apply_unary, &(gb_function_options){
                                                                    .user = (void *)fn});
    assert_calls_like_eager(f, apply_unary, (void *)fn, &x, 1);
    gb_tensor *y = fn(x);
    gb_function_free(f);
    return y;
}

static int ngrams_1_to_3(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out);

/* ---- the dtype ------------------------------------------------------------------------- */

START_TEST(test_create_and_read) {
    gb_tensor *t = STRS((2, 2), "a", "", "hello", "é");
    ck_assert_int_eq(gb_tensor_dtype(t), GB_STRING);
    ck_assert_str_eq(gb_dtype_name(GB_STRING), "string");
    ck_assert_int_eq(gb_size(t), 4);
    ASSERT_STR(t, 0, "a");
    ASSERT_STR(t, 1, "");
    ASSERT_STR(t, 2, "hello");
    ASSERT_STR(t, 3, "\xc3\xa9");
    const gb_string *all = gb_data_strings(t);
    ck_assert_int_eq(all[2].len, 5);
    ck_assert_int_eq(gb_get_string(t, 4).len, -1);
    ck_assert_ptr_null(gb_get_string(gb_scalar(GB_F32, 1), 0).data);
    gb_string item = gb_item_string(gb_string_scalar("one"));
    ck_assert_int_eq(item.len, 3);
    ck_assert_int_eq(gb_item_string(t).len, -1);
    ck_assert_ptr_null(gb_data_strings(gb_scalar(GB_F32, 1)));
    /* zeros are empty strings; any other number is refused */
    gb_tensor *z = gb_zeros(GB_STRING, GB_SHAPE(2));
    ASSERT_STR(z, 1, "");
    ck_assert_ptr_null(gb_fill(GB_STRING, GB_SHAPE(2), 1.0));
    assert_error_text(GB_ERR_DTYPE, "gb_fill: a string tensor cannot hold the number 1; gb_zeros "
                                    "gives empty strings, gb_strings_fill any other");
}
END_TEST

START_TEST(test_nul_bytes_are_kept) {
    gb_tensor *t = gb_string_bytes("a\0b\0", 4);
    assert_bytes(t, 0, "a\0b\0", 4);
    gb_tensor *two = gb_add(t, t);
    assert_bytes(two, 0, "a\0b\0a\0b\0", 8);
    ck_assert_int_eq((int)gb_item(gb_strings_length(two, false)), 8);
    assert_repr(t, "tf.Tensor(b'a\\x00b\\x00', shape=(), dtype=string)");
    gb_string parts[2] = {{"x\0y", 3}, {NULL, 0}};
    gb_tensor *p = gb_strings_from(parts, GB_SHAPE(2));
    assert_bytes(p, 0, "x\0y", 3);
    assert_bytes(p, 1, "", 0);
    ck_assert_ptr_null(gb_strings_from((gb_string[]){{NULL, 2}}, GB_SHAPE(1)));
    assert_error_text(GB_ERR_VALUE, "gb_tensor_from: string element 0 has no bytes (data is NULL)");
    ck_assert_ptr_null(gb_strings((const char *const[]){"a", NULL}, GB_SHAPE(2)));
    assert_error_text(GB_ERR_VALUE, "gb_strings: string 1 is NULL");
}
END_TEST

/* The tensor copies the caller's bytes: changing them after changes nothing. */
START_TEST(test_tensor_owns_its_bytes) {
    char buf[] = "mutable";
    gb_tensor *t = gb_strings((const char *const[]){buf}, GB_SHAPE(1));
    buf[0] = 'X';
    ASSERT_STR(t, 0, "mutable");
}
END_TEST

/* gb_keep moves the bytes to the parent scope: the inner scope's memory
 * is gone (and reused) once it ends. */
START_TEST(test_keep_moves_the_bytes) {
    gb_scope_begin();
    gb_tensor *a = gb_string_scalar("kept ");
    gb_tensor *k = gb_keep(gb_add(a, gb_string_scalar("value")));
    gb_scope_end();
    gb_scope_begin();
    gb_string_scalar("something else entirely, to reuse the memory");
    gb_scope_end();
    ASSERT_STR(k, 0, "kept value");
}
END_TEST

START_TEST(test_one_megabyte_string) {
    int64_t n = 1 << 20;
    char *big = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) big[i] = (char)('A' + i % 26);
    big[n / 2] = '\0';
    gb_tensor *t = gb_string_bytes(big, n);
    gb_tensor *lower = gb_strings_lower(t);
    gb_string s = gb_item_string(lower);
    ck_assert_int_eq(s.len, n);
    ck_assert_int_eq(s.data[1], 'b');
    ck_assert_int_eq(s.data[n / 2], '\0');
    ck_assert_int_eq((int)gb_item(gb_strings_length(gb_add(t, t), false)), 2 * n);
    gb_tensor *tail = gb_substr(t, -3, 10, false);
    assert_bytes(tail, 0, big + n - 3, 3);
    /* traced like eager, byte for byte */
    ck_assert_int_eq(gb_item_string(both(gb_strings_upper, t)).len, n);
    /* a megabyte of words through a traced split and its bigrams */
    for (int64_t i = 0; i < n; i++) big[i] = i % 8 == 7 ? ' ' : (char)('a' + i % 7);
    gb_tensor *words = gb_reshape(gb_string_bytes(big, n), 1, (int64_t[]){1}), *grams[2];
    gb_function *f = gb_function_new("ngrams", ngrams_1_to_3, NULL);
    assert_calls_like_eager(f, ngrams_1_to_3, NULL, &words, 1);
    ck_assert(ngrams_1_to_3(NULL, &words, 1, NULL, 0, grams) == 2);
    ck_assert_int_eq(gb_size(grams[0]), 3 * (n / 8) - 3); /* n/8 words: 1-, 2- and 3-grams */
    gb_function_free(f);
    free(big);
}
END_TEST

START_TEST(test_repr_as_tensorflow) {
    assert_repr(gb_string_scalar("aa"), "tf.Tensor(b'aa', shape=(), dtype=string)");
    assert_repr(STRS((2), "it's", "\n"), "tf.Tensor([b'it\\'s' b'\\n'], shape=(2,), dtype=string)");
    assert_repr(gb_scalar(GB_I32, 2), "tf.Tensor(2, shape=(), dtype=int32)");
    assert_repr(gb_scalar(GB_F32, 2.2), "tf.Tensor(2.2, shape=(), dtype=float32)");
    assert_repr(gb_scalar(GB_F32, 2), "tf.Tensor(2.0, shape=(), dtype=float32)");
    assert_repr(gb_from_f32((const float[]){1, 2.5f, 3, 4}, GB_SHAPE(2, 2)),
                "tf.Tensor(\n[[1. 2.5]\n [3. 4.]], shape=(2, 2), dtype=float32)");
    assert_repr(gb_tensor_from(GB_BOOL, (const uint8_t[]){1, 0}, GB_SHAPE(1, 2)),
                "tf.Tensor([[True False]], shape=(1, 2), dtype=bool)");
}
END_TEST

/* A string is no gradient source and no path: the tape says so and the
 * gradient is unconnected. */
START_TEST(test_not_differentiable) {
    gb_tensor *x = gb_scalar(GB_F32, 1.5);
    gb_tensor *s = gb_string_scalar("x");
    gb_tape *tape = gb_tape_begin();
    gb_tape_watch(tape, x);
    gb_tape_watch(tape, s);
    gb_tensor *y = gb_string_to_number(gb_as_string(x, 2), GB_F32);
    ck_assert_double_eq(gb_item(y), 1.5);
    gb_tensor *grads[2];
    int warnings = gb_warning_count();
    gb_tensor *src[2] = {x, s};
    ck_assert(gb_tape_gradients(tape, y, src, 2, grads));
    ck_assert_ptr_null(grads[0]); /* through a string: unconnected */
    ck_assert_ptr_null(grads[1]);
    ck_assert_int_eq(gb_warning_count(), warnings + 1);
    ck_assert_str_eq(gb_last_warning(), "the dtype of gradient source 1 must be floating (float32 "
                                        "or float64), got string: its gradient is NULL");
    gb_tape_end(tape);
}
END_TEST

/* ---- ops ---------------------------------------------------------------------------------- */

static gb_tensor *twice(gb_tensor *x) { return gb_add(x, x); }
static gb_tensor *with_bang(gb_tensor *x) { return gb_add(x, gb_string_scalar("!")); }

START_TEST(test_add_concatenates_with_broadcasting) {
    ASSERT_STR(both(twice, gb_string_scalar("a")), 0, "aa");
    gb_tensor *r = both(with_bang, STRS((3), "x", "", "yz"));
    ASSERT_STR(r, 0, "x!");
    ASSERT_STR(r, 1, "!");
    ASSERT_STR(r, 2, "yz!");
    gb_tensor *m = gb_add(STRS((2, 1), "a", "b"), STRS((3), "1", "2", "3"));
    ck_assert_int_eq(gb_size(m), 6);
    ASSERT_STR(m, 4, "b2");
    ck_assert_ptr_null(gb_add(STRS((2), "a", "b"), STRS((3), "1", "2", "3")));
    assert_error_text(GB_ERR_SHAPE, "Add: incompatible shapes [2] and [3] (dimension 0: 2 vs 3)");
    ck_assert_ptr_null(gb_add(gb_string_scalar("a"), gb_scalar(GB_F32, 1)));
    assert_error_text(GB_ERR_DTYPE, "Add: dtype mismatch: string vs float32");
    ck_assert_ptr_null(gb_mul(gb_string_scalar("a"), gb_string_scalar("b")));
    assert_error(GB_ERR_DTYPE, "string");
}
END_TEST

static gb_tensor *eq_abc(gb_tensor *x) { return gb_equal(x, STRS((3), "a", "b\0", "")); }

START_TEST(test_equal_compares_bytes) {
    gb_tensor *e = both(eq_abc, STRS((3), "a", "b", ""));
    ck_assert_double_eq(gb_get(e, 0), 1);
    ck_assert_double_eq(gb_get(e, 1), 1); /* "b\0" as a C string is "b" */
    ck_assert_double_eq(gb_get(e, 2), 1);
    gb_tensor *nul = gb_equal(gb_string_bytes("b\0", 2), gb_string_bytes("b", 1));
    ck_assert_double_eq(gb_item(nul), 0);
    ck_assert_double_eq(gb_item(gb_not_equal(gb_string_scalar("x"), gb_string_scalar("y"))), 1);
}
END_TEST

static gb_tensor *join3(gb_tensor *x) {
    gb_tensor *in[3] = {x, gb_string_scalar("mid"), x};
    return gb_strings_join(in, 3, ", ");
}

START_TEST(test_join) {
    gb_tensor *j = both(join3, STRS((2), "a", ""));
    ASSERT_STR(j, 0, "a, mid, a");
    ASSERT_STR(j, 1, ", mid, ");
    gb_tensor *bad[2] = {STRS((2), "a", "b"), STRS((3), "a", "b", "c")};
    ck_assert_ptr_null(gb_strings_join(bad, 2, ""));
    assert_error_text(GB_ERR_SHAPE, "StringJoin: input 1 has shape [3], input 0 [2]: inputs must be "
                                    "of one shape or scalars");
    gb_tensor *num[1] = {gb_scalar(GB_F32, 1)};
    ck_assert_ptr_null(gb_strings_join(num, 1, ""));
    assert_error_text(GB_ERR_DTYPE, "StringJoin: input 0 must be a string tensor, got float32");
    char long_sep[80];
    memset(long_sep, '-', sizeof long_sep - 1);
    long_sep[79] = '\0';
    ck_assert_ptr_null(gb_strings_join(num, 1, long_sep));
    assert_error_text(GB_ERR_VALUE, "gb_strings_join: the separator is 79 bytes, more than the 63 "
                                    "an op holds");
}
END_TEST

static gb_tensor *len_bytes(gb_tensor *x) { return gb_strings_length(x, false); }
static gb_tensor *len_chars(gb_tensor *x) { return gb_strings_length(x, true); }

START_TEST(test_length_bytes_and_chars) {
    gb_tensor *x = STRS((3), "héllo", "", "日本");
    gb_tensor *b = both(len_bytes, x), *c = both(len_chars, x);
    ck_assert_int_eq(gb_tensor_dtype(b), GB_I32);
    ck_assert_double_eq(gb_get(b, 0), 6);
    ck_assert_double_eq(gb_get(b, 1), 0);
    ck_assert_double_eq(gb_get(b, 2), 6);
    ck_assert_double_eq(gb_get(c, 0), 5);
    ck_assert_double_eq(gb_get(c, 2), 2);
    /* bad UTF-8: a lone continuation byte, an overlong '/', a surrogate, a cut sequence */
    const char *bad[] = {"ok\x80", "\xc0\xaf", "\xed\xa0\x80", "ab\xe6\x97"};
    for (int i = 0; i < 4; i++) {
        ck_assert_ptr_null(gb_strings_length(STRS((2), "fine", bad[i]), true));
        const char *at[] = {"2", "0", "0", "2"};
        char want[160];
        snprintf(want, sizeof want,
                 "StringLength: element 1 is not valid UTF-8 (a bad sequence at byte %s)", at[i]);
        assert_error_text(GB_ERR_VALUE, "%s", want);
    }
    ck_assert_double_eq(gb_item(gb_strings_length(gb_string_scalar("\xc0\xaf"), false)), 2);
}
END_TEST

static gb_tensor *first_two_chars(gb_tensor *x) { return gb_substr(x, 0, 2, true); }
static gb_tensor *last_byte(gb_tensor *x) { return gb_substr(x, -1, 1, false); }

START_TEST(test_substr) {
    gb_tensor *x = STRS((3), "日本語", "ab", "x");
    gb_tensor *c = both(first_two_chars, x);
    ASSERT_STR(c, 0, "日本");
    ASSERT_STR(c, 1, "ab");
    ASSERT_STR(c, 2, "x");
    gb_tensor *b = both(last_byte, STRS((2), "abc", "z"));
    ASSERT_STR(b, 0, "c");
    ASSERT_STR(b, 1, "z");
    ck_assert_ptr_null(gb_substr(STRS((2), "abc", "z"), 2, 1, false));
    assert_error_text(GB_ERR_VALUE, "Substr: pos 2 is out of range for element 1 of 1 bytes");
    ck_assert_ptr_null(gb_substr(x, 0, -1, false));
    assert_error_text(GB_ERR_VALUE, "Substr: len must be >= 0, got -1");
    ASSERT_STR(gb_substr(gb_string_scalar(""), 0, 5, false), 0, "");
}
END_TEST

START_TEST(test_lower_upper) {
    gb_tensor *x = STRS((2), "Hello, World 42", "ÉtÉ");
    gb_tensor *lo = both(gb_strings_lower, x), *up = both(gb_strings_upper, x);
    ASSERT_STR(lo, 0, "hello, world 42");
    ASSERT_STR(lo, 1, "ÉtÉ"); /* ASCII only, as TensorFlow's default */
    ASSERT_STR(up, 0, "HELLO, WORLD 42");
    ck_assert_ptr_null(gb_strings_upper(gb_scalar(GB_I32, 1)));
    assert_error_text(GB_ERR_DTYPE, "StringUpper: input 0 must be a string tensor, got int32");
}
END_TEST

static int split_ws(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    return gb_strings_split(in[0], "", -1, &out[0], &out[1]) ? 2 : -1;
}

START_TEST(test_split_ragged) {
    gb_tensor *x = STRS((4), "  the quick\tfox ", "", "one", "a  b");
    gb_function *f = gb_function_new("split", split_ws, NULL);
    assert_calls_like_eager(f, split_ws, NULL, &x, 1);
    gb_tensor *tok, *splits;
    ck_assert(gb_strings_split(x, "", -1, &tok, &splits));
    ck_assert_int_eq(gb_size(tok), 6);
    const char *want[] = {"the", "quick", "fox", "one", "a", "b"};
    for (int i = 0; i < 6; i++) ASSERT_STR(tok, i, want[i]);
    const int64_t rs[] = {0, 3, 3, 4, 6};
    for (int i = 0; i < 5; i++) ck_assert_double_eq(gb_get(splits, i), (double)rs[i]);
    /* a separator keeps empty tokens; maxsplit keeps the rest whole */
    ck_assert(gb_strings_split(STRS((1), "x,,y,z"), ",", 2, &tok, &splits));
    ck_assert_int_eq(gb_size(tok), 3);
    ASSERT_STR(tok, 1, "");
    ASSERT_STR(tok, 2, "y,z");
    ck_assert(!gb_strings_split(gb_string_scalar("a b"), "", -1, &tok, &splits));
    assert_error_text(GB_ERR_SHAPE, "StringSplitV2: input must be rank 1 (a batch of strings), got []");
    /* traced with an unknown batch: the tokens' count is known only at run */
    gb_function *g = gb_function_new(
        "split_batch", split_ws,
        &(gb_function_options){.input_signature = (gb_tensor_spec[]){GB_SPEC("x", GB_STRING, -1)},
                               .ninput_signature = 1});
    gb_tensor *y = STRS((2), "p q", "r");
    assert_calls_like_eager(g, split_ws, NULL, &y, 1);
    assert_calls_like_eager(g, split_ws, NULL, &x, 1);
    ck_assert_int_eq(gb_function_tracing_count(g), 1);
    gb_function_free(f);
    gb_function_free(g);
}
END_TEST

/* split on whitespace, then 1- to 3-grams joined by "_" */
static int ngrams_1_to_3(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *tok, *splits;
    return gb_strings_split(in[0], "", -1, &tok, &splits) &&
                   gb_strings_ngrams(tok, splits, 1, 3, "_", &out[0], &out[1])
               ? 2
               : -1;
}

START_TEST(test_ngrams) {
    /* a row of 3 tokens, an empty row, one of 1 token, one of 2 with a NUL byte */
    gb_tensor *x = gb_strings_from((const gb_string[]){{"a b c", 5}, {"", 0}, {"x", 1}, {"p q\0", 4}},
                                   GB_SHAPE(4));
    gb_function *f = gb_function_new(
        "ngrams", ngrams_1_to_3,
        &(gb_function_options){.input_signature = (gb_tensor_spec[]){GB_SPEC("x", GB_STRING, -1)},
                               .ninput_signature = 1});
    assert_calls_like_eager(f, ngrams_1_to_3, NULL, &x, 1);
    gb_tensor *y = STRS((1), "");
    assert_calls_like_eager(f, ngrams_1_to_3, NULL, &y, 1);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_tensor *out[2];
    ck_assert(ngrams_1_to_3(NULL, &x, 1, NULL, 0, out) == 2);
    const char *const want[] = {"a", "b", "c", "a_b", "b_c", "a_b_c", "x", "p", "q", "p_q"};
    ck_assert_int_eq(gb_size(out[0]), 10);
    for (int i = 0; i < 7; i++) ASSERT_STR(out[0], i, want[i]);
    assert_bytes(out[0], 8, "q\0", 2);
    assert_bytes(out[0], 9, "p_q\0", 4);
    const int64_t rs[] = {0, 6, 6, 7, 10};
    for (int i = 0; i < 5; i++) ck_assert_double_eq(gb_get(out[1], i), (double)rs[i]);
    /* widths 2..2 only */
    gb_tensor *tok, *splits, *g, *gs;
    ck_assert(gb_strings_split(STRS((1), "a b c"), "", -1, &tok, &splits));
    ck_assert(gb_strings_ngrams(tok, splits, 2, 2, " ", &g, &gs));
    ck_assert_int_eq(gb_size(g), 2);
    ASSERT_STR(g, 0, "a b");
    ASSERT_STR(g, 1, "b c");
    /* errors, word for word */
    ck_assert(!gb_strings_ngrams(tok, splits, 0, 2, " ", &g, &gs));
    assert_error_text(GB_ERR_VALUE, "StringNGrams: widths must satisfy 1 <= min_width <= max_width, "
                                    "got 0 and 2");
    ck_assert(!gb_strings_ngrams(tok, gb_tensor_from(GB_I64, (const int64_t[]){0, 5}, GB_SHAPE(2)), 1,
                                 2, " ", &g, &gs));
    assert_error_text(GB_ERR_VALUE, "StringNGrams: row_splits[1] = 5 is not a split of 3 values "
                                    "(from 0, non-decreasing, ending at the count)");
    ck_assert(!gb_strings_ngrams(splits, splits, 1, 2, " ", &g, &gs));
    assert_error_text(GB_ERR_DTYPE, "StringNGrams: input 0 must be a string tensor, got int64");
    gb_function_free(f);
}
END_TEST

static gb_tensor *bucket(gb_tensor *x) { return gb_strings_to_hash_bucket(x, 1000); }

START_TEST(test_hash_bucket) {
    gb_tensor *h = both(bucket, STRS((3), "", "a", "a"));
    ck_assert_int_eq(gb_tensor_dtype(h), GB_I64);
    /* FNV-1a 64: "" is the offset basis 14695981039346656037; "a" 12638187200555641996 */
    ck_assert_double_eq(gb_get(h, 0), 37);
    ck_assert_double_eq(gb_get(h, 1), 996);
    ck_assert_double_eq(gb_get(h, 2), 996);
    ck_assert_ptr_null(gb_strings_to_hash_bucket(gb_string_scalar("a"), 0));
    assert_error_text(GB_ERR_VALUE, "StringToHashBucketFast: num_buckets must be >= 1, got 0");
}
END_TEST

static gb_tensor *to_f32(gb_tensor *x) { return gb_string_to_number(x, GB_F32); }
static gb_tensor *to_i64(gb_tensor *x) { return gb_string_to_number(x, GB_I64); }

START_TEST(test_string_to_number) {
    gb_tensor *f = both(to_f32, STRS((3), "1.5", "-2e3", "inf"));
    ck_assert_double_eq(gb_get(f, 0), 1.5);
    ck_assert_double_eq(gb_get(f, 1), -2000);
    ck_assert(gb_get(f, 2) > 1e300);
    gb_tensor *i = both(to_i64, STRS((2), "9007199254740993", "-7"));
    ck_assert_int_eq(((const int64_t *)gb_data(i))[0], 9007199254740993LL);
    ck_assert_ptr_null(gb_string_to_number(STRS((3), "1", "2", "3.5x"), GB_F32));
    assert_error_text(GB_ERR_VALUE, "StringToNumber: element 2, b'3.5x', is not a valid float32");
    ck_assert_ptr_null(gb_string_to_number(STRS((2), "1", " 2"), GB_I32));
    assert_error_text(GB_ERR_VALUE, "StringToNumber: element 1, b' 2', is not a valid int32");
    ck_assert_ptr_null(gb_string_to_number(STRS((1), "3000000000"), GB_I32));
    assert_error_text(GB_ERR_VALUE, "StringToNumber: element 0, b'3000000000', is not a valid int32");
    ck_assert_ptr_null(gb_string_to_number(STRS((1), ""), GB_F64));
    assert_error_text(GB_ERR_VALUE, "StringToNumber: element 0, b'', is not a valid float64");
    ck_assert_ptr_null(gb_string_to_number(gb_string_bytes("1\0", 2), GB_F64));
    assert_error_text(GB_ERR_VALUE, "StringToNumber: element 0, b'1\\x00', is not a valid float64");
    ck_assert_ptr_null(gb_string_to_number(STRS((1), "1e39"), GB_F32));
    assert_error_text(GB_ERR_VALUE, "StringToNumber: element 0, b'1e39', is not a valid float32");
    ck_assert_ptr_null(gb_string_to_number(STRS((1), "1"), GB_BOOL));
    assert_error_text(GB_ERR_DTYPE, "StringToNumber: out_type must be float32, float64, int32 or "
                                    "int64, got bool");
}
END_TEST

static gb_tensor *as_str(gb_tensor *x) { return gb_as_string(x, -1); }

START_TEST(test_as_string) {
    gb_tensor *s = both(as_str, gb_from_f32((const float[]){1.5f, -0.25f}, GB_SHAPE(2)));
    ASSERT_STR(s, 0, "1.500000");
    ASSERT_STR(s, 1, "-0.250000");
    gb_tensor *i = both(as_str, gb_tensor_from(GB_I64, (const int64_t[]){-9007199254740993LL},
                                               GB_SHAPE(1)));
    ASSERT_STR(i, 0, "-9007199254740993");
    ASSERT_STR(gb_as_string(gb_tensor_from(GB_BOOL, (const uint8_t[]){1, 0}, GB_SHAPE(2)), -1), 1,
               "false");
    ASSERT_STR(gb_as_string(gb_scalar(GB_F64, 3.14159), 2), 0, "3.14");
    ck_assert_ptr_null(gb_as_string(gb_string_scalar("a"), -1));
    assert_error_text(GB_ERR_DTYPE, "AsString: input is a string tensor already");
}
END_TEST

static gb_tensor *is_word(gb_tensor *x) { return gb_regex_full_match(x, "\\w+"); }
static gb_tensor *vowels(gb_tensor *x) { return gb_regex_replace(x, "([aeiou])", "<$1>", true); }
static gb_tensor *first_vowel(gb_tensor *x) { return gb_regex_replace(x, "[aeiou]", "_", false); }

START_TEST(test_regex) {
    gb_tensor *x = STRS((4), "hello", "two words", "", "été");
    gb_tensor *m = both(is_word, x);
    ck_assert_int_eq(gb_tensor_dtype(m), GB_BOOL);
    ck_assert_double_eq(gb_get(m, 0), 1);
    ck_assert_double_eq(gb_get(m, 1), 0);
    ck_assert_double_eq(gb_get(m, 2), 0);
    gb_tensor *r = both(vowels, x);
    ASSERT_STR(r, 0, "h<e>ll<o>");
    ASSERT_STR(r, 1, "tw<o> w<o>rds");
    ASSERT_STR(r, 2, "");
    ASSERT_STR(both(first_vowel, x), 1, "tw_ words");
    /* NUL bytes and invalid UTF-8 in the subject */
    gb_tensor *n = gb_regex_replace(gb_string_bytes("a\0a\xff", 4), "a", "b", true);
    assert_bytes(n, 0, "b\0b\xff", 4);
    ck_assert_ptr_null(gb_regex_full_match(x, "("));
    assert_error_text(GB_ERR_VALUE, "RegexFullMatch: the pattern '(' does not compile: missing "
                                    "closing parenthesis (at offset 1)");
    ck_assert_ptr_null(gb_regex_replace(x, "o", "$9", true));
    assert_error_text(GB_ERR_VALUE, "RegexReplace: rewriting element 0 failed: unknown substring");
    gb_tensor *in[3] = {x, STRS((1), "a"), gb_string_scalar("")};
    ck_assert_ptr_null(gb__op1(GB_OP_REGEX_REPLACE, in, 3, NULL));
    assert_error_text(GB_ERR_SHAPE, "RegexReplace: the pattern (input 1) must be a scalar, got shape [1]");
}
END_TEST

static gb_lookup_table *the_table;
static gb_tensor *find_ids(gb_tensor *x) { return gb_lookup_table_find(the_table, x); }

START_TEST(test_static_hash_table) {
    the_table = gb_static_hash_table_new(STRS((3), "cat", "", "dog"),
                                         gb_tensor_from(GB_I64, (const int64_t[]){5, 6, 7}, GB_SHAPE(3)),
                                         -1);
    ck_assert_int_eq(gb_lookup_table_size(the_table), 3);
    gb_tensor *ids = both(find_ids, STRS((2, 2), "dog", "bird", "", "cat"));
    const double want[] = {7, -1, 6, 5};
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(ids, i), want[i]);
    ck_assert_double_eq(gb_item(gb_lookup_table_find(the_table, gb_string_bytes("cat\0", 4))), -1);
    gb_lookup_table_free(the_table);
    ck_assert_ptr_null(gb_lookup_table_find(the_table = NULL, gb_string_scalar("x")));
    assert_error_text(GB_ERR_VALUE, "gb_lookup_table_find: the table is NULL");
    ck_assert_ptr_null(gb_static_hash_table_new(STRS((2), "a", "a"),
                                                gb_tensor_from(GB_I64, (const int64_t[]){1, 2}, GB_SHAPE(2)), 0));
    assert_error_text(GB_ERR_VALUE, "gb_static_hash_table_new: key 1, b'a', is a repeat of an earlier key");
    ck_assert_ptr_null(gb_static_hash_table_new(STRS((2), "a", "b"), gb_scalar(GB_I64, 1), 0));
    assert_error_text(GB_ERR_VALUE, "gb_static_hash_table_new: keys must be an eager rank-1 string "
                                    "tensor and values int64 of its shape, got string [2] and int64 []");
}
END_TEST

/* A graph that names a freed table fails by name at its next run. */
START_TEST(test_freed_table_in_a_graph) {
    the_table = gb_static_hash_table_new(STRS((1), "a"), gb_tensor_from(GB_I64, (const int64_t[]){3}, GB_SHAPE(1)), 0);
    gb_function *f = gb_function_new("find", apply_unary, &(gb_function_options){.user = (void *)find_ids});
    gb_tensor *x = STRS((1), "a"), *y;
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
    ck_assert_double_eq(gb_item(y), 3);
    gb_lookup_table_free(the_table);
    ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), -1);
    check_error(GB_ERR_STATE, "was freed");
    gb_clear_error();
    gb_function_free(f);
}
END_TEST

START_TEST(test_vocabulary_file) {
    const char *path = in_test_dir("vocab.txt");
    FILE *fp = fopen(path, "wb");
    fputs("[UNK]\r\nthe\r\nfox", fp);
    fclose(fp);
    gb_lookup_table *t = gb_lookup_table_from_file(path, 0);
    ck_assert_int_eq(gb_lookup_table_size(t), 3);
    gb_tensor *ids = gb_lookup_table_find(t, STRS((3), "fox", "the", "cow"));
    ck_assert_double_eq(gb_get(ids, 0), 2);
    ck_assert_double_eq(gb_get(ids, 1), 1);
    ck_assert_double_eq(gb_get(ids, 2), 0);
    gb_lookup_table_free(t);
    fp = fopen(path, "wb");
    fputs("a\n\nb\n", fp);
    fclose(fp);
    ck_assert_ptr_null(gb_lookup_table_from_file(path, 0));
    char want[300];
    snprintf(want, sizeof want, "vocabulary %s: line 2 is empty; every line is one token", path);
    assert_error_text(GB_ERR_VALUE, "%s", want);
    ck_assert_ptr_null(gb_lookup_table_from_file(in_test_dir("missing.txt"), 0));
    check_error(GB_ERR_IO, "missing.txt");
    gb_clear_error();
}
END_TEST

static int decode_strict(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                         gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    return gb_unicode_decode(in[0], GB_UNICODE_STRICT, &out[0], &out[1]) ? 2 : -1;
}

START_TEST(test_unicode_decode_encode) {
    gb_tensor *x = STRS((3), "aé", "", "日本"), *cp, *splits;
    gb_function *f = gb_function_new("decode", decode_strict, NULL);
    assert_calls_like_eager(f, decode_strict, NULL, &x, 1);
    gb_function_free(f);
    ck_assert(gb_unicode_decode(x, GB_UNICODE_STRICT, &cp, &splits));
    const double want[] = {97, 233, 0x65E5, 0x672C}, rs[] = {0, 2, 2, 4};
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(cp, i), want[i]);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(splits, i), rs[i]);
    gb_tensor *back = gb_unicode_encode(cp, splits, GB_UNICODE_STRICT);
    ASSERT_STR(back, 0, "aé");
    ASSERT_STR(back, 1, "");
    ASSERT_STR(back, 2, "日本");
    /* bad UTF-8: an error, U+FFFD per bad byte, or nothing */
    gb_tensor *bad = STRS((2), "ok", "a\xff" "b");
    ck_assert(!gb_unicode_decode(bad, GB_UNICODE_STRICT, &cp, &splits));
    assert_error_text(GB_ERR_VALUE, "UnicodeDecode: element 1 is not valid UTF-8 (a bad sequence at byte 1)");
    ck_assert(gb_unicode_decode(bad, GB_UNICODE_REPLACE, &cp, &splits));
    ck_assert_double_eq(gb_get(cp, 3), 0xFFFD);
    ASSERT_STR(gb_unicode_encode(cp, splits, GB_UNICODE_STRICT), 1, "a\xef\xbf\xbd" "b");
    ck_assert(gb_unicode_decode(bad, GB_UNICODE_IGNORE, &cp, &splits));
    ck_assert_int_eq(gb_size(cp), 4);
    gb_tensor *surrogate = gb_tensor_from(GB_I32, (const int32_t[]){0xD800}, GB_SHAPE(1));
    gb_tensor *one = gb_tensor_from(GB_I64, (const int64_t[]){0, 1}, GB_SHAPE(2));
    ck_assert_ptr_null(gb_unicode_encode(surrogate, one, GB_UNICODE_STRICT));
    assert_error_text(GB_ERR_VALUE, "UnicodeEncode: value 55296 at 0 is not a code point");
    ASSERT_STR(gb_unicode_encode(surrogate, one, GB_UNICODE_IGNORE), 0, "");
}
END_TEST

static gb_tensor *raw_i16(gb_tensor *x) { return gb_decode_raw(x, GB_I32, true); }

START_TEST(test_decode_raw) {
    gb_tensor *x = gb_strings_from((gb_string[]){{"\x01\x00\x00\x00\xff\xff\xff\xff", 8},
                                                 {"\x00\x01\x00\x00\x02\x00\x00\x00", 8}},
                                   GB_SHAPE(2));
    gb_tensor *r = both(raw_i16, x);
    ck_assert_int_eq(gb_rank(r), 2);
    ck_assert_int_eq(gb_dim(r, 1), 2);
    const double want[] = {1, -1, 256, 2};
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(r, i), want[i]);
    gb_tensor *big = gb_decode_raw(x, GB_I32, false);
    ck_assert_double_eq(gb_get(big, 0), 16777216);
    ck_assert_ptr_null(gb_decode_raw(STRS((2), "abcd", "abc"), GB_I32, true));
    assert_error_text(GB_ERR_VALUE, "DecodeRaw: element 1 has 3 bytes; every element needs 4, a "
                                    "multiple of int32's 4");
    ck_assert_ptr_null(gb_decode_raw(STRS((1), "abc"), GB_STRING, true));
    assert_error_text(GB_ERR_DTYPE, "DecodeRaw: out_type must be a number type, got string");
}
END_TEST

static int csv_body(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                    gb_tensor **out) {
    (void)user, (void)nin, (void)st, (void)nst;
    gb_tensor *defaults[3] = {gb_scalar(GB_F32, -1), gb_string_scalar("?"),
                              gb_tensor_from(GB_I64, NULL, GB_SHAPE(0))};
    return gb_decode_csv(in[0], defaults, 3, ',', out);
}

START_TEST(test_decode_csv) {
    gb_tensor *x = STRS((3), "1.5, a b ,7", "\"2\",\"x,\"\"y\"\"\",-8", ",,0"), *col[3];
    gb_function *f = gb_function_new("csv", csv_body, NULL);
    assert_calls_like_eager(f, csv_body, NULL, &x, 1);
    gb_function_free(f);
    ck_assert_int_eq(csv_body(NULL, &x, 1, NULL, 0, col), 3);
    ck_assert_double_eq(gb_get(col[0], 0), 1.5);
    ck_assert_double_eq(gb_get(col[0], 1), 2);
    ck_assert_double_eq(gb_get(col[0], 2), -1);
    ASSERT_STR(col[1], 0, " a b ");
    ASSERT_STR(col[1], 1, "x,\"y\"");
    ASSERT_STR(col[1], 2, "?");
    ck_assert_double_eq(gb_get(col[2], 1), -8);
    gb_tensor *bad = STRS((2), "1,a,2", "1,a,");
    ck_assert_int_eq(csv_body(NULL, &bad, 1, NULL, 0, col), -1);
    assert_error_text(GB_ERR_VALUE, "DecodeCSV: record 1, column 2 is empty and the column has no default");
    bad = STRS((1), "1,a");
    ck_assert_int_eq(csv_body(NULL, &bad, 1, NULL, 0, col), -1);
    assert_error_text(GB_ERR_VALUE, "DecodeCSV: record 0 has 2 fields, not 3");
    bad = STRS((1), "1,a,2,3");
    ck_assert_int_eq(csv_body(NULL, &bad, 1, NULL, 0, col), -1);
    assert_error_text(GB_ERR_VALUE, "DecodeCSV: record 0 has more than 3 fields");
    bad = STRS((1), "x1,a,2");
    ck_assert_int_eq(csv_body(NULL, &bad, 1, NULL, 0, col), -1);
    assert_error_text(GB_ERR_VALUE, "DecodeCSV: record 0, column 0: 'x1' is not a valid float32");
    bad = STRS((1), "1,\"a,2");
    ck_assert_int_eq(csv_body(NULL, &bad, 1, NULL, 0, col), -1);
    assert_error_text(GB_ERR_VALUE, "DecodeCSV: record 0 has an unclosed quote");
}
END_TEST

/* A string op on constants is folded into the graph: its bytes live in
 * the graph, and later calls (in fresh scopes) still read them. */
static gb_tensor *with_folded(gb_tensor *x) {
    gb_tensor *k = gb_strings_upper(gb_strings_join((gb_tensor *[]){gb_string_scalar("ab"),
                                                                    gb_string_scalar("cd")}, 2, "-"));
    return gb_add(x, k);
}

START_TEST(test_folded_constants_live_in_the_graph) {
    gb_function *f = gb_function_new("folded", apply_unary, &(gb_function_options){.user = (void *)with_folded});
    for (int call = 0; call < 3; call++) {
        gb_scope_begin();
        gb_tensor *x = STRS((2), "x:", ""), *y;
        ck_assert_int_eq(gb_function_call(f, &x, 1, NULL, 0, &y), 1);
        ASSERT_STR(y, 0, "x:AB-CD");
        ASSERT_STR(y, 1, "AB-CD");
        gb_scope_end();
        gb_scope_begin(); /* reuse the memory the last call's scope had */
        gb_string_scalar("the scope's memory, overwritten with something else");
        gb_scope_end();
    }
    const char *g = gb_function_graph_text(f);
    ck_assert_msg(g && !strstr(g, "= StringUpper(") && !strstr(g, "= StringJoin(") && strstr(g, "= Const()"),
                  "not folded: %s", g);
    gb_function_free(f);
}
END_TEST

/* Ops that only move elements work on strings unchanged (they share bytes). */
START_TEST(test_movement_ops_move_strings) {
    gb_tensor *x = STRS((2, 2), "a", "b", "c", "d");
    gb_tensor *t = gb_transpose(x, NULL, 0);
    ASSERT_STR(t, 1, "c");
    gb_tensor *r = gb_reshape(x, GB_SHAPE(4));
    ASSERT_STR(r, 3, "d");
    gb_tensor *g = gb_gather(r, gb_tensor_from(GB_I64, (const int64_t[]){3, 0}, GB_SHAPE(2)), 0);
    ASSERT_STR(g, 0, "d");
    gb_tensor *w = gb_where(gb_tensor_from(GB_BOOL, (const uint8_t[]){0, 1}, GB_SHAPE(2)),
                            STRS((2), "p", "q"), STRS((2), "P", "Q"));
    ASSERT_STR(w, 0, "P");
    ASSERT_STR(w, 1, "q");
    gb_tensor *cat = gb_concat((gb_tensor *[]){STRS((1), "x"), STRS((2), "y", "z")}, 2, 0);
    ASSERT_STR(cat, 2, "z");
    gb_tensor *pad = gb_pad(STRS((1), "m"), (const int64_t[]){1, 1}, 2, 0);
    ASSERT_STR(pad, 0, "");
    ASSERT_STR(pad, 1, "m");
    ASSERT_STR(gb_add(pad, gb_string_scalar("+")), 2, "+");
}
END_TEST

/* Numeric ops refuse strings by name instead of reading pairs as numbers. */
START_TEST(test_numeric_ops_refuse_strings) {
    gb_tensor *x = STRS((2), "1", "2");
    ck_assert_ptr_null(gb_pad(x, (const int64_t[]){1, 1}, 2, 1.0));
    assert_error_text(GB_ERR_DTYPE, "Pad: a string tensor is padded with empty strings; "
                                    "constant_value must be 0, got 1");
    ck_assert_ptr_null(gb_one_hot(gb_scalar(GB_I64, 1), 3, 1, 0, GB_STRING));
    assert_error_text(GB_ERR_DTYPE, "OneHot: invalid output dtype 6 (string)");
    ck_assert_ptr_null(gb_exp(x));
    assert_error_text(GB_ERR_DTYPE, "Exp: unsupported dtype string");
    ck_assert_ptr_null(gb_cast(x, GB_F32));
    assert_error_text(GB_ERR_DTYPE, "Cast: cannot cast string to float32; use gb_string_to_number");
    ck_assert_ptr_null(gb_cast(gb_scalar(GB_F32, 1), GB_STRING));
    assert_error_text(GB_ERR_DTYPE, "Cast: cannot cast float32 to string; use gb_as_string");
    ASSERT_STR(gb_cast(x, GB_STRING), 1, "2");
    ck_assert_ptr_null(gb_reduce_sum(x, NULL, 0, false));
    assert_error(GB_ERR_DTYPE, "string");
    ck_assert_ptr_null(gb_less(x, x));
    assert_error(GB_ERR_DTYPE, "string");
}
END_TEST

static Suite *strings_suite(void) {
    Suite *s = suite_create("strings");
    TCase *dt = tcase_create("dtype");
    tcase_add_checked_fixture(dt, scope_setup, scope_teardown);
    tcase_add_test(dt, test_create_and_read);
    tcase_add_test(dt, test_nul_bytes_are_kept);
    tcase_add_test(dt, test_tensor_owns_its_bytes);
    tcase_add_test(dt, test_keep_moves_the_bytes);
    tcase_add_test(dt, test_one_megabyte_string);
    tcase_add_test(dt, test_repr_as_tensorflow);
    tcase_add_test(dt, test_not_differentiable);
    suite_add_tcase(s, dt);
    TCase *ops = tcase_create("ops");
    tcase_add_checked_fixture(ops, scope_setup, scope_teardown);
    tcase_add_test(ops, test_add_concatenates_with_broadcasting);
    tcase_add_test(ops, test_equal_compares_bytes);
    tcase_add_test(ops, test_join);
    tcase_add_test(ops, test_length_bytes_and_chars);
    tcase_add_test(ops, test_substr);
    tcase_add_test(ops, test_lower_upper);
    tcase_add_test(ops, test_split_ragged);
    tcase_add_test(ops, test_ngrams);
    tcase_add_test(ops, test_hash_bucket);
    tcase_add_test(ops, test_string_to_number);
    tcase_add_test(ops, test_as_string);
    tcase_add_test(ops, test_regex);
    tcase_add_test(ops, test_unicode_decode_encode);
    tcase_add_test(ops, test_decode_raw);
    tcase_add_test(ops, test_decode_csv);
    tcase_add_test(ops, test_folded_constants_live_in_the_graph);
    tcase_add_test(ops, test_static_hash_table);
    tcase_add_test(ops, test_freed_table_in_a_graph);
    tcase_add_test(ops, test_movement_ops_move_strings);
    tcase_add_test(ops, test_numeric_ops_refuse_strings);
    suite_add_tcase(s, ops);
    TCase *files = tcase_create("files");
    tcase_add_checked_fixture(files, nn_dir_setup, nn_dir_teardown);
    tcase_add_test(files, test_vocabulary_file);
    suite_add_tcase(s, files);
    return s;
}

int main(void) { return run_suite(strings_suite()); }
