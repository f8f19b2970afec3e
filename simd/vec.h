/* The portable vector layer: vector types of every element type, with
 * loads, stores, broadcasts, selects and bool masks, written once with
 * GCC/Clang vector extensions. Each ISA build compiles the kernels against
 * it with its own MC_VBYTES (bytes per vector): 64 for AVX-512, 32 for
 * AVX2, 16 for NEON, and 0 for the scalar reference, where every "vector"
 * has exactly one lane so the same kernel source becomes a plain loop. */
#ifndef MC_SIMD_VEC_H
#define MC_SIMD_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd/half_convert.h"

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#ifndef MC_VBYTES
#error "simd/vec.h is compiled per ISA: the build defines MC_VBYTES"
#endif

#if MC_VBYTES == 0
#define MC_VSIZE(T) sizeof(T)
#else
#define MC_VSIZE(T) MC_VBYTES
#endif
#define MC_VEC_OF(T) __attribute__((vector_size(MC_VSIZE(T))))

typedef uint8_t mc_vu8 MC_VEC_OF(uint8_t);
typedef uint16_t mc_vu16 MC_VEC_OF(uint16_t);
typedef uint32_t mc_vu32 MC_VEC_OF(uint32_t);
typedef uint64_t mc_vu64 MC_VEC_OF(uint64_t);
typedef int8_t mc_vi8 MC_VEC_OF(int8_t);
typedef int16_t mc_vi16 MC_VEC_OF(int16_t);
typedef int32_t mc_vi32 MC_VEC_OF(int32_t);
typedef int64_t mc_vi64 MC_VEC_OF(int64_t);
typedef float mc_vf32 MC_VEC_OF(float);
typedef double mc_vf64 MC_VEC_OF(double);

/* Bool results (one byte per lane) of a vector whose lanes are 2, 4 or 8
 * bytes wide: as many lanes as that vector, so a comparison of float32
 * vectors stores straight into a bool array. */
typedef uint8_t mc_vb16 __attribute__((vector_size(MC_VSIZE(uint16_t) / 2)));
typedef uint8_t mc_vb32 __attribute__((vector_size(MC_VSIZE(uint32_t) / 4)));
typedef uint8_t mc_vb64 __attribute__((vector_size(MC_VSIZE(uint64_t) / 8)));

/* Comparison masks (all ones or all zeros per lane) to bool lanes (0 or 1). */
static inline mc_vu8 mc_bool8(mc_vi8 m) { return (mc_vu8)m & 1; }
static inline mc_vb16 mc_bool16(mc_vi16 m) { return __builtin_convertvector(m, mc_vb16) & 1; }
static inline mc_vb32 mc_bool32(mc_vi32 m) { return __builtin_convertvector(m, mc_vb32) & 1; }
static inline mc_vb64 mc_bool64(mc_vi64 m) { return __builtin_convertvector(m, mc_vb64) & 1; }

/* Bool lanes (any non-zero byte is true) to comparison masks. */
static inline mc_vi8 mc_mask8(mc_vu8 b) { return (mc_vi8)(b != 0); }

/* Lane-wise select: m ? a : b, with m a comparison mask of the same width.
 * (The ?: operator on vectors is C++ only, so it is spelled with bits.) */
static inline mc_vf32 mc_sel_f32(mc_vi32 m, mc_vf32 a, mc_vf32 b)
{
    return (mc_vf32)((m & (mc_vi32)a) | (~m & (mc_vi32)b));
}
static inline mc_vf64 mc_sel_f64(mc_vi64 m, mc_vf64 a, mc_vf64 b)
{
    return (mc_vf64)((m & (mc_vi64)a) | (~m & (mc_vi64)b));
}
#define MC_DEF_SEL_INT(sfx, V, M)                                  \
    static inline V mc_sel_##sfx(M m, V a, V b)                    \
    {                                                              \
        return (V)((m & (M)a) | (~m & (M)b));                      \
    }
MC_DEF_SEL_INT(u8, mc_vu8, mc_vi8)
MC_DEF_SEL_INT(u16, mc_vu16, mc_vi16)
MC_DEF_SEL_INT(u32, mc_vu32, mc_vi32)
MC_DEF_SEL_INT(u64, mc_vu64, mc_vi64)
MC_DEF_SEL_INT(i8, mc_vi8, mc_vi8)
MC_DEF_SEL_INT(i16, mc_vi16, mc_vi16)
MC_DEF_SEL_INT(i32, mc_vi32, mc_vi32)
MC_DEF_SEL_INT(i64, mc_vi64, mc_vi64)
#undef MC_DEF_SEL_INT

/* Every lane set to s. Written as s - 0 so that -0.0 stays -0.0. */
#define MC_SPLAT(V, s) ((s) - (V){0})

/* float32 bit patterns */
static inline mc_vu32 mc_bits_f32v(mc_vf32 x) { return (mc_vu32)x; }
static inline mc_vf32 mc_f32v_bits(mc_vu32 u) { return (mc_vf32)u; }
static inline mc_vu64 mc_bits_f64v(mc_vf64 x) { return (mc_vu64)x; }
static inline mc_vf64 mc_f64v_bits(mc_vu64 u) { return (mc_vf64)u; }

