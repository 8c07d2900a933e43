/* test_nn_text.c — TextVectorization and StringLookup: adapt's vocabulary
 * (order, max_tokens, reserved entries, Keras' mask and OOV ids), ngrams,
 * every output mode's values, the vocabulary in checkpoints, the
 * call traced against eager, the vocabulary through a config round trip,
 * and the errors.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "graph_test_util.h"
#include "test_util.h"

#define STRS(shape, ...) gb_strings((const char *const[]){__VA_ARGS__}, GB_SHAPE shape)

static gb_dataset *corpus(void) {
    gb_tensor *t = STRS((3), "The cat sat.", "the CAT ran!", "a dog ran");
    return gb_dataset_batch(gb_dataset_from_tensor_slices(1, &t), 2, false);
}

static void assert_vocab(gb_module *m, int n, const char *const *want) {
    gb_tensor *v = gb_text_vectorization_vocabulary(m);
    ck_assert_msg(v != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_size(v), n);
    for (int i = 0; i < n; i++) {
        gb_string s = gb_get_string(v, i);
        ck_assert_msg(s.len == (int64_t)strlen(want[i]) && !memcmp(s.data, want[i], (size_t)s.len),
                      "token %d is '%.*s', want '%s'", i, (int)s.len, s.data, want[i]);
    }
}

static void assert_values(const gb_tensor *t, int n, const double *want) {
    ck_assert_msg(t != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_size(t), n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(fabs(gb_get(t, i) - want[i]) < 1e-6, "value %d is %g, want %g", i, gb_get(t, i),
                      want[i]);
}

START_TEST(test_adapt_and_int_mode) {
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .output_sequence_length = 4});
    gb_dataset *ds = corpus();
    ck_assert(gb_text_vectorization_adapt(tv, ds));
    /* the 2, cat 2, ran 2, then a, dog, sat by bytes */
    const char *const want[] = {"", "[UNK]", "cat", "ran", "the", "a", "dog", "sat"};
    assert_vocab(tv, 8, want);
    gb_tensor *y = gb_module_call(tv, STRS((2), "The dog sat on the mat", "CAT"), false);
    ck_assert_int_eq(gb_tensor_dtype(y), GB_I64);
    const double ids[] = {4, 6, 7, 1, 2, 0, 0, 0};
    assert_values(y, 8, ids);
    gb_module_free(tv);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_max_tokens_and_other_modes) {
    gb_dataset *ds = corpus();
    gb_module *mh = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .max_tokens = 3, .output_mode = GB_TV_MULTI_HOT});
    ck_assert(gb_text_vectorization_adapt(mh, ds));
    const char *const want[] = {"[UNK]", "cat", "ran"};
    assert_vocab(mh, 3, want);
    gb_tensor *x = STRS((2), "cat cat dog", "ran");
    const double multi[] = {1, 1, 0, 0, 0, 1};
    assert_values(gb_module_call(mh, x, false), 6, multi);
    gb_module *cnt = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .max_tokens = 3, .output_mode = GB_TV_COUNT});
    ck_assert(gb_text_vectorization_adapt(cnt, ds));
    const double counts[] = {1, 2, 0, 0, 0, 1};
    assert_values(gb_module_call(cnt, x, false), 6, counts);
    gb_module *tfidf = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .max_tokens = 3, .output_mode = GB_TV_TF_IDF});
    ck_assert(gb_text_vectorization_adapt(tfidf, ds));
    double w = log(1.0 + 3.0 / 3.0); /* cat and ran: in 2 of 3 documents */
    const double tfidf_want[] = {1 * w, 2 * w, 0, 0, 0, w};
    assert_values(gb_module_call(tfidf, x, false), 6, tfidf_want);
    gb_module_free(mh);
    gb_module_free(cnt);
    gb_module_free(tfidf);
    gb_dataset_free(ds);
}
END_TEST

static int vectorize(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                     gb_tensor **out) {
    (void)nin, (void)st, (void)nst;
    out[0] = gb_module_call(user, in[0], false);
    return out[0] ? 1 : -1;
}

