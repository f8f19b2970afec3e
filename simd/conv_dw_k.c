/* The depthwise convolution kernel (mc_conv_depthwise in simd/conv.h):
 * built generic and, on x86_64, again with AVX2+FMA and with AVX-512
 * (MC_DW_VARIANT names the build); conv_dw_pick.c chooses one.
 *
 * With one output channel per input channel, each output pixel is a sum
 * over the valid kernel taps of x[tap][c] * w[tap][c]. The sum of a block
 * of channels stays in registers across the taps and is stored once: the
 * old loop added each tap into the output row in memory, a load and a
 * store per tap. A channel multiplier above one keeps that simple loop. */
#include <string.h>

#include "simd/conv.h"
#include "simd/conv_index.h"

#ifndef MC_DW_VARIANT
#define MC_DW_VARIANT generic_build
#endif
#define DW_CAT2(a, b) a##_##b
#define DW_CAT(a, b) DW_CAT2(a, b)

enum { DW_TAPS = 64 }; /* taps gathered per pass; more taps take further passes */

/* 64-byte vectors in GCC/Clang's vector extension: one AVX-512 register,
 * two AVX2 ones, four 128-bit ones in the generic build. The _u types are
 * the same vectors at element alignment, may_alias: loads and stores at
 * any channel offset. No function takes or returns one, so the builds
 * without AVX-512 never pass a 64-byte vector through the ABI. */
typedef float dw_vf __attribute__((vector_size(64)));
typedef double dw_vd __attribute__((vector_size(64)));
typedef float dw_vf_u __attribute__((vector_size(64), aligned(4), may_alias));
typedef double dw_vd_u __attribute__((vector_size(64), aligned(8), may_alias));

/* y[c] (+)= sum over t < nt of x[t][c] * w[t][c]: blocks of four vectors
 * of channels, then single vectors, then single channels, each summed
 * over every tap before it is stored. */
#define DW_SUM(T, V, VU)                                                                                     \
    static void dw_sum_##T(const T *const *x, const T *const *w, int nt, int C, bool add, T *y)              \
    {                                                                                                        \
        enum { L = (int)(sizeof(V) / sizeof(T)) };                                                           \
        int c = 0;                                                                                           \
        for (; c + 4 * L <= C; c += 4 * L) {                                                                 \
            V a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                                        \
            if (add)                                                                                         \
                a0 = *(const VU *)(y + c), a1 = *(const VU *)(y + c + L), a2 = *(const VU *)(y + c + 2 * L), \
                a3 = *(const VU *)(y + c + 3 * L);                                                           \
            for (int t = 0; t < nt; t++) {                                                                   \
                const T *xp = x[t] + c, *wp = w[t] + c;                                                      \
                a0 += *(const VU *)(xp) * *(const VU *)(wp);                                                 \
                a1 += *(const VU *)(xp + L) * *(const VU *)(wp + L);                                         \
                a2 += *(const VU *)(xp + 2 * L) * *(const VU *)(wp + 2 * L);                                 \
                a3 += *(const VU *)(xp + 3 * L) * *(const VU *)(wp + 3 * L);                                 \
            }                                                                                                \
            *(VU *)(y + c) = a0;                                                                             \
            *(VU *)(y + c + L) = a1;                                                                         \
            *(VU *)(y + c + 2 * L) = a2;                                                                     \
            *(VU *)(y + c + 3 * L) = a3;                                                                     \
        }                                                                                                    \
        for (; c + L <= C; c += L) {                                                                         \
            V a = {0};                                                                                       \
            if (add)                                                                                         \
                a = *(const VU *)(y + c);                                                                    \
            for (int t = 0; t < nt; t++)                                                                     \
                a += *(const VU *)(x[t] + c) * *(const VU *)(w[t] + c);                                      \
            *(VU *)(y + c) = a;                                                                              \
        }                                                                                                    \
        for (; c < C; c++) {                                                                                 \
            T acc = add ? y[c] : 0;                                                                          \
            for (int t = 0; t < nt; t++)                                                                     \
                acc += x[t][c] * w[t][c];                                                                    \
            y[c] = acc;                                                                                      \
        }                                                                                                    \
    }
