/* optim_varbuf.c — temporary bridge: a variable's buffer for the fused updates.
 *
 * The fused optimizer kernels must read and replace a variable's heap
 * buffer, which only variable.c can see. Until variable.c exports the two
 * accessors declared in optim_internal.h, these weak definitions stand in
 * for them, using a mirror of variable.c's struct. The mirror is checked
 * against the public accessors on every call, so a layout change fails
 * loudly (an internal error) instead of corrupting memory. Once variable.c
 * defines the accessors, its strong definitions win and this file can go.
 */
#include "optim_internal.h"

/* Mirror of struct gb_variable in variable.c (same members, same order). */
typedef struct variable_mirror {
    char name[192];
    gb_dtype dtype;
    int rank;
    int64_t shape[GB_MAX_RANK];
    int64_t size;
    bool trainable;
    gb_buffer *buf;
} variable_mirror;

/* The mirror of v, or NULL (with an internal error) if the layout differs. */
static variable_mirror *mirror(struct gb_variable *v) {
    variable_mirror *m = (variable_mirror *)v;
    bool same = gb_variable_name(v) == m->name && gb_variable_shape(v) == m->shape &&
                gb_variable_dtype(v) == m->dtype && gb_variable_rank(v) == m->rank &&
                gb_variable_size(v) == m->size && gb_variable_trainable(v) == m->trainable &&
                m->buf && m->buf->heap &&
                m->buf->nbytes == (size_t)m->size * gb_dtype_size(m->dtype);
    if (same) return m;
    gb__error(GB_ERR_INTERNAL, NULL,
              "optimizer: the variable layout changed; variable.c must export "
              "gb__variable_buffer and gb__variable_install");
    return NULL;
}

__attribute__((weak)) gb_buffer *gb__variable_buffer(struct gb_variable *v) {
    variable_mirror *m = mirror(v);
    return m ? m->buf : NULL;
}

__attribute__((weak)) void gb__variable_install(struct gb_variable *v, gb_buffer *b) {
    variable_mirror *m = mirror(v);
    if (!m || b == m->buf) return;
    gb__buffer_unref(m->buf);
    m->buf = b;
}