START_TEST(test_traced_like_eager_and_config_round_trip) {
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .output_sequence_length = 3});
    gb_dataset *ds = corpus();
    ck_assert(gb_text_vectorization_adapt(tv, ds));
    gb_function *f = gb_function_new(
        "vectorize", vectorize,
        &(gb_function_options){.user = tv, .input_signature = (gb_tensor_spec[]){GB_SPEC("text", GB_STRING, -1)},
                               .ninput_signature = 1});
    gb_tensor *a = STRS((2), "a cat", "dog, ran sat the"), *b = STRS((1), "");
    assert_calls_like_eager(f, vectorize, tv, &a, 1);
    assert_calls_like_eager(f, vectorize, tv, &b, 1);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_config *c = gb_module_get_config(tv);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    assert_bitwise(gb_module_call(tv, a, false), gb_module_call(back, a, false), "rebuilt");
    gb_config_free(c);
    gb_function_free(f);
    gb_module_free(back);
    gb_module_free(tv);
    gb_dataset_free(ds);
}
END_TEST

/* split none: each string one token, a graph of unknown batch like eager
 * (the rows' splits come from the op, not from the traced batch). */
START_TEST(test_split_none_traced) {
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .split = GB_TV_SPLIT_NONE, .output_mode = GB_TV_MULTI_HOT});
    ck_assert(gb_text_vectorization_adapt_tensor(tv, STRS((4), "New York", "Paris", "new york", "")));
    const char *const want[] = {"[UNK]", "new york", "paris"};
    assert_vocab(tv, 3, want);
    gb_tensor *x = STRS((3), "Paris", "", "new  york");
    const double hot[] = {0, 0, 1, 0, 0, 0, 1, 0, 0}; /* "" has no token; two spaces: unknown */
    assert_values(gb_module_call(tv, x, false), 9, hot);
    gb_function *f = gb_function_new(
        "vectorize", vectorize,
        &(gb_function_options){.user = tv, .input_signature = (gb_tensor_spec[]){GB_SPEC("text", GB_STRING, -1)},
                               .ninput_signature = 1});
    assert_calls_like_eager(f, vectorize, tv, &x, 1);
    gb_tensor *one = STRS((1), "PARIS");
    assert_calls_like_eager(f, vectorize, tv, &one, 1);
    ck_assert_int_eq(gb_function_tracing_count(f), 1);
    gb_function_free(f);
    gb_module_free(tv);
}
END_TEST

/* Keras' ids: without a mask "[UNK]" is 0 and the vocabulary starts at
 * 1; with mask_token "" that is 0, "[UNK]" 1. Configs keep the choice; a
 * config from before the option (no "mask_token") reads as masked. */
START_TEST(test_string_lookup) {
    gb_tensor *t = STRS((5), "b", "a", "b", "c", "b");
    gb_dataset *ds = gb_dataset_from_tensor_slices(1, &t);
    gb_tensor *x = STRS((2, 2), "a", "zzz", "b", "c");
    gb_module *sl = gb_string_lookup_new(NULL);
    ck_assert(gb_text_vectorization_adapt(sl, ds));
    const char *const want[] = {"[UNK]", "b", "a", "c"};
    assert_vocab(sl, 4, want);
    const double ids[] = {2, 0, 1, 3};
    assert_values(gb_module_call(sl, x, false), 4, ids);
    gb_module *masked = gb_string_lookup_new(&(gb_text_vectorization_options){.mask = true});
    ck_assert(gb_text_vectorization_adapt(masked, ds));
    const char *const want_masked[] = {"", "[UNK]", "b", "a", "c"};
    assert_vocab(masked, 5, want_masked);
    const double masked_ids[] = {3, 1, 2, 4};
    assert_values(gb_module_call(masked, x, false), 4, masked_ids);
    for (int m = 0; m < 2; m++) {
        gb_config *c = gb_module_get_config(m ? masked : sl);
        gb_module *back = gb_module_from_config(c);
        ck_assert_msg(back != NULL, "%s", gb_error_string());
        assert_values(gb_module_call(back, x, false), 4, m ? masked_ids : ids);
        gb_module_free(back);
        if (m) { /* as written before the option: no "mask_token" */
            static const char json[] = "{\"class_name\": \"StringLookup\", \"config\": "
                                       "{\"name\": \"old\", \"vocabulary\": [\"b\", \"a\", \"c\"]}}";
            gb_config *old = gb_config_from_json(json, sizeof json - 1, "old");
            ck_assert_msg(old != NULL, "%s", gb_error_string());
            back = gb_module_from_config(old);
            ck_assert_msg(back != NULL, "%s", gb_error_string());
            assert_values(gb_module_call(back, x, false), 4, masked_ids);
            gb_module_free(back);
            gb_config_free(old);
        }
        gb_config_free(c);
    }
    gb_module_free(sl);
    gb_module_free(masked);
    gb_dataset_free(ds);
}
END_TEST

