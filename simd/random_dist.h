/* MLX's random distributions evaluated straight from threefry bits, one
 * chunk of counters at a time (simd/random.h states the bits layout and the
 * chunks). Each kind follows the composition of ops in MLX 0.31.1's
 * mlx/random.cpp step by step, rounding to the output type after every op
 * as MLX does, with the math of MLX's x86_64 CPU build (libm's logf and
 * log1p, MLX's own erf and erfinv polynomials): docs/random.md has the
 * formulas. Pointers and lengths only. */
#ifndef MC_SIMD_RANDOM_DIST_H
#define MC_SIMD_RANDOM_DIST_H

#include <stddef.h>
#include <stdint.h>

/* The sample's formula; b is the uint32 bits word of the element. */
typedef enum mc_rdist_kind {
    /* u = min(f32(b) / 2^32, below_one(T)) as T; out = (p1 * u) + p0,
     * p0 = low and p1 = high - low in T (uniform). */
    MC_RD_UNIFORM,
    /* e = erfinv(uniform(nextafter(-1, 0), 1) in float32) as T;
     * out = p0 * e, then p1 + that if p1 is given (normal: p0 is
     * sqrt(2) [* scale] in T, p1 the loc). */
    MC_RD_NORMAL,
    /* -log(-log(uniform(0, 1) in T)) (gumbel). */
    MC_RD_GUMBEL,
    /* s = sign(v) * log1p(-|v|) with v the float32 draw of MC_RD_NORMAL,
     * computed in float64 for T = float64 else float32, as T; then
     * scale * s if has_scale, loc + s if has_loc (laplace). */
    MC_RD_LAPLACE,
    /* s2 = sqrt(2) in T; a, b = erf(p0 / s2), erf(p1 / s2);
     * out = max(min(p1, s2 * erfinv(uniform(a, b))), p0) in T, p0 = lower
     * and p1 = upper (truncated_normal). */
    MC_RD_TRUNCATED,
} mc_rdist_kind;

/* Output types (the 16-bit ones compute each op in float32 and round). */
typedef enum mc_rdist_type { MC_RT_F32, MC_RT_F16, MC_RT_BF16, MC_RT_F64 } mc_rdist_type;

typedef struct mc_rdist {
    mc_rdist_kind kind;
    mc_rdist_type type;
    /* Per-element parameters in the output type: element i reads
     * p[i * s] (s = 0 for one value broadcast, 1 for one per element);
     * p1 may be NULL where the kind says "if given". */
    const void *p0, *p1;
    size_t s0, s1;
    /* MC_RD_LAPLACE's float parameters (already as MLX passes them). */
    float scale, loc;
    int has_scale, has_loc;
} mc_rdist;

/* Which output types a kind supports (MLX's uniform refuses float64, so
 * uniform, gumbel and truncated do; normal and laplace draw in float32 and
 * allow it). */
int mc_rdist_supports(mc_rdist_kind kind, mc_rdist_type type);

/* Writes the elements that counters [j0, j1) own of an n-element output of
 * key (one bits word per element: see simd/random.h), each from its word
 * by d's formula; j1 is clipped to mc_random_bits_jobs(4 * n). */
void mc_rdist_range(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out);

/* mc_random_bits_range (simd/random.h), the same bytes, with the hash of
 * the build mc_rdist_range uses. */
void mc_rdist_bits_range(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out);

#endif
