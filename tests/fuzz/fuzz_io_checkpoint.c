/* fuzz_io_checkpoint.c — the checkpoint reader (io/checkpoint_file.c) on
 * arbitrary bytes.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused file gets a GB_ERR_IO error naming it; an accepted one has an
 * index whose every entry lies inside the file, with a size that matches
 * its dtype and dims, and each tensor's data either passes its CRC or is
 * refused naming that tensor.
 *
 * The header and the index carry CRCs a mutation almost never keeps
 * right, which would stop the fuzzer at the door: for inputs of even
 * length the harness writes the correct CRCs first, so the index parser
 * meets hostile entries; odd lengths keep the CRC checks in play.
 */
#include "ckpt_crcs.h"
#include "fuzz_engine.h"
#include "io/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    unsigned char *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy != NULL, "out of memory");
    if (size) memcpy(copy, data, size);
    if (size % 2 == 0) ckpt_fix_crcs(copy, size);
    gb__ckpt_file f;
    if (!gb__ckpt_parse("input", copy, size, &f)) {
        fuzz_check_refused("input");
    } else {
        for (int i = 0; i < f.count; i++) {
            const gb__ckpt_entry *e = &f.entries[i];
            FUZZ_CHECK(e->offset + e->nbytes <= f.size, "entry %d ends past the file", i);
            uint64_t count = 1;
            for (int d = 0; d < e->rank; d++) count *= (uint64_t)e->dims[d];
            FUZZ_CHECK(e->nbytes == count * gb_dtype_size(e->dtype), "entry %d's size", i);
            const char *unit;   /* a tensor can take the shape: dims past a zero count too */
            FUZZ_CHECK(gb__shape_fits(e->rank, e->dims, gb_dtype_size(e->dtype), &unit),
                       "entry %d's shape has more than 2^63 %s", i, unit);
            if (!gb__ckpt_data(&f, e)) {
                fuzz_check_refused("input");
                FUZZ_CHECK(strstr(gb_last_error()->message, e->path) != NULL,
                           "a corrupt tensor is not named");
                gb_clear_error();
            }
        }
        gb__ckpt_close(&f);
    }
    fuzz_end();
    return 0;
}
