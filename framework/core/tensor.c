/* core/tensor.c — creating tensors from C values and reading them back. */
#include <math.h>
#include <stdio.h>

#include "core/internal.h"

double gb__load(gb_dtype dt, const void *data, int64_t i) {
    switch (dt) {
    case GB_F32: return ((const float *)data)[i];
    case GB_F64: return ((const double *)data)[i];
    case GB_I32: return ((const int32_t *)data)[i];
    case GB_I64: return (double)((const int64_t *)data)[i];
    case GB_U8: return ((const uint8_t *)data)[i];
    case GB_BOOL: return ((const uint8_t *)data)[i] ? 1.0 : 0.0;
    default: return NAN;
    }
}

/* v as an integer in [lo, hi]: saturated at the ends, NaN as 0. A plain
 * cast of a value past the type's range is undefined behaviour (a Pad of
 * uint8 with the constant -3.875 was one). */
static double to_range(double v, double lo, double hi) {
    return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

void gb__store(gb_dtype dt, void *data, int64_t i, double v) {
    switch (dt) {
    case GB_F32: ((float *)data)[i] = (float)v; break;
    case GB_F64: ((double *)data)[i] = v; break;
    case GB_I32: ((int32_t *)data)[i] = (int32_t)to_range(v, INT32_MIN, INT32_MAX); break;
    case GB_I64:
        /* 2^63 itself is past int64: the upper end is the largest double below it. */
        ((int64_t *)data)[i] = (int64_t)to_range(v, -0x1p63, 0x1.fffffffffffffp62);
        break;
    case GB_U8: ((uint8_t *)data)[i] = (uint8_t)to_range(v, 0, UINT8_MAX); break;
    case GB_BOOL: ((uint8_t *)data)[i] = v != 0.0; break;
    default: break;
    }
}

/* Validates a user-given shape; names `what` in the error. */
static bool check_shape(const char *what, gb_dtype dt, int rank, const int64_t *dims) {
    if ((unsigned)dt >= GB_DTYPE_COUNT) {
        gb__error(GB_ERR_DTYPE, NULL, "%s: invalid dtype %d", what, (int)dt);
        return false;
    }
    if (rank < 0 || rank > GB_MAX_RANK) {
        gb__error(GB_ERR_SHAPE, NULL, "%s: rank %d is outside 0..%d", what, rank, GB_MAX_RANK);
        return false;
    }
    if (rank > 0 && !dims) {
        gb__error(GB_ERR_SHAPE, NULL, "%s: rank %d but no dims given", what, rank);
        return false;
    }
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) {
            char buf[128];
            gb__error(GB_ERR_SHAPE, NULL, "%s: negative dimension in shape %s", what,
                      gb__shape_fmt(rank, dims, buf, sizeof buf));
            return false;
        }
    }
    return gb__shape_check(NULL, what, rank, dims, gb_dtype_size(dt));
}

/* t's elements from src, their bytes copied into t's scope: a tensor owns
 * its strings, whatever happens to the caller's memory after. */
static bool strings_into(gb_tensor *t, const gb_string *src) {
    for (int64_t i = 0; i < t->size; i++) {
        if (src[i].len < 0 || (src[i].len && !src[i].data)) {
            gb__error(GB_ERR_VALUE, NULL,
                      "gb_tensor_from: string element %lld has %s", (long long)i,
                      src[i].len < 0 ? "a negative length" : "no bytes (data is NULL)");
            return false;
        }
    }
    return gb__strings_pack_in(t->scope, t->data, src, t->size);
}

gb_tensor *gb_tensor_from(gb_dtype dt, const void *data, int rank, const int64_t *dims) {
    if (!check_shape("gb_tensor_from", dt, rank, dims)) return NULL;
    gb_tensor *t = gb__tensor_new(dt, rank, dims, true);
    if (!t) return NULL;
    size_t n = (size_t)t->size * gb_dtype_size(dt);
    if (n && !data) {
        gb__error(GB_ERR_VALUE, NULL, "gb_tensor_from: data is NULL for %lld elements",
                  (long long)t->size);
        return NULL;
    }
    if (dt == GB_STRING) return strings_into(t, data) ? t : NULL;
    if (n) memcpy(t->data, data, n);
    return t;
}

gb_tensor *gb_from_f32(const float *data, int rank, const int64_t *dims) {
    return gb_tensor_from(GB_F32, data, rank, dims);
}

