/* The Winograd F(2x2, 3x3) transforms of simd/wino.h, compiled generically
 * and, on x86_64, again with AVX2+FMA and with AVX-512 (MC_WK_VARIANT=avx2
 * or avx512, -O3): each build defines mc_wino_kernels_<variant>.
 *
 * Each stage walks channels a vector of VL at a time (GCC/Clang vector
 * extensions: one register of the build's widest kind; 4 lanes in the
 * generic build, which SSE2 and NEON both hold). A tile's 16 rows are
 * separate pointers, so the transforms are written on vector values
 * loaded and stored explicitly rather than left to the auto-vectoriser,
 * which would have to prove 32 pointers apart. A channel tail shorter
 * than a vector goes through small zero-padded buffers with the same
 * code. The generic build is the reference of the vector ones: the same
 * adds and halvings in the same order, lane by lane. */
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

static inline vf ld(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void st(float *p, vf v) { memcpy(p, &v, sizeof v); }

/* U = G g G^T for one vector of channels at offset c: g[9] row-major
 * 3x3, u[16] row-major 4x4. */
static inline void filter_vec(const float *const *g, size_t c, vf *u)
{
    vf t[12];
    for (int j = 0; j < 3; j++) {
        vf a = ld(g[j] + c), b = ld(g[3 + j] + c), e = ld(g[6 + j] + c);
        t[j] = a;
        t[3 + j] = 0.5f * (a + b + e);
        t[6 + j] = 0.5f * (a - b + e);
        t[9 + j] = e;
    }
    for (int i = 0; i < 4; i++) {
        vf a = t[3 * i], b = t[3 * i + 1], e = t[3 * i + 2];
        u[4 * i] = a;
        u[4 * i + 1] = 0.5f * (a + b + e);
        u[4 * i + 2] = 0.5f * (a - b + e);
        u[4 * i + 3] = e;
    }
}

/* V = B^T d B: d[16] and v[16] row-major 4x4. */
static inline void input_vec(const float *const *d, size_t c, vf *v)
{
    vf t[16];
    for (int b = 0; b < 4; b++) {
        vf p = ld(d[b] + c), q = ld(d[4 + b] + c), r = ld(d[8 + b] + c), s = ld(d[12 + b] + c);
        t[b] = p - r;
        t[4 + b] = q + r;
        t[8 + b] = r - q;
        t[12 + b] = q - s;
    }
    for (int a = 0; a < 4; a++) {
        vf p = t[4 * a], q = t[4 * a + 1], r = t[4 * a + 2], s = t[4 * a + 3];
        v[4 * a] = p - r;
        v[4 * a + 1] = q + r;
        v[4 * a + 2] = r - q;
        v[4 * a + 3] = q - s;
    }
}

/* Y = A^T M A: m[16] row-major 4x4, y[4] row-major 2x2. */
static inline void output_vec(const float *const *m, size_t c, vf *y)
{
    vf t[8];
    for (int b = 0; b < 4; b++) {
        vf p = ld(m[b] + c), q = ld(m[4 + b] + c), r = ld(m[8 + b] + c), s = ld(m[12 + b] + c);
        t[b] = p + q + r;
        t[4 + b] = q - r - s;
    }
    for (int a = 0; a < 2; a++) {
        vf p = t[4 * a], q = t[4 * a + 1], r = t[4 * a + 2], s = t[4 * a + 3];
        y[2 * a] = p + q + r;
        y[2 * a + 1] = q - r - s;
    }
}

typedef void (*vec_fn)(const float *const *src, size_t c, vf *out);

/* One vector of channels at offset c, from nin source rows to nout
 * destination rows (a NULL destination is skipped). */
static inline void run_vec(vec_fn f, const float *const *src, float *const *dst, int nout, size_t c)
{
    vf out[16];
    f(src, c, out);
    for (int q = 0; q < nout; q++)
        if (dst[q])
            st(dst[q] + c, out[q]);
}

/* The channels [c0, n) left after whole vectors, through zero-padded
 * buffers. */
static void run_tail(vec_fn f, const float *const *src, int nin, float *const *dst, int nout, size_t c0, size_t n)
{
    float in[16][VL];
    const float *s[16];
    vf out[16];
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

static void filter_f23(const float *w, int O, int C, bool flip, float *u)
{
    size_t plane = (size_t)O * (size_t)C, n = (size_t)C;
    for (int o = 0; o < O; o++) {
        const float *g[9];
        float *dst[16];
        for (int q = 0; q < 9; q++)
            g[flip ? 8 - q : q] = w + ((size_t)o * 9 + (size_t)q) * n;
        for (int xi = 0; xi < MC_WINO_XI; xi++)
            dst[xi] = u + (size_t)xi * plane + (size_t)o * n;
        run_all(filter_vec, g, 9, dst, 16, n);
    }
}

/* The tile's batch index and tile coordinates. */
static inline size_t split_tile(const mc_wino_geom *g, size_t tile, int *th, int *tw)
{
    *tw = (int)(tile % (size_t)g->tiles_w);
    size_t rest = tile / (size_t)g->tiles_w;
    *th = (int)(rest % (size_t)g->tiles_h);
    return rest / (size_t)g->tiles_h;
}

static void input_f23(const mc_wino_geom *g, const float *x, size_t t0, int nt, const float *zero, float *v,
                      size_t vs)
{
    size_t C = (size_t)g->C;
    for (int i = 0; i < nt; i++) {
        int th, tw;
        size_t n = split_tile(g, t0 + (size_t)i, &th, &tw);
        const float *src[16];
        float *dst[16];
        for (int a = 0; a < 4; a++) {
            int h = 2 * th - g->pad_h + a;
            for (int b = 0; b < 4; b++) {
                int w = 2 * tw - g->pad_w + b;
                bool in = h >= 0 && h < g->H && w >= 0 && w < g->W;
                src[4 * a + b] = in ? x + ((n * (size_t)g->H + (size_t)h) * (size_t)g->W + (size_t)w) * C : zero;
            }
        }
        for (int xi = 0; xi < MC_WINO_XI; xi++)
            dst[xi] = v + (size_t)xi * vs + (size_t)i * C;
        run_all(input_vec, src, 16, dst, 16, C);
    }
}

static void output_f23(const mc_wino_geom *g, const float *m, size_t ms, size_t t0, int nt, float *y)
{
    size_t O = (size_t)g->O;
    for (int i = 0; i < nt; i++) {
        int th, tw;
        size_t n = split_tile(g, t0 + (size_t)i, &th, &tw);
        const float *src[16];
        float *dst[4];
        for (int xi = 0; xi < MC_WINO_XI; xi++)
            src[xi] = m + (size_t)xi * ms + (size_t)i * O;
        /* positions past the output's edge (odd OH or OW) are not stored */
        for (int a = 0; a < 2; a++) {
            for (int b = 0; b < 2; b++) {
                int h = 2 * th + a, w = 2 * tw + b;
                bool in = h < g->OH && w < g->OW;
                dst[2 * a + b] = in ? y + ((n * (size_t)g->OH + (size_t)h) * (size_t)g->OW + (size_t)w) * O : NULL;
            }
        }
        run_all(output_vec, src, 16, dst, 4, O);
    }
}

extern const mc_wino_kernels WK_CAT(mc_wino_kernels, MC_WK_VARIANT);
const mc_wino_kernels WK_CAT(mc_wino_kernels, MC_WK_VARIANT) = {
    .filter = filter_f23,
    .input = input_f23,
    .output = output_f23,
};
