/* ops/conv/im2col.c — sliding-window geometry (TF SAME/VALID rules) and the
 * im2col/col2im transforms behind Conv2D and its two backprop ops.
 *
 * The transforms work on NHWC rows: for one output pixel and one kernel
 * row kh, the taps kw = 0..KW-1 read KW runs of C contiguous channels;
 * without dilation and away from the border they are one contiguous run of
 * KW*C values, copied in one go. Border handling is decided once per
 * (pixel, kh), never per element.
 */
#include <stdio.h>

#include "ops/conv/im2col.h"

/* ---- geometry ------------------------------------------------------------------- */

/* Every step below is written so that no attribute, however large
 * (a stride of 2^63 - 1 from a loaded graph), can overflow: the window's
 * effective size is multiplied out with a check, and ceil(in / s) and the
 * padding are formed from terms that stay within [-in, eff]. */
static bool window_axis(const gb_op_call *c, const gb_window *g, const char *axis, int64_t in,
                        int64_t k, int64_t s, int64_t d, int64_t *out, int64_t *pad) {
    int64_t eff;
    if (__builtin_mul_overflow(k - 1, d, &eff) || eff == INT64_MAX) {
        gb__op_error(c, GB_ERR_VALUE,
                     "%s: the window's %s (size %lld, dilation %lld) spans more than 2^63 "
                     "elements",
                     c->def->name, axis, (long long)k, (long long)d);
        return false;
    }
    eff += 1;
    if (in < 0) { /* unknown until the graph runs, and so is the output */
        *out = -1;
        *pad = 0;
        return true;
    }
    if (g->padding == GB_PADDING_SAME) {
        *out = in / s + (in % s != 0);
        /* (out - 1) s <= in - 1, so this sum stays in range. */
        int64_t total = ((*out - 1) * s - in) + eff;
        *pad = total > 0 ? total / 2 : 0;
        return true;
    }
    if (eff > in) {
        gb__op_error(c, GB_ERR_SHAPE,
                     "%s: with VALID padding the window (effective %s size %lld) must fit in "
                     "the input %s size %lld",
                     c->def->name, axis, (long long)eff, axis, (long long)in);
        return false;
    }
    *out = (in - eff) / s + 1;
    *pad = 0;
    return true;
}

bool gb__window_init(const gb_op_call *c, gb_window *g) {
    const char *name = c->def->name;
    if (g->kh < 1 || g->kw < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: window size must be >= 1, got %lldx%lld", name,
                     (long long)g->kh, (long long)g->kw);
        return false;
    }
    if (g->sh < 1 || g->sw < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: strides must be >= 1, got {%lld,%lld}", name,
                     (long long)g->sh, (long long)g->sw);
        return false;
    }
    if (g->dh < 1 || g->dw < 1) {
        gb__op_error(c, GB_ERR_VALUE, "%s: dilations must be >= 1, got {%lld,%lld}", name,
                     (long long)g->dh, (long long)g->dw);
        return false;
    }
    if (g->padding != GB_PADDING_VALID && g->padding != GB_PADDING_SAME) {
        gb__op_error(c, GB_ERR_VALUE,
                     "%s: padding must be GB_PADDING_VALID (0) or GB_PADDING_SAME (1), got %d",
                     name, g->padding);
        return false;
    }
    return window_axis(c, g, "height", g->h, g->kh, g->sh, g->dh, &g->oh, &g->pt) &&
           window_axis(c, g, "width", g->w, g->kw, g->sw, g->dw, &g->ow, &g->pl);
}

bool gb__window_pair(gb_op_id op, const char *what, const int64_t *v, int n, const int64_t *dflt,
                     int64_t out[2]) {
    gb_op_call c = {.op = op, .def = gb_op_table[op]};
    const char *name = c.def->name;
    char got[128];
    if (n == 0 && dflt) {
        out[0] = dflt[0];
        out[1] = dflt[1];
        return true;
    }
    if (n > 0 && !v) {
        gb__op_error(&c, GB_ERR_VALUE, "%s: %s has %d values but its array is NULL", name, what, n);
        return false;
    }
    if (n == 4 && (v[0] != 1 || v[3] != 1)) {
        gb__op_error(&c, GB_ERR_VALUE,
                     "%s: %s %s in NHWC form must be 1 on the batch and channel axes, "
                     "{1, h, w, 1}",
                     name, what, gb__shape_fmt(n, v, got, sizeof got));
        return false;
    }
    if (n != 1 && n != 2 && n != 4) {
        gb__op_error(&c, GB_ERR_VALUE,
                     "%s: %s must have 1, 2 or 4 values ({h, w} or {1, h, w, 1}), got %d%s", name,
                     what, n, n == 0 ? " (it is required)" : "");
        return false;
    }
    out[0] = v[n == 4 ? 1 : 0];
    out[1] = v[n == 1 ? 0 : n == 2 ? 1 : 2];
    return true;
}