/* StringLookup's other modes: a row per element of a [batch] input, per
 * row of a [batch, tokens] one; traced like eager. */
static int lookup_rows(void *user, gb_tensor *const *in, int nin, const gb_value *st, int nst,
                       gb_tensor **out) {
    return vectorize(user, in, nin, st, nst, out);
}

START_TEST(test_string_lookup_modes) {
    gb_tensor *t = STRS((5), "b", "a", "b", "c", "b");
    gb_tensor *x = STRS((2, 3), "a", "b", "a", "zzz", "c", "c");
    /* vocabulary [UNK], b, a, c */
    gb_module *hot = gb_string_lookup_new(&(gb_text_vectorization_options){.output_mode = GB_TV_MULTI_HOT});
    gb_module *cnt = gb_string_lookup_new(&(gb_text_vectorization_options){
        .name = "counts", .output_mode = GB_TV_COUNT});
    gb_module *tfidf = gb_string_lookup_new(&(gb_text_vectorization_options){.output_mode = GB_TV_TF_IDF});
    ck_assert(gb_text_vectorization_adapt_tensor(hot, t) && gb_text_vectorization_adapt_tensor(cnt, t) &&
              gb_text_vectorization_adapt_tensor(tfidf, t));
    const double hot_rows[] = {0, 1, 1, 0, 1, 0, 0, 1};
    assert_values(gb_module_call(hot, x, false), 8, hot_rows);
    const double counts[] = {0, 1, 2, 0, 1, 0, 0, 2};
    assert_values(gb_module_call(cnt, x, false), 8, counts);
    const double one_each[] = {0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0};
    assert_values(gb_module_call(cnt, STRS((3), "a", "c", "q"), false), 12, one_each);
    /* idf: b in 3 of 5 elements, a and c in 1; [UNK] the mean */
    double wb = log(1 + 5.0 / 4), wa = log(1 + 5.0 / 2), unk = (wb + 2 * wa) / 3;
    const double w[] = {0, wb, 2 * wa, 0, unk, 0, 0, 2 * wa};
    assert_values(gb_module_call(tfidf, x, false), 8, w);
    gb_function *f = gb_function_new(
        "lookup_rows", lookup_rows,
        &(gb_function_options){.user = cnt, .input_signature = (gb_tensor_spec[]){GB_SPEC("x", GB_STRING, -1, 3)},
                               .ninput_signature = 1});
    assert_calls_like_eager(f, lookup_rows, cnt, &x, 1);
    ck_assert_ptr_null(gb_module_call(cnt, STRS((1, 1, 1), "a"), false));
    assert_error_text(GB_ERR_SHAPE, "StringLookup layer 'counts': output_mode count takes "
                                    "strings of shape [batch] or [batch, tokens], got [1,1,1]");
    ck_assert_ptr_null(gb_string_lookup_new(&(gb_text_vectorization_options){
        .output_mode = GB_TV_COUNT, .mask = true}));
    assert_error_text(GB_ERR_VALUE, "StringLookup: a mask is for output_mode int (the other modes "
                                    "count no mask token)");
    gb_function_free(f);
    gb_module_free(hot);
    gb_module_free(cnt);
    gb_module_free(tfidf);
}
END_TEST

/* ngrams=2: each row's tokens, then its bigrams joined by a space, in the
 * vocabulary and the output (Keras' TextVectorization(ngrams=2)). */
