/* ops/conv/isa/winograd_impl.h — the element-type-generic body of
 * ops/conv/isa/winograd.c.
 *
 * Included once per type with T (the element type), SFX(name) (name with
 * the type suffix) and GEMM (cblas_sgemm / cblas_dgemm) defined. Tiles are
 * numbered flat over (image, tile row, tile column); a batch of `chunk`
 * tiles is transformed into V [16][chunk][ci] (one GEMM operand per
 * Winograd component xi), multiplied, and transformed back.
 */

/* 32-byte vectors of T that may sit anywhere a T may: the transforms
 * below are written once for a vector of channels and once for the
 * leftover channels one by one (the compiler cannot prove the 16 input
 * and 16 output streams apart, so it would not vectorize them itself). */
typedef T SFX(vec) __attribute__((vector_size(32), aligned(sizeof(T)), may_alias));
#define VL ((int64_t)(sizeof(SFX(vec)) / sizeof(T)))
#define LDV(ptr, c) (*(const SFX(vec) *)((ptr) + (c)))
#define STV(ptr, c, val) (*(SFX(vec) *)((ptr) + (c)) = (val))
#define LDS(ptr, c) ((ptr)[c])
#define STS(ptr, c, val) ((ptr)[c] = (val))

/* Runs STEP(type, load, store) for channels [0, n): vectors, then singles. */
#define CHANNELS(n, STEP)                                                                          \
    do {                                                                                           \
        int64_t c = 0;                                                                             \
        for (; c + VL <= (n); c += VL) STEP(SFX(vec), LDV, STV);                                   \
        for (; c < (n); c++) STEP(T, LDS, STS);                                                    \
    } while (0)

/* One (ci, co) filter g [3][3] into u's 16 components: U = G g G^T with
 * G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]. */
static void SFX(filter_one)(const T g[9], T out[16]) {
    T t[12]; /* G g: 4 rows of 3 */
    for (int k = 0; k < 3; k++) {
        t[k] = g[k];
        t[3 + k] = (T)0.5 * (g[k] + g[3 + k] + g[6 + k]);
        t[6 + k] = (T)0.5 * (g[k] - g[3 + k] + g[6 + k]);
        t[9 + k] = g[6 + k];
    }
    for (int a = 0; a < 4; a++) {
        const T *r = t + 3 * a;
        out[4 * a] = r[0];
        out[4 * a + 1] = (T)0.5 * (r[0] + r[1] + r[2]);
        out[4 * a + 2] = (T)0.5 * (r[0] - r[1] + r[2]);
        out[4 * a + 3] = r[2];
    }
}

void SFX(gb__wino_filter)(const T *w, int64_t c, int64_t oc, bool flip, T *u) {
    int64_t ci = flip ? oc : c, co = flip ? c : oc;
    for (int64_t i = 0; i < ci; i++)
        for (int64_t o = 0; o < co; o++) {
            T g[9], out[16];
            for (int kh = 0; kh < 3; kh++)
                for (int kw = 0; kw < 3; kw++) {
                    int64_t src = flip ? (((2 - kh) * 3 + 2 - kw) * c + o) * oc + i
                                       : ((kh * 3 + kw) * c + i) * oc + o;
                    g[kh * 3 + kw] = w[src];
                }
            SFX(filter_one)(g, out);
            for (int xi = 0; xi < 16; xi++) u[(xi * ci + i) * co + o] = out[xi];
        }
}

/* The tile's image, tile row and tile column. */
static inline void SFX(tile_pos)(const gb_wino *p, int64_t t, int64_t *n, int64_t *ty,
                                 int64_t *tx) {
    int64_t per = p->th * p->tw, r = t % per;
    *n = t / per;
    *ty = r / p->tw;
    *tx = r % p->tw;
}

/* One vector (or one) of channels c of an input tile: B^T d B. */
#define INPUT_STEP(TY, LD, ST)                                                                     \
    do {                                                                                           \
        TY b[16];                                                                                  \
        for (int j = 0; j < 4; j++) { /* B^T d, column j */                                        \
            TY d0 = LD(d[j], c), d1 = LD(d[4 + j], c), d2 = LD(d[8 + j], c);                       \
            TY d3 = LD(d[12 + j], c);                                                              \
            b[j] = d0 - d2;                                                                        \
            b[4 + j] = d1 + d2;                                                                    \
            b[8 + j] = d2 - d1;                                                                    \
            b[12 + j] = d1 - d3;                                                                   \
        }                                                                                          \
        for (int i = 0; i < 4; i++) { /* (B^T d) B, row i */                                       \
            TY e0 = b[4 * i], e1 = b[4 * i + 1], e2 = b[4 * i + 2], e3 = b[4 * i + 3];             \
            ST(o + (4 * i) * stride, c, e0 - e2);                                                  \
            ST(o + (4 * i + 1) * stride, c, e1 + e2);                                              \
            ST(o + (4 * i + 2) * stride, c, e2 - e1);                                              \
            ST(o + (4 * i + 3) * stride, c, e1 - e3);                                              \
        }                                                                                          \
    } while (0)

