/* The row kernels of simd/fast.h (norms, rope, the online-softmax step),
 * compiled generically and, on x86_64, again with AVX2 and FMA and with
 * AVX-512 (MC_FK_VARIANT=avx2 or avx512, -O3): each build defines
 * mc_fast_kernels_<variant>.
 * float32 rows take loops the compiler vectorises (several partial sums,
 * a branch-free exp); the half types go through per-element conversion;
 * float64 norms compute in float64 (MLX's CPU build converts float64 to
 * float32 for them; here they keep float64's precision). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "simd/attn_shape.h"
#include "simd/dtype.h"
#include "simd/fast.h"
#include "simd/half_convert.h"

#ifndef MC_FK_VARIANT
#define MC_FK_VARIANT generic
#endif
#define FK_CAT2(a, b) a##_##b
#define FK_CAT(a, b) FK_CAT2(a, b)

/* Partial sums per row: enough independent lanes for the widest vectors. */
enum { LANES = 16 };

static inline float ld(int dt, const void *p, size_t i)
{
    switch (dt) {
    case MC_SIMD_FLOAT16: return mc_f16_to_f32(((const uint16_t *)p)[i]);
    case MC_SIMD_BFLOAT16: return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    case MC_SIMD_FLOAT64: return (float)((const double *)p)[i];
    default: return ((const float *)p)[i];
    }
}

static inline double ldw(int dt, const void *p, size_t i)
{
    return dt == MC_SIMD_FLOAT64 ? ((const double *)p)[i] : (double)ld(dt, p, i);
}

/* Rounds v to dt and back: MLX's arithmetic in the half types rounds
 * after each operation. */
static inline double rnd(int dt, double v)
{
    switch (dt) {
    case MC_SIMD_FLOAT16: return mc_f16_to_f32(mc_f32_to_f16((float)v));
    case MC_SIMD_BFLOAT16: return mc_bf16_to_f32(mc_f32_to_bf16((float)v));
    case MC_SIMD_FLOAT32: return (float)v;
    default: return v;
    }
}

static inline void stw(int dt, void *p, size_t i, double v)
{
    switch (dt) {
    case MC_SIMD_FLOAT16: ((uint16_t *)p)[i] = mc_f32_to_f16((float)v); break;
    case MC_SIMD_BFLOAT16: ((uint16_t *)p)[i] = mc_f32_to_bf16((float)v); break;
    case MC_SIMD_FLOAT64: ((double *)p)[i] = v; break;
    default: ((float *)p)[i] = (float)v; break;
    }
}

static inline float sum_sq_f32(const float *x, size_t n)
{
    float acc[LANES] = {0};
    size_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++)
            acc[k] += x[j + k] * x[j + k];
    float s = 0;
    for (int k = 0; k < LANES; k++)
        s += acc[k];
    for (; j < n; j++)
        s += x[j] * x[j];
    return s;
}

static inline float sum_f32(const float *x, size_t n)
{
    float acc[LANES] = {0};
    size_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++)
            acc[k] += x[j + k];
    float s = 0;
    for (int k = 0; k < LANES; k++)
        s += acc[k];
    for (; j < n; j++)
        s += x[j];
    return s;
}

static inline float sum_sq_dev_f32(const float *x, size_t n, float mu)
{
    float acc[LANES] = {0};
    size_t j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int k = 0; k < LANES; k++) {
            float d = x[j + k] - mu;
            acc[k] += d * d;
        }
    float s = 0;
    for (int k = 0; k < LANES; k++)
        s += acc[k];
    for (; j < n; j++)
        s += (x[j] - mu) * (x[j] - mu);
    return s;
}

/* A streamed float32 row is computed in pieces of CHUNK floats into a
 * stack buffer that put_row then writes past the cache: small enough that
 * the buffer stays in L1 beside the row and the weights. */
enum { CHUNK = 512 };

/* Whether a float32 row of n at y can be streamed: a build with AVX, an
 * aligned y and whole vectors. A large norm's output is not read again
 * soon, and a plain store first reads every line it writes. */
static inline bool can_stream(bool stream, const void *y, size_t n)
{
#if defined(__AVX__)
    return stream && n % 8 == 0 && ((uintptr_t)y & 31) == 0;
#else
    (void)stream, (void)y, (void)n;
    return false;
#endif
}

