/* detail_check.h — what must hold of any parsed numerics detail
 * (gb_numerics_detail_parse), for the targets that parse details: the
 * store's (details read from damaged rows) and the detail parser's own.
 */
#ifndef GB_FUZZ_DETAIL_CHECK_H
#define GB_FUZZ_DETAIL_CHECK_H

#include "fuzz_target.h"
#include "gb_reader.h"

/* A parsed detail is within its bounds; a refused one is all unknowns. */
static void check_detail(const char *json) {
    gb_numerics_detail d;
    bool ok = gb_numerics_detail_parse(json, &d);
    FUZZ_CHECK(d.output.rank >= -1 && d.output.rank <= GB_NUMERICS_DETAIL_MAX_RANK, "rank %d",
               d.output.rank);
    FUZZ_CHECK(d.ninputs >= 0 && d.ninputs <= GB_NUMERICS_DETAIL_MAX_INPUTS, "%d inputs",
               d.ninputs);
    FUZZ_CHECK(memchr(d.output.dtype, 0, sizeof d.output.dtype) &&
                   memchr(d.forward_op_type, 0, sizeof d.forward_op_type),
               "a detail string is not terminated");
    FUZZ_CHECK(d.output_index >= -1 && d.first_index >= -1, "negative index");
    for (int i = 0; i < d.ninputs; i++) {
        const gb_numerics_detail_input *in = &d.inputs[i];
        FUZZ_CHECK(in->tensor.rank >= -1 && in->tensor.rank <= GB_NUMERICS_DETAIL_MAX_RANK,
                   "input rank %d", in->tensor.rank);
        FUZZ_CHECK(memchr(in->tensor.dtype, 0, sizeof in->tensor.dtype), "input dtype");
        FUZZ_CHECK(in->nan_count >= 0 && in->inf_count >= 0, "negative input counts");
        for (int k = 0; k < in->tensor.rank; k++)
            FUZZ_CHECK(in->tensor.shape[k] >= 0, "negative input dim");
    }
    for (int k = 0; k < d.output.rank; k++) FUZZ_CHECK(d.output.shape[k] >= 0, "negative dim");
    if (!ok)
        FUZZ_CHECK(d.output_index == -1 && d.output.rank == -1 && d.first_index == -1 &&
                       d.ninputs == 0 && d.created == GB_TRISTATE_UNKNOWN &&
                       d.backward == GB_TRISTATE_UNKNOWN && !d.output.dtype[0] &&
                       !d.forward_op_type[0],
                   "a refused detail is not all unknowns: %s", json);
}

#endif
