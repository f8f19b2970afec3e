/* The kinds of simd/random_dist.h. Built twice: once generic, once with
 * AVX2 and FMA (MC_RD_VARIANT=avx2) where MLX's fma-based polynomials and
 * the hash compile to vector and fused instructions instead of calls to
 * fmaf; both give the same bits (fmaf is exact either way, and nothing is
 * contracted: -ffp-contract=off / the pragma below), so the choice is
 * speed only. random_dist_pick.c picks one per call. */
#include <math.h>
#include <string.h>

#include "simd/half_convert.h"
#include "simd/random.h"
#include "simd/random_dist.h"

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#ifndef MC_RD_VARIANT
#define MC_RD_VARIANT generic
#endif
#define RD_CAT2(a, b) a##_##b
#define RD_CAT(a, b) RD_CAT2(a, b)
#define RD_NAME(f) RD_CAT(f, MC_RD_VARIANT)

/* Counters per block: the hash of a block stays in registers and L1. */
enum { RD_BLOCK = 256 };

static inline float to_type(float v, mc_rdist_type t)
{
    if (t == MC_RT_F16)
        return mc_f16_to_f32(mc_f32_to_f16(v));
    if (t == MC_RT_BF16)
        return mc_bf16_to_f32(mc_f32_to_bf16(v));
    return v;
}

