/* test_data_pipeline.c — datasets without threads: from_tensor_slices,
 * from_tensors, batch (drop_remainder, stacking, shapes), shuffle (exact
 * orders for a fixed seed, one of each element per epoch, reshuffling per
 * epoch, the buffer window), repeat, take/skip, shard, map, from_generator,
 * cardinality, buffer recycling (no allocation in the steady state, kept
 * batches unharmed), lifetimes, and every argument error. */
#include <check.h>
#include <stdlib.h>

#include "glassbox.h"
#include "test_util.h"

enum { MAXN = 4096 };

/* Elements 0..n-1 as an int32 [n] source. */
static gb_dataset *range_ds(int64_t n) {
    gb_tensor *t = gb_arange(GB_I32, 0, (double)n, 1);
    return gb_dataset_from_tensor_slices(1, &t);
}

/* Every value of component 0 over one epoch, batches flattened, into
 * out; the number of values. Each step runs in its own scope. */
static int64_t collect(gb_dataset *ds, double *out) {
    gb_iterator *it = gb_iterator_new(ds);
    ck_assert_ptr_nonnull(it);
    gb_tensor *b[GB_DATA_MAX_COMPONENTS];
    int64_t n = 0;
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin())
        for (int64_t i = 0; i < gb_size(b[0]); i++) {
            ck_assert_int_lt(n, MAXN);
            out[n++] = gb_get(b[0], i);
        }
    gb_scope_end();
    gb_iterator_free(it);
    return n;
}

static void assert_seq(const double *got, int64_t n, const int *want, int64_t nwant) {
    ck_assert_int_eq(n, nwant);
    for (int64_t i = 0; i < n; i++) ck_assert_int_eq((int)got[i], want[i]);
}

/* True when got[0..n) holds each of 0..n-1 once. */
static bool is_permutation(const double *got, int64_t n) {
    bool *seen = calloc((size_t)n, 1);
    bool ok = true;
    for (int64_t i = 0; i < n && ok; i++) {
        int64_t v = (int64_t)got[i];
        ok = v >= 0 && v < n && !seen[v];
        if (ok) seen[v] = true;
    }
    free(seen);
    return ok;
}

/* ---- sources ------------------------------------------------------------------- */

START_TEST(test_slices_tuple) {
    float img[3][2] = {{0, 1}, {10, 11}, {20, 21}};
    int32_t lbl[3] = {7, 8, 9};
    gb_tensor *t[2] = {gb_from_f32(&img[0][0], GB_SHAPE(3, 2)),
                       gb_tensor_from(GB_I32, lbl, GB_SHAPE(3))};
    gb_dataset *ds = gb_dataset_from_tensor_slices(2, t);
    ck_assert_int_eq(gb_dataset_num_components(ds), 2);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 3);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e[2];
    for (int i = 0; i < 3; i++) {
        ck_assert(gb_iterator_next(it, e));
        ck_assert_int_eq(gb_tensor_dtype(e[0]), GB_F32);
        ck_assert_int_eq(gb_rank(e[0]), 1);
        ck_assert_int_eq(gb_dim(e[0], 0), 2);
        ck_assert_double_eq(gb_get(e[0], 0), 10 * i);
        ck_assert_double_eq(gb_get(e[0], 1), 10 * i + 1);
        ck_assert_int_eq(gb_rank(e[1]), 0);
        ck_assert_double_eq(gb_item(e[1]), 7 + i);
    }
    ck_assert(!gb_iterator_next(it, e));
    ck_assert_ptr_null(e[0]);
    ck_assert(!gb_iterator_next(it, e)); /* the end stays the end */
    ck_assert(gb_ok());
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* The dataset copies scope data: it outlives the scope of its tensors. */
START_TEST(test_slices_outlive_scope) {
    gb_scope_begin();
    gb_dataset *ds = range_ds(5);
    gb_scope_end();
    double got[MAXN];
    int want[] = {0, 1, 2, 3, 4};
    assert_seq(got, collect(ds, got), want, 5);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_from_tensors_single_element) {
    gb_tensor *t = gb_arange(GB_F64, 0, 6, 1);
    gb_dataset *ds = gb_dataset_from_tensors(1, &t);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 1);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *e;
    ck_assert(gb_iterator_next(it, &e));
    ck_assert_int_eq(gb_rank(e), 1);
    ck_assert_int_eq(gb_dim(e, 0), 6);
    ck_assert_double_eq(gb_get(e, 5), 5);
    ck_assert(!gb_iterator_next(it, &e));
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_slices_errors) {
    gb_tensor *a = gb_zeros(GB_F32, GB_SHAPE(4, 2)), *b = gb_zeros(GB_I32, GB_SHAPE(5));
    gb_tensor *ab[2] = {a, b};
    ck_assert_ptr_null(gb_dataset_from_tensor_slices(2, ab));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message,
                                 "same first dimension: tensor 0 has shape [4,2], tensor 1 has "
                                 "shape [5]"));
    gb_clear_error();

    gb_tensor *s = gb_scalar(GB_F32, 1);
    ck_assert_ptr_null(gb_dataset_from_tensor_slices(1, &s));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "tensor 0 is a scalar"));
    gb_clear_error();

    ck_assert_ptr_null(gb_dataset_from_tensor_slices(0, ab));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "need 1 to 8 tensors, got 0"));
    gb_clear_error();

    gb_tensor *withnull[2] = {a, NULL};
    ck_assert_ptr_null(gb_dataset_from_tensors(2, withnull));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "tensor 1 is NULL"));
    gb_clear_error();

    /* A NULL from an earlier failure flows through the chain: one error. */
    ck_assert_ptr_null(gb_dataset_from_tensor_slices(2, ab));
    gb_dataset *ds = gb_dataset_prefetch(
        gb_dataset_batch(gb_dataset_shuffle(NULL, 10, 1), 2, false), 1);
    ck_assert_ptr_null(ds);
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    gb_clear_error();
    ck_assert_ptr_null(gb_dataset_batch(NULL, 2, false));
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message,
                                 "gb_dataset_batch: the input dataset is NULL"));
}
END_TEST