static inline void put_row(float *y, const float *tmp, size_t n)
{
#if defined(__AVX512F__)
    if (n % 16 == 0 && ((uintptr_t)y & 63) == 0) {
        for (size_t j = 0; j < n; j += 16)
            _mm512_stream_ps(y + j, _mm512_loadu_ps(tmp + j));
        return;
    }
#endif
#if defined(__AVX__)
    for (size_t j = 0; j < n; j += 8)
        _mm256_stream_ps(y + j, _mm256_loadu_ps(tmp + j));
#else
    memcpy(y, tmp, n * sizeof *y);
#endif
}

static inline void stream_done(bool streamed)
{
#if defined(__AVX__)
    if (streamed)
        _mm_sfence();
#else
    (void)streamed;
#endif
}

/* y[j] = x[j] * inv (* w[j]) for j < n. */
static inline void rms_out(const float *x, const float *w, float *y, size_t n, float inv)
{
    if (w)
        for (size_t j = 0; j < n; j++)
            y[j] = (x[j] * inv) * w[j];
    else
        for (size_t j = 0; j < n; j++)
            y[j] = x[j] * inv;
}

/* y[j] = (x[j] - mu) * inv (* w[j]) (+ b[j]) for j < n. */
static inline void ln_out(const float *x, const float *w, const float *b, float *y, size_t n, float mu, float inv)
{
    if (w && b)
        for (size_t j = 0; j < n; j++)
            y[j] = ((x[j] - mu) * inv) * w[j] + b[j];
    else if (w)
        for (size_t j = 0; j < n; j++)
            y[j] = ((x[j] - mu) * inv) * w[j];
    else if (b)
        for (size_t j = 0; j < n; j++)
            y[j] = ((x[j] - mu) * inv) + b[j];
    else
        for (size_t j = 0; j < n; j++)
            y[j] = (x[j] - mu) * inv;
}

static void rms_norm_rows(int dt, const void *x, const void *w, void *y, size_t rows, size_t n, float eps,
                          bool stream)
{
    float tmp[CHUNK];
    bool streamed = false;
    size_t isz = dt == MC_SIMD_FLOAT64 ? 8 : dt == MC_SIMD_FLOAT32 ? 4 : 2;
    for (size_t r = 0; r < rows; r++) {
        const char *xr = (const char *)x + r * n * isz;
        char *yr = (char *)y + r * n * isz;
        if (dt == MC_SIMD_FLOAT32) {
            const float *xf = (const float *)xr, *wf = w;
            float *yf = (float *)yr;
            float inv = 1.0f / sqrtf(sum_sq_f32(xf, n) / (float)n + eps);
            if (can_stream(stream, yr, n)) {
                for (size_t j = 0; j < n; j += CHUNK) {
                    size_t len = n - j < CHUNK ? n - j : CHUNK;
                    rms_out(xf + j, wf ? wf + j : NULL, tmp, len, inv);
                    put_row(yf + j, tmp, len);
                }
                streamed = true;
            } else {
                rms_out(xf, wf, yf, n, inv);
            }
            continue;
        }
        if (dt == MC_SIMD_FLOAT64) {
            const double *xd = (const double *)xr, *wd = w;
            double *yd = (double *)yr, ss = 0;
            for (size_t j = 0; j < n; j++)
                ss += xd[j] * xd[j];
            double inv = 1.0 / sqrt(ss / (double)n + (double)eps);
            for (size_t j = 0; j < n; j++)
                yd[j] = xd[j] * inv * (wd ? wd[j] : 1.0);
            continue;
        }
        float ss = 0;
        for (size_t j = 0; j < n; j++) {
            float v = ld(dt, xr, j);
            ss += v * v;
        }
        float inv = 1.0f / sqrtf(ss / (float)n + eps);
        for (size_t j = 0; j < n; j++) {
            double v = rnd(dt, (double)(ld(dt, xr, j) * inv));
            if (w)
                v *= ldw(dt, w, j);
            stw(dt, yr, j, v);
        }
    }
    stream_done(streamed);
}

