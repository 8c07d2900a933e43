/* core/dtype.c — names and sizes of the element types. */
#include "core/internal.h"

static const struct {
    const char *name;
    size_t size;
} dtype_info[GB_DTYPE_COUNT] = {
    [GB_F32] = {"float32", 4}, [GB_F64] = {"float64", 8}, [GB_I32] = {"int32", 4},
    [GB_I64] = {"int64", 8},   [GB_U8] = {"uint8", 1},    [GB_BOOL] = {"bool", 1},
    [GB_STRING] = {"string", sizeof(gb_string)},
};

const char *gb_dtype_name(gb_dtype dt) {
    return (unsigned)dt < GB_DTYPE_COUNT ? dtype_info[dt].name : "invalid";
}

size_t gb_dtype_size(gb_dtype dt) {
    return (unsigned)dt < GB_DTYPE_COUNT ? dtype_info[dt].size : 0;
}

bool gb_dtype_is_float(gb_dtype dt) { return dt == GB_F32 || dt == GB_F64; }

bool gb_dtype_is_integer(gb_dtype dt) { return dt == GB_I32 || dt == GB_I64 || dt == GB_U8; }

bool gb_dtype_is_numeric(gb_dtype dt) { return (unsigned)dt < GB_DTYPE_COUNT && dt != GB_STRING; }
