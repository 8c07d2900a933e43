/* fuzz_data_npy.c — the .npy reader (data/npy.c) on arbitrary bytes.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused input gets a GB_ERR_IO error naming it; an accepted one is a
 * tensor whose bytes are exactly the input's data and which writes back
 * to a file that reads again to the same dtype, shape and bytes.
 */
#include <unistd.h>

#include "fuzz_engine.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    snprintf(path, sizeof path, "/tmp/gb-fuzz-npy-%d.npy", (int)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    gb_tensor *t = gb_npy_decode(data, size, "input");
    if (!t) {
        fuzz_check_refused("input");
    } else {
        size_t bytes = (size_t)gb_size(t) * gb_dtype_size(gb_tensor_dtype(t));
        FUZZ_CHECK(bytes <= size && memcmp(gb_data(t), data + size - bytes, bytes) == 0,
                   "the tensor is not the file's data");
        FUZZ_CHECK(gb_npy_write(path, t), "%s", gb_error_string());
        gb_tensor *back = gb_npy_read(path);
        FUZZ_CHECK(back && gb_tensor_dtype(back) == gb_tensor_dtype(t) && gb_rank(back) == gb_rank(t),
                   "written back, it reads otherwise: %s", gb_error_string());
        FUZZ_CHECK(memcmp(gb_data(back), gb_data(t), bytes) == 0, "the bytes changed");
        unlink(path);
    }
    fuzz_end();
    return 0;
}