static void layer_norm_rows(int dt, const void *x, const void *w, const void *b, void *y, size_t rows, size_t n,
                            float eps, bool stream)
{
    float tmp[CHUNK];
    bool streamed = false;
    size_t isz = dt == MC_SIMD_FLOAT64 ? 8 : dt == MC_SIMD_FLOAT32 ? 4 : 2;
    for (size_t r = 0; r < rows; r++) {
        const char *xr = (const char *)x + r * n * isz;
        char *yr = (char *)y + r * n * isz;
        if (dt == MC_SIMD_FLOAT32) {
            const float *xf = (const float *)xr, *wf = w, *bf = b;
            float *yf = (float *)yr;
            float mu = sum_f32(xf, n) / (float)n;
            float inv = 1.0f / sqrtf(sum_sq_dev_f32(xf, n, mu) / (float)n + eps);
            if (can_stream(stream, yr, n)) {
                for (size_t j = 0; j < n; j += CHUNK) {
                    size_t len = n - j < CHUNK ? n - j : CHUNK;
                    ln_out(xf + j, wf ? wf + j : NULL, bf ? bf + j : NULL, tmp, len, mu, inv);
                    put_row(yf + j, tmp, len);
                }
                streamed = true;
            } else {
                ln_out(xf, wf, bf, yf, n, mu, inv);
            }
            continue;
        }
        if (dt == MC_SIMD_FLOAT64) {
            const double *xd = (const double *)xr, *wd = w, *bd = b;
            double *yd = (double *)yr, sd = 0, ssd = 0;
            for (size_t j = 0; j < n; j++)
                sd += xd[j];
            double mud = sd / (double)n;
            for (size_t j = 0; j < n; j++)
                ssd += (xd[j] - mud) * (xd[j] - mud);
            double invd = 1.0 / sqrt(ssd / (double)n + (double)eps);
            for (size_t j = 0; j < n; j++)
                yd[j] = (xd[j] - mud) * invd * (wd ? wd[j] : 1.0) + (bd ? bd[j] : 0.0);
            continue;
        }
        float s = 0;
        for (size_t j = 0; j < n; j++)
            s += ld(dt, xr, j);
        float mu = s / (float)n, ss = 0;
        for (size_t j = 0; j < n; j++) {
            float d = ld(dt, xr, j) - mu;
            ss += d * d;
        }
        float inv = 1.0f / sqrtf(ss / (float)n + eps);
        for (size_t j = 0; j < n; j++) {
            double v = rnd(dt, (double)((ld(dt, xr, j) - mu) * inv));
            if (w)
                v = rnd(dt, v * ldw(dt, w, j));
            if (b)
                v = v + ldw(dt, b, j);
            stw(dt, yr, j, v);
        }
    }
    stream_done(streamed);
}

/* One rotation of the pair (a, b) by (c, s), rounded as MLX's ops round. */
static inline void rot(int dt, bool fwd, double a, double b, double c, double s, double *o1, double *o2)
{
    if (fwd) {
        *o1 = rnd(dt, rnd(dt, a * c) - rnd(dt, b * s));
        *o2 = rnd(dt, rnd(dt, a * s) + rnd(dt, b * c));
    } else {
        *o1 = rnd(dt, rnd(dt, b * s) + rnd(dt, a * c));
        *o2 = rnd(dt, rnd(dt, b * c) - rnd(dt, a * s));
    }
}

static void rope_rows(int dt, bool traditional, bool forward, const void *x, void *y, size_t rows, size_t d,
                      size_t dims, const float *cs, const float *sn)
{
    size_t half = dims / 2;
    size_t isz = dt == MC_SIMD_FLOAT64 ? 8 : dt == MC_SIMD_FLOAT32 ? 4 : 2;
    for (size_t r = 0; r < rows; r++) {
        const char *xr = (const char *)x + r * d * isz;
        char *yr = (char *)y + r * d * isz;
        if (dt == MC_SIMD_FLOAT32 && !traditional) {
            const float *xf = (const float *)xr;
            float *yf = (float *)yr;
            for (size_t i = 0; i < half; i++) {
                float a = xf[i], b = xf[i + half], c = cs[i], s = sn[i];
                float o1 = forward ? a * c - b * s : b * s + a * c;
                float o2 = forward ? a * s + b * c : b * c - a * s;
                yf[i] = o1;
                yf[i + half] = o2;
            }
        } else {
            for (size_t i = 0; i < half; i++) {
                size_t i1 = traditional ? 2 * i : i, i2 = traditional ? 2 * i + 1 : i + half;
                double o1, o2;
                rot(dt, forward, ldw(dt, xr, i1), ldw(dt, xr, i2), cs[i], sn[i], &o1, &o2);
                stw(dt, yr, i1, o1);
                stw(dt, yr, i2, o2);
            }
        }
        if (dims < d && xr != yr)
            memcpy(yr + dims * isz, xr + dims * isz, (d - dims) * isz);
    }
}

