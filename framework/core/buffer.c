/* core/buffer.c — reference-counted heap buffers.
 *
 * Values that outlive scopes (variables, dataset batches) sit in heap
 * buffers; a tensor viewing one holds a reference that its scope releases
 * when it ends, so a value read stays valid after its owner moves on.
 * Pipelines hand buffers across threads, hence the atomic count.
 */
#include <stdlib.h>

#include "core/internal.h"

gb_buffer *gb__buffer_new_heap(size_t nbytes) {
    size_t header = (sizeof(gb_buffer) + 63) & ~(size_t)63;
    gb_buffer *b = aligned_alloc(64, (header + nbytes + 63) & ~(size_t)63);
    if (!b) {
        gb__error(GB_ERR_MEMORY, NULL, "out of memory allocating a %zu-byte buffer", nbytes);
        return NULL;
    }
    *b = (gb_buffer){.data = (char *)b + header, .nbytes = nbytes, .refcount = 1, .heap = true};
    return b;
}

void gb__buffer_unref(gb_buffer *b) {
    if (b && --b->refcount == 0) free(b);
}
