/* fuzz_data_npy.c — the .npy reader (data/npy.c) on arbitrary bytes.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused input gets a GB_ERR_IO error naming it; an accepted one is a
 * tensor whose bytes are exactly the input's data (numbers; strings are
 * NumPy's 'S' or 'U' converted) and which writes back to a file that
 * reads again to the same dtype, shape and bytes (each string's).
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
        const bool strings = gb_tensor_dtype(t) == GB_STRING;
        size_t bytes = (size_t)gb_size(t) * gb_dtype_size(gb_tensor_dtype(t));
        /* Numbers are the file's last bytes as they are; strings ('S',
         * 'U' converted to UTF-8) are checked by their round trip. */
        FUZZ_CHECK(strings || (bytes <= size && memcmp(gb_data(t), data + size - bytes, bytes) == 0),
                   "the tensor is not the file's data");
        FUZZ_CHECK(gb_npy_write(path, t), "%s", gb_error_string());
        gb_tensor *back = gb_npy_read(path);
        FUZZ_CHECK(back && gb_tensor_dtype(back) == gb_tensor_dtype(t) && gb_rank(back) == gb_rank(t) &&
                       gb_size(back) == gb_size(t),
                   "written back, it reads otherwise: %s", gb_error_string());
        if (strings) {
            const gb_string *a = gb_data_strings(t), *z = gb_data_strings(back);
            for (int64_t i = 0; i < gb_size(t); i++)
                FUZZ_CHECK(a[i].len == z[i].len && memcmp(a[i].data, z[i].data, (size_t)a[i].len) == 0,
                           "string %lld changed when written back", (long long)i);
        } else {
            FUZZ_CHECK(memcmp(gb_data(back), gb_data(t), bytes) == 0, "the bytes changed");
        }
        unlink(path);
    }
    fuzz_end();
    return 0;
}