/* a * b + c in one rounding where the build has FMA (ISO C compiles
 * a * b + c as two operations), else as written */
#if defined(__FMA__)
#define FK_FMA(a, b, c) fmaf((a), (b), (c))
#else
#define FK_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* e^xc for xc already in [-87.3, 88.7]: the shared body of fexp and
 * fexp_nonpos, which differ only in the clamps they need. */
static inline float fexp_in_range(float xc)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float k = xc * 1.44269504f + magic;
    uint32_t kb;
    memcpy(&kb, &k, sizeof kb);
    float n = k - magic;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.0f / 5040;
    p = FK_FMA(p, r, 1.0f / 720);
    p = FK_FMA(p, r, 1.0f / 120);
    p = FK_FMA(p, r, 1.0f / 24);
    p = FK_FMA(p, r, 1.0f / 6);
    p = FK_FMA(p, r, 0.5f);
    p = FK_FMA(p, r, 1.0f);
    p = FK_FMA(p, r, 1.0f);
    uint32_t sb = (kb - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    return p * scale;
}

/* exp(x) for float32 without branches, so loops over it vectorise: 2^n
 * times a degree-7 polynomial on [-ln2/2, ln2/2] (within 2 ulp); 0 below
 * -87.3, infinity above 88.7, NaN kept. */
static inline float fexp(float x)
{
    float xc = x > 88.7f ? 88.7f : x;
    xc = xc < -87.3f ? -87.3f : xc;
    float e = fexp_in_range(xc);
    e = x < -87.3f ? 0.0f : e;
    return x > 88.7f ? INFINITY : e;
}

/* max(start, x[0..n)) as `a > b ? a : b` picks (a NaN is passed over, as
 * in a scalar loop). Partial maxima in a vector of LANES: the compilers
 * do not vectorise a running max or its lane-array form, and C has no
 * vector ?:, so the pick is a compare mask and bitwise blend. */
typedef float fk_vf __attribute__((vector_size(LANES * sizeof(float))));
typedef int32_t fk_vi __attribute__((vector_size(LANES * sizeof(float))));

static inline float row_max(const float *x, size_t n, float start)
{
    fk_vf acc;
    for (int k = 0; k < LANES; k++)
        acc[k] = start;
    size_t j = 0;
    for (; j + LANES <= n; j += LANES) {
        fk_vf v;
        memcpy(&v, x + j, sizeof v);
        fk_vi gt = v > acc;
        acc = (fk_vf)(((fk_vi)v & gt) | ((fk_vi)acc & ~gt));
    }
    float mx = start;
    for (int k = 0; k < LANES; k++)
        mx = acc[k] > mx ? acc[k] : mx;
    for (; j < n; j++)
        mx = x[j] > mx ? x[j] : mx;
    return mx;
}

/* fexp for x <= 0 or NaN (a score less its row's maximum): no upper
 * clamp to pay for. */
static inline float fexp_nonpos(float x)
{
    float e = fexp_in_range(x < -87.3f ? -87.3f : x);
    return x < -87.3f ? 0.0f : e;
}

