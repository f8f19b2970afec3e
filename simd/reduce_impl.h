/* Shared by the reduction and scan kernel sources (compiled once per ISA
 * like the elementwise kernels): the fillers' names, vector types with the
 * lane count of a wider type, lane-wise min/max/select helpers, and the
 * accurate float sums that every floating reduction builds on. */
#ifndef MC_SIMD_REDUCE_IMPL_H
#define MC_SIMD_REDUCE_IMPL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd/kern.h"
#include "simd/reduce.h"

/* complex64 kernels (reduce_complex.c, generic flags) for every table. */
void mc_reduce_fill_complex(mc_reduce_table *t);

#ifdef MC_VBYTES
#include "simd/vec_math.h"

void MC_ISA_FN(mc_reduce_fill_basic)(mc_reduce_table *t);
void MC_ISA_FN(mc_reduce_fill_arg)(mc_reduce_table *t);
void MC_ISA_FN(mc_reduce_fill_fused)(mc_reduce_table *t);
void MC_ISA_FN(mc_scan_fill)(mc_reduce_table *t);
/* fill.c: both tables of this ISA, for dispatch.c */
void MC_ISA_FN(mc_simd_fill)(mc_kernel_table *k, mc_reduce_table *r);

/* Lanes of a vector of A; a vector of T with that many lanes. */
#define MC_LANES(A) (MC_VSIZE(A) / sizeof(A))
#define MC_VEC_LANES(T, A) __attribute__((vector_size(MC_LANES(A) * sizeof(T))))

/* Narrow integers with the lane count of a 32-bit vector (loaded, then
 * widened for sums, products and arg-reductions). */
typedef uint8_t mc_r_u8x32 MC_VEC_LANES(uint8_t, uint32_t);
typedef int8_t mc_r_i8x32 MC_VEC_LANES(int8_t, uint32_t);
typedef uint16_t mc_r_u16x32 MC_VEC_LANES(uint16_t, uint32_t);
typedef int16_t mc_r_i16x32 MC_VEC_LANES(int16_t, uint32_t);
/* float64 with the lane count of a float32 vector: the block sums of the
 * float32 reductions. */
typedef double mc_r_f64x32 MC_VEC_LANES(double, float);

/* Bit select m ? a : b of vectors V with comparison masks M. */
#define MC_VSEL(V, M, m, a, b) ((V)(((M)(m) & (M)(a)) | (~(M)(m) & (M)(b))))

/* Scalar max / min that propagate NaN from either side (MLX's maximum and
 * minimum); plain comparisons for integers (x != x is false). */
#define MC_SMAX(a, b) (((a) != (a) || (a) > (b)) ? (a) : (b))
#define MC_SMIN(a, b) (((a) != (a) || (a) < (b)) ? (a) : (b))

/* Lane-wise max / min of each element type (NaN-propagating for floats). */
#define MC_DEF_MINMAX(sfx, V, M)                                                       \
    static inline V mc_vmax_##sfx(V a, V b) { return MC_VSEL(V, M, a > b, a, b); }     \
    static inline V mc_vmin_##sfx(V a, V b) { return MC_VSEL(V, M, a < b, a, b); }
MC_DEF_MINMAX(u8, mc_vu8, mc_vi8)
MC_DEF_MINMAX(u16, mc_vu16, mc_vi16)
MC_DEF_MINMAX(u32, mc_vu32, mc_vi32)
MC_DEF_MINMAX(u64, mc_vu64, mc_vi64)
MC_DEF_MINMAX(i8, mc_vi8, mc_vi8)
MC_DEF_MINMAX(i16, mc_vi16, mc_vi16)
MC_DEF_MINMAX(i32, mc_vi32, mc_vi32)
MC_DEF_MINMAX(i64, mc_vi64, mc_vi64)
static inline mc_vf32 mc_vmax_f32(mc_vf32 a, mc_vf32 b) { return mc_max_f32(a, b); }
static inline mc_vf32 mc_vmin_f32(mc_vf32 a, mc_vf32 b) { return mc_min_f32(a, b); }
static inline mc_vf64 mc_vmax_f64(mc_vf64 a, mc_vf64 b) { return mc_max_f64(a, b); }
static inline mc_vf64 mc_vmin_f64(mc_vf64 a, mc_vf64 b) { return mc_min_f64(a, b); }


/* Elements per float32 block: every lane of four accumulators adds four
 * elements, then the block's sum moves to float64 lanes. The error of a
 * float32 sum is thus bounded by about 6 float32 roundings of the partial
 * magnitudes whatever n is (numpy's pairwise sum grows with log2(n)). */
#define MC_SUM_BLOCK_F32 (16 * MC_LANES(float))
#define MC_SUM_BLOCK_F64 (16 * MC_LANES(double))

/* The lane-wise sum of p[0..m), m at most one block, in four independent
 * accumulators (a tail of fewer than a vector's lanes is zero-padded). */
