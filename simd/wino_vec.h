/* The vector walk shared by the Winograd transform files (simd/wino_k.c,
 * F(2x2, 3x3), and simd/wino4_k.c, F(4x4, 3x3)); included only by them,
 * so it is compiled with each build's ISA flags.
 *
 * Each stage walks channels a vector of VL at a time (GCC/Clang vector
 * extensions: one register of the build's widest kind; 4 lanes in the
 * generic build, which SSE2 and NEON both hold). A tile's rows are
 * separate pointers (16 or 36), so the transforms are written on vector
 * values loaded and stored explicitly rather than left to the
 * auto-vectoriser, which would have to prove that many pointers apart. A
 * channel tail shorter than a vector goes through small zero-padded
 * buffers with the same code. */
#ifndef MC_SIMD_WINO_VEC_H
#define MC_SIMD_WINO_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "simd/wino.h"

#ifndef MC_WK_VARIANT
#define MC_WK_VARIANT generic_build
#endif
#define WK_CAT2(a, b) a##_##b
#define WK_CAT(a, b) WK_CAT2(a, b)

#if defined(__AVX512F__)
enum { VL = 16 };
#elif defined(__AVX__)
enum { VL = 8 };
#else
enum { VL = 4 };
#endif
typedef float vf __attribute__((vector_size(VL * sizeof(float))));

/* the most rows a transform reads or writes: F(4x4, 3x3)'s 6x6 */
enum { WK_MAX_ROWS = 36 };

static inline vf ld(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st(float *p, vf v) { memcpy(p, &v, sizeof v); }

/* One transform of one vector of channels at offset c of each source row,
 * into out[] (as many values as the transform has outputs). */
typedef void (*vec_fn)(const float *const *src, size_t c, vf *out);

/* One vector of channels at offset c, to nout destination rows (a NULL
 * destination is skipped). */
static inline void run_vec(vec_fn f, const float *const *src, float *const *dst, int nout, size_t c)
{
    vf out[WK_MAX_ROWS];
    f(src, c, out);
    for (int q = 0; q < nout; q++)
        if (dst[q])
            st(dst[q] + c, out[q]);
}

/* The channels [c0, n) left after whole vectors, through zero-padded
 * buffers. */
static inline void run_tail(vec_fn f, const float *const *src, int nin, float *const *dst, int nout, size_t c0,
                            size_t n)
{
    float in[WK_MAX_ROWS][VL];
    const float *s[WK_MAX_ROWS];
    vf out[WK_MAX_ROWS];
    size_t len = n - c0;
    memset(in, 0, sizeof in);
    for (int q = 0; q < nin; q++) {
        memcpy(in[q], src[q] + c0, len * sizeof(float));
        s[q] = in[q];
    }
    f(s, 0, out);
    for (int q = 0; q < nout; q++)
        if (dst[q])
            memcpy(dst[q] + c0, &out[q], len * sizeof(float));
}

/* The channels [0, n) of one tile or filter: whole vectors, then the tail. */
static inline void run_all(vec_fn f, const float *const *src, int nin, float *const *dst, int nout, size_t n)
{
    size_t full = n - n % VL;
    for (size_t c = 0; c < full; c += VL)
        run_vec(f, src, dst, nout, c);
    if (full < n)
        run_tail(f, src, nin, dst, nout, full, n);
}

/* The tile's batch index and tile coordinates. */
static inline size_t split_tile(const mc_wino_geom *g, size_t tile, int *th, int *tw)
{
    *tw = (int)(tile % (size_t)g->tiles_w);
    size_t rest = tile / (size_t)g->tiles_w;
    *th = (int)(rest % (size_t)g->tiles_h);
    return rest / (size_t)g->tiles_h;
}

/* The three stages of simd/wino.h for output tiles of side m (input
 * patches of side m + 2), each tile or filter through the vector
 * transform f. */
static inline void filter_all(vec_fn f, int m, const float *w, int O, int C, bool flip, float *u)
{
    int xi = (m + 2) * (m + 2);
    size_t plane = (size_t)O * (size_t)C, n = (size_t)C;
    for (int o = 0; o < O; o++) {
        const float *g[9];
        float *dst[WK_MAX_ROWS];
        for (int q = 0; q < 9; q++)
            g[flip ? 8 - q : q] = w + ((size_t)o * 9 + (size_t)q) * n;
        for (int k = 0; k < xi; k++)
            dst[k] = u + (size_t)k * plane + (size_t)o * n;
        run_all(f, g, 9, dst, xi, n);
    }
}

static inline void input_all(vec_fn f, int m, const mc_wino_geom *g, const float *x, size_t t0, int nt,
                             const float *zero, float *v, size_t vs)
{
    int side = m + 2, xi = side * side;
    size_t C = (size_t)g->C;
    for (int i = 0; i < nt; i++) {
        int th, tw;
        size_t n = split_tile(g, t0 + (size_t)i, &th, &tw);
        const float *src[WK_MAX_ROWS];
        float *dst[WK_MAX_ROWS];
        for (int a = 0; a < side; a++) {
            int h = m * th - g->pad_h + a;
            for (int b = 0; b < side; b++) {
                int w = m * tw - g->pad_w + b;
                bool in = h >= 0 && h < g->H && w >= 0 && w < g->W;
                src[side * a + b] =
                    in ? x + ((n * (size_t)g->H + (size_t)h) * (size_t)g->W + (size_t)w) * C : zero;
            }
        }
        for (int k = 0; k < xi; k++)
            dst[k] = v + (size_t)k * vs + (size_t)i * C;
        run_all(f, src, xi, dst, xi, C);
    }
}

static inline void output_all(vec_fn f, int m, const mc_wino_geom *g, const float *mm, size_t ms, size_t t0,
                              int nt, float *y)
{
    int xi = (m + 2) * (m + 2);
    size_t O = (size_t)g->O;
    for (int i = 0; i < nt; i++) {
        int th, tw;
        size_t n = split_tile(g, t0 + (size_t)i, &th, &tw);
        const float *src[WK_MAX_ROWS];
        float *dst[16];
        for (int k = 0; k < xi; k++)
            src[k] = mm + (size_t)k * ms + (size_t)i * O;
        /* positions past the output's edge (OH or OW not a multiple of m)
         * are not stored */
        for (int a = 0; a < m; a++) {
            for (int b = 0; b < m; b++) {
                int h = m * th + a, w = m * tw + b;
                bool in = h < g->OH && w < g->OW;
                dst[m * a + b] = in ? y + ((n * (size_t)g->OH + (size_t)h) * (size_t)g->OW + (size_t)w) * O : NULL;
            }
        }
        run_all(f, src, xi, dst, m * m, O);
    }
}

#endif