/* ---- batch ---------------------------------------------------------------------- */

START_TEST(test_batch_keeps_remainder) {
    gb_dataset *ds = gb_dataset_batch(range_ds(10), 4, false);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 3);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b;
    int64_t sizes[3], k = 0;
    for (gb_scope_begin(); gb_iterator_next(it, &b); gb_scope_end(), gb_scope_begin()) {
        ck_assert_int_lt(k, 3);
        ck_assert_int_eq(gb_rank(b), 1);
        ck_assert_int_eq(gb_tensor_dtype(b), GB_I32);
        for (int64_t i = 0; i < gb_size(b); i++) ck_assert_double_eq(gb_get(b, i), 4 * k + i);
        sizes[k++] = gb_dim(b, 0);
    }
    gb_scope_end();
    ck_assert_int_eq(k, 3);
    ck_assert_int_eq(sizes[0], 4);
    ck_assert_int_eq(sizes[1], 4);
    ck_assert_int_eq(sizes[2], 2);
    ck_assert(gb_ok());
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_batch_drop_remainder) {
    gb_dataset *ds = gb_dataset_batch(range_ds(10), 4, true);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 2);
    double got[MAXN];
    int want[] = {0, 1, 2, 3, 4, 5, 6, 7};
    assert_seq(got, collect(ds, got), want, 8);
    gb_dataset_free(ds);
    /* Fewer elements than one batch: nothing at all. */
    ds = gb_dataset_batch(range_ds(3), 4, true);
    ck_assert_int_eq(collect(ds, got), 0);
    ck_assert(gb_ok());
    gb_dataset_free(ds);
}
END_TEST