gb_tensor *gb_from_f64(const double *data, int rank, const int64_t *dims) {
    return gb_tensor_from(GB_F64, data, rank, dims);
}

/* gb_fill, with errors naming the function the caller called. */
static gb_tensor *filled(const char *what, gb_dtype dt, int rank, const int64_t *dims,
                         double value) {
    if (!check_shape(what, dt, rank, dims)) return NULL;
    gb_tensor *t = gb__tensor_new(dt, rank, dims, true);
    if (!t) return NULL;
    if (dt == GB_STRING && value != 0.0) {
        gb__error(GB_ERR_DTYPE, NULL, "%s: a string tensor cannot hold the number %g; "
                  "gb_zeros gives empty strings, gb_strings_fill any other", what, value);
        return NULL;
    }
    if (value == 0.0 && dt == GB_STRING) {
        gb_string *p = t->data;
        for (int64_t i = 0; i < t->size; i++) p[i] = (gb_string){gb__empty_bytes, 0};
    } else if (value == 0.0) {
        memset(t->data, 0, (size_t)t->size * gb_dtype_size(dt));
    } else if (dt == GB_F32) {
        float *p = t->data, v = (float)value;
        for (int64_t i = 0; i < t->size; i++) p[i] = v;
    } else {
        for (int64_t i = 0; i < t->size; i++) gb__store(dt, t->data, i, value);
    }
    return t;
}

gb_tensor *gb_fill(gb_dtype dt, int rank, const int64_t *dims, double value) {
    return filled("gb_fill", dt, rank, dims, value);
}

gb_tensor *gb_zeros(gb_dtype dt, int rank, const int64_t *dims) {
    return filled("gb_zeros", dt, rank, dims, 0.0);
}

gb_tensor *gb_ones(gb_dtype dt, int rank, const int64_t *dims) {
    return filled("gb_ones", dt, rank, dims, 1.0);
}

gb_tensor *gb_scalar(gb_dtype dt, double value) { return filled("gb_scalar", dt, 0, NULL, value); }

gb_tensor *gb_arange(gb_dtype dt, double start, double limit, double step) {
    if (step == 0.0 || !isfinite(start) || !isfinite(limit) || !isfinite(step)) {
        gb__error(GB_ERR_VALUE, NULL, "gb_arange: need finite start/limit and a non-zero step");
        return NULL;
    }
    double count = ceil((limit - start) / step);
    if (!(count < 0x1p62)) { /* also a NaN count; a cast past int64 is undefined */
        gb__error(GB_ERR_SHAPE, NULL, "gb_arange: %g values from %g to %g by %g: more than 2^62",
                  count, start, limit, step);
        return NULL;
    }
    int64_t n = count > 0 ? (int64_t)count : 0;
    gb_tensor *t = filled("gb_arange", dt, 1, &n, 0.0);
    if (!t) return NULL;
    for (int64_t i = 0; i < n; i++) gb__store(dt, t->data, i, start + (double)i * step);
    return t;
}

gb_tensor *gb_linspace(gb_dtype dt, double start, double stop, int64_t num) {
    if (num < 0) {
        gb__error(GB_ERR_VALUE, NULL, "gb_linspace: num must be >= 0, got %lld", (long long)num);
        return NULL;
    }
    gb_tensor *t = filled("gb_linspace", dt, 1, &num, 0.0);
    if (!t) return NULL;
    double step = num > 1 ? (stop - start) / (double)(num - 1) : 0.0;
    for (int64_t i = 0; i < num; i++)
        gb__store(dt, t->data, i, i == num - 1 && num > 1 ? stop : start + (double)i * step);
    return t;
}

/* ---- inspection ----------------------------------------------------------- */

gb_dtype gb_tensor_dtype(const gb_tensor *t) { return t ? t->dtype : GB_DTYPE_COUNT; }

int gb_rank(const gb_tensor *t) { return t ? t->rank : -1; }

int64_t gb_dim(const gb_tensor *t, int64_t axis) {
    if (!t) return -1;
    if (axis < 0) axis += t->rank;
    return axis >= 0 && axis < t->rank ? t->shape[axis] : -1;
}

const int64_t *gb_shape(const gb_tensor *t) { return t ? t->shape : NULL; }

int64_t gb_size(const gb_tensor *t) { return t ? t->size : 0; }

size_t gb_nbytes(const gb_tensor *t) {
    return t ? (size_t)t->size * gb_dtype_size(t->dtype) : 0;
}