/* V [16][chunk][ci] = B^T d B for tiles [t0, t0 + cnt), with
 * B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]; taps outside the image
 * read the zero row. */
static void SFX(input_tiles)(const gb_wino *p, const T *x, int64_t t0, int64_t cnt, const T *zero,
                             T *restrict v) {
    const int64_t ci = p->ci, stride = p->chunk * ci;
    for (int64_t k = 0; k < cnt; k++) {
        int64_t n, ty, tx;
        SFX(tile_pos)(p, t0 + k, &n, &ty, &tx);
        const T *d[16];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                int64_t yy = 2 * ty - p->pt + i, xx = 2 * tx - p->pl + j;
                bool in = yy >= 0 && yy < p->ih && xx >= 0 && xx < p->iw;
                d[4 * i + j] = in ? x + ((n * p->ih + yy) * p->iw + xx) * ci : zero;
            }
        T *o = v + k * ci;
        CHANNELS(ci, INPUT_STEP);
    }
}

/* One vector (or one) of channels c of an output tile: A^T m A. */
#define OUTPUT_STEP(TY, LD, ST)                                                                    \
    do {                                                                                           \
        TY r0[4], r1[4];                                                                           \
        for (int j = 0; j < 4; j++) {                                                              \
            TY a0 = LD(m0 + j * stride, c), a1 = LD(m0 + (4 + j) * stride, c);                     \
            TY a2 = LD(m0 + (8 + j) * stride, c), a3 = LD(m0 + (12 + j) * stride, c);              \
            r0[j] = a0 + a1 + a2;                                                                  \
            r1[j] = a1 - a2 - a3;                                                                  \
        }                                                                                          \
        ST(dst[0], c, r0[0] + r0[1] + r0[2]);                                                      \
        ST(dst[1], c, r0[1] - r0[2] - r0[3]);                                                      \
        ST(dst[2], c, r1[0] + r1[1] + r1[2]);                                                      \
        ST(dst[3], c, r1[1] - r1[2] - r1[3]);                                                      \
    } while (0)

/* Y = A^T m A per tile, A^T = [1 1 1 0; 0 1 -1 -1]; outputs past the
 * image edge go to four dummy rows (so the channel loop has no branch). */
static void SFX(output_tiles)(const gb_wino *p, const T *m, int64_t t0, int64_t cnt, T *y,
                              T *dummy) {
    const int64_t co = p->co, stride = p->chunk * co;
    for (int64_t k = 0; k < cnt; k++) {
        int64_t n, ty, tx;
        SFX(tile_pos)(p, t0 + k, &n, &ty, &tx);
        T *dst[4];
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                int64_t yy = 2 * ty + a, xx = 2 * tx + b;
                bool in = yy < p->oh && xx < p->ow;
                dst[2 * a + b] =
                    in ? y + ((n * p->oh + yy) * p->ow + xx) * co : dummy + (2 * a + b) * co;
            }
        const T *m0 = m + k * co;
        CHANNELS(co, OUTPUT_STEP);
    }
}

/* One vector (or one) of channels c of an output-gradient tile: A dY A^T,
 * A = [1 0; 1 1; 1 -1; 0 -1]. */
#define GRAD_STEP(TY, LD, ST)                                                                      \
    do {                                                                                           \
        TY g00 = LD(g[0], c), g01 = LD(g[1], c), g10 = LD(g[2], c), g11 = LD(g[3], c);             \
        TY t[4][2] = {{g00, g01}, {g00 + g10, g01 + g11}, {g00 - g10, g01 - g11}, {-g10, -g11}};   \
        for (int i = 0; i < 4; i++) {                                                              \
            ST(o + (4 * i) * stride, c, t[i][0]);                                                  \
            ST(o + (4 * i + 1) * stride, c, t[i][0] + t[i][1]);                                    \
            ST(o + (4 * i + 2) * stride, c, t[i][0] - t[i][1]);                                    \
            ST(o + (4 * i + 3) * stride, c, -t[i][1]);                                             \
        }                                                                                          \
    } while (0)

/* Z [16][chunk][co] = A dY A^T for the 2x2 output-gradient tiles (zero
 * past the image edge). */