/* Images [5,2,3] and labels [5] batch into [2,2,3] + [2] per step. */
START_TEST(test_batch_stacks_tuples) {
    gb_tensor *img = gb_arange(GB_F32, 0, 30, 1);
    float data[30];
    for (int i = 0; i < 30; i++) data[i] = (float)gb_get(img, i);
    gb_tensor *t[2] = {gb_from_f32(data, GB_SHAPE(5, 2, 3)), gb_arange(GB_I64, 100, 105, 1)};
    gb_dataset *ds = gb_dataset_batch(gb_dataset_from_tensor_slices(2, t), 2, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    int step = 0;
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin(), step++) {
        int64_t n = step < 2 ? 2 : 1;
        ck_assert_int_eq(gb_rank(b[0]), 3);
        ck_assert_int_eq(gb_dim(b[0], 0), n);
        ck_assert_int_eq(gb_dim(b[0], 1), 2);
        ck_assert_int_eq(gb_dim(b[0], 2), 3);
        ck_assert_int_eq(gb_tensor_dtype(b[1]), GB_I64);
        ck_assert_int_eq(gb_dim(b[1], 0), n);
        for (int64_t i = 0; i < gb_size(b[0]); i++)
            ck_assert_double_eq(gb_get(b[0], i), 12 * step + i);
        for (int64_t i = 0; i < n; i++) ck_assert_double_eq(gb_get(b[1], i), 100 + 2 * step + i);
    }
    gb_scope_end();
    ck_assert_int_eq(step, 3);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* batch of batches: [2,3] blocks of a [12] range. */
START_TEST(test_batch_of_batches) {
    gb_dataset *ds = gb_dataset_batch(gb_dataset_batch(range_ds(12), 3, false), 2, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b;
    ck_assert(gb_iterator_next(it, &b));
    ck_assert_int_eq(gb_rank(b), 2);
    ck_assert_int_eq(gb_dim(b, 0), 2);
    ck_assert_int_eq(gb_dim(b, 1), 3);
    for (int i = 0; i < 6; i++) ck_assert_double_eq(gb_get(b, i), i);
    ck_assert(gb_iterator_next(it, &b));
    ck_assert_double_eq(gb_get(b, 0), 6);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* A huge batch_size over a small dataset is one batch of everything. */
START_TEST(test_batch_larger_than_dataset) {
    gb_dataset *ds = gb_dataset_batch(range_ds(7), INT64_C(1) << 40, false);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 1);
    double got[MAXN];
    int want[] = {0, 1, 2, 3, 4, 5, 6};
    assert_seq(got, collect(ds, got), want, 7);
    ck_assert(gb_ok());
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_batch_errors) {
    ck_assert_ptr_null(gb_dataset_batch(range_ds(4), 0, false));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_str_eq(gb_last_error()->message, "gb_dataset_batch: batch_size must be >= 1, got 0");
}
END_TEST

/* ---- shuffle ---------------------------------------------------------------------- */

/* The orders of seed 42 over 0..9 with a full buffer, epochs 1 and 2: a
 * regression check that runs repeat exactly (recorded from this
 * implementation; any change of algorithm must be deliberate). */
START_TEST(test_shuffle_exact_orders) {
    gb_dataset *ds = gb_dataset_shuffle(range_ds(10), 10, 42);
    double got[MAXN];
    int epoch1[] = {9, 2, 4, 7, 3, 1, 5, 6, 8, 0}, epoch2[] = {4, 9, 7, 2, 8, 1, 6, 0, 3, 5};
    assert_seq(got, collect(ds, got), epoch1, 10);
    assert_seq(got, collect(ds, got), epoch2, 10);
    gb_dataset_free(ds);
    /* A new dataset with the same seed starts the same sequence again. */
    ds = gb_dataset_shuffle(range_ds(10), 10, 42);
    assert_seq(got, collect(ds, got), epoch1, 10);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_shuffle_permutation_each_epoch) {
    enum { N = 1000 };
    gb_dataset *ds = gb_dataset_shuffle(range_ds(N), 100, 7);
    double a[MAXN], b[MAXN];
    ck_assert_int_eq(collect(ds, a), N);
    ck_assert_int_eq(collect(ds, b), N);
    ck_assert(is_permutation(a, N));
    ck_assert(is_permutation(b, N));
    int same = 0, in_place = 0;
    for (int i = 0; i < N; i++) {
        same += a[i] == b[i];
        in_place += a[i] == i;
    }
    ck_assert_int_lt(same, N / 10);       /* epochs are reshuffled */
    ck_assert_int_lt(in_place, N / 10);   /* and shuffled at all */
    gb_dataset_free(ds);

    /* Another seed gives another order. */
    gb_dataset *d1 = gb_dataset_shuffle(range_ds(N), N, 1);
    gb_dataset *d2 = gb_dataset_shuffle(range_ds(N), N, 2);
    ck_assert_int_eq(collect(d1, a), N);
    ck_assert_int_eq(collect(d2, b), N);
    same = 0;
    for (int i = 0; i < N; i++) same += a[i] == b[i];
    ck_assert_int_lt(same, N / 10);
    gb_dataset_free(d1);
    gb_dataset_free(d2);
}
END_TEST

/* With a buffer of B, the p-th output was among the first p + B inputs;
 * the first output is uniform over the first B (checked over seeds). */
START_TEST(test_shuffle_buffer_window) {
    enum { N = 200, B = 10, SEEDS = 2000 };
    double got[MAXN];
    gb_dataset *ds = gb_dataset_shuffle(range_ds(N), B, 3);
    ck_assert_int_eq(collect(ds, got), N);
    ck_assert(is_permutation(got, N));
    for (int p = 0; p < N; p++) ck_assert_int_lt((int)got[p], p + B);
    gb_dataset_free(ds);

    int first[B] = {0};
    gb_dataset *src = range_ds(N);
    for (int s = 0; s < SEEDS; s++) {
        gb_dataset *d = gb_dataset_take(gb_dataset_shuffle(gb_dataset_ref(src), B, (uint64_t)s), 1);
        ck_assert_int_eq(collect(d, got), 1);
        first[(int)got[0]]++;
        gb_dataset_free(d);
    }
    for (int i = 0; i < B; i++) {   /* expected 200 each; 5 sigma is about 67 */
        ck_assert_int_gt(first[i], 130);
        ck_assert_int_lt(first[i], 270);
    }
    gb_dataset_free(src);
}
END_TEST

START_TEST(test_shuffle_buffer_one_is_identity) {
    gb_dataset *ds = gb_dataset_shuffle(range_ds(6), 1, 99);
    double got[MAXN];
    int want[] = {0, 1, 2, 3, 4, 5};
    assert_seq(got, collect(ds, got), want, 6);
    gb_dataset_free(ds);
}
END_TEST

START_TEST(test_shuffle_errors) {
    ck_assert_ptr_null(gb_dataset_shuffle(range_ds(4), 0, 1));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_dataset_shuffle: buffer_size must be >= 1, got 0");
}
END_TEST

/* ---- repeat, take, skip ---------------------------------------------------------------- */

START_TEST(test_repeat_counts) {
    double got[MAXN];
    gb_dataset *ds = gb_dataset_repeat(range_ds(3), 2);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 6);
    int want[] = {0, 1, 2, 0, 1, 2};
    assert_seq(got, collect(ds, got), want, 6);
    gb_dataset_free(ds);

    ds = gb_dataset_repeat(range_ds(3), 0);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 0);
    ck_assert_int_eq(collect(ds, got), 0);
    gb_dataset_free(ds);

    /* Forever, cut by take; batches span the rounds as in TensorFlow. */
    ds = gb_dataset_batch(gb_dataset_take(gb_dataset_repeat(range_ds(3), -1), 8), 3, false);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 3);
    int want8[] = {0, 1, 2, 0, 1, 2, 0, 1};
    assert_seq(got, collect(ds, got), want8, 8);
    gb_dataset_free(ds);

    ds = gb_dataset_repeat(range_ds(3), -1);
    ck_assert_int_eq(gb_dataset_cardinality(ds), GB_DATA_INFINITE);
    gb_dataset_free(ds);
}
END_TEST

