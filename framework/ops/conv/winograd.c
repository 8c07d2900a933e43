/* ops/conv/winograd.c — Winograd F(2x2, 3x3) convolution (see ops/conv/winograd.h):
 * when to use it and the plans; the kernels for float32 and float64 are in
 * ops/conv/isa/winograd.c, compiled once per ISA level.
 */

#include "ops/conv/winograd.h"

/* GEMM operands per tile batch: about this many values (V and M), so a
 * batch stays in the L2 cache (measured: 128k values beat 384k by 10-20%). */
#define BATCH_VALUES (1 << 17)

/* The GEMM depth from which the 2.25x fewer multiplications outweigh
 * OpenBLAS's lower speed on short-K products plus the transforms.
 * Measured on the Fashion-MNIST CNN's second layer (14x14x32 -> 64,
 * batch 128, one thread): forward 12.1 -> 9.6 ms (depth 32), input
 * gradient 15.0 -> 9.4 ms (depth 64), filter gradient 12.5 -> 7.7 ms. */
#define MIN_DEPTH 32
/* The filter gradient's GEMMs run over tiles (deep), so only the channel
 * counts must not be tiny. */
#define MIN_CHANNELS 16

bool gb__wino_use(const gb_window *g, int64_t oc, gb_wino_use use) {
    bool fits = g->kh == 3 && g->kw == 3 && g->sh == 1 && g->sw == 1 && g->dh == 1 && g->dw == 1;
    if (!fits) return false;
    switch (use) {
    case GB_WINO_FORWARD: return g->c >= MIN_DEPTH && oc >= MIN_CHANNELS;
    case GB_WINO_INPUT_GRAD: return oc >= MIN_DEPTH && g->c >= MIN_CHANNELS;
    case GB_WINO_FILTER_GRAD: return g->c >= MIN_CHANNELS && oc >= MIN_CHANNELS;
    }
    return false;
}

gb_wino gb__wino_plan(const gb_window *g, int64_t oc, gb_wino_use use) {
    gb_wino p;
    if (use == GB_WINO_INPUT_GRAD) {
        /* dx[i] = sum over taps k' of dy[i - (2 - pt) + k'] w[2 - k'] */
        p = (gb_wino){.n = g->n,
                      .ih = g->oh,
                      .iw = g->ow,
                      .ci = oc,
                      .oh = g->h,
                      .ow = g->w,
                      .co = g->c,
                      .pt = 2 - g->pt,
                      .pl = 2 - g->pl};
    } else {
        p = (gb_wino){.n = g->n,
                      .ih = g->h,
                      .iw = g->w,
                      .ci = g->c,
                      .oh = g->oh,
                      .ow = g->ow,
                      .co = oc,
                      .pt = g->pt,
                      .pl = g->pl};
    }
    p.th = (p.oh + 1) / 2;
    p.tw = (p.ow + 1) / 2;
    int64_t per_tile = 16 * (p.ci + p.co);
    p.chunk = per_tile > 0 ? BATCH_VALUES / per_tile : 1;
    if (p.chunk < 8) p.chunk = 8;
    return p;
}

int64_t gb__wino_worker_elems(const gb_wino *p) {
    int64_t wide = p->ci > p->co ? p->ci : p->co;
    return 16 * p->chunk * (p->ci + p->co) + wide + 4 * p->co;
}

int64_t gb__wino_filter_elems(const gb_wino *p) { return 16 * p->ci * p->co; }