static void SFX(grad_tiles)(const gb_wino *p, const T *dy, int64_t t0, int64_t cnt, const T *zero,
                            T *restrict z) {
    const int64_t co = p->co, stride = p->chunk * co;
    for (int64_t k = 0; k < cnt; k++) {
        int64_t n, ty, tx;
        SFX(tile_pos)(p, t0 + k, &n, &ty, &tx);
        const T *g[4];
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                int64_t yy = 2 * ty + a, xx = 2 * tx + b;
                bool in = yy < p->oh && xx < p->ow;
                g[2 * a + b] = in ? dy + ((n * p->oh + yy) * p->ow + xx) * co : zero;
            }
        T *o = z + k * co;
        CHANNELS(co, GRAD_STEP);
    }
}

/* Worker scratch layout: V, then M (or Z), then a zero row and dummy rows. */
static void SFX(scratch_parts)(const gb_wino *p, T *scratch, T **v, T **mz, T **zero, T **dummy) {
    int64_t wide = p->ci > p->co ? p->ci : p->co;
    *v = scratch;
    *mz = *v + 16 * p->chunk * p->ci;
    *zero = *mz + 16 * p->chunk * p->co;
    *dummy = *zero + wide;
    memset(*zero, 0, (size_t)wide * sizeof(T));
}

void SFX(gb__wino_conv)(const gb_wino *p, const T *x, const T *u, int64_t n0, int64_t n1, T *y,
                        T *scratch) {
    T *v, *m, *zero, *dummy;
    SFX(scratch_parts)(p, scratch, &v, &m, &zero, &dummy);
    int64_t per = p->th * p->tw, end = n1 * per;
    for (int64_t t0 = n0 * per; t0 < end; t0 += p->chunk) {
        int64_t cnt = end - t0 < p->chunk ? end - t0 : p->chunk;
        SFX(input_tiles)(p, x, t0, cnt, zero, v);
        /* cleared here, beta 1: faster than OpenBLAS's own clearing for beta 0 */
        memset(m, 0, (size_t)(16 * p->chunk * p->co) * sizeof(T));
        for (int xi = 0; xi < 16; xi++)
            GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)cnt, (int)p->co, (int)p->ci, 1,
                 v + xi * p->chunk * p->ci, (int)p->ci, u + xi * p->ci * p->co, (int)p->co, 1,
                 m + xi * p->chunk * p->co, (int)p->co);
        SFX(output_tiles)(p, m, t0, cnt, y, dummy);
    }
}

void SFX(gb__wino_filter_grad)(const gb_wino *p, const T *x, const T *dy, int64_t n0, int64_t n1,
                               T *s, T *scratch) {
    T *v, *z, *zero, *dummy;
    SFX(scratch_parts)(p, scratch, &v, &z, &zero, &dummy);
    int64_t per = p->th * p->tw, end = n1 * per;
    for (int64_t t0 = n0 * per; t0 < end; t0 += p->chunk) {
        int64_t cnt = end - t0 < p->chunk ? end - t0 : p->chunk;
        SFX(input_tiles)(p, x, t0, cnt, zero, v);
        SFX(grad_tiles)(p, dy, t0, cnt, zero, z);
        for (int xi = 0; xi < 16; xi++)
            GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)p->ci, (int)p->co, (int)cnt, 1,
                 v + xi * p->chunk * p->ci, (int)p->ci, z + xi * p->chunk * p->co, (int)p->co, 1,
                 s + xi * p->ci * p->co, (int)p->co);
    }
}

/* dw [kh][kw] = sum over a, b of G[a][kh] s[a][b] G[b][kw]. */
void SFX(gb__wino_filter_finish)(const gb_wino *p, const T *s, T *dw) {
    const int64_t ci = p->ci, co = p->co, plane = ci * co;
    for (int64_t i = 0; i < ci; i++) {
        const T *si = s + i * co;
        T *di = dw + i * co;
        for (int64_t o = 0; o < co; o++) {
            T t[4][3]; /* s G, row a */
            for (int a = 0; a < 4; a++) {
                T s0 = si[(4 * a) * plane + o], s1 = si[(4 * a + 1) * plane + o];
                T s2 = si[(4 * a + 2) * plane + o], s3 = si[(4 * a + 3) * plane + o];
                t[a][0] = s0 + (T)0.5 * (s1 + s2);
                t[a][1] = (T)0.5 * (s1 - s2);
                t[a][2] = (T)0.5 * (s1 + s2) + s3;
            }
            for (int kw = 0; kw < 3; kw++) {
                di[(0 * 3 + kw) * plane + o] = t[0][kw] + (T)0.5 * (t[1][kw] + t[2][kw]);
                di[(1 * 3 + kw) * plane + o] = (T)0.5 * (t[1][kw] - t[2][kw]);
                di[(2 * 3 + kw) * plane + o] = (T)0.5 * (t[1][kw] + t[2][kw]) + t[3][kw];
            }
        }
    }
}

#undef VL
#undef LDV
#undef STV
#undef LDS
#undef STS
#undef CHANNELS
#undef INPUT_STEP
#undef OUTPUT_STEP
#undef GRAD_STEP