START_TEST(test_ngrams) {
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .ngrams = 2, .output_sequence_length = 6});
    gb_dataset *ds = corpus();
    ck_assert(gb_text_vectorization_adapt(tv, ds));
    /* the 2, cat 2, ran 2, the cat 2; then by bytes: a, a dog, cat ran,
     * cat sat, dog, dog ran, sat */
    const char *const want[] = {"", "[UNK]", "cat", "ran", "the", "the cat", "a", "a dog",
                                "cat ran", "cat sat", "dog", "dog ran", "sat"};
    assert_vocab(tv, 13, want);
    gb_tensor *x = STRS((2), "The cat ran", "dog");
    const double ids[] = {4, 2, 3, 5, 8, 0, 10, 0, 0, 0, 0, 0};
    assert_values(gb_module_call(tv, x, false), 12, ids);
    gb_function *f = gb_function_new(
        "vectorize", vectorize,
        &(gb_function_options){.user = tv, .input_signature = (gb_tensor_spec[]){GB_SPEC("text", GB_STRING, -1)},
                               .ninput_signature = 1});
    assert_calls_like_eager(f, vectorize, tv, &x, 1);
    gb_config *c = gb_module_get_config(tv);
    gb_module *back = gb_module_from_config(c);
    ck_assert_msg(back != NULL, "%s", gb_error_string());
    assert_values(gb_module_call(back, x, false), 12, ids);
    gb_module *counts = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .ngrams = 2, .max_tokens = 6, .output_mode = GB_TV_COUNT});
    ck_assert(gb_text_vectorization_adapt(counts, ds));
    /* [UNK] cat ran the "the cat" a: "cat ran" is out of the 5 kept */
    const double count_ids[] = {1, 1, 1, 1, 1, 0};
    assert_values(gb_module_call(counts, STRS((1), "The cat ran"), false), 6, count_ids);
    gb_config_free(c);
    gb_function_free(f);
    gb_module_free(back);
    gb_module_free(counts);
    gb_module_free(tv);
    gb_dataset_free(ds);
}
END_TEST

/* The vocabulary (and tf_idf's weights) in a checkpoint: a layer restored
 * from it gives the same outputs without adapting; a layer of another
 * mode refuses it, changing nothing. */
