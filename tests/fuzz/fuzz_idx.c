/* fuzz_idx.c — the IDX parser (gb_idx_decode) on arbitrary bytes.
 *
 * Seeds are small plain IDX files of every element type; inputs that
 * happen to start with the gzip magic take the gzip path, which
 * fuzz_idx_gzip.c aims at. What must hold for any input: no crash, leak
 * or undefined behaviour; a refused input gets an I/O error naming it;
 * an accepted plain input is exactly a header and its data — the tensor
 * has the header's type and dims, and the input's size is the header's
 * plus elements times the element size.
 */
#include "fuzz_engine.h"

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Bytes per element in the file and the dtype in memory, by type code. */
static void element_type(uint8_t code, size_t *file_size, gb_dtype *dtype) {
    switch (code) {
    case 0x08: *file_size = 1, *dtype = GB_U8; break;
    case 0x09: *file_size = 1, *dtype = GB_I32; break;
    case 0x0B: *file_size = 2, *dtype = GB_I32; break;
    case 0x0C: *file_size = 4, *dtype = GB_I32; break;
    case 0x0D: *file_size = 4, *dtype = GB_F32; break;
    case 0x0E: *file_size = 8, *dtype = GB_F64; break;
    default: FUZZ_CHECK(0, "accepted unknown type code 0x%02X", code);
    }
}

/* An accepted plain input against the tensor made of it. */
static void check_accepted(gb_tensor *t, const uint8_t *data, size_t size) {
    FUZZ_CHECK(size >= 4, "accepted %zu bytes", size);
    size_t file_size;
    gb_dtype dtype;
    element_type(data[2], &file_size, &dtype);
    int rank = data[3];
    FUZZ_CHECK(gb_tensor_dtype(t) == dtype, "dtype %s", gb_dtype_name(gb_tensor_dtype(t)));
    FUZZ_CHECK(gb_rank(t) == rank, "rank %d, header %d", gb_rank(t), rank);
    size_t count = 1;
    for (int i = 0; i < rank; i++) {
        FUZZ_CHECK(gb_dim(t, i) == be32(data + 4 + 4 * i), "dim %d differs from the header", i);
        count *= (size_t)gb_dim(t, i);
    }
    size_t header = 4 + 4 * (size_t)rank;
    FUZZ_CHECK(size == header + count * file_size, "%zu bytes for %zu elements", size, count);
    const uint8_t *elements = gb_data(t);
    if (dtype == GB_U8 && count)
        FUZZ_CHECK(elements[count - 1] == data[size - 1], "the last element differs");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    gb_tensor *t = gb_idx_decode(data, size, "input");
    bool gzip = size >= 2 && data[0] == 0x1F && data[1] == 0x8B;
    if (!t)
        fuzz_check_refused("input");
    else if (!gzip)
        check_accepted(t, data, size);
    fuzz_end();
    return 0;
}
