/* data/cache.c — cache(path), as tf.data.Dataset.cache: the first full
 * pass reads the input and keeps its elements, later passes replay them
 * without running the input again (its files, maps and generators).
 *
 * In memory (path NULL or ""), the elements of a pass are copied aside
 * and published to the dataset when the pass reaches the end; in a file,
 * they are written to a temporary file beside it that is renamed over the
 * path only then. Either way a pass that stops early (an iterator freed
 * half way, take() above the cache, an error) leaves nothing behind, so a
 * partial cache is never trusted: TensorFlow's rule, with its warning.
 * A cache file, once there, is read by every later pass and by later
 * processes, and the input is not touched.
 *
 * The file format (native byte order, for the machine that wrote it):
 *   "GBCACHE1", u32 0x01020304 (byte order), u32 components
 *   per element: 'E', per component u8 dtype, u8 rank, i64 dims[rank],
 *                the bytes; then u32 CRC-32 of the element from its 'E'
 *   'Z', i64 element count, u32 CRC-32 of the 'Z' and the count; nothing after
 * Each element is checked before it is handed out, so a truncated or
 * damaged file is an error naming the file and the element, never wrong
 * data or a crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/internal.h"

static const char MAGIC[8] = {'G', 'B', 'C', 'A', 'C', 'H', 'E', '1'};
static const uint32_t ORDER_MARK = 0x01020304;

/* Elements kept in memory: components point into one block per element. */
typedef struct mem_cache {
    gb__element *elems;
    void **blocks;
    int64_t n, cap;
} mem_cache;

typedef struct cache_ds {
    gb_dataset base;
    char *path;                /* NULL: in memory */
    pthread_mutex_t mu;
    mem_cache *complete;       /* memory: published at the end of a full pass */
    atomic_bool warned_partial;
} cache_ds;

typedef enum { REPLAY_MEMORY, REPLAY_FILE, FILL } cache_mode;

typedef struct cache_iter {
    gb__iter base;
    cache_ds *ds;
    cache_mode mode;
    int64_t index;             /* elements handed out */
    bool done;
    const mem_cache *mem;      /* REPLAY_MEMORY */
    FILE *in;                  /* REPLAY_FILE */
    int64_t in_size;
    gb__iter *up;              /* FILL */
    mem_cache *building;       /* FILL in memory */
    FILE *out;                 /* FILL to a file */
    char *tmp;
} cache_iter;

static void mem_cache_free(mem_cache *m) {
    if (!m) return;
    for (int64_t i = 0; i < m->n; i++) free(m->blocks[i]);
    free(m->elems);
    free(m->blocks);
    free(m);
}

/* Appends a copy of e. */
static bool mem_cache_add(mem_cache *m, const gb__element *e) {
    if (m->n == m->cap) {
        int64_t cap = m->cap ? 2 * m->cap : 256;
        gb__element *elems = realloc(m->elems, (size_t)cap * sizeof *elems);
        if (elems) m->elems = elems;
        void **blocks = elems ? realloc(m->blocks, (size_t)cap * sizeof *blocks) : NULL;
        if (!blocks) goto oom;
        m->blocks = blocks;
        m->cap = cap;
    }
    size_t total = 0;
    for (int k = 0; k < e->n; k++) total += gb__component_total(&e->c[k]);
    char *block = malloc(total ? total : 1);
    if (!block) goto oom;
    gb__element *dst = &m->elems[m->n];
    gb__element_move(dst, e);
    size_t off = 0;
    for (int k = 0; k < e->n; k++) {
        size_t nb = gb__component_total(&e->c[k]);
        gb__component_copy(&e->c[k], block + off);
        dst->c[k].data = block + off;
        dst->c[k].owner = NULL;   /* lives as long as the dataset */
        off += nb;
    }
    m->blocks[m->n++] = block;
    return true;
oom:
    gb__error(GB_ERR_MEMORY, "CacheDataset", "CacheDataset: out of memory after %lld elements",
              (long long)m->n);
    return false;
}

/* ---- the file -------------------------------------------------------------------------- */

static bool io_fail(const char *path, const char *what) {
    gb__error(GB_ERR_IO, "CacheDataset", "%s: cannot %s the cache file: %s", path, what,
              strerror(errno));
    return false;
}

