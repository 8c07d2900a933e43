/* io/checkpoint_list.c — what a checkpoint file holds, without restoring
 * it: each tensor's path, dtype, shape and size, and whether its bytes
 * still match their CRC (`glassbox checkpoint ls`, and programs that want
 * to look before they restore).
 */
#include <stdlib.h>

#include "io/internal.h"

int gb_checkpoint_list(const char *path, gb_checkpoint_entry **entries) {
    if (!gb_ok()) return -1;
    if (!path || !entries) {
        gb__error(GB_ERR_VALUE, NULL, "gb_checkpoint_list: NULL %s", path ? "entries" : "path");
        return -1;
    }
    *entries = NULL;
    gb__ckpt_file f;
    if (!gb__ckpt_read(path, &f)) return -1;
    gb_checkpoint_entry *out = calloc((size_t)f.count + 1, sizeof *out);
    if (!out) {
        gb__ckpt_close(&f);
        gb__error(GB_ERR_MEMORY, NULL, "%s: out of memory", path);
        return -1;
    }
    for (int i = 0; i < f.count; i++) {
        const gb__ckpt_entry *e = &f.entries[i];
        gb_checkpoint_entry *o = &out[i];
        snprintf(o->path, sizeof o->path, "%s", e->path);
        o->dtype = e->dtype;
        o->rank = e->rank;
        memcpy(o->shape, e->dims, sizeof o->shape);
        o->bytes = e->nbytes;
        /* A corrupt tensor is reported in the listing, not as an error. */
        o->intact = gb__ckpt_data(&f, e) != NULL;
        if (!o->intact) gb_clear_error();
    }
    int n = f.count;
    gb__ckpt_close(&f);
    *entries = out;
    return n;
}
