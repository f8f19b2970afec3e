/* The Winograd F(2x2, 3x3) transforms of simd/wino.h, compiled generically
 * and, on x86_64, again with AVX2+FMA and with AVX-512 (MC_WK_VARIANT=avx2
 * or avx512, -O3): each build defines mc_wino_kernels_<variant>.
 *
 * Each stage walks channels in chunks of CB: a chunk's 16 rows are copied
 * into local arrays, transformed with fixed-length loops and copied out.
 * The locals cannot alias the caller's memory, so the compiler vectorises
 * the arithmetic across the chunk without run-time overlap checks (16
 * source and 16 destination pointers would defeat them), and a short tail
 * chunk runs the same code on a partly used buffer. */
#include <string.h>

#include "simd/wino.h"

#ifndef MC_WK_VARIANT
#define MC_WK_VARIANT generic_build
#endif
#define WK_CAT2(a, b) a##_##b
#define WK_CAT(a, b) WK_CAT2(a, b)

/* channels per chunk: one AVX-512 vector, two AVX2 ones */
enum { CB = 16 };

/* The 1-D input transform B^T applied to four rows a, b, c, e (of CB). */
static inline void bt4(float *restrict o0, float *restrict o1, float *restrict o2, float *restrict o3,
                       const float *a, const float *b, const float *c, const float *e)
{
    for (int k = 0; k < CB; k++) {
        float a_ = a[k], b_ = b[k], c_ = c[k], e_ = e[k];
        o0[k] = a_ - c_;
        o1[k] = b_ + c_;
        o2[k] = c_ - b_;
        o3[k] = b_ - e_;
    }
}

static void filter_f23(const float *w, int O, int C, bool flip, float *u)
{
    float g[9][CB], t[12][CB], r[16][CB];
    memset(g, 0, sizeof g);
    size_t plane = (size_t)O * (size_t)C;
    for (int o = 0; o < O; o++) {
        const float *wo = w + (size_t)o * 9 * (size_t)C;
        for (int c0 = 0; c0 < C; c0 += CB) {
            int len = C - c0 < CB ? C - c0 : CB;
            for (int q = 0; q < 9; q++)
                memcpy(g[flip ? 8 - q : q], wo + (size_t)q * (size_t)C + c0, (size_t)len * sizeof(float));
            /* t = G g: 4 rows of 3 kernel columns */
            for (int j = 0; j < 3; j++) {
                for (int k = 0; k < CB; k++) {
                    float a = g[j][k], b = g[3 + j][k], c = g[6 + j][k];
                    t[j][k] = a;
                    t[3 + j][k] = 0.5f * (a + b + c);
                    t[6 + j][k] = 0.5f * (a - b + c);
                    t[9 + j][k] = c;
                }
            }
            /* r = t G^T: each row's 3 columns to 4 */
            for (int i = 0; i < 4; i++) {
                for (int k = 0; k < CB; k++) {
                    float a = t[3 * i][k], b = t[3 * i + 1][k], c = t[3 * i + 2][k];
                    r[4 * i][k] = a;
                    r[4 * i + 1][k] = 0.5f * (a + b + c);
                    r[4 * i + 2][k] = 0.5f * (a - b + c);
                    r[4 * i + 3][k] = c;
                }
            }
            for (int xi = 0; xi < MC_WINO_XI; xi++)
                memcpy(u + (size_t)xi * plane + (size_t)o * (size_t)C + c0, r[xi], (size_t)len * sizeof(float));
        }
    }
}