static bool corrupt(cache_iter *it, const char *what) {
    gb__error(GB_ERR_IO, "CacheDataset",
              "%s: corrupt or truncated cache file: %s (element %lld); delete it and the next "
              "full pass writes it again",
              it->ds->path, what, (long long)it->index);
    return false;
}

/* Writes n bytes and adds them to *crc. */
static bool put(cache_iter *it, const void *p, size_t n, uint32_t *crc) {
    if (crc && n) *crc = (uint32_t)crc32(*crc, p, (uInt)n);
    return fwrite(p, 1, n, it->out) == n || io_fail(it->tmp, "write");
}

static bool write_element(cache_iter *it, const gb__element *e) {
    uint32_t crc = (uint32_t)crc32(0, NULL, 0);
    bool ok = put(it, "E", 1, &crc);
    for (int k = 0; ok && k < e->n; k++) {
        const gb__component *c = &e->c[k];
        if (c->dtype == GB_STRING) { /* pairs of pointers mean nothing in a file */
            gb__error(GB_ERR_DTYPE, "CacheDataset", "CacheDataset: %s: component %d is a string "
                      "tensor; a cache file holds numbers only (cache strings in memory: "
                      "gb_dataset_cache(ds, NULL))", it->ds->path, k);
            return false;
        }
        uint8_t dr[2] = {(uint8_t)c->dtype, (uint8_t)c->rank};
        ok = put(it, dr, 2, &crc) && put(it, c->shape, (size_t)c->rank * sizeof c->shape[0], &crc);
        /* crc32 takes a uInt length: big components go in pieces. */
        const char *p = c->data;
        for (size_t left = gb__component_nbytes(c), n; ok && left; left -= n, p += n) {
            n = left < (1u << 30) ? left : (1u << 30);
            ok = put(it, p, n, &crc);
        }
    }
    return ok && put(it, &crc, sizeof crc, NULL);
}

/* The end of a full pass: the footer, then the file becomes the cache. */
static bool finish_file(cache_iter *it) {
    uint32_t crc = (uint32_t)crc32(0, NULL, 0);
    bool ok = put(it, "Z", 1, &crc) && put(it, &it->index, sizeof it->index, &crc) &&
              put(it, &crc, sizeof crc, NULL);
    if (ok && (fflush(it->out) != 0 || fsync(fileno(it->out)) != 0)) ok = io_fail(it->tmp, "write");
    if (fclose(it->out) != 0 && ok) ok = io_fail(it->tmp, "close");
    it->out = NULL;
    if (ok && rename(it->tmp, it->ds->path) != 0) ok = io_fail(it->ds->path, "rename into place");
    if (!ok) unlink(it->tmp);
    free(it->tmp);
    it->tmp = NULL;
    return ok;
}

/* Reads n bytes (adding them to *crc); false at a short read. */
static bool get(cache_iter *it, void *p, size_t n, uint32_t *crc) {
    if (fread(p, 1, n, it->in) != n) return false;
    if (crc && n) *crc = (uint32_t)crc32(*crc, p, (uInt)n);
    return true;
}

static bool read_header(cache_iter *it) {
    char magic[8];
    uint32_t order, ncomp;
    if (!get(it, magic, 8, NULL) || memcmp(magic, MAGIC, 8) != 0)
        return corrupt(it, "not a glassbox cache file (bad magic)");
    if (!get(it, &order, 4, NULL) || order != ORDER_MARK)
        return corrupt(it, "written with another byte order, or damaged");
    if (!get(it, &ncomp, 4, NULL)) return corrupt(it, "the header is cut short");
    if (ncomp != (uint32_t)it->ds->base.ncomp) {
        gb__error(GB_ERR_IO, "CacheDataset",
                  "%s: the cache file holds elements of %u components, this dataset has %d: it "
                  "was written by another pipeline; delete it or use another path",
                  it->ds->path, ncomp, it->ds->base.ncomp);
        return false;
    }
    return true;
}

/* The footer after the last element: the count matches, nothing follows. */
static bool read_footer(cache_iter *it) {
    uint32_t crc = (uint32_t)crc32(0, (const Bytef *)"Z", 1), stored;
    int64_t count;
    if (!get(it, &count, sizeof count, &crc) || !get(it, &stored, sizeof stored, NULL))
        return corrupt(it, "the end marker is cut short");
    if (stored != crc || count != it->index) return corrupt(it, "the end marker is damaged");
    if (fgetc(it->in) != EOF) return corrupt(it, "bytes after the end marker");
    return true;
}