static inline float load(const void *p, size_t i, mc_rdist_type t)
{
    if (t == MC_RT_F16)
        return mc_f16_to_f32(((const uint16_t *)p)[i]);
    if (t == MC_RT_BF16)
        return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

static inline void store(void *out, size_t e, float v, mc_rdist_type t)
{
    if (t == MC_RT_F16)
        ((uint16_t *)out)[e] = mc_f32_to_f16(v);
    else if (t == MC_RT_BF16)
        ((uint16_t *)out)[e] = mc_f32_to_bf16(v);
    else
        ((float *)out)[e] = v;
}

/* MLX's minimum / maximum of floats: a NaN in either argument wins. */
static inline float min_mlx(float x, float y) { return isnan(x) ? x : x < y ? x : y; }
static inline float max_mlx(float x, float y) { return isnan(x) ? x : x > y ? x : y; }

/* The largest value below 1 of the type, as a float32 (MLX's clamp of the
 * unit draw, so that high is never reached). */
static inline float below_one(mc_rdist_type t)
{
    if (t == MC_RT_F16)
        return mc_f16_to_f32(0x3bffu);
    if (t == MC_RT_BF16)
        return mc_bf16_to_f32(0x3f7fu);
    return 0x1.fffffep-1f;
}

/* bits / f32(UINT32_MAX) in float32, clamped: f32(UINT32_MAX) is 2^32, so
 * the division is the exact scaling by 2^-32. */
static inline float unit(uint32_t b, float below)
{
    float u = (float)b * 0x1p-32f;
    return u < below ? u : below;
}

/* MLX's erfinv for float32 (Giles' polynomials in log(1 - a^2), fma). */
static inline float erfinv_mlx(float a)
{
    float t = logf(fmaf(a, -a, 1.0f)), p;
    if (fabsf(t) > 6.125f) {
        p = 3.03697567e-10f;
        p = fmaf(p, t, 2.93243101e-8f);
        p = fmaf(p, t, 1.22150334e-6f);
        p = fmaf(p, t, 2.84108955e-5f);
        p = fmaf(p, t, 3.93552968e-4f);
        p = fmaf(p, t, 3.02698812e-3f);
        p = fmaf(p, t, 4.83185798e-3f);
        p = fmaf(p, t, -2.64646143e-1f);
        p = fmaf(p, t, 8.40016484e-1f);
    } else {
        p = 5.43877832e-9f;
        p = fmaf(p, t, 1.43285448e-7f);
        p = fmaf(p, t, 1.22774793e-6f);
        p = fmaf(p, t, 1.12963626e-7f);
        p = fmaf(p, t, -5.61530760e-5f);
        p = fmaf(p, t, -1.47697632e-4f);
        p = fmaf(p, t, 2.31468678e-3f);
        p = fmaf(p, t, 1.15392581e-2f);
        p = fmaf(p, t, -2.32015476e-1f);
        p = fmaf(p, t, 8.86226892e-1f);
    }
    return a * p;
}

/* MLX's exp for float32: 2^round(x / ln 2) times a degree-6 polynomial. */
static inline float exp_mlx(float x0)
{
    float x = x0 * 1.442695f;
    float ip = floorf(x + 0.5f), fp = x - ip;
    float p = 1.535336188319500e-4f;
    p = fmaf(p, fp, 1.339887440266574e-3f);
    p = fmaf(p, fp, 9.618437357674640e-3f);
    p = fmaf(p, fp, 5.550332471162809e-2f);
    p = fmaf(p, fp, 2.402264791363012e-1f);
    p = fmaf(p, fp, 6.931472028550421e-1f);
    p = fmaf(p, fp, 1.0f);
    if (isnan(x0))
        return x0;
    if (x0 > 88.0f)
        return INFINITY;
    if (x0 < -88.0f)
        return 0.0f;
    return mc_bits_f32((uint32_t)((int32_t)ip + 127) << 23) * p;
}

/* MLX's erf for float32: Abramowitz-Stegun 7.1.26 with exp_mlx. */
static inline float erf_mlx(float v)
{
    float t = 1.0f / fmaf(0.3275911f, fabsf(v), 1.0f);
    float r = fmaf(1.061405429f, t, -1.453152027f);
    r = fmaf(r, t, 1.421413741f);
    r = fmaf(r, t, -0.284496736f);
    r = fmaf(r, t, 0.254829592f);
    float e = -exp_mlx(-v * v);
    float res = fmaf(e * t, r, 1.0f);
    return v > 0 ? res : -res;
}

/* normal's and laplace's float32 draw: uniform(nextafter(-1, 0), 1). */
static inline float symmetric(uint32_t b)
{
    const float lo = -0x1.fffffep-1f, range = 1.0f - lo;
    return range * unit(b, 0x1.fffffep-1f) + lo;
}

static void uniform_f32(const mc_rdist *d, const uint32_t *w, size_t e0, size_t m, float *restrict out)
{
    const float *lo = d->p0, *range = d->p1;
    const float below = below_one(MC_RT_F32);
    if (d->s0 == 0 && d->s1 == 0) {
        const float l = lo[0], r = range[0];
        for (size_t i = 0; i < m; i++)
            out[e0 + i] = r * unit(w[i], below) + l;
        return;
    }
    for (size_t i = 0; i < m; i++) {
        size_t e = e0 + i;
        out[e] = range[e * d->s1] * unit(w[i], below) + lo[e * d->s0];
    }
}

static void normal_f32(const mc_rdist *d, const uint32_t *w, size_t e0, size_t m, float *restrict out)
{
    const float *scale = d->p0, *loc = d->p1;
    for (size_t i = 0; i < m; i++) {
        size_t e = e0 + i;
        float v = scale[e * d->s0] * erfinv_mlx(symmetric(w[i]));
        out[e] = loc ? loc[e * d->s1] + v : v;
    }
}

static void laplace_one(const mc_rdist *d, uint32_t b, size_t e, void *out)
{
    float v = symmetric(b);
    float sg = v < 0 ? -1.0f : v > 0 ? 1.0f : 0.0f;
    if (d->type == MC_RT_F64) {
        double s = (double)sg * log1p(-1.0 * (double)fabsf(v));
        if (d->has_scale)
            s = (double)d->scale * s;
        if (d->has_loc)
            s = (double)d->loc + s;
        ((double *)out)[e] = s;
        return;
    }
    float s = to_type(sg * log1pf(-1.0f * fabsf(v)), d->type);
    if (d->has_scale)
        s = to_type(to_type(d->scale, d->type) * s, d->type);
    if (d->has_loc)
        s = to_type(to_type(d->loc, d->type) + s, d->type);
    store(out, e, s, d->type);
}

/* Every kind and type on one element: the reference path, used for all but
 * the float32 uniform and normal loops above. */
static void one(const mc_rdist *d, uint32_t b, size_t e, void *out)
{
    mc_rdist_type t = d->type;
    switch (d->kind) {
    case MC_RD_UNIFORM: {
        float u = to_type(unit(b, below_one(t)), t);
        float v = to_type(load(d->p1, e * d->s1, t) * u, t);
        store(out, e, to_type(v + load(d->p0, e * d->s0, t), t), t);
        return;
    }
    case MC_RD_NORMAL: {
        float x = erfinv_mlx(symmetric(b));
        if (t == MC_RT_F64) {
            const double *scale = d->p0, *loc = d->p1;
            double v = scale[e * d->s0] * (double)x;
            ((double *)out)[e] = loc ? loc[e * d->s1] + v : v;
            return;
        }
        float v = to_type(load(d->p0, e * d->s0, t) * to_type(x, t), t);
        if (d->p1)
            v = to_type(load(d->p1, e * d->s1, t) + v, t);
        store(out, e, v, t);
        return;
    }
    case MC_RD_GUMBEL: {
        float u = to_type(unit(b, below_one(t)), t);
        float l = to_type(logf(u), t);
        store(out, e, -to_type(logf(-l), t), t);
        return;
    }
    case MC_RD_LAPLACE: laplace_one(d, b, e, out); return;
    case MC_RD_TRUNCATED: {
        float lower = load(d->p0, e * d->s0, t), upper = load(d->p1, e * d->s1, t);
        float s2 = to_type((float)sqrt(2.0), t);
        float a = to_type(erf_mlx(to_type(lower / s2, t)), t);
        float hi = to_type(erf_mlx(to_type(upper / s2, t)), t);
        float range = to_type(hi - a, t);
        float u = to_type(unit(b, below_one(t)), t);
        float p = to_type(to_type(range * u, t) + a, t);
        float v = to_type(s2 * to_type(erfinv_mlx(p), t), t);
        store(out, e, max_mlx(min_mlx(upper, v), lower), t);
        return;
    }
    }
}

static void transform(const mc_rdist *d, const uint32_t *w, size_t e0, size_t m, void *out)
{
    if (d->type == MC_RT_F32 && d->kind == MC_RD_UNIFORM)
        uniform_f32(d, w, e0, m, out);
    else if (d->type == MC_RT_F32 && d->kind == MC_RD_NORMAL)
        normal_f32(d, w, e0, m, out);
    else
        for (size_t i = 0; i < m; i++)
            one(d, w[i], e0 + i, out);
}

void RD_NAME(mc_rdist_range)(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out);

void RD_NAME(mc_rdist_range)(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out)
{
    /* element e is bits word e: counter j < half owns elements j and
     * half + odd + j, and counter half (n odd) element half */
    size_t half = n / 2, odd = n % 2, jobs = half + odd;
    uint32_t x[RD_BLOCK], y[RD_BLOCK];
    if (j1 > jobs)
        j1 = jobs;
    size_t pair_end = j1 < half ? j1 : half;
    for (size_t j = j0; j < pair_end; j += RD_BLOCK) {
        size_t m = pair_end - j < RD_BLOCK ? pair_end - j : RD_BLOCK;
        mc_threefry2x32(key, (uint32_t)j, (uint32_t)(half + odd + j), m, x, y);
        transform(d, x, j, m, out);
        transform(d, y, half + odd + j, m, out);
    }
    if (odd && j0 <= half && half < j1) {
        mc_threefry2x32(key, (uint32_t)half, 0, 1, x, y);
        transform(d, x, half, 1, out);
    }
}
