/* data/iterator.c — gb_iterator: one epoch of a dataset, handed to the
 * consumer as tensors of its current scope.
 *
 * Components the pipeline wrote into pool buffers (batches, map outputs)
 * become views on those buffers: no copy, and the buffer returns to the
 * pool when the consumer's scope releases it. Components that point into
 * the dataset's own data (unbatched slices) are copied, since they are
 * small and a tensor must not alias the source.
 */
#include <stdlib.h>

#include "data/internal.h"

struct gb_iterator {
    gb_dataset *ds;
    gb__iter *root;
    gb__pool pool;
    int64_t elements;
    double next_ms;
    bool ended;   /* the end or an error: the epoch is over for good */
    bool warned_root_scope;
};

gb_iterator *gb_iterator_new(gb_dataset *ds) {
    if (!ds) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_iterator_new: the dataset is NULL");
        return NULL;
    }
    gb_iterator *it = calloc(1, sizeof *it);
    if (!it) {
        gb__error(GB_ERR_MEMORY, NULL, "gb_iterator_new: out of memory");
        return NULL;
    }
    gb__pool_init(&it->pool);
    it->ds = gb_dataset_ref(ds);
    it->root = gb__dataset_iter(ds, &it->pool);
    if (!it->root) {
        gb_iterator_free(it);
        return NULL;
    }
    return it;
}

void gb_iterator_free(gb_iterator *it) {
    if (!it) return;
    gb__iter_free(it->root);   /* stops background threads first */
    gb__pool_destroy(&it->pool);
    gb_dataset_free(it->ds);
    free(it);
}

/* Component c as a tensor of the current scope; NULL after an error. */
static gb_tensor *hand_out(gb_iterator *it, const gb__component *c) {
    if (c->owner) {
        /* Pool buffers hold one component from their start. */
        assert(c->data == c->owner->data);
        /* From now on the buffer's count moves with the consumer's tensors;
         * if the view cannot be made, the next reclaim takes it back. */
        if (!gb__pool_lend(&it->pool, c->owner)) {
            gb__pool_put(&it->pool, c->owner);
            return NULL;
        }
        return gb__heap_tensor(c->owner, false, c->dtype, c->rank, c->shape);
    }
    gb_tensor *t = gb__tensor_new(c->dtype, c->rank, c->shape, true);
    if (t) memcpy(t->data, c->data, gb__component_nbytes(c));
    return t;
}

bool gb_iterator_next(gb_iterator *it, gb_tensor **out) {
    if (!it || !out) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, NULL, "gb_iterator_next: %s is NULL",
                               it ? "out" : "the iterator");
        return false;
    }
    for (int k = 0; k < it->ds->ncomp; k++) out[k] = NULL;
    /* After an error the epoch stops: a training loop checking gb_ok() at
     * its end must not go on feeding batches into a failed computation. */
    if (!gb_ok() || it->ended) return false;
    if (gb_scope_depth() == 0 && !it->warned_root_scope) {
        it->warned_root_scope = true;
        gb__warn("gb_iterator_next called outside any scope: its tensors are never released; "
                 "call it inside a per-step gb_scope_begin()/gb_scope_end()");
    }
    double t0 = gb__now_us();
    gb__pool_reclaim(&it->pool);
    gb__element e;
    bool ok = gb__iter_next(it->root, &e);
    it->next_ms += (gb__now_us() - t0) / 1000.0;
    if (atomic_load_explicit(&gb__prof_on, memory_order_relaxed))
        gb__prof_range(GB_PROFILE_INPUT_WAIT, "next batch", t0);
    if (!ok) {
        /* After an error too: stages may not be able to resume mid-element. */
        it->ended = true;
        return false;
    }

    assert(e.n == it->ds->ncomp);
    for (int k = 0; k < e.n; k++) {
        out[k] = hand_out(it, &e.c[k]);
        if (!out[k]) {
            /* The rest of the element still belongs to us. */
            for (int j = k + 1; j < e.n; j++)
                if (e.c[j].owner) gb__pool_put(&it->pool, e.c[j].owner);
            for (int j = 0; j < k; j++) out[j] = NULL;
            return false;
        }
    }
    it->elements++;
    return true;
}

bool gb_iterator_get_stats(const gb_iterator *it, gb_iterator_stats *out) {
    if (!it || !out) return false;
    gb_iterator_stats s = {.elements = it->elements, .next_ms = it->next_ms};
    gb__pool *p = (gb__pool *)&it->pool;
    pthread_mutex_lock(&p->mu);
    s.buffers_allocated = p->allocated;
    s.bytes_allocated = p->bytes_allocated;
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nlent; i++) s.buffers_in_use += p->lent[i]->refcount > 1;
    *out = s;
    return true;
}
