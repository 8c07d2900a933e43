/* ops/masked_softmax.c — softmax over the unmasked entries of the last
 * axis (attention masks), exact at both ends.
 *
 * The masked logits are pushed to the dtype's lowest finite value before
 * the softmax: exp of anything that far below the row's maximum is 0, so
 * a masked entry contributes exactly nothing and the unmasked ones come
 * out as the softmax over them alone. A row with no unmasked entry would
 * then be uniform (every logit equal); multiplying by "the row has an
 * unmasked entry" makes it 0 instead, where PyTorch gives NaN and Keras a
 * uniform row that attends to padding (a mask known when the call is made,
 * such as a causal one, whose every row allows a key needs no product).
 * Built from ops, so it needs no
 * gradient of its own: a masked entry's gradient is 0 through the select.
 */
#include <float.h>

#include "ops/internal.h"

/* A mask known now (not a traced value) whose every row allows an entry. */
static bool every_row_allowed(const gb_tensor *mask) {
    if (!mask->data || mask->graph_id || mask->rank < 1) return false;
    const bool *m = mask->data;
    int64_t n = mask->shape[mask->rank - 1];
    for (int64_t row = 0; n > 0 && row < mask->size; row += n) {
        bool any = false;
        for (int64_t j = 0; j < n && !any; j++) any = m[row + j];
        if (!any) return false;
    }
    return n > 0;
}

gb_tensor *gb_masked_softmax(gb_tensor *logits, gb_tensor *mask) {
    if (!logits || !mask) {
        if (gb_ok()) gb__error(GB_ERR_VALUE, "MaskedSoftmax", "MaskedSoftmax: an input is NULL");
        return NULL;
    }
    if (mask->dtype != GB_BOOL) {
        gb__error(GB_ERR_DTYPE, "MaskedSoftmax", "MaskedSoftmax: the mask must be bool, got %s",
                  gb_dtype_name(mask->dtype));
        return NULL;
    }
    gb_dtype dt = logits->dtype;
    gb_tensor *lowest = gb_scalar(dt, dt == GB_F32 ? -FLT_MAX : -DBL_MAX);
    gb_tensor *p = gb_softmax(gb_where(mask, logits, lowest), -1);
    if (every_row_allowed(mask)) return p;   /* a causal mask: the product would be by ones */
    gb_tensor *any = gb_reduce_max(gb_cast(mask, dt), (int64_t[]){-1}, 1, true);
    return gb_mul(p, any);
}