static inline mc_vi32 mc_isnan_f32(mc_vf32 x) { return x != x; }
static inline mc_vi64 mc_isnan_f64(mc_vf64 x) { return x != x; }
static inline mc_vf32 mc_fabs_f32(mc_vf32 x) { return (mc_vf32)((mc_vu32)x & 0x7fffffffu); }
static inline mc_vf64 mc_fabs_f64(mc_vf64 x)
{
    return (mc_vf64)((mc_vu64)x & 0x7fffffffffffffffull);
}
static inline mc_vf32 mc_copysign_f32(mc_vf32 mag, mc_vf32 sgn)
{
    return (mc_vf32)(((mc_vu32)mag & 0x7fffffffu) | ((mc_vu32)sgn & 0x80000000u));
}
static inline mc_vf64 mc_copysign_f64(mc_vf64 mag, mc_vf64 sgn)
{
    return (mc_vf64)(((mc_vu64)mag & 0x7fffffffffffffffull) |
                     ((mc_vu64)sgn & 0x8000000000000000ull));
}

/* Non-temporal stores for big outputs. A kernel call writing at least
 * MC_STREAM_BYTES streams its vector stores past the caches: the output
 * would evict everything anyway, and skipping the read-for-ownership of
 * each line cuts the memory traffic of y = a + b from 16 to 12 bytes per
 * float (measured: 14 -> 20 GB/s on one core). Smaller outputs, likely
 * read again soon, stay cached. x86 only; the stores need an aligned
 * address, so kernels first run a partial block up to one. */
#define MC_STREAM_BYTES ((size_t)8 << 20)

/* Whether a kernel writing `bytes` to y, in vectors of vsize bytes of
 * elements of esize bytes, should stream. */
static inline int mc_streamable(const void *y, size_t bytes, size_t vsize, size_t esize)
{
#if MC_VBYTES >= 32
    return vsize == MC_VBYTES && bytes >= MC_STREAM_BYTES && (uintptr_t)y % esize == 0;
#else
    (void)y, (void)bytes, (void)vsize, (void)esize;
    return 0;
#endif
}

/* Elements before y reaches a vector-aligned address. */
static inline size_t mc_stream_head(const void *y, size_t esize)
{
#if MC_VBYTES >= 32
    return ((MC_VBYTES - (uintptr_t)y % MC_VBYTES) % MC_VBYTES) / esize;
#else
    (void)y, (void)esize;
    return 0;
#endif
}

/* Stores the MC_VBYTES bytes at v to the aligned address p, bypassing
 * the caches; mc_stream_fence orders them before the kernel returns. */
static inline void mc_stream(void *p, const void *v)
{
#if MC_VBYTES == 64
    __m512i t;
    memcpy(&t, v, sizeof t);
    _mm512_stream_si512((__m512i *)p, t);
#elif MC_VBYTES == 32
    __m256i t;
    memcpy(&t, v, sizeof t);
    _mm256_stream_si256((__m256i *)p, t);
#else
    (void)p, (void)v;
#endif
}

static inline void mc_stream_fence(void)
{
#if MC_VBYTES >= 32
    _mm_sfence();
#endif
}

/* uint16 lanes, as many as a float32 vector has: half-precision data. */
typedef uint16_t mc_vh32 __attribute__((vector_size(MC_VSIZE(float) / 2)));

/* Half-precision blocks <-> float32, rounding to nearest even. The f16 and
 * bf16 kernels stage blocks through a float32 buffer with these. F16C
 * converts float16 in hardware; bfloat16 is the top half of a float32. */
static inline void mc_blk_f16_to_f32(const uint16_t *x, float *y, size_t n)
{
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
#endif
    for (; i < n; i++)
        y[i] = mc_f16_to_f32(x[i]);
}

static inline void mc_blk_f32_to_f16(const float *x, uint16_t *y, size_t n)
{
    size_t i = 0;
#if defined(__AVX512F__)
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(y + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__)
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
#endif
    for (; i < n; i++)
        y[i] = mc_f32_to_f16(x[i]);
}

static inline void mc_blk_bf16_to_f32(const uint16_t *x, float *y, size_t n)
{
    const size_t w = sizeof(mc_vf32) / sizeof(float);
    size_t i = 0;
    for (; i + w <= n; i += w) {
        mc_vh32 h;
        memcpy(&h, x + i, sizeof h);
        mc_vu32 u = __builtin_convertvector(h, mc_vu32) << 16;
        memcpy(y + i, &u, sizeof u);
    }
    for (; i < n; i++)
        y[i] = mc_bf16_to_f32(x[i]);
}

static inline void mc_blk_f32_to_bf16(const float *x, uint16_t *y, size_t n)
{
    const size_t w = sizeof(mc_vf32) / sizeof(float);
    size_t i = 0;
    for (; i + w <= n; i += w) {
        mc_vu32 u;
        memcpy(&u, x + i, sizeof u);
        mc_vi32 nan = (u & 0x7fffffffu) > 0x7f800000u;
        mc_vu32 r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        r = mc_sel_u32(nan, (u >> 16) | 0x40u, r);
        mc_vh32 h = __builtin_convertvector(r, mc_vh32);
        memcpy(y + i, &h, sizeof h);
    }
    for (; i < n; i++)
        y[i] = mc_f32_to_bf16(x[i]);
}

#endif