static void input_f23(const mc_wino_geom *g, const float *x, size_t t0, int nt, const float *zero, float *v,
                      size_t vs)
{
    float d[16][CB], t[16][CB], r[16][CB];
    memset(d, 0, sizeof d);
    size_t C = (size_t)g->C;
    for (int i = 0; i < nt; i++) {
        size_t tile = t0 + (size_t)i;
        int tw = (int)(tile % (size_t)g->tiles_w);
        size_t rest = tile / (size_t)g->tiles_w;
        int th = (int)(rest % (size_t)g->tiles_h);
        size_t n = rest / (size_t)g->tiles_h;
        const float *src[16];
        for (int a = 0; a < 4; a++) {
            int h = 2 * th - g->pad_h + a;
            for (int b = 0; b < 4; b++) {
                int w = 2 * tw - g->pad_w + b;
                bool in = h >= 0 && h < g->H && w >= 0 && w < g->W;
                src[4 * a + b] = in ? x + ((n * (size_t)g->H + (size_t)h) * (size_t)g->W + (size_t)w) * C : zero;
            }
        }
        for (size_t c0 = 0; c0 < C; c0 += CB) {
            size_t len = C - c0 < CB ? C - c0 : CB;
            for (int q = 0; q < 16; q++)
                memcpy(d[q], src[q] + c0, len * sizeof(float));
            /* t = B^T d (down each of the 4 columns), r = t B (along rows) */
            for (int b = 0; b < 4; b++)
                bt4(t[b], t[4 + b], t[8 + b], t[12 + b], d[b], d[4 + b], d[8 + b], d[12 + b]);
            for (int a = 0; a < 4; a++)
                bt4(r[4 * a], r[4 * a + 1], r[4 * a + 2], r[4 * a + 3], t[4 * a], t[4 * a + 1], t[4 * a + 2],
                    t[4 * a + 3]);
            for (int xi = 0; xi < MC_WINO_XI; xi++)
                memcpy(v + (size_t)xi * vs + (size_t)i * C + c0, r[xi], len * sizeof(float));
        }
    }
}

static void output_f23(const mc_wino_geom *g, const float *m, size_t ms, size_t t0, int nt, float *y)
{
    float e[16][CB], t[8][CB], r[4][CB];
    size_t O = (size_t)g->O;
    for (int i = 0; i < nt; i++) {
        size_t tile = t0 + (size_t)i;
        int tw = (int)(tile % (size_t)g->tiles_w);
        size_t rest = tile / (size_t)g->tiles_w;
        int th = (int)(rest % (size_t)g->tiles_h);
        size_t n = rest / (size_t)g->tiles_h;
        float *dst[4];
        for (int a = 0; a < 2; a++) {
            for (int b = 0; b < 2; b++) {
                int h = 2 * th + a, w = 2 * tw + b;
                bool in = h < g->OH && w < g->OW;
                dst[2 * a + b] = in ? y + ((n * (size_t)g->OH + (size_t)h) * (size_t)g->OW + (size_t)w) * O : NULL;
            }
        }
        for (size_t o0 = 0; o0 < O; o0 += CB) {
            size_t len = O - o0 < CB ? O - o0 : CB;
            for (int xi = 0; xi < MC_WINO_XI; xi++)
                memcpy(e[xi], m + (size_t)xi * ms + (size_t)i * O + o0, len * sizeof(float));
            /* t = A^T e (2 rows of 4 columns), r = t A (2 x 2) */
            for (int b = 0; b < 4; b++) {
                for (int k = 0; k < CB; k++) {
                    float p = e[b][k], q = e[4 + b][k], s = e[8 + b][k], z = e[12 + b][k];
                    t[b][k] = p + q + s;
                    t[4 + b][k] = q - s - z;
                }
            }
            for (int a = 0; a < 2; a++) {
                for (int k = 0; k < CB; k++) {
                    float p = t[4 * a][k], q = t[4 * a + 1][k], s = t[4 * a + 2][k], z = t[4 * a + 3][k];
                    r[2 * a][k] = p + q + s;
                    r[2 * a + 1][k] = q - s - z;
                }
            }
            for (int q = 0; q < 4; q++)
                if (dst[q])
                    memcpy(dst[q] + o0, r[q], len * sizeof(float));
        }
    }
}

extern const mc_wino_kernels WK_CAT(mc_wino_kernels, MC_WK_VARIANT);
const mc_wino_kernels WK_CAT(mc_wino_kernels, MC_WK_VARIANT) = {
    .filter = filter_f23,
    .input = input_f23,
    .output = output_f23,
};