const char *gb_shape_str(const gb_tensor *t, char *buf, size_t n) {
    if (!t) {
        snprintf(buf, n, "(null)");
        return buf;
    }
    return gb__shape_fmt(t->rank, t->shape, buf, n);
}

bool gb_same_shape(const gb_tensor *a, const gb_tensor *b) {
    if (!a || !b || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

const void *gb_data(const gb_tensor *t) { return t ? t->data : NULL; }

const float *gb_data_f32(const gb_tensor *t) {
    return t && t->dtype == GB_F32 ? t->data : NULL;
}

double gb_get(const gb_tensor *t, int64_t i) {
    if (!t || !t->data || i < 0 || i >= t->size) return NAN;
    return gb__load(t->dtype, t->data, i);
}

double gb_item(const gb_tensor *t) {
    if (!t || t->size != 1) return NAN;
    return gb_get(t, 0);
}

bool gb_to_f64(const gb_tensor *t, double *out) {
    if (!t || !t->data) return false;
    for (int64_t i = 0; i < t->size; i++) out[i] = gb__load(t->dtype, t->data, i);
    return true;
}

void gb_describe(const char *label, const gb_tensor *t) {
    char shape[128];
    if (!t) {
        fprintf(stderr, "%s: (null)\n", label ? label : "tensor");
        return;
    }
    fprintf(stderr, "%s: %s %s [", label ? label : "tensor", gb_dtype_name(t->dtype),
            gb_shape_str(t, shape, sizeof shape));
    if (!t->data) {
        fprintf(stderr, "] (symbolic)\n");
        return;
    }
    int64_t n = t->size < 64 ? t->size : 64;
    for (int64_t i = 0; i < n; i++) {
        if (t->dtype == GB_STRING) {
            char text[96];
            gb__string_repr((const gb_string *)t->data + i, text, sizeof text);
            fprintf(stderr, i ? ", %s" : "%s", text);
        } else {
            fprintf(stderr, i ? ", %g" : "%g", gb__load(t->dtype, t->data, i));
        }
    }
    fprintf(stderr, "%s]\n", t->size > n ? ", ..." : "");
}

/* ---- strings ------------------------------------------------------------------ */

gb_tensor *gb_strings_from(const gb_string *data, int rank, const int64_t *dims) {
    return gb_tensor_from(GB_STRING, data, rank, dims);
}

gb_tensor *gb_strings(const char *const *cstrs, int rank, const int64_t *dims) {
    if (!check_shape("gb_strings", GB_STRING, rank, dims)) return NULL;
    int64_t n = gb__shape_size(rank, dims);
    if (n && !cstrs) {
        gb__error(GB_ERR_VALUE, NULL, "gb_strings: no strings given for %lld elements",
                  (long long)n);
        return NULL;
    }
    for (int64_t i = 0; i < n; i++) {
        if (!cstrs[i]) {
            gb__error(GB_ERR_VALUE, NULL, "gb_strings: string %lld is NULL", (long long)i);
            return NULL;
        }
    }
    gb_tensor *t = gb__tensor_new(GB_STRING, rank, dims, true);
    if (!t) return NULL;
    gb_string *e = t->data;
    for (int64_t i = 0; i < n; i++) e[i] = (gb_string){cstrs[i], (int64_t)strlen(cstrs[i])};
    return gb__strings_pack_in(t->scope, e, e, n) ? t : NULL;
}

gb_tensor *gb_string_scalar(const char *s) {
    return gb_strings(s ? &s : (const char *const[]){NULL}, 0, NULL);
}

gb_tensor *gb_string_bytes(const void *data, int64_t len) {
    gb_string e = {data, len};
    return gb_tensor_from(GB_STRING, &e, 0, NULL);
}

const gb_string *gb_data_strings(const gb_tensor *t) {
    return t && t->dtype == GB_STRING ? t->data : NULL;
}

gb_string gb_get_string(const gb_tensor *t, int64_t i) {
    if (!t || t->dtype != GB_STRING || !t->data || i < 0 || i >= t->size)
        return (gb_string){NULL, -1};
    gb_string s = ((const gb_string *)t->data)[i];
    return s.data ? s : (gb_string){gb__empty_bytes, 0};
}

gb_string gb_item_string(const gb_tensor *t) {
    if (!t || t->size != 1) return (gb_string){NULL, -1};
    return gb_get_string(t, 0);
}
