/* The kinds of simd/random_dist.h. Built twice: once generic, once with
 * AVX2 and FMA (MC_RD_VARIANT=avx2, MC_RD_FAST_LOG) where the hash, MLX's
 * fma-based polynomials and logf run as vector code instead of calls to
 * fmaf and logf. Both give the same bits: fmaf is exact either way, nothing
 * is contracted (-ffp-contract=off / the pragma below), and the vector logf
 * is glibc's algorithm (the table and polynomial of Arm's
 * optimized-routines logf, MIT licensed, which glibc 2.27+ and musl ship),
 * checked at first use against the C library's logf before it is trusted
 * (random_dist_pick.c), so the choice is speed only. */
#include <math.h>
#include <string.h>

#include "simd/half_convert.h"
#include "simd/random.h"
#include "simd/random_dist.h"
#include "simd/threefry_block.h"

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
enum { RD_BLOCK = MC_THREEFRY_BLOCK };

/* logf as the C library computes it (glibc 2.27+, musl: Arm's
 * optimized-routines algorithm): x = 2^k * z with z near a table point
 * c = 1 / invc, log x = k ln2 + log c + log1p(r), r = z * invc - 1, by a
 * degree-3 polynomial, all in double, then one rounding to float. Only for
 * positive normal finite x; the rest (0, subnormals, negatives, inf, NaN)
 * go to logf itself. With or without fused multiply-adds it rounds to the
 * same floats (checked over every positive normal float against glibc
 * 2.36's FMA and plain builds). */
#ifdef MC_RD_FAST_LOG
static const double logf_invc[16] = {
    0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0, 0x1.49539f0f010bp+0,  0x1.3c995b0b80385p+0, 0x1.30d190c8864a5p+0,
    0x1.25e227b0b8eap+0,  0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0, 0x1.0953f419900a7p+0, 0x1p+0,
    0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1,  0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1, 0x1.886e6037841edp-1,
    0x1.767dcf5534862p-1,
};
static const double logf_logc[16] = {
    -0x1.57bf7808caadep-2, -0x1.2bef0a7c06ddbp-2,
    -0x1.01eae7f513a67p-2, -0x1.b31d8a68224e9p-3,
    -0x1.6574f0ac07758p-3, -0x1.1aa2bc79c81p-3,
    -0x1.a4e76ce8c0e5ep-4, -0x1.1973c5a611cccp-4,
    -0x1.252f438e10c1ep-5, 0x0p+0,
    0x1.aa5aa5df25984p-5,  0x1.c5e53aa362eb4p-4,
    0x1.526e57720db08p-3,  0x1.bc2860d22477p-3,
    0x1.1058bc8a07ee1p-2,  0x1.4043057b6ee09p-2,
};

static inline float logf_table(float x)
{
    const double ln2 = 0x1.62e42fefa39efp-1;
    const double a0 = -0x1.00ea348b88334p-2, a1 = 0x1.5575b0be00b6ap-2, a2 = -0x1.ffffef20a4123p-2;
    uint32_t ix = mc_f32_bits(x);
    uint32_t tmp = ix - 0x3f330000u;
    uint64_t i = (tmp >> 19) & 15; /* 64-bit: the table loads vectorise as gathers */
    int32_t k = (int32_t)tmp >> 23;
    double z = (double)mc_bits_f32(ix - (tmp & 0xff800000u));
    double r = fma(z, logf_invc[i], -1.0);
    double y0 = fma((double)k, ln2, logf_logc[i]);
    double r2 = r * r;
    double y = fma(a1, r, a2);
    y = fma(a0, r2, y);
    y = fma(y, r2, y0 + r);
    return (float)y; /* x = 1 gives +0 exactly: r = 0, k = 0, log c = 0 */
}

/* True where logf_table applies: x positive, normal and finite. */
static inline int logf_table_ok(float x) { return mc_f32_bits(x) - 0x00800000u < 0x7f800000u - 0x00800000u; }

#endif

/* t[i] = logf(x[i]) for a block. */
static void log_block(const float *restrict x, float *restrict t)
{
#ifdef MC_RD_FAST_LOG
    int special = 0;
    for (int i = 0; i < RD_BLOCK; i++) {
        t[i] = logf_table(x[i]);
        special |= !logf_table_ok(x[i]);
    }
    if (special) /* rare: a zero, or x outside the normal positives */
        for (int i = 0; i < RD_BLOCK; i++)
            if (!logf_table_ok(x[i]))
                t[i] = logf(x[i]);
#else
    for (int i = 0; i < RD_BLOCK; i++)
        t[i] = logf(x[i]);
#endif
}

/* The C library's logf of one value (through the table where it applies). */
static inline float log1_f32(float x)
{
#ifdef MC_RD_FAST_LOG
    if (logf_table_ok(x))
        return logf_table(x);
#endif
    return logf(x);
}

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

