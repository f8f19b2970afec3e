/* The Winograd F(2x2, 3x3) transforms of simd/wino.h, compiled generically
 * and, on x86_64, again with AVX2+FMA and with AVX-512 (MC_WK_VARIANT=avx2
 * or avx512, -O3): each build defines mc_wino23_<variant>. The walk over
 * tiles and channels is simd/wino_vec.h's. The generic build is the
 * reference of the vector ones: the same adds and halvings in the same
 * order, lane by lane. */
#include "simd/wino_vec.h"

/* U = G g G^T for one vector of channels at offset c: g[9] row-major
 * 3x3, u[16] row-major 4x4. */
static void filter_vec(const float *const *g, size_t c, vf *u)
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
static void input_vec(const float *const *d, size_t c, vf *v)
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
static void output_vec(const float *const *m, size_t c, vf *y)
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

static void filter_f23(const float *w, int O, int C, bool flip, float *u)
{
    filter_all(filter_vec, 2, w, O, C, flip, u);
}

static void input_f23(const mc_wino_geom *g, const float *x, size_t t0, int nt, const float *zero, float *v,
                      size_t vs)
{
    input_all(input_vec, 2, g, x, t0, nt, zero, v, vs);
}

static void output_f23(const mc_wino_geom *g, const float *m, size_t ms, size_t t0, int nt, float *y)
{
    output_all(output_vec, 2, g, m, ms, t0, nt, y);
}

extern const mc_wino_kernels WK_CAT(mc_wino23, MC_WK_VARIANT);
const mc_wino_kernels WK_CAT(mc_wino23, MC_WK_VARIANT) = {
    .m = 2,
    .xi = MC_WINO_XI,
    .filter = filter_f23,
    .input = input_f23,
    .output = output_f23,
};
