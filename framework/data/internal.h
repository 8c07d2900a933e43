/* data/internal.h — the input pipeline's private structures (data_*.c only).
 *
 * A dataset (gb_dataset) is an immutable, reference-counted description: a
 * source or a transformation of an input dataset. Iterating instantiates
 * one stage iterator (gb__iter) per dataset, each pulling elements from
 * the one below, as tf.data's iterators do.
 *
 * Elements carry pointers, not copies. A component's bytes either live as
 * long as the dataset (slices of the source tensors: `owner` NULL) or fill
 * one heap buffer of the iterator's pool (`owner`: batches, map outputs).
 * Owned buffers move with the element: whoever receives an element from
 * next() owns its buffers and passes them on or puts them back into the
 * pool. The last stage lends them to the consumer as tensor views, and the
 * pool takes them back once no tensor of the consumer refers to them, so
 * a steady training loop recycles the same few buffers.
 */
#ifndef GB_DATA_INTERNAL_H
#define GB_DATA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <zlib.h>

#include "gb_data.h"
#include "ops/internal.h"

/* ---- elements ------------------------------------------------------------------ */

typedef struct gb__component {
    const void *data;
    gb_buffer *owner;   /* pool buffer holding exactly this component, or NULL */
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
} gb__component;

typedef struct gb__element {
    int n;
    gb__component c[GB_DATA_MAX_COMPONENTS];
} gb__element;

size_t gb__component_nbytes(const gb__component *c);
/* With a string component's bytes too (they follow the pairs in a copy). */
size_t gb__component_total(const gb__component *c);
/* Copies c to dst (gb__component_total bytes): a string component's pairs,
 * then its bytes, the pairs pointing at them. */
void gb__component_copy(const gb__component *c, void *dst);
/* Copies the n components of src to dst (ownership moves with them). */
void gb__element_move(gb__element *dst, const gb__element *src);

/* ---- the buffer pool of one iterator ----------------------------------------------- */

/* Free buffers are shared by the producing thread and the consumer (under
 * mu); lent buffers are the consumer's alone, because only the consumer's
 * thread changes their reference counts (views, gb_keep, scope ends). */
typedef struct gb__pool {
    pthread_mutex_t mu;
    gb_buffer **free_bufs;
    int nfree, capfree;
    int64_t allocated, bytes_allocated;   /* under mu */
    gb_buffer **lent;                     /* consumer thread only */
    int nlent, caplent;
} gb__pool;

void gb__pool_init(gb__pool *p);
/* A buffer of at least nbytes from any thread; NULL after a memory error. */
gb_buffer *gb__pool_get(gb__pool *p, size_t nbytes);
/* Gives a buffer back (any thread). */
void gb__pool_put(gb__pool *p, gb_buffer *b);
/* Puts back every owned buffer of e and empties it. */
void gb__element_release(gb__pool *p, gb__element *e);
/* Copies n tensors made by a user function (map, generator) into pool
 * buffers as element out; `fn` names the function in errors ("MapDataset:
 * the map"). false after an error (nothing then held). */
bool gb__element_from_tensors(gb__pool *pool, const char *fn, int64_t index,
                              gb_tensor *const *t, int n, gb__element *out);
/* Consumer thread: b is now referenced by the consumer's tensors. */
bool gb__pool_lend(gb__pool *p, gb_buffer *b);
/* Consumer thread: lent buffers no tensor refers to any more go back. */
void gb__pool_reclaim(gb__pool *p);
/* Consumer thread, producer stopped: drops the pool's references (buffers
 * still viewed by live tensors are freed when their scopes end). */
void gb__pool_destroy(gb__pool *p);

/* ---- stage iterators ---------------------------------------------------------------- */

typedef struct gb__iter gb__iter;

typedef struct gb__iter_ops {
    /* Writes the next element to *out; the caller owns its buffers. false
     * at the end of the sequence, or after an error (gb_ok() is then false
     * on this thread). */
    bool (*next)(gb__iter *it, gb__element *out);
    /* Puts back the elements it holds, frees its upstream and itself. */
    void (*free)(gb__iter *it);
} gb__iter_ops;

struct gb__iter {
    const gb__iter_ops *ops;
    gb__pool *pool;
};

