/* test_data_sequence.c — keras.utils.Sequence as a dataset: batches in
 * order or in each epoch's shuffled order, on_epoch_end after each pass,
 * parallel workers giving the same batches in the same order, a failing
 * get_item's error reaching the consumer at that batch, an iterator freed
 * mid-epoch with workers busy, and fit on a sequence. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "glassbox.h"
#include "test_util.h"

enum { BATCHES = 7, ROWS = 3 };

typedef struct numbers {
    atomic_int epoch_ends;
    int64_t fail_at;          /* get_item(fail_at) fails; -1: never */
} numbers;

static int64_t numbers_len(void *u) {
    (void)u;
    return BATCHES;
}

/* Batch i: x = [i, i, i] as [3, 1] float32, y = [i % 2] * 3. */
static bool numbers_get(void *u, int64_t i, gb_tensor **out) {
    numbers *n = u;
    if (i == n->fail_at) {
        gb_tensor *bad = gb_zeros(GB_F32, GB_SHAPE(2, 2));
        gb_matmul(bad, gb_zeros(GB_F32, GB_SHAPE(3, 3)));   /* a real op error */
        return false;
    }
    out[0] = gb_fill(GB_F32, GB_SHAPE(ROWS, 1), (double)i);
    out[1] = gb_fill(GB_I32, GB_SHAPE(ROWS), (double)(i % 2));
    return true;
}

static void numbers_epoch_end(void *u) { atomic_fetch_add(&((numbers *)u)->epoch_ends, 1); }

static gb_dataset *sequence(numbers *n, bool shuffle, int workers) {
    return gb_dataset_from_sequence(&(gb_sequence){.len = numbers_len, .get_item = numbers_get,
                                                   .on_epoch_end = numbers_epoch_end, .user = n,
                                                   .ncomponents = 2},
                                    shuffle, 11, workers);
}

/* One epoch's batch numbers into order[]; returns how many. */
static int epoch_order(gb_dataset *ds, int64_t *order) {
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    int n = 0;
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin())
        order[n++] = (int64_t)gb_get(b[0], 0);
    gb_scope_end();
    gb_iterator_free(it);
    return n;
}

START_TEST(test_in_order_with_epoch_ends) {
    numbers n = {.fail_at = -1};
    gb_dataset *ds = sequence(&n, false, 0);
    ck_assert_int_eq(gb_dataset_cardinality(ds), BATCHES);
    for (int epoch = 0; epoch < 2; epoch++) {
        int64_t order[BATCHES];
        ck_assert_int_eq(epoch_order(ds, order), BATCHES);
        for (int i = 0; i < BATCHES; i++) ck_assert_int_eq(order[i], i);
        ck_assert_int_eq(atomic_load(&n.epoch_ends), epoch + 1);
    }
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_shuffled_and_parallel_orders_agree) {
    numbers a = {.fail_at = -1}, b = {.fail_at = -1};
    gb_dataset *serial = sequence(&a, true, 0), *parallel = sequence(&b, true, 3);
    int64_t first[BATCHES];
    for (int epoch = 0; epoch < 3; epoch++) {
        int64_t s[BATCHES], p[BATCHES];
        ck_assert_int_eq(epoch_order(serial, s), BATCHES);
        ck_assert_int_eq(epoch_order(parallel, p), BATCHES);
        bool seen[BATCHES] = {0};
        for (int i = 0; i < BATCHES; i++) {
            ck_assert_int_eq(s[i], p[i]);
            seen[s[i]] = true;
        }
        for (int i = 0; i < BATCHES; i++) ck_assert(seen[i]);   /* a permutation */
        if (epoch == 0) memcpy(first, s, sizeof s);
        else if (epoch == 1) ck_assert(memcmp(first, s, sizeof s) != 0);   /* reshuffled */
    }
    ck_assert_int_eq(atomic_load(&b.epoch_ends), 3);
    gb_dataset_free(serial);
    gb_dataset_free(parallel);
}
END_TEST

START_TEST(test_worker_error_reaches_the_consumer_in_turn) {
    numbers n = {.fail_at = 4};
    gb_dataset *ds = sequence(&n, false, 3);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    int got = 0;
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin()) got++;
    gb_scope_end();
    ck_assert_int_eq(got, 4);   /* batches 0..3, then the failing one */
    check_error(GB_ERR_SHAPE, "MatMul");
    gb_clear_error();
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_freed_mid_epoch_with_workers) {
    numbers n = {.fail_at = -1};
    gb_dataset *ds = sequence(&n, true, 4);
    for (int k = 0; k < 20; k++) {
        gb_iterator *it = gb_iterator_new(ds);
        gb_tensor *b[2];
        gb_scope_begin();
        ck_assert(gb_iterator_next(it, b));
        gb_scope_end();
        gb_iterator_free(it);   /* workers still busy: must stop cleanly */
    }
    ck_assert(gb_ok());
    ck_assert_int_eq(atomic_load(&n.epoch_ends), 0);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_fit_on_a_sequence) {
    numbers n = {.fail_at = -1};
    gb_dataset *ds = sequence(&n, true, 2);
    gb_module *m = gb_sequential_new(NULL);
    gb_sequential_add(m, gb_dense_new(2, &(gb_dense_options){.seed = 3}));
    gb_optimizer *opt = gb_sgd(0.01);
    gb_model_compile(m, &(gb_compile_options){
                            .optimizer = opt,
                            .loss = {.kind = GB_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY, .from_logits = true}});
    gb_fit_options o = gb_fit_defaults();
    o.epochs = 3;
    o.verbose = 0;
    gb_history *h = gb_model_fit_dataset(m, ds, &o);
    ck_assert_msg(h != NULL, "%s", gb_error_string());
    ck_assert_int_eq(gb_history_epochs(h), 3);
    ck_assert_int_eq(atomic_load(&n.epoch_ends), 3);
    gb_history_free(h);
    gb_module_free(m);
    gb_optimizer_free(opt);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_bad_sequences) {
    ck_assert_ptr_null(gb_dataset_from_sequence(&(gb_sequence){.len = numbers_len, .ncomponents = 2}, false, 0, 0));
    assert_error(GB_ERR_VALUE, "len and get_item are required");
    ck_assert_ptr_null(gb_dataset_from_sequence(
        &(gb_sequence){.len = numbers_len, .get_item = numbers_get, .ncomponents = 2}, false, 0, 99));
    assert_error(GB_ERR_VALUE, "workers must be 0 to 16");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("data_sequence");
    TCase *tc = tcase_create("sequence");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_in_order_with_epoch_ends);
    tcase_add_test(tc, test_shuffled_and_parallel_orders_agree);
    tcase_add_test(tc, test_worker_error_reaches_the_consumer_in_turn);
    tcase_add_test(tc, test_freed_mid_epoch_with_workers);
    tcase_add_test(tc, test_fit_on_a_sequence);
    tcase_add_test(tc, test_bad_sequences);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