DW_SUM(float, dw_vf, dw_vf_u)
DW_SUM(double, dw_vd, dw_vd_u)

/* acc[o] += x[o / mult] * w[o] over the O = C * mult channels. */
#define DW_ACC(T)                                                                                      \
    static void dw_acc_##T(T *restrict acc, const T *restrict x, const T *restrict w, int C, int mult) \
    {                                                                                                  \
        for (int c = 0; c < C; c++) {                                                                  \
            T xv = x[c];                                                                               \
            for (int j = 0; j < mult; j++)                                                             \
                acc[c * mult + j] += xv * w[c * mult + j];                                             \
        }                                                                                              \
    }
DW_ACC(float)
DW_ACC(double)

/* Output row i's taps: the input pixel and the packed weight row of each
 * kernel position that lands on input, in kernel order, from tap `skip`
 * on, at most DW_TAPS of them. Returns how many it wrote. */
static int dw_taps(const mc_conv_geom *g, int n, const int o[3], int skip, size_t *pos, size_t *lw)
{
    int nt = 0, seen = 0;
    for (int k0 = 0; k0 < g->k[0]; k0++) {
        int i0 = mc_conv_src_index(g, 0, o[0], k0);
        if (i0 < 0)
            continue;
        for (int k1 = 0; k1 < g->k[1]; k1++) {
            int i1 = mc_conv_src_index(g, 1, o[1], k1);
            if (i1 < 0)
                continue;
            for (int k2 = 0; k2 < g->k[2]; k2++) {
                int i2 = mc_conv_src_index(g, 2, o[2], k2);
                if (i2 < 0 || seen++ < skip)
                    continue;
                if (nt == DW_TAPS)
                    return nt;
                pos[nt] = (((size_t)n * (size_t)g->in[0] + (size_t)i0) * (size_t)g->in[1] + (size_t)i1) *
                              (size_t)g->in[2] +
                          (size_t)i2;
                lw[nt] = ((size_t)k0 * (size_t)g->k[1] + (size_t)k1) * (size_t)g->k[2] + (size_t)k2;
                nt++;
            }
        }
    }
    return nt;
}

void DW_CAT(mc_conv_depthwise, MC_DW_VARIANT)(const mc_conv_geom *g, size_t esz, const void *x, const void *wt,
                                              size_t r0, int mb, void *y);
void DW_CAT(mc_conv_depthwise, MC_DW_VARIANT)(const mc_conv_geom *g, size_t esz, const void *x, const void *wt,
                                              size_t r0, int mb, void *y)
{
    const int C = g->C, O = g->O, mult = O / C;
    size_t pos[DW_TAPS], lw[DW_TAPS];
    const void *xs[DW_TAPS], *ws[DW_TAPS];
    for (int i = 0; i < mb; i++) {
        int n, o[3];
        mc_conv_split_row(g, r0 + (size_t)i, &n, o);
        char *out = (char *)y + (size_t)i * (size_t)O * esz;
        if (mult != 1)
            memset(out, 0, (size_t)O * esz);
        int done = 0, nt;
        do {
            nt = dw_taps(g, n, o, done, pos, lw);
            for (int t = 0; t < nt; t++) {
                xs[t] = (const char *)x + pos[t] * (size_t)C * esz;
                ws[t] = (const char *)wt + lw[t] * (size_t)O * esz;
                if (mult == 1)
                    continue;
                if (esz == 4)
                    dw_acc_float((float *)out, xs[t], ws[t], C, mult);
                else
                    dw_acc_double((double *)out, xs[t], ws[t], C, mult);
            }
            if (mult == 1 && (nt > 0 || done == 0)) {
                if (esz == 4)
                    dw_sum_float((const float *const *)xs, (const float *const *)ws, nt, C, done > 0,
                                 (float *)out);
                else
                    dw_sum_double((const double *const *)xs, (const double *const *)ws, nt, C, done > 0,
                                  (double *)out);
            }
            done += nt;
        } while (nt == DW_TAPS);
    }
}
