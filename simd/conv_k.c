/* Convolution kernels (simd/conv.h): im2col gathering and weight packing.
 * Generic C: the gathers are memcpy-bound. The depthwise kernel, which is
 * arithmetic, has its own ISA builds (conv_dw_k.c). */
#include "simd/conv.h"
#include "simd/conv_index.h"

#include <stdint.h>
#include <string.h>

size_t mc_conv_rows(const mc_conv_geom *g)
{
    return (size_t)g->N * (size_t)g->out[0] * (size_t)g->out[1] * (size_t)g->out[2];
}

int mc_conv_kpos(const mc_conv_geom *g) { return g->k[0] * g->k[1] * g->k[2]; }

/* The kernel indices [*lo, *hi) along the innermost dim that land inside
 * an undilated input (idil == 1) for output index o. */
static inline void inner_range(const mc_conv_geom *g, int o, int *lo, int *hi)
{
    int base = o * g->stride[2] - g->pad_lo[2], kd = g->kdil[2], k = g->k[2];
    int a = base >= 0 ? 0 : (-base + kd - 1) / kd;
    int b = g->in[2] - base <= 0 ? 0 : (g->in[2] - base + kd - 1) / kd;
    *lo = a < k ? a : k;
    *hi = b < k ? b : k;
    if (*hi < *lo)
        *hi = *lo;
}

void mc_conv_im2col(const mc_conv_geom *g, size_t esz, const void *x, int grp, size_t r0, int mb, void *a)
{
    const int C = g->C, cg = C / g->groups;
    const size_t run = (size_t)cg * esz, pix = (size_t)C * esz;
    /* one contiguous read covers neighbouring kernel taps when they touch
     * neighbouring pixels and every channel is taken */
    const bool dense = g->idil[2] == 1 && g->kdil[2] == 1 && g->stride[2] >= 1 && cg == C;
    const char *xb = (const char *)x + (size_t)grp * run;
    char *dst = a;
    for (int i = 0; i < mb; i++) {
        int n, o[3];
        mc_conv_split_row(g, r0 + (size_t)i, &n, o);
        int lo = 0, hi = 0;
        if (g->idil[2] == 1)
            inner_range(g, o[2], &lo, &hi);
        int base2 = o[2] * g->stride[2] - g->pad_lo[2];
        for (int k0 = 0; k0 < g->k[0]; k0++) {
            int i0 = mc_conv_src_index(g, 0, o[0], k0);
            for (int k1 = 0; k1 < g->k[1]; k1++) {
                int i1 = i0 < 0 ? -1 : mc_conv_src_index(g, 1, o[1], k1);
                if (i1 < 0) {
                    memset(dst, 0, run * (size_t)g->k[2]);
                    dst += run * (size_t)g->k[2];
                    continue;
                }
                const char *line =
                    xb + ((size_t)n * (size_t)g->in[0] + (size_t)i0) * (size_t)g->in[1] * g->in[2] * pix +
                    (size_t)i1 * (size_t)g->in[2] * pix;
                if (dense) {
                    memset(dst, 0, run * (size_t)lo);
                    dst += run * (size_t)lo;
                    if (hi > lo) {
                        memcpy(dst, line + (size_t)(base2 + lo) * pix, run * (size_t)(hi - lo));
                        dst += run * (size_t)(hi - lo);
                    }
                    memset(dst, 0, run * (size_t)(g->k[2] - hi));
                    dst += run * (size_t)(g->k[2] - hi);
                    continue;
                }
                for (int k2 = 0; k2 < g->k[2]; k2++) {
                    int i2 = mc_conv_src_index(g, 2, o[2], k2);
                    if (i2 < 0)
                        memset(dst, 0, run);
                    else
                        memcpy(dst, line + (size_t)i2 * pix, run);
                    dst += run;
                }
            }
        }
    }
}

void mc_conv_pack_weight(size_t esz, const void *w, int O, int kpos, int cg, bool flip, bool depthwise, void *dst)
{
    const char *src = w;
    char *out = dst;
    const size_t run = (size_t)cg * esz;
    for (int o = 0; o < O; o++) {
        for (int l = 0; l < kpos; l++) {
            int lt = flip ? kpos - 1 - l : l;
            const char *from = src + ((size_t)o * (size_t)kpos + (size_t)l) * run;
            if (depthwise)
                memcpy(out + ((size_t)lt * (size_t)O + (size_t)o) * esz, from, esz);
            else
                memcpy(out + ((size_t)o * (size_t)kpos + (size_t)lt) * run, from, run);
        }
    }
}