/* The next element from the file into pool buffers; false at the end
 * (it->done) or after an error. */
static bool read_element(cache_iter *it, gb__element *out) {
    int marker = fgetc(it->in);
    if (marker == 'Z') {
        it->done = true;
        read_footer(it);   /* the end, or an error */
        return false;
    }
    if (marker == EOF) return corrupt(it, "the file ends before its end marker");
    if (marker != 'E') return corrupt(it, "no element marker");
    uint32_t crc = (uint32_t)crc32(0, (const Bytef *)"E", 1), stored;
    out->n = 0;
    bool ok = true;
    for (int k = 0; ok && k < it->ds->base.ncomp; k++) {
        gb__component c = {0};
        uint8_t dr[2];
        ok = get(it, dr, 2, &crc) || corrupt(it, "cut short in a component header");
        if (ok && (!gb_dtype_is_numeric((gb_dtype)dr[0]) || dr[1] > GB_MAX_RANK))
            ok = corrupt(it, "a component with a bad dtype or rank");
        if (ok) {
            c.dtype = dr[0];
            c.rank = dr[1];
            ok = get(it, c.shape, (size_t)c.rank * sizeof c.shape[0], &crc) ||
                 corrupt(it, "cut short in a shape");
        }
        /* Dims must be plausible before anything is allocated for them. */
        int64_t bytes = ok ? (int64_t)gb_dtype_size(c.dtype) : 0;
        for (int d = 0; ok && d < c.rank; d++) {
            if (c.shape[d] < 0 || (c.shape[d] && bytes > it->in_size / c.shape[d]))
                ok = corrupt(it, "a shape larger than the file");
            else bytes *= c.shape[d];
        }
        gb_buffer *b = ok ? gb__pool_get(it->base.pool, (size_t)bytes) : NULL;
        if (ok && !b) ok = false;
        if (ok) {
            c.data = b->data;
            c.owner = b;
            out->c[out->n++] = c;
            for (int64_t left = bytes, n; ok && left; left -= n) {
                n = left < (1 << 30) ? left : (1 << 30);
                ok = get(it, (char *)b->data + (bytes - left), (size_t)n, &crc) ||
                     corrupt(it, "cut short in the data");
            }
        }
    }
    if (ok && (!get(it, &stored, sizeof stored, NULL) || stored != crc))
        ok = corrupt(it, "the checksum does not match");
    if (!ok) gb__element_release(it->base.pool, out);
    return ok;
}

/* ---- the iterator ----------------------------------------------------------------------- */

static bool cache_next(gb__iter *base, gb__element *out) {
    cache_iter *it = (cache_iter *)base;
    if (it->done) return false;
    bool ok;
    switch (it->mode) {
    case REPLAY_MEMORY:
        ok = it->index < it->mem->n;
        if (ok) gb__element_move(out, &it->mem->elems[it->index]);
        break;
    case REPLAY_FILE:
        ok = read_element(it, out);
        break;
    default:
        ok = gb__iter_next(it->up, out);
        if (ok) {
            ok = it->out ? write_element(it, out) : mem_cache_add(it->building, out);
            if (!ok) gb__element_release(base->pool, out);
        } else if (gb_ok()) {
            /* The end of a full pass: the cache is complete. */
            if (it->out) {
                finish_file(it);
            } else {
                pthread_mutex_lock(&it->ds->mu);
                if (!it->ds->complete) it->ds->complete = it->building, it->building = NULL;
                pthread_mutex_unlock(&it->ds->mu);
            }
        }
        break;
    }
    if (ok) it->index++;
    else it->done = true;
    return ok;
}

static void cache_iter_free(gb__iter *base) {
    cache_iter *it = (cache_iter *)base;
    bool partial = it->mode == FILL && !it->done && it->index > 0;
    if (partial && gb_ok() && !atomic_exchange(&it->ds->warned_partial, true))
        gb__warn("CacheDataset: an iterator stopped before the end of the dataset being cached, "
                 "so the %lld elements it read are discarded rather than cached as if they were "
                 "all; read the whole dataset (take() above cache() stops early) to fill the cache",
                 (long long)it->index);
    if (it->out) {
        fclose(it->out);
        unlink(it->tmp);
    }
    free(it->tmp);
    if (it->in) fclose(it->in);
    mem_cache_free(it->building);
    gb__iter_free(it->up);
    free(it);
}