/* repeat(-1) of nothing ends instead of looping forever. */
START_TEST(test_repeat_forever_of_empty) {
    double got[MAXN];
    gb_dataset *ds = gb_dataset_repeat(gb_dataset_take(range_ds(5), 0), -1);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 0);
    ck_assert_int_eq(collect(ds, got), 0);
    ck_assert(gb_ok());
    gb_dataset_free(ds);
}
END_TEST

/* shuffle then repeat: each round is a fresh permutation. */
START_TEST(test_shuffle_repeat_reshuffles_rounds) {
    enum { N = 50 };
    double got[MAXN];
    gb_dataset *ds = gb_dataset_repeat(gb_dataset_shuffle(range_ds(N), N, 5), 3);
    ck_assert_int_eq(collect(ds, got), 3 * N);
    for (int r = 0; r < 3; r++) ck_assert(is_permutation(got + r * N, N));
    int same = 0;
    for (int i = 0; i < N; i++) same += got[i] == got[N + i];
    ck_assert_int_lt(same, N / 5);
    gb_dataset_free(ds);
    /* The same rounds as three epochs of the shuffle alone. */
    gb_dataset *sh = gb_dataset_shuffle(range_ds(N), N, 5);
    double e[MAXN];
    for (int r = 0; r < 3; r++) {
        ck_assert_int_eq(collect(sh, e), N);
        for (int i = 0; i < N; i++) ck_assert_double_eq(e[i], got[r * N + i]);
    }
    gb_dataset_free(sh);
}
END_TEST

