/* Convolution kernels (simd/conv.h): im2col gathering, weight packing and
 * the depthwise direct kernel. Generic C: the gathers are memcpy-bound and
 * the depthwise loop over channels is left to the compiler's vectoriser.
 *
 * An output index o along a dim reads the dilated, padded input at
 * p = o * stride - pad_lo + k * kdil for kernel index k; p names an input
 * element only when it lies inside the dilated input and falls on a
 * multiple of the input dilation (the holes read as zero). */
#include "simd/conv.h"

#include <stdint.h>
#include <string.h>

size_t mc_conv_rows(const mc_conv_geom *g)
{
    return (size_t)g->N * (size_t)g->out[0] * (size_t)g->out[1] * (size_t)g->out[2];
}

int mc_conv_kpos(const mc_conv_geom *g) { return g->k[0] * g->k[1] * g->k[2]; }

/* The input index that output index o and kernel index k read along dim
 * d, or -1 for padding or a hole. */
static inline int src_index(const mc_conv_geom *g, int d, int o, int k)
{
    int p = o * g->stride[d] - g->pad_lo[d] + k * g->kdil[d];
    if (p < 0)
        return -1;
    int id = g->idil[d];
    if (id != 1) {
        if (p % id)
            return -1;
        p /= id;
    }
    return p < g->in[d] ? p : -1;
}

/* Splits output row r into its batch index and spatial indices. */
static inline void split_row(const mc_conv_geom *g, size_t r, int *n, int o[3])
{
    o[2] = (int)(r % (size_t)g->out[2]);
    r /= (size_t)g->out[2];
    o[1] = (int)(r % (size_t)g->out[1]);
    r /= (size_t)g->out[1];
    o[0] = (int)(r % (size_t)g->out[0]);
    *n = (int)(r / (size_t)g->out[0]);
}

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
        split_row(g, r0 + (size_t)i, &n, o);
        int lo = 0, hi = 0;
        if (g->idil[2] == 1)
            inner_range(g, o[2], &lo, &hi);
        int base2 = o[2] * g->stride[2] - g->pad_lo[2];
        for (int k0 = 0; k0 < g->k[0]; k0++) {
            int i0 = src_index(g, 0, o[0], k0);
            for (int k1 = 0; k1 < g->k[1]; k1++) {
                int i1 = i0 < 0 ? -1 : src_index(g, 1, o[1], k1);
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
                    int i2 = src_index(g, 2, o[2], k2);
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

/* acc[o] += x[o / mult] * w[o] over the O = C * mult channels. */
#define DW_ACC(T)                                                                                      \
    static void dw_acc_##T(T *restrict acc, const T *restrict x, const T *restrict w, int C, int mult) \
    {                                                                                                  \
        if (mult == 1) {                                                                               \
            for (int c = 0; c < C; c++)                                                                \
                acc[c] += x[c] * w[c];                                                                 \
            return;                                                                                    \
        }                                                                                              \
        for (int c = 0; c < C; c++) {                                                                  \
            T xv = x[c];                                                                               \
            for (int j = 0; j < mult; j++)                                                             \
                acc[c * mult + j] += xv * w[c * mult + j];                                             \
        }                                                                                              \
    }
DW_ACC(float)
DW_ACC(double)

void mc_conv_depthwise(const mc_conv_geom *g, size_t esz, const void *x, const void *wt, size_t r0, int mb,
                       void *y)
{
    const int C = g->C, O = g->O, mult = O / C;
    for (int i = 0; i < mb; i++) {
        int n, o[3];
        split_row(g, r0 + (size_t)i, &n, o);
        char *acc = (char *)y + (size_t)i * (size_t)O * esz;
        memset(acc, 0, (size_t)O * esz);
        for (int k0 = 0; k0 < g->k[0]; k0++) {
            int i0 = src_index(g, 0, o[0], k0);
            if (i0 < 0)
                continue;
            for (int k1 = 0; k1 < g->k[1]; k1++) {
                int i1 = src_index(g, 1, o[1], k1);
                if (i1 < 0)
                    continue;
                for (int k2 = 0; k2 < g->k[2]; k2++) {
                    int i2 = src_index(g, 2, o[2], k2);
                    if (i2 < 0)
                        continue;
                    size_t pos = (((size_t)n * (size_t)g->in[0] + (size_t)i0) * (size_t)g->in[1] + (size_t)i1) *
                                     (size_t)g->in[2] +
                                 (size_t)i2;
                    size_t l = ((size_t)k0 * (size_t)g->k[1] + (size_t)k1) * (size_t)g->k[2] + (size_t)k2;
                    if (esz == 4)
                        dw_acc_float((float *)acc, (const float *)x + pos * (size_t)C,
                                     (const float *)wt + l * (size_t)O, C, mult);
                    else
                        dw_acc_double((double *)acc, (const double *)x + pos * (size_t)C,
                                      (const double *)wt + l * (size_t)O, C, mult);
                }
            }
        }
    }
}