static void softmax_tile_f32(float *s, size_t rows, size_t cols, size_t lds, float *m, float *l, float *acc,
                             size_t acols, size_t ldacc)
{
    for (size_t i = 0; i < rows; i++) {
        float *row = s + i * lds;
        float mx = row_max(row, cols, m[i]);
        if (mx == -INFINITY) {
            /* nothing finite yet: keep the running state as it is */
            memset(row, 0, cols * sizeof *row);
            continue;
        }
        float c = fexp(m[i] - mx);
        /* two vectors of partial sums: the adds' latency stays hidden */
        float part[2 * LANES] = {0};
        size_t j = 0;
        for (; j + 2 * LANES <= cols; j += 2 * LANES)
            for (int k = 0; k < 2 * LANES; k++) {
                float e = fexp_nonpos(row[j + k] - mx);
                row[j + k] = e;
                part[k] += e;
            }
        float sum = 0;
        for (int k = 0; k < 2 * LANES; k++)
            sum += part[k];
        for (; j < cols; j++) {
            float e = fexp_nonpos(row[j] - mx);
            row[j] = e;
            sum += e;
        }
        l[i] = l[i] * c + sum;
        m[i] = mx;
        if (c != 1.0f) {
            float *a = acc + i * ldacc;
            for (size_t d = 0; d < acols; d++)
                a[d] *= c;
        }
    }
}

/* softmax_tile_f32 for a panel of NR score rows stored transposed (key j
 * of row q at s[j * NR + q]): the running maximum, the exponentials and
 * the sums are elementwise over the NR rows, so every step is a vector
 * operation with no reduction across lanes. */
static void softmax_panel_f32(float *s, size_t cols, float *m, float *l, float *acc, size_t arows)
{
    enum { NR = MC_ATTN_NR };
    float mx[NR], c[NR], sum[NR];
    memcpy(mx, m, sizeof mx);
    for (size_t j = 0; j < cols; j++) {
        const float *r = s + j * NR;
        for (int q = 0; q < NR; q++)
            mx[q] = r[q] > mx[q] ? r[q] : mx[q];
    }
    for (int q = 0; q < NR; q++) {
        /* a row with nothing finite yet keeps its state (c = 1, no sum) */
        c[q] = mx[q] == -INFINITY ? 1.0f : fexp(m[q] - mx[q]);
        sum[q] = 0;
    }
    for (size_t j = 0; j < cols; j++) {
        float *r = s + j * NR;
        for (int q = 0; q < NR; q++) {
            float e = fexp_nonpos(r[q] - mx[q]);
            e = mx[q] == -INFINITY ? 0.0f : e;
            r[q] = e;
            sum[q] += e;
        }
    }
    for (int q = 0; q < NR; q++) {
        l[q] = l[q] * c[q] + sum[q];
        m[q] = mx[q];
    }
    for (size_t d = 0; d < arows; d++) {
        float *a = acc + d * NR;
        for (int q = 0; q < NR; q++)
            a[q] *= c[q];
    }
}

static void softmax_tile_f64(double *s, size_t rows, size_t cols, size_t lds, double *m, double *l, double *acc,
                             size_t acols, size_t ldacc)
{
    for (size_t i = 0; i < rows; i++) {
        double *row = s + i * lds;
        double mx = m[i];
        for (size_t j = 0; j < cols; j++)
            mx = row[j] > mx ? row[j] : mx;
        if (mx == -INFINITY) {
            memset(row, 0, cols * sizeof *row);
            continue;
        }
        double c = exp(m[i] - mx), sum = 0;
        for (size_t j = 0; j < cols; j++) {
            row[j] = exp(row[j] - mx);
            sum += row[j];
        }
        l[i] = l[i] * c + sum;
        m[i] = mx;
        if (c != 1.0) {
            double *a = acc + i * ldacc;
            for (size_t d = 0; d < acols; d++)
                a[d] *= c;
        }
    }
}

/* simd/attn_k.c's build for the same variant */
void FK_CAT(mc_attn_gemm, MC_FK_VARIANT)(size_t k, const float *a, ptrdiff_t ast, ptrdiff_t asi, const float *b,
                                        float *c, bool add);

extern const mc_fast_kernels FK_CAT(mc_fast_kernels, MC_FK_VARIANT);
const mc_fast_kernels FK_CAT(mc_fast_kernels, MC_FK_VARIANT) = {
    .rms_norm = rms_norm_rows,
    .layer_norm = layer_norm_rows,
    .rope = rope_rows,
    .softmax_tile_f32 = softmax_tile_f32,
    .softmax_tile_f64 = softmax_tile_f64,
    .attn_mr = MC_ATTN_MR,
    .attn_nr = MC_ATTN_NR,
    .attn_gemm = FK_CAT(mc_attn_gemm, MC_FK_VARIANT),
    .softmax_panel_f32 = softmax_panel_f32,
};
