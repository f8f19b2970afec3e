/* The row kernels of simd/fast.h (norms, rope, the online-softmax step),
 * compiled generically and, on x86_64, again with AVX2 and FMA
 * (MC_FK_VARIANT=avx2, -O3): each build defines mc_fast_kernels_<variant>.
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

/* Rows this long or shorter may be streamed (built in a stack buffer). */
enum { STREAM_MAX = 4096 };

/* Where a float32 row of n is computed: y itself, or (streaming, on a
 * build with AVX and an aligned y) a stack buffer that put_row then writes
 * past the cache. A large norm's output is not read again soon, and a
 * plain store first reads every line it writes. */
static inline bool can_stream(bool stream, const void *y, size_t n)
{
#if defined(__AVX__)
    return stream && n <= STREAM_MAX && n % 8 == 0 && ((uintptr_t)y & 31) == 0;
#else
    (void)stream, (void)y, (void)n;
    return false;
#endif
}

static inline void put_row(float *y, const float *tmp, size_t n)
{
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

static void rms_norm_rows(int dt, const void *x, const void *w, void *y, size_t rows, size_t n, float eps,
                          bool stream)
{
    float tmp[STREAM_MAX];
    bool streamed = false;
    size_t isz = dt == MC_SIMD_FLOAT64 ? 8 : dt == MC_SIMD_FLOAT32 ? 4 : 2;
    for (size_t r = 0; r < rows; r++) {
        const char *xr = (const char *)x + r * n * isz;
        char *yr = (char *)y + r * n * isz;
        if (dt == MC_SIMD_FLOAT32) {
            const float *xf = (const float *)xr;
            bool st = can_stream(stream, yr, n);
            float *yf = st ? tmp : (float *)yr;
            float inv = 1.0f / sqrtf(sum_sq_f32(xf, n) / (float)n + eps);
            if (w) {
                const float *wf = w;
                for (size_t j = 0; j < n; j++)
                    yf[j] = (xf[j] * inv) * wf[j];
            } else {
                for (size_t j = 0; j < n; j++)
                    yf[j] = xf[j] * inv;
            }
            if (st)
                put_row((float *)yr, tmp, n);
            streamed |= st;
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
    float tmp[STREAM_MAX];
    bool streamed = false;
    size_t isz = dt == MC_SIMD_FLOAT64 ? 8 : dt == MC_SIMD_FLOAT32 ? 4 : 2;
    for (size_t r = 0; r < rows; r++) {
        const char *xr = (const char *)x + r * n * isz;
        char *yr = (char *)y + r * n * isz;
        if (dt == MC_SIMD_FLOAT32) {
            const float *xf = (const float *)xr;
            bool st = can_stream(stream, yr, n);
            float *yf = st ? tmp : (float *)yr;
            float mu = sum_f32(xf, n) / (float)n;
            float inv = 1.0f / sqrtf(sum_sq_dev_f32(xf, n, mu) / (float)n + eps);
            const float *wf = w, *bf = b;
            if (wf && bf)
                for (size_t j = 0; j < n; j++)
                    yf[j] = ((xf[j] - mu) * inv) * wf[j] + bf[j];
            else if (wf)
                for (size_t j = 0; j < n; j++)
                    yf[j] = ((xf[j] - mu) * inv) * wf[j];
            else if (bf)
                for (size_t j = 0; j < n; j++)
                    yf[j] = ((xf[j] - mu) * inv) + bf[j];
            else
                for (size_t j = 0; j < n; j++)
                    yf[j] = (xf[j] - mu) * inv;
            if (st)
                put_row((float *)yr, tmp, n);
            streamed |= st;
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

/* exp(x) for float32 without branches, so loops over it vectorise: 2^n
 * times a degree-7 polynomial on [-ln2/2, ln2/2] (within 2 ulp); 0 below
 * -87.3, infinity above 88.7, NaN kept. */
static inline float fexp(float x)
{
    float xc = x > 88.7f ? 88.7f : x;
    xc = xc < -87.3f ? -87.3f : xc;
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float k = xc * 1.44269504f + magic;
    uint32_t kb;
    memcpy(&kb, &k, sizeof kb);
    float n = k - magic;
    float r = xc - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    uint32_t sb = (kb - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    float e = p * scale;
    e = x < -87.3f ? 0.0f : e;
    return x > 88.7f ? INFINITY : e;
}

static void softmax_tile_f32(float *s, size_t rows, size_t cols, size_t lds, float *m, float *l, float *corr)
{
    for (size_t i = 0; i < rows; i++) {
        float *row = s + i * lds;
        /* partial maxima in lanes: a single running max does not vectorise */
        float lane[LANES];
        for (int k = 0; k < LANES; k++)
            lane[k] = m[i];
        size_t jm = 0;
        for (; jm + LANES <= cols; jm += LANES)
            for (int k = 0; k < LANES; k++)
                lane[k] = row[jm + k] > lane[k] ? row[jm + k] : lane[k];
        float mx = m[i];
        for (int k = 0; k < LANES; k++)
            mx = lane[k] > mx ? lane[k] : mx;
        for (; jm < cols; jm++)
            mx = row[jm] > mx ? row[jm] : mx;
        if (mx == -INFINITY) {
            /* nothing finite yet: keep the running state as it is */
            memset(row, 0, cols * sizeof *row);
            corr[i] = 1.0f;
            continue;
        }
        float c = fexp(m[i] - mx);
        float acc[LANES] = {0};
        size_t j = 0;
        for (; j + LANES <= cols; j += LANES)
            for (int k = 0; k < LANES; k++) {
                float e = fexp(row[j + k] - mx);
                row[j + k] = e;
                acc[k] += e;
            }
        float sum = 0;
        for (int k = 0; k < LANES; k++)
            sum += acc[k];
        for (; j < cols; j++) {
            float e = fexp(row[j] - mx);
            row[j] = e;
            sum += e;
        }
        l[i] = l[i] * c + sum;
        m[i] = mx;
        corr[i] = c;
    }
}

static void softmax_tile_f64(double *s, size_t rows, size_t cols, size_t lds, double *m, double *l, double *corr)
{
    for (size_t i = 0; i < rows; i++) {
        double *row = s + i * lds;
        double mx = m[i];
        for (size_t j = 0; j < cols; j++)
            mx = row[j] > mx ? row[j] : mx;
        if (mx == -INFINITY) {
            memset(row, 0, cols * sizeof *row);
            corr[i] = 1.0;
            continue;
        }
        double c = exp(m[i] - mx), sum = 0;
        for (size_t j = 0; j < cols; j++) {
            row[j] = exp(row[j] - mx);
            sum += row[j];
        }
        l[i] = l[i] * c + sum;
        m[i] = mx;
        corr[i] = c;
    }
}

extern const mc_fast_kernels FK_CAT(mc_fast_kernels, MC_FK_VARIANT);
const mc_fast_kernels FK_CAT(mc_fast_kernels, MC_FK_VARIANT) = {
    .rms_norm = rms_norm_rows,
    .layer_norm = layer_norm_rows,
    .rope = rope_rows,
    .softmax_tile_f32 = softmax_tile_f32,
    .softmax_tile_f64 = softmax_tile_f64,
};
