/* The Winograd F(4x4, 3x3) transforms of simd/wino.h, compiled generically
 * and, on x86_64, again with AVX2+FMA and with AVX-512 (MC_WK_VARIANT=avx2
 * or avx512, -O3): each build defines mc_wino43_<variant>. The walk over
 * tiles and channels is simd/wino_vec.h's.
 *
 * Interpolation points 0, 1, -1, 2, -1/2 and infinity. The usual set
 * (0, +-1, +-2, infinity) and its +-1/2 variant lose more precision: in a
 * float32 simulation on random layers (C = 64 to 512, inputs uniform in
 * [-1, 1] or rectified; scripts/wino4_points.py points) their error
 * against a float64 sum has an RMS 1.2-1.5x this set's and a largest
 * error 2-3x; the mirrored set (0, 1, -1, 1/2, -2) does as well as this
 * one. This set's RMS error is 2.7-6.4x the direct path's. With
 * rows scaled by powers of two (exact) so that B^T and A^T are integers:
 *
 *   B^T = [2  3 -4 -3  2  0      G = [ 1/2    0     0      A^T = [1  1  1  1  8  0
 *          0 -2 -5 -1  2  0           -1/6  -1/6  -1/6            0  1 -1  2 -4  0
 *          0  2  1 -5  2  0            1/6  -1/6   1/6            0  1  1  4  2  0
 *          0 -1 -2  1  2  0            1/30  1/15  2/15           0  1 -1  8 -1  1]
 *          0  2 -1 -2  1  0           -2/15  1/15 -1/30
 *          0  2  3 -4 -3  2]           0     0     1/2 ]
 *
 * The thirds and fifteenths sit in G, which runs once per weight; B^T and
 * A^T, which run per tile, are exact in float32 but for their sums. */
#include "simd/wino_vec.h"

/* G applied to one column (a, b, e) of 3: six values into t[0], t[s], ... */
static inline void g_col(vf a, vf b, vf e, vf *t, int s)
{
    vf ae = a + e;
    t[0] = 0.5f * a;
    t[s] = (-1.0f / 6.0f) * (ae + b);
    t[2 * s] = (1.0f / 6.0f) * (ae - b);
    t[3 * s] = (1.0f / 30.0f) * (a + 2.0f * b + 4.0f * e);
    t[4 * s] = (-1.0f / 30.0f) * (4.0f * a - 2.0f * b + e);
    t[5 * s] = 0.5f * e;
}

/* U = G g G^T for one vector of channels at offset c: g[9] row-major
 * 3x3, u[36] row-major 6x6. */
static void filter_vec(const float *const *g, size_t c, vf *u)
{
    vf t[18]; /* G g: 6x3 row-major */
    for (int j = 0; j < 3; j++)
        g_col(ld(g[j] + c), ld(g[3 + j] + c), ld(g[6 + j] + c), t + j, 3);
    for (int i = 0; i < 6; i++)
        g_col(t[3 * i], t[3 * i + 1], t[3 * i + 2], u + 6 * i, 1);
}

/* B^T applied to one column p[0..5]: six values into t[0], t[s], ... */
static inline void b_col(const vf *p, vf *t, int s)
{
    t[0] = 2.0f * (p[0] + p[4]) + 3.0f * (p[1] - p[3]) - 4.0f * p[2];
    t[s] = 2.0f * (p[4] - p[1]) - 5.0f * p[2] - p[3];
    t[2 * s] = 2.0f * (p[1] + p[4]) + p[2] - 5.0f * p[3];
    t[3 * s] = 2.0f * (p[4] - p[2]) + (p[3] - p[1]);
    t[4 * s] = 2.0f * (p[1] - p[3]) + (p[4] - p[2]);
    t[5 * s] = 2.0f * (p[1] + p[5]) + 3.0f * (p[2] - p[4]) - 4.0f * p[3];
}

/* V = B^T d B: d[36] and v[36] row-major 6x6. */
static void input_vec(const float *const *d, size_t c, vf *v)
{
    vf t[36], p[6];
    for (int b = 0; b < 6; b++) {
        for (int a = 0; a < 6; a++)
            p[a] = ld(d[6 * a + b] + c);
        b_col(p, t + b, 6);
    }
    for (int a = 0; a < 6; a++)
        b_col(t + 6 * a, v + 6 * a, 1);
}

/* A^T applied to one column m[0..5]: four values into y[0], y[s], ... */
static inline void a_col(const vf *m, vf *y, int s)
{
    vf s12 = m[1] + m[2], d12 = m[1] - m[2];
    y[0] = m[0] + s12 + m[3] + 8.0f * m[4];
    y[s] = d12 + 2.0f * m[3] - 4.0f * m[4];
    y[2 * s] = s12 + 4.0f * m[3] + 2.0f * m[4];
    y[3 * s] = d12 + 8.0f * m[3] - m[4] + m[5];
}

/* Y = A^T M A: m[36] row-major 6x6, y[16] row-major 4x4. */
static void output_vec(const float *const *m, size_t c, vf *y)
{
    vf t[24], p[6]; /* A^T M: 4x6 row-major */
    for (int b = 0; b < 6; b++) {
        for (int a = 0; a < 6; a++)
            p[a] = ld(m[6 * a + b] + c);
        a_col(p, t + b, 6);
    }
    for (int a = 0; a < 4; a++)
        a_col(t + 6 * a, y + 4 * a, 1);
}

static void filter_f43(const float *w, int O, int C, bool flip, float *u)
{
    filter_all(filter_vec, 4, w, O, C, flip, u);
}

static void input_f43(const mc_wino_geom *g, const float *x, size_t t0, int nt, const float *zero, float *v,
                      size_t vs)
{
    input_all(input_vec, 4, g, x, t0, nt, zero, v, vs);
}

static void output_f43(const mc_wino_geom *g, const float *m, size_t ms, size_t t0, int nt, float *y)
{
    output_all(output_vec, 4, g, m, ms, t0, nt, y);
}

extern const mc_wino_kernels WK_CAT(mc_wino43, MC_WK_VARIANT);
const mc_wino_kernels WK_CAT(mc_wino43, MC_WK_VARIANT) = {
    .m = 4,
    .xi = MC_WINO4_XI,
    .filter = filter_f43,
    .input = input_f43,
    .output = output_f43,
};