bool gb__window_shape_attr(const gb_op_call *c, const int64_t *attr, const char *what,
                           const gb_tensor *batch_from, int64_t s[4]) {
    for (int d = 0; d < 4; d++) {
        s[d] = attr[d];
        if (d == 0 && s[d] == -1 && batch_from) {
            s[d] = batch_from->shape[0];
        } else if (s[d] < 0) {
            char b[96];
            gb__op_error(c, GB_ERR_SHAPE, "%s: negative dimension in the %s shape %s",
                         c->def->name, what, gb__shape_fmt(4, attr, b, sizeof b));
            return false;
        }
    }
    return true;
}

bool gb__window_is_pointwise(const gb_window *g) {
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->pt == 0 && g->pl == 0;
}

/* ---- im2col / col2im -------------------------------------------------------------- */

/* One loop skeleton for both directions and both dtypes. For each row r
 * (pixel n, oh, ow) and kernel row kh, SEG(dst, src, len) handles `len`
 * values of the row against the image at `src`, and PAD(dst, len) the
 * values whose taps fall into the padding. */
#define WINDOW_ROWS(T, g, r0, r1, rowbuf, image, SEG, PAD)                                         \
    do {                                                                                           \
        const int64_t C_ = (g)->c, KW_ = (g)->kw, K_ = gb__window_cols(g);                         \
        const int64_t run_ = KW_ * C_;                                                             \
        for (int64_t r = (r0); r < (r1); r++) {                                                    \
            int64_t ow = r % (g)->ow, t_ = r / (g)->ow;                                            \
            int64_t oh = t_ % (g)->oh, n = t_ / (g)->oh;                                           \
            T *row = (rowbuf) + (r - (r0)) * K_;                                                   \
            int64_t iw0 = ow * (g)->sw - (g)->pl;                                                  \
            bool inside_w = (g)->dw == 1 && iw0 >= 0 && iw0 + KW_ <= (g)->w;                       \
            for (int64_t kh = 0; kh < (g)->kh; kh++) {                                             \
                T *seg = row + kh * run_;                                                          \
                int64_t ih = oh * (g)->sh - (g)->pt + kh * (g)->dh;                                \
                if (ih < 0 || ih >= (g)->h) {                                                      \
                    PAD(seg, run_);                                                                \
                    continue;                                                                      \
                }                                                                                  \
                int64_t base = ((n * (g)->h + ih) * (g)->w) * C_;                                  \
                if (inside_w) {                                                                    \
                    SEG(seg, (image) + base + iw0 * C_, run_);                                     \
                    continue;                                                                      \
                }                                                                                  \
                for (int64_t kw = 0; kw < KW_; kw++) {                                             \
                    int64_t iw = iw0 + kw * (g)->dw;                                               \
                    if (iw < 0 || iw >= (g)->w)                                                    \
                        PAD(seg + kw * C_, C_);                                                    \
                    else                                                                           \
                        SEG(seg + kw * C_, (image) + base + iw * C_, C_);                          \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    } while (0)

#define COPY_IN(dst, src, len)                                                                     \
    do {                                                                                           \
        for (int64_t e = 0; e < (len); e++) (dst)[e] = (src)[e];                                   \
    } while (0)
#define ZERO(dst, len)                                                                             \
    do {                                                                                           \
        for (int64_t e = 0; e < (len); e++) (dst)[e] = 0;                                          \
    } while (0)
/* col2im: the row is the source, the image the destination. */
#define ADD_OUT(rowseg, img, len)                                                                  \
    do {                                                                                           \
        for (int64_t e = 0; e < (len); e++) (img)[e] += (rowseg)[e];                               \
    } while (0)
#define SKIP(dst, len) ((void)(dst), (void)(len))

#define DEFINE_IM2COL(T, SUFFIX)                                                                   \
    void gb__im2col_##SUFFIX(const gb_window *g, const T *x, int64_t r0, int64_t r1, T *cols) {    \
        WINDOW_ROWS(T, g, r0, r1, cols, x, COPY_IN, ZERO);                                         \
    }                                                                                              \
    void gb__col2im_##SUFFIX(const gb_window *g, const T *cols, int64_t r0, int64_t r1, T *dx) {   \
        WINDOW_ROWS(const T, g, r0, r1, cols, dx, ADD_OUT, SKIP);                                  \
    }
DEFINE_IM2COL(float, f32)
DEFINE_IM2COL(double, f64)