START_TEST(test_take_skip) {
    double got[MAXN];
    gb_dataset *ds = gb_dataset_take(gb_dataset_skip(range_ds(10), 3), 4);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 4);
    int want[] = {3, 4, 5, 6};
    assert_seq(got, collect(ds, got), want, 4);
    gb_dataset_free(ds);

    ds = gb_dataset_skip(range_ds(10), -1);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 0);
    ck_assert_int_eq(collect(ds, got), 0);
    gb_dataset_free(ds);

    ds = gb_dataset_take(range_ds(4), -1);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 4);
    ck_assert_int_eq(collect(ds, got), 4);
    gb_dataset_free(ds);

    ds = gb_dataset_skip(range_ds(4), 9);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 0);
    ck_assert_int_eq(collect(ds, got), 0);
    gb_dataset_free(ds);

    /* Skipping whole batches releases their buffers. */
    ds = gb_dataset_skip(gb_dataset_batch(range_ds(10), 3, false), 2);
    int want2[] = {6, 7, 8, 9};
    assert_seq(got, collect(ds, got), want2, 4);
    gb_dataset_free(ds);

    ck_assert_ptr_null(gb_dataset_take(range_ds(3), -2));
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_dataset_take: count must be >= 0, or -1 for all; got -2");
    gb_clear_error();
    ck_assert_ptr_null(gb_dataset_repeat(range_ds(3), -5));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "got -5"));
}
END_TEST

/* shard(n, i): every n-th element from i; after the same shuffle on every
 * shard, shard-then-batch(B) gives the shards' k-th batches exactly the
 * elements of the unsharded k-th batch of n*B (data-parallel training). */
START_TEST(test_shard) {
    double got[MAXN];
    gb_dataset *ds = gb_dataset_shard(range_ds(10), 3, 1);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 3);
    int want[] = {1, 4, 7};
    assert_seq(got, collect(ds, got), want, 3);
    gb_dataset_free(ds);
    ds = gb_dataset_shard(range_ds(2), 3, 2);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 0);
    ck_assert_int_eq(collect(ds, got), 0);
    gb_dataset_free(ds);

    enum { N = 1000, B = 16, SHARDS = 2 };
    double whole[MAXN], part[SHARDS][MAXN];
    ds = gb_dataset_batch(gb_dataset_shuffle(range_ds(N), N, 7), SHARDS * B, false);
    ck_assert_int_eq(collect(ds, whole), N);
    gb_dataset_free(ds);
    for (int r = 0; r < SHARDS; r++) {
        ds = gb_dataset_batch(gb_dataset_shard(gb_dataset_shuffle(range_ds(N), N, 7), SHARDS, r), B,
                              false);
        ck_assert_int_eq(gb_dataset_cardinality(ds), (N / SHARDS + B - 1) / B);
        ck_assert_int_eq(collect(ds, part[r]), N / SHARDS);
        gb_dataset_free(ds);
    }
    /* Shard r's element j of batch k is element r + SHARDS*j of global batch k. */
    for (int i = 0; i < N; i++) {
        int k = i / (SHARDS * B), j = i % (SHARDS * B);
        ck_assert_double_eq(whole[i], part[j % SHARDS][k * B + j / SHARDS]);
    }

    ck_assert_ptr_null(gb_dataset_shard(range_ds(3), 2, 2));
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_dataset_shard: index must be in [0, num_shards) and num_shards >= 1; got "
                     "index 2 of 2 shards");
    gb_clear_error();
    ck_assert_ptr_null(gb_dataset_shard(range_ds(3), 0, 0));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
}
END_TEST

/* ---- map -------------------------------------------------------------------------------- */

/* x -> (x * 10 as float64 [2] = {10x, 10x + 1}, x). */
static bool widen(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    ck_assert_int_eq(nin, 1);
    ck_assert_ptr_eq(ctx, (void *)widen);
    double x = gb_item(in[0]);
    out[0] = gb_from_f64((double[]){10 * x, 10 * x + 1}, GB_SHAPE(2));
    out[1] = in[0];
    return true;
}