static const gb__iter_ops cache_iter_ops = {cache_next, cache_iter_free};

/* A first pass to a file: the temporary file beside the path. */
static bool open_fill_file(cache_iter *it) {
    static atomic_uint serial;
    const char *path = it->ds->path;
    size_t n = strlen(path) + 64;
    it->tmp = malloc(n);
    if (!it->tmp) {
        gb__error(GB_ERR_MEMORY, "CacheDataset", "CacheDataset: out of memory");
        return false;
    }
    snprintf(it->tmp, n, "%s.tmp-%ld-%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
    it->out = fopen(it->tmp, "wb");
    if (!it->out) return io_fail(it->tmp, "create");
    uint32_t ncomp = (uint32_t)it->ds->base.ncomp;
    return put(it, MAGIC, 8, NULL) && put(it, &ORDER_MARK, 4, NULL) && put(it, &ncomp, 4, NULL);
}

/* Replays from the file when it is there; false without an error when
 * it is not (a first pass). */
static bool open_replay_file(cache_iter *it) {
    it->in = fopen(it->ds->path, "rb");
    if (!it->in) {
        if (errno != ENOENT) io_fail(it->ds->path, "open");
        return false;
    }
    struct stat st;
    if (fstat(fileno(it->in), &st) != 0 || !S_ISREG(st.st_mode)) {
        gb__error(GB_ERR_IO, "CacheDataset", "%s: the cache path is not a regular file",
                  it->ds->path);
        return false;
    }
    it->in_size = st.st_size;
    it->mode = REPLAY_FILE;
    return read_header(it);
}

static gb__iter *cache_iter_new(gb_dataset *base, gb__pool *pool) {
    cache_ds *ds = (cache_ds *)base;
    cache_iter *it = gb__iter_alloc(sizeof *it, &cache_iter_ops, pool);
    if (!it) return NULL;
    it->ds = ds;
    bool ok = true;
    if (ds->path) {
        if (open_replay_file(it)) return &it->base;
        ok = gb_ok();
    } else {
        pthread_mutex_lock(&ds->mu);
        it->mem = ds->complete;
        pthread_mutex_unlock(&ds->mu);
        if (it->mem) {
            it->mode = REPLAY_MEMORY;
            return &it->base;
        }
    }
    if (ok) {
        it->mode = FILL;
        it->up = gb__dataset_iter(base->input, pool);
        if (it->up && !ds->path && !(it->building = calloc(1, sizeof *it->building)))
            gb__error(GB_ERR_MEMORY, "CacheDataset", "CacheDataset: out of memory");
        ok = it->up && (ds->path ? open_fill_file(it) : it->building != NULL);
    }
    if (ok) return &it->base;
    cache_iter_free(&it->base);
    return NULL;
}

static int64_t cache_cardinality(const gb_dataset *ds) { return gb_dataset_cardinality(ds->input); }

static void cache_destroy(gb_dataset *base) {
    cache_ds *ds = (cache_ds *)base;
    mem_cache_free(ds->complete);
    free(ds->path);
    pthread_mutex_destroy(&ds->mu);
}

static const gb__dataset_ops cache_ops = {"CacheDataset", cache_iter_new, cache_cardinality,
                                          cache_destroy};

gb_dataset *gb_dataset_cache(gb_dataset *in, const char *path) {
    if (!gb__dataset_check_input("gb_dataset_cache", in)) return NULL;
    char *copy = NULL;
    if (path && path[0] && !(copy = strdup(path))) {
        gb__error(GB_ERR_MEMORY, "CacheDataset", "gb_dataset_cache: out of memory");
        gb_dataset_free(in);
        return NULL;
    }
    cache_ds *ds = (cache_ds *)gb__dataset_new(sizeof *ds, &cache_ops, in, in->ncomp);
    if (!ds) {
        free(copy);
        return NULL;
    }
    ds->path = copy;
    pthread_mutex_init(&ds->mu, NULL);
    atomic_init(&ds->warned_partial, false);
    return &ds->base;
}