#define MC_DEF_BLOCK_SUM(sfx, T, V)                                           \
    static inline V mc_block_sum_##sfx(const T *p, size_t m)                  \
    {                                                                         \
        const size_t w = MC_LANES(T);                                         \
        V a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                             \
        size_t j = 0;                                                         \
        for (; j + 4 * w <= m; j += 4 * w) {                                  \
            V v0, v1, v2, v3;                                                 \
            memcpy(&v0, p + j, sizeof v0);                                    \
            memcpy(&v1, p + j + w, sizeof v1);                                \
            memcpy(&v2, p + j + 2 * w, sizeof v2);                            \
            memcpy(&v3, p + j + 3 * w, sizeof v3);                            \
            a0 += v0;                                                         \
            a1 += v1;                                                         \
            a2 += v2;                                                         \
            a3 += v3;                                                         \
        }                                                                     \
        for (; j + w <= m; j += w) {                                          \
            V v;                                                              \
            memcpy(&v, p + j, sizeof v);                                      \
            a0 += v;                                                          \
        }                                                                     \
        if (j < m) {                                                          \
            V v = {0};                                                        \
            memcpy(&v, p + j, (m - j) * sizeof(T));                           \
            a1 += v;                                                          \
        }                                                                     \
        return (a0 + a1) + (a2 + a3);                                         \
    }
MC_DEF_BLOCK_SUM(f32, float, mc_vf32)
MC_DEF_BLOCK_SUM(f64, double, mc_vf64)
#undef MC_DEF_BLOCK_SUM

/* *acc += the sum of x[0..n), lane-wise in float64. */
static inline void mc_sum_f32_into(const float *x, size_t n, mc_r_f64x32 *acc)
{
    for (size_t i = 0; i < n; i += MC_SUM_BLOCK_F32) {
        size_t m = n - i < MC_SUM_BLOCK_F32 ? n - i : MC_SUM_BLOCK_F32;
        *acc += __builtin_convertvector(mc_block_sum_f32(x + i, m), mc_r_f64x32);
    }
}

static inline double mc_hsum_f64x32(const mc_r_f64x32 *v)
{
    double s = 0;
    for (size_t k = 0; k < MC_LANES(float); k++)
        s += (*v)[k];
    return s;
}

/* Neumaier's compensated step, lane-wise: (s, c) += b. */
static inline void mc_neumaier_v(mc_vf64 *s, mc_vf64 *c, mc_vf64 b)
{
    mc_vf64 t = *s + b;
    mc_vi64 big = mc_fabs_f64(*s) >= mc_fabs_f64(b);
    *c += mc_sel_f64(big, (*s - t) + b, (b - t) + *s);
    *s = t;
}

static inline void mc_neumaier(double *s, double *c, double b)
{
    double t = *s + b;
    *c += fabs(*s) >= fabs(b) ? (*s - t) + b : (b - t) + *s;
    *s = t;
}

/* (*s, *c) += the sum of x[0..n): float64 blocks, compensated across
 * blocks, so the result is within a few float64 roundings of exact. */
static inline void mc_sum_f64_into(const double *x, size_t n, mc_vf64 *s, mc_vf64 *c)
{
    for (size_t i = 0; i < n; i += MC_SUM_BLOCK_F64) {
        size_t m = n - i < MC_SUM_BLOCK_F64 ? n - i : MC_SUM_BLOCK_F64;
        mc_neumaier_v(s, c, mc_block_sum_f64(x + i, m));
    }
}

static inline double mc_hsum_neumaier(mc_vf64 s, mc_vf64 c)
{
    double ts = 0, tc = 0;
    for (size_t k = 0; k < MC_LANES(double); k++) {
        mc_neumaier(&ts, &tc, s[k]);
        tc += c[k];
    }
    return ts + tc;
}

/* The sum of a contiguous float32 / float64 run (short runs in scalars). */
static inline double mc_sum_f32(const float *x, size_t n)
{
    if (n < MC_LANES(float)) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += x[i];
        return s;
    }
    mc_r_f64x32 acc = {0};
    mc_sum_f32_into(x, n, &acc);
    return mc_hsum_f64x32(&acc);
}

static inline double mc_sum_f64(const double *x, size_t n)
{
    if (n < MC_LANES(double)) {
        double s = 0, c = 0;
        for (size_t i = 0; i < n; i++)
            mc_neumaier(&s, &c, x[i]);
        return s + c;
    }
    mc_vf64 s = {0}, c = {0};
    mc_sum_f64_into(x, n, &s, &c);
    return mc_hsum_neumaier(s, c);
}

/* Half-precision rows are staged through float32 blocks of this size. */
enum { MC_RED_STAGE = 256 };

/* The sum of a float16 (bf = 0) or bfloat16 (bf = 1) run, in float64. */
static inline double mc_sum_half(int bf, const uint16_t *x, size_t n)
{
    float buf[MC_RED_STAGE];
    mc_r_f64x32 acc = {0};
    for (size_t i = 0; i < n; i += MC_RED_STAGE) {
        size_t m = n - i < MC_RED_STAGE ? n - i : MC_RED_STAGE;
        mc_half_in(bf, x + i, buf, m);
        mc_sum_f32_into(buf, m, &acc);
    }
    return mc_hsum_f64x32(&acc);
}

/* Columns handled per pass by the column kernels: their accumulators
 * (at most 2 KiB) stay in L1 while whole rows stream past. A multiple of
 * every lane count. */
enum { MC_COL_CHUNK = 256 };

#endif /* MC_VBYTES */

#endif