START_TEST(test_map_then_batch) {
    gb_dataset *ds = gb_dataset_batch(gb_dataset_map(range_ds(5), widen, (void *)widen, 2), 2,
                                      false);
    ck_assert_int_eq(gb_dataset_num_components(ds), 2);
    ck_assert_int_eq(gb_dataset_cardinality(ds), 3);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    int step = 0;
    for (gb_scope_begin(); gb_iterator_next(it, b); gb_scope_end(), gb_scope_begin(), step++) {
        ck_assert_int_eq(gb_rank(b[0]), 2);
        ck_assert_int_eq(gb_dim(b[0], 1), 2);
        ck_assert_int_eq(gb_tensor_dtype(b[0]), GB_F64);
        for (int64_t i = 0; i < gb_dim(b[0], 0); i++) {
            double x = 2 * step + (double)i;
            ck_assert_double_eq(gb_get(b[1], i), x);
            ck_assert_double_eq(gb_get(b[0], 2 * i), 10 * x);
            ck_assert_double_eq(gb_get(b[0], 2 * i + 1), 10 * x + 1);
        }
    }
    gb_scope_end();
    ck_assert_int_eq(step, 3);
    ck_assert(gb_ok());
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* Element 3 gets a different shape: batch names the component and shapes. */
static bool ragged(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    out[0] = gb_item(in[0]) == 3 ? gb_zeros(GB_F32, GB_SHAPE(3)) : gb_zeros(GB_F32, GB_SHAPE(2));
    return true;
}

START_TEST(test_batch_shape_mismatch) {
    gb_dataset *ds = gb_dataset_batch(gb_dataset_map(range_ds(6), ragged, NULL, 1), 4, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b;
    ck_assert(!gb_iterator_next(it, &b));
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_str_eq(gb_last_error()->message,
                     "BatchDataset: cannot batch elements of different shapes in component 0: "
                     "the first element of the batch is float32 [2], element 3 is float32 [3]");
    /* After an error the epoch is over, even once the error is cleared. */
    gb_clear_error();
    ck_assert(!gb_iterator_next(it, &b));
    ck_assert(gb_ok());
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

static bool fail_on_2(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)nin;
    out[0] = in[0];
    return gb_item(in[0]) != 2;
}

static bool null_output(void *ctx, gb_tensor *const *in, int nin, gb_tensor **out) {
    (void)ctx, (void)in, (void)nin;
    out[0] = NULL;
    return true;
}

static bool null_output_gen(void *ctx, int64_t index, gb_tensor **out) {
    (void)ctx, (void)index;
    out[0] = NULL;
    return true;
}

START_TEST(test_map_errors) {
    double got[MAXN];
    gb_dataset *ds = gb_dataset_map(range_ds(5), fail_on_2, NULL, 1);
    ck_assert_int_eq(collect(ds, got), 2);
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_VALUE);
    ck_assert_str_eq(gb_last_error()->message,
                     "MapDataset: the map function failed on element 2");
    gb_clear_error();
    gb_dataset_free(ds);

    ds = gb_dataset_map(range_ds(5), null_output, NULL, 1);
    ck_assert_int_eq(collect(ds, got), 0);
    ck_assert_str_eq(gb_last_error()->message,
                     "MapDataset: the map function returned a NULL output 0 for element 0");
    gb_clear_error();
    gb_dataset_free(ds);

    ck_assert_ptr_null(gb_dataset_map(range_ds(5), NULL, NULL, 1));
    ck_assert_str_eq(gb_last_error()->message, "gb_dataset_map: the function is NULL");
    gb_clear_error();
    ck_assert_ptr_null(gb_dataset_map(range_ds(5), widen, NULL, 9));
    ck_assert_str_eq(gb_last_error()->message, "gb_dataset_map: nout must be 1 to 8, got 9");
}
END_TEST

/* ---- from_generator ------------------------------------------------------------------- */

/* Squares 0..count-1 as (int64 [], float32 [2]); count in ctx. */
static bool squares(void *ctx, int64_t index, gb_tensor **out) {
    if (index >= *(int64_t *)ctx) return false;
    out[0] = gb_scalar(GB_I64, (double)(index * index));
    out[1] = gb_from_f32((float[]){(float)index, -(float)index}, GB_SHAPE(2));
    return true;
}

START_TEST(test_generator) {
    int64_t count = 7;
    gb_dataset *ds = gb_dataset_batch(gb_dataset_from_generator(squares, &count, 2), 3, false);
    ck_assert_int_eq(gb_dataset_num_components(ds), 2);
    ck_assert_int_eq(gb_dataset_cardinality(ds), GB_DATA_UNKNOWN);
    double got[MAXN];
    int want[] = {0, 1, 4, 9, 16, 25, 36};
    for (int epoch = 0; epoch < 2; epoch++)   /* each iteration starts again at 0 */
        assert_seq(got, collect(ds, got), want, 7);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    ck_assert(gb_iterator_next(it, b));
    ck_assert_int_eq(gb_dim(b[1], 0), 3);
    ck_assert_int_eq(gb_dim(b[1], 1), 2);
    ck_assert_double_eq(gb_get(b[1], 5), -2);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* Element 2 fails inside an op: the error stops the iteration there. */
static bool failing(void *ctx, int64_t index, gb_tensor **out) {
    (void)ctx;
    out[0] = gb_scalar(GB_F32, (double)index);
    if (index == 2) out[0] = gb_fill(GB_F32, GB_SHAPE(-2), 0);
    return true;
}

START_TEST(test_generator_errors) {
    gb_dataset *ds = gb_dataset_from_generator(failing, NULL, 1);
    double got[MAXN];
    ck_assert_int_eq(collect(ds, got), 2);
    ck_assert_int_eq(gb_last_error()->code, GB_ERR_SHAPE);
    ck_assert_ptr_nonnull(strstr(gb_last_error()->message, "gb_fill: negative dimension"));
    gb_clear_error();
    gb_dataset_free(ds);

    ds = gb_dataset_from_generator(null_output_gen, NULL, 1);
    ck_assert_int_eq(collect(ds, got), 0);
    ck_assert_str_eq(gb_last_error()->message,
                     "GeneratorDataset: the generator function returned a NULL output 0 for "
                     "element 0");
    gb_clear_error();
    gb_dataset_free(ds);

    ck_assert_ptr_null(gb_dataset_from_generator(NULL, NULL, 1));
    ck_assert_str_eq(gb_last_error()->message, "gb_dataset_from_generator: the function is NULL");
    gb_clear_error();
    ck_assert_ptr_null(gb_dataset_from_generator(squares, NULL, 0));
    ck_assert_str_eq(gb_last_error()->message,
                     "gb_dataset_from_generator: nout must be 1 to 8, got 0");
}
END_TEST

/* ---- buffers and lifetimes -------------------------------------------------------------- */

/* Per-step scopes: after warm-up the same buffers come back every step. */
START_TEST(test_steady_state_allocates_nothing) {
    gb_tensor *x = gb_zeros(GB_F32, GB_SHAPE(1000, 28, 28));
    gb_tensor *y = gb_zeros(GB_I32, GB_SHAPE(1000));
    gb_dataset *ds = gb_dataset_repeat(
        gb_dataset_batch(gb_dataset_shuffle(gb_dataset_from_tensor_slices(2, (gb_tensor *[]){x, y}),
                                            500, 1),
                         32, true),
        -1);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[2];
    gb_iterator_stats st;
    int64_t warm = 0;
    for (int step = 0; step < 300; step++) {
        gb_scope_begin();
        ck_assert(gb_iterator_next(it, b));
        ck_assert_int_eq(gb_dim(b[0], 0), 32);
        gb_scope_end();
        if (step == 10) {
            ck_assert(gb_iterator_get_stats(it, &st));
            warm = st.buffers_allocated;
        }
    }
    ck_assert(gb_iterator_get_stats(it, &st));
    ck_assert_int_eq(st.elements, 300);
    ck_assert_int_eq(st.buffers_allocated, warm);
    ck_assert_int_le(st.buffers_allocated, 4);   /* images + labels, double-buffered at most */
    ck_assert_int_eq(st.buffers_in_use, 0);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* A batch kept past its step must not be overwritten by later batches. */
START_TEST(test_kept_batch_is_not_recycled) {
    gb_dataset *ds = gb_dataset_batch(range_ds(40), 4, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b, *kept = NULL;
    gb_scope_begin();
    ck_assert(gb_iterator_next(it, &b));
    kept = gb_keep(b);
    gb_scope_end();
    int steps = 0;
    for (gb_scope_begin(); gb_iterator_next(it, &b); gb_scope_end(), gb_scope_begin()) steps++;
    gb_scope_end();
    ck_assert_int_eq(steps, 9);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(kept, i), i);
    gb_iterator_stats st;
    ck_assert(gb_iterator_get_stats(it, &st));
    ck_assert_int_eq(st.buffers_in_use, 1);
    gb_iterator_free(it);
    gb_dataset_free(ds);
    /* Still valid after the iterator and dataset are gone. */
    for (int i = 0; i < 4; i++) ck_assert_double_eq(gb_get(kept, i), i);
}
END_TEST

/* Batches of one scope stay distinct (no step scopes: the pool grows). */
START_TEST(test_batches_in_one_scope_are_distinct) {
    gb_dataset *ds = gb_dataset_batch(range_ds(12), 3, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b[4];
    for (int k = 0; k < 4; k++) ck_assert(gb_iterator_next(it, &b[k]));
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++) ck_assert_double_eq(gb_get(b[k], i), 3 * k + i);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* The dataset may be freed first: the iterator holds a reference. And an
 * iterator freed mid-epoch releases everything (checked by ASan). */
START_TEST(test_lifetimes) {
    gb_dataset *ds = gb_dataset_batch(gb_dataset_shuffle(range_ds(100), 50, 1), 8, false);
    gb_iterator *it = gb_iterator_new(ds);
    gb_dataset_free(ds);
    gb_tensor *b;
    ck_assert(gb_iterator_next(it, &b));
    ck_assert_int_eq(gb_dim(b, 0), 8);
    gb_iterator_free(it);
    ck_assert_int_eq(gb_dim(b, 0), 8);   /* the batch lives until its scope ends */

    gb_dataset *shared = range_ds(4);
    gb_dataset *a = gb_dataset_take(gb_dataset_ref(shared), 2);
    gb_dataset *c = gb_dataset_skip(shared, 2);
    double got[MAXN];
    int wa[] = {0, 1}, wc[] = {2, 3};
    assert_seq(got, collect(a, got), wa, 2);
    assert_seq(got, collect(c, got), wc, 2);
    gb_dataset_free(a);
    gb_dataset_free(c);
    gb_iterator_free(NULL);
    gb_dataset_free(NULL);
}
END_TEST

START_TEST(test_iterator_errors) {
    gb_tensor *b;
    ck_assert_ptr_null(gb_iterator_new(NULL));
    ck_assert_str_eq(gb_last_error()->message, "gb_iterator_new: the dataset is NULL");
    gb_clear_error();
    ck_assert(!gb_iterator_next(NULL, &b));
    ck_assert_str_eq(gb_last_error()->message, "gb_iterator_next: the iterator is NULL");
    gb_clear_error();
    /* A pending error stops the epoch: the loop's check at its end sees it. */
    gb_dataset *ds = range_ds(3);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *bad = gb_zeros(GB_F32, GB_SHAPE(-1));
    ck_assert_ptr_null(bad);
    ck_assert(!gb_iterator_next(it, &b));
    ck_assert_ptr_null(b);
    gb_clear_error();
    ck_assert(gb_iterator_next(it, &b));
    ck_assert_double_eq(gb_item(b), 0);
    gb_iterator_free(it);
    gb_dataset_free(ds);
}
END_TEST

/* Outside any scope the tensors can never be released: a warning says so. */
START_TEST(test_warns_outside_scope) {
    gb_dataset *ds = range_ds(2);
    gb_iterator *it = gb_iterator_new(ds);
    gb_tensor *b;
    gb_scope_end(); /* leave the fixture's scope: depth 0 */
    int before = gb_warning_count();
    ck_assert(gb_iterator_next(it, &b));
    ck_assert(gb_iterator_next(it, &b));
    ck_assert_int_eq(gb_warning_count(), before + 1);
    ck_assert_ptr_nonnull(strstr(gb_last_warning(), "outside any scope"));
    gb_iterator_free(it);
    gb_dataset_free(ds);
    gb_scope_begin();
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("data_pipeline");
    TCase *tc = tcase_create("pipeline");
    tcase_add_checked_fixture(tc, scope_setup, scope_teardown);
    tcase_add_test(tc, test_slices_tuple);
    tcase_add_test(tc, test_slices_outlive_scope);
    tcase_add_test(tc, test_from_tensors_single_element);
    tcase_add_test(tc, test_slices_errors);
    tcase_add_test(tc, test_batch_keeps_remainder);
    tcase_add_test(tc, test_batch_drop_remainder);
    tcase_add_test(tc, test_batch_stacks_tuples);
    tcase_add_test(tc, test_batch_of_batches);
    tcase_add_test(tc, test_batch_larger_than_dataset);
    tcase_add_test(tc, test_batch_errors);
    tcase_add_test(tc, test_shuffle_exact_orders);
    tcase_add_test(tc, test_shuffle_permutation_each_epoch);
    tcase_add_test(tc, test_shuffle_buffer_window);
    tcase_add_test(tc, test_shuffle_buffer_one_is_identity);
    tcase_add_test(tc, test_shuffle_errors);
    tcase_add_test(tc, test_repeat_counts);
    tcase_add_test(tc, test_repeat_forever_of_empty);
    tcase_add_test(tc, test_shuffle_repeat_reshuffles_rounds);
    tcase_add_test(tc, test_take_skip);
    tcase_add_test(tc, test_shard);
    tcase_add_test(tc, test_map_then_batch);
    tcase_add_test(tc, test_batch_shape_mismatch);
    tcase_add_test(tc, test_map_errors);
    tcase_add_test(tc, test_generator);
    tcase_add_test(tc, test_generator_errors);
    tcase_add_test(tc, test_steady_state_allocates_nothing);
    tcase_add_test(tc, test_kept_batch_is_not_recycled);
    tcase_add_test(tc, test_batches_in_one_scope_are_distinct);
    tcase_add_test(tc, test_lifetimes);
    tcase_add_test(tc, test_iterator_errors);
    tcase_add_test(tc, test_warns_outside_scope);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return run_suite(suite()); }