/* MLX's erfinv for float32 (Giles' polynomials in log(1 - a^2), fma):
 * the polynomial part, given t = log(1 - a^2), both branches evaluated and
 * one selected so that a block of them vectorises; the same values as
 * evaluating only the chosen one. */
static inline float erfinv_poly(float a, float t)
{
    float p = 3.03697567e-10f;
    p = fmaf(p, t, 2.93243101e-8f);
    p = fmaf(p, t, 1.22150334e-6f);
    p = fmaf(p, t, 2.84108955e-5f);
    p = fmaf(p, t, 3.93552968e-4f);
    p = fmaf(p, t, 3.02698812e-3f);
    p = fmaf(p, t, 4.83185798e-3f);
    p = fmaf(p, t, -2.64646143e-1f);
    p = fmaf(p, t, 8.40016484e-1f);
    float q = 5.43877832e-9f;
    q = fmaf(q, t, 1.43285448e-7f);
    q = fmaf(q, t, 1.22774793e-6f);
    q = fmaf(q, t, 1.12963626e-7f);
    q = fmaf(q, t, -5.61530760e-5f);
    q = fmaf(q, t, -1.47697632e-4f);
    q = fmaf(q, t, 2.31468678e-3f);
    q = fmaf(q, t, 1.15392581e-2f);
    q = fmaf(q, t, -2.32015476e-1f);
    q = fmaf(q, t, 8.86226892e-1f);
    return a * (fabsf(t) > 6.125f ? p : q);
}

/* erfinv_poly for a t known to be in the central branch (|t| <= 6.125). */
static inline float erfinv_poly_central(float a, float t)
{
    float q = 5.43877832e-9f;
    q = fmaf(q, t, 1.43285448e-7f);
    q = fmaf(q, t, 1.22774793e-6f);
    q = fmaf(q, t, 1.12963626e-7f);
    q = fmaf(q, t, -5.61530760e-5f);
    q = fmaf(q, t, -1.47697632e-4f);
    q = fmaf(q, t, 2.31468678e-3f);
    q = fmaf(q, t, 1.15392581e-2f);
    q = fmaf(q, t, -2.32015476e-1f);
    q = fmaf(q, t, 8.86226892e-1f);
    return a * q;
}

static inline float erfinv_mlx(float a) { return erfinv_poly(a, log1_f32(fmaf(a, -a, 1.0f))); }

/* The reference form of the same (kept for the check in mc_rdist_selftest). */
static inline float erfinv_ref(float a)
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

/* unit(b, below_one(float32)) with the clamp done on the integer: the
 * words from 0xffffff80 up round to 2^32 (unit 1, clamped to 1 - 2^-24)
 * and 0xffffff7f rounds to 2^32 - 256 (1 - 2^-24 itself), so clamping b
 * first gives the same floats, in a form the vectoriser accepts. */
static inline float unit_f32(uint32_t b) { return (float)(b < 0xffffff7fu ? b : 0xffffff7fu) * 0x1p-32f; }

/* normal's and laplace's float32 draw: uniform(nextafter(-1, 0), 1). */
static inline float symmetric(uint32_t b)
{
    const float lo = -0x1.fffffep-1f, range = 1.0f - lo;
    return range * unit_f32(b) + lo;
}

/* A whole block (RD_BLOCK words) is computed in fixed-length loops the
 * compiler vectorises, then m elements are stored. */
static void uniform_f32(const mc_rdist *d, const uint32_t *w, size_t e0, size_t m, float *restrict out)
{
    const float *lo = d->p0, *range = d->p1;
    float u[RD_BLOCK];
    if (d->s0 == 0 && d->s1 == 0) {
        const float l = lo[0], r = range[0];
        if (m == RD_BLOCK) { /* every block but the last: straight to out */
            float *restrict o = out + e0;
            for (int i = 0; i < RD_BLOCK; i++)
                o[i] = r * unit_f32(w[i]) + l;
            return;
        }
        for (int i = 0; i < RD_BLOCK; i++)
            u[i] = r * unit_f32(w[i]) + l;
        memcpy(out + e0, u, m * sizeof *u);
        return;
    }
    for (int i = 0; i < RD_BLOCK; i++)
        u[i] = unit_f32(w[i]);
    for (size_t i = 0; i < m; i++) {
        size_t e = e0 + i;
        out[e] = range[e * d->s1] * u[i] + lo[e * d->s0];
    }
}