static inline bool gb__iter_next(gb__iter *it, gb__element *out) { return it->ops->next(it, out); }
static inline void gb__iter_free(gb__iter *it) {
    if (it) it->ops->free(it);
}

/* ---- datasets --------------------------------------------------------------------------- */

typedef struct gb__dataset_ops {
    const char *name;   /* "BatchDataset", as TensorFlow names them */
    /* A fresh iterator (the start of an epoch); NULL after an error. */
    gb__iter *(*iter_new)(gb_dataset *ds, gb__pool *pool);
    int64_t (*cardinality)(const gb_dataset *ds);
    void (*destroy)(gb_dataset *ds);   /* per-type resources; NULL if none */
} gb__dataset_ops;

struct gb_dataset {
    const gb__dataset_ops *ops;
    atomic_int refs;
    gb_dataset *input;   /* NULL for sources; owned */
    int ncomp;           /* components per element */
};

/* Allocates a dataset of `size` bytes (a struct starting with gb_dataset)
 * over `input`, whose reference it takes over. On failure the input is
 * released and NULL returned. */
gb_dataset *gb__dataset_new(size_t size, const gb__dataset_ops *ops, gb_dataset *input,
                            int ncomp);
/* A transformation's common argument check: NULL input (an earlier error
 * stands, or the caller gets one). */
bool gb__dataset_check_input(const char *fn, gb_dataset *input);
static inline gb__iter *gb__dataset_iter(gb_dataset *ds, gb__pool *pool) {
    return ds->ops->iter_new(ds, pool);
}
/* Allocates a zeroed stage iterator of `size` bytes; NULL after an error. */
void *gb__iter_alloc(size_t size, const gb__iter_ops *ops, gb__pool *pool);

/* ---- tensors over heap buffers ------------------------------------------------------------ */

/* A tensor in the current scope viewing heap buffer b. adopt: the caller's
 * reference moves to the scope; otherwise the scope takes a new one. NULL
 * after an error (an adopted reference is then released). */
gb_tensor *gb__heap_tensor(gb_buffer *b, bool adopt, gb_dtype dt, int rank,
                           const int64_t *shape);

/* ---- bytes in memory, plain or gzip ---------------------------------------------------- */

/* A sequential reader over a buffer: gzip data (magic 1F 8B) are inflated,
 * anything else read as is. The buffer must outlive the reader. */
typedef struct gb__byte_reader {
    const uint8_t *next;   /* input not consumed yet */
    size_t left;
    bool gzip;
    bool inflating;        /* z holds zlib state that close must free */
    bool member_ended;     /* the current gzip member is complete */
    bool ended_early;      /* the data stop in the middle of a gzip member */
    const char *error;     /* why the gzip data are corrupt (zlib's words) */
    z_stream z;
} gb__byte_reader;

/* false after a GB_ERR_MEMORY error (zlib's state); close it either way. */
bool gb__byte_reader_open(gb__byte_reader *r, const void *bytes, size_t n);
void gb__byte_reader_close(gb__byte_reader *r);
/* Reads up to n bytes into dst: the count read (fewer only at the end of
 * the data), or -1 when the gzip data are corrupt (r->error says how). */
int64_t gb__byte_reader_read(gb__byte_reader *r, void *dst, int64_t n);
/* The most bytes the rest can yield: exact for plain data, the deflate
 * bound for gzip. Lets a loader refuse a header announcing more data than
 * the input could hold before it allocates for it. */
uint64_t gb__byte_reader_max_left(const gb__byte_reader *r);

/* ---- background threads ---------------------------------------------------------------------- */

/* A job for a background worker; embedded in its owner, no allocation. */
typedef struct gb__job {
    void (*fn)(void *arg);
    void *arg;
    struct gb__job *next;
} gb__job;

/* Runs job->fn(job->arg) on a background thread; false after an error. */
bool gb__worker_run(gb__job *job);
/* Raises on this (the consumer's) thread an error a worker thread had. */
void gb__reraise(const gb_error *e);

/* The order in which shuffle(buffer_size >= n, seed) gives n elements on
 * its k-th iteration (epoch), into perm[n]: fit shuffles arrays this way,
 * so fit and a hand loop over a shuffled dataset see the same batches. */
void gb__shuffle_permutation(int64_t *perm, int64_t n, uint64_t seed, uint64_t k);

#endif