START_TEST(test_vocabulary_in_checkpoints) {
    gb_dataset *ds = corpus();
    gb_module *m = gb_sequential_new("topics");
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .name = "vectorize", .output_mode = GB_TV_TF_IDF, .ngrams = 2});
    ck_assert(gb_text_vectorization_adapt(tv, ds));
    gb_sequential_add(m, tv);
    gb_checkpoint *ck = gb_checkpoint_new();
    ck_assert(gb_checkpoint_track_module(ck, "model", m));
    char path[512];
    snprintf(path, sizeof path, "%s", in_test_dir("vocab.ckpt"));
    ck_assert_msg(gb_checkpoint_write(ck, path), "%s", gb_error_string());
    gb_checkpoint_entry *e;
    int n = gb_checkpoint_list(path, &e);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(e[0].path, "model/topics/vectorize/vocabulary");
    ck_assert_int_eq(e[0].dtype, GB_U8);
    ck_assert_str_eq(e[1].path, "model/topics/vectorize/idf_weights");
    ck_assert_int_eq(e[1].dtype, GB_F32);
    ck_assert_int_eq(e[1].shape[0], 12);
    free(e);

    gb_module *m2 = gb_sequential_new("topics");
    gb_module *tv2 = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .name = "vectorize", .output_mode = GB_TV_TF_IDF, .ngrams = 2});
    gb_sequential_add(m2, tv2);
    gb_checkpoint *ck2 = gb_checkpoint_new();
    ck_assert(gb_checkpoint_track_module(ck2, "model", m2));
    gb_restore_status st;
    ck_assert_msg(gb_checkpoint_restore(ck2, path, &st), "%s", gb_error_string());
    ck_assert(gb_restore_assert_consumed(&st));
    ck_assert_int_eq(st.restored, 2);
    const char *const want[] = {"[UNK]", "cat", "ran", "the", "the cat", "a", "a dog", "cat ran",
                                "cat sat", "dog", "dog ran", "sat"};
    assert_vocab(tv2, 12, want);
    gb_tensor *x = STRS((2), "the cat ran away", "a dog");
    assert_bitwise(gb_module_call(tv, x, false), gb_module_call(tv2, x, false), "restored");
    /* a model file: the vocabulary in its config and in its checkpoint */
    char file[512];
    snprintf(file, sizeof file, "%s", in_test_dir("topics.gbm"));
    ck_assert_msg(gb_model_save(m, file), "%s", gb_error_string());
    gb_module *loaded = gb_model_load(file);
    ck_assert_msg(loaded != NULL, "%s", gb_error_string());
    assert_bitwise(gb_module_call(tv, x, false), gb_module_call(loaded, x, false), "loaded");
    gb_module_free(loaded);

    gb_module *other = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .name = "vectorize", .output_sequence_length = 2});
    gb_module *m3 = gb_sequential_new("topics");
    gb_sequential_add(m3, other);
    gb_checkpoint *ck3 = gb_checkpoint_new();
    ck_assert(gb_checkpoint_track_module(ck3, "model", m3));
    ck_assert(!gb_checkpoint_restore(ck3, path, &st));
    assert_error_text(GB_ERR_VALUE, "TextVectorization layer 'vectorize': the checkpoint's vocabulary "
                                    "does not start with this layer's reserved tokens ('', '[UNK]'): it "
                                    "was saved with another output_mode or mask");
    ck_assert_int_eq(gb_text_vectorization_vocabulary_size(other), 0);

    /* A file without the vocabulary (as model files were written before
     * it was saved): a layer that has one keeps it, and nothing is
     * missing; a layer without one reports it missing. */
    gb_module *old = gb_sequential_new("topics");
    gb_module *dense = gb_dense_new(2, &(gb_dense_options){.name = "d"});
    gb_sequential_add(old, dense);
    ck_assert(gb_module_build(old, GB_F32, GB_SHAPE(-1, 7)));
    gb_checkpoint *ck4 = gb_checkpoint_new();
    ck_assert(gb_checkpoint_track_module(ck4, "model", old));
    ck_assert_msg(gb_checkpoint_write(ck4, path), "%s", gb_error_string());
    for (int adapted = 0; adapted < 2; adapted++) {
        gb_module *m5 = gb_sequential_new("topics");
        gb_module *tv5 = gb_text_vectorization_new(&(gb_text_vectorization_options){
            .name = "vectorize", .output_mode = GB_TV_MULTI_HOT});
        gb_sequential_add(m5, tv5);
        gb_sequential_add(m5, gb_dense_new(2, &(gb_dense_options){.name = "d"}));
        ck_assert(gb_text_vectorization_adapt(tv5, ds));
        ck_assert(gb_module_call(m5, x, false) != NULL); /* builds d on [-1, 7] */
        if (!adapted) {
            gb_module_free(m5);
            m5 = gb_sequential_new("topics");
            gb_sequential_add(m5, gb_text_vectorization_new(&(gb_text_vectorization_options){
                                      .name = "vectorize", .output_mode = GB_TV_MULTI_HOT}));
        }
        gb_checkpoint *ck5 = gb_checkpoint_new();
        ck_assert(gb_checkpoint_track_module(ck5, "model", m5));
        ck_assert_msg(gb_checkpoint_restore(ck5, path, &st), "%s", gb_error_string());
        ck_assert_int_eq(st.missing, adapted ? 0 : 1);
        if (!adapted) ck_assert_str_eq(st.first_missing, "model/topics/vectorize/vocabulary");
        gb_checkpoint_free(ck5);
        gb_module_free(m5);
    }
    gb_checkpoint_free(ck4);
    gb_module_free(old);
    gb_checkpoint_free(ck);
    gb_checkpoint_free(ck2);
    gb_checkpoint_free(ck3);
    gb_module_free(m);
    gb_module_free(m2);
    gb_module_free(m3);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_errors) {
    ck_assert_ptr_null(gb_text_vectorization_new(NULL));
    assert_error_text(GB_ERR_VALUE, "TextVectorization: output_mode int needs "
                                    "output_sequence_length >= 1, got 0");
    gb_module *tv = gb_text_vectorization_new(&(gb_text_vectorization_options){
        .name = "tv", .output_sequence_length = 2});
    ck_assert_ptr_null(gb_module_call(tv, STRS((1), "x"), false));
    check_error(GB_ERR_STATE, "has no vocabulary: adapt it to data first");
    gb_clear_error();
    gb_module_free(tv);
    ck_assert_ptr_null(gb_text_vectorization_new(&(gb_text_vectorization_options){
        .ngrams = -1, .output_sequence_length = 2}));
    assert_error_text(GB_ERR_VALUE, "TextVectorization: ngrams must be >= 0 (0 or 1: single "
                                    "tokens), got -1");
}
END_TEST

static Suite *text_suite(void) {
    Suite *s = suite_create("nn_text");
    TCase *tc = tcase_create("text_vectorization");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_adapt_and_int_mode);
    tcase_add_test(tc, test_max_tokens_and_other_modes);
    tcase_add_test(tc, test_traced_like_eager_and_config_round_trip);
    tcase_add_test(tc, test_split_none_traced);
    tcase_add_test(tc, test_string_lookup);
    tcase_add_test(tc, test_string_lookup_modes);
    tcase_add_test(tc, test_ngrams);
    tcase_add_test(tc, test_vocabulary_in_checkpoints);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(text_suite()); }