/* A whole block (RD_BLOCK words) is computed, m elements stored. */
static void normal_f32(const mc_rdist *d, const uint32_t *w, size_t e0, size_t m, float *restrict out)
{
    const float *scale = d->p0, *loc = d->p1;
    float v[RD_BLOCK], a[RD_BLOCK], t[RD_BLOCK];
    for (int i = 0; i < RD_BLOCK; i++) {
        v[i] = symmetric(w[i]);
        a[i] = fmaf(v[i], -v[i], 1.0f);
    }
    log_block(a, t);
    /* the tail branch (|v| > 0.9989) is rare: most blocks skip it */
    int tail = 0;
    for (int i = 0; i < RD_BLOCK; i++)
        tail |= fabsf(t[i]) > 6.125f;
    if (tail)
        for (int i = 0; i < RD_BLOCK; i++)
            v[i] = erfinv_poly(v[i], t[i]);
    else
        for (int i = 0; i < RD_BLOCK; i++)
            v[i] = erfinv_poly_central(v[i], t[i]);
    if (d->s0 == 0 && !loc) {
        const float sc = scale[0];
        if (m == RD_BLOCK) {
            float *restrict o = out + e0;
            for (int i = 0; i < RD_BLOCK; i++)
                o[i] = sc * v[i];
            return;
        }
        for (int i = 0; i < RD_BLOCK; i++)
            v[i] = sc * v[i];
        memcpy(out + e0, v, m * sizeof *v);
        return;
    }
    for (size_t i = 0; i < m; i++) {
        size_t e = e0 + i;
        float x = scale[e * d->s0] * v[i];
        out[e] = loc ? loc[e * d->s1] + x : x;
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
        float l = to_type(log1_f32(u), t);
        store(out, e, -to_type(log1_f32(-l), t), t);
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
        mc_threefry_block(key[0], key[1], (uint32_t)j, (uint32_t)(half + odd + j), x, y);
        transform(d, x, j, m, out);
        transform(d, y, half + odd + j, m, out);
    }
    if (odd && j0 <= half && half < j1) {
        mc_threefry_block(key[0], key[1], (uint32_t)half, 0, x, y);
        transform(d, x, half, 1, out);
    }
}

void RD_NAME(mc_rdist_bits_range)(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out);

/* mc_random_bits_range (simd/random.h) with this build's hash; the same
 * layout: counter j < half owns words j and half + odd + j, counter half
 * (odd word count) the middle word, and the last word is cut to nbytes. */
void RD_NAME(mc_rdist_bits_range)(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out)
{
    size_t words = nbytes / 4 + (nbytes % 4 != 0);
    size_t half = words / 2, odd = words % 2, jobs = half + odd;
    unsigned char *o = out;
    uint32_t x[RD_BLOCK], y[RD_BLOCK];
    if (j1 > jobs)
        j1 = jobs;
    size_t pair_end = j1 < half ? j1 : half;
    for (size_t j = j0; j < pair_end; j += RD_BLOCK) {
        size_t m = pair_end - j < RD_BLOCK ? pair_end - j : RD_BLOCK;
        mc_threefry_block(key[0], key[1], (uint32_t)j, (uint32_t)(half + odd + j), x, y);
        /* only the output's last word (in the second run) can be partial */
        size_t off = 4 * (half + odd + j), len = 4 * m;
        if (m == RD_BLOCK && off + len <= nbytes) { /* fixed size: vector moves, not rep movs */
            memcpy(o + 4 * j, x, sizeof x);
            memcpy(o + off, y, sizeof y);
            continue;
        }
        memcpy(o + 4 * j, x, 4 * m);
        memcpy(o + off, y, len < nbytes - off ? len : nbytes - off);
    }
    if (odd && j0 <= half && half < j1) {
        mc_threefry_block(key[0], key[1], (uint32_t)half, 0, x, y);
        size_t off = 4 * half;
        memcpy(o + off, x, 4 < nbytes - off ? 4 : nbytes - off);
    }
}

int RD_NAME(mc_rdist_selftest)(void);

/* 1 if this build's logf and erfinv give the C library's floats on a
 * sweep of 2^16 inputs over every table interval and binade in (0, 2], and
 * on the ends (0, subnormals, 1, inf, NaN). */
int RD_NAME(mc_rdist_selftest)(void)
{
    float x[RD_BLOCK], t[RD_BLOCK];
    for (uint32_t base = 0; base < 65536; base += RD_BLOCK) {
        for (int i = 0; i < RD_BLOCK; i++) {
            uint32_t u = (base + (uint32_t)i) * 16411u;          /* spread over the mantissas */
            x[i] = mc_bits_f32(0x00000001u + (u % 0x40000000u)); /* (0, 2] and the subnormals */
        }
        if (base == 0)
            x[0] = 0.0f, x[1] = 1.0f, x[2] = INFINITY, x[3] = NAN, x[4] = -1.0f;
        log_block(x, t);
        for (int i = 0; i < RD_BLOCK; i++) {
            float r = logf(x[i]);
            if (mc_f32_bits(t[i]) != mc_f32_bits(r) && !(isnan(t[i]) && isnan(r)))
                return 0;
            float a = x[i] < 1.0f ? x[i] : 0.5f;
            float e = erfinv_mlx(a), f = erfinv_ref(a);
            if (mc_f32_bits(e) != mc_f32_bits(f))
                return 0;
        }
    }
    return 1;
}
