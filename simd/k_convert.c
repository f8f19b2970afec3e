/* astype kernels of one ISA (compiled once per ISA): convert[from][to] for
 * all 14 x 14 dtype pairs. Plain element loops, which the compiler
 * vectorizes where the ISA allows, except float32 <-> float16 / bfloat16,
 * which use vec.h's block conversions (F16C on x86_64), and the diagonal,
 * which is memmove (set in common.c).
 *
 * Rules (MLX's astype where it is defined; ours where C leaves it open):
 * - to bool: x != 0 (NaN is true); a complex64 source uses its real part.
 * - integer to integer: modular (the low bits), as C and MLX.
 * - float to integer: truncate toward zero, then as int64 -> target (so
 *   -1.0 -> uint8 is 255, as numpy and MLX give on x86_64); NaN gives 0;
 *   values beyond int64 saturate to INT64_MIN / INT64_MAX first (uint64
 *   targets keep [2^63, 2^64) exact and saturate above). C leaves all of
 *   these undefined; this choice is defined and UBSan-clean.
 * - to float16 / bfloat16: one rounding to nearest even from any float
 *   (float64 goes through float32 rounded to odd, which cannot double
 *   round); integers go through float32 as MLX does.
 * - complex64 to a real dtype: the real part; a real to complex64: (x, 0). */
#include <complex.h>
#include <math.h>

#include "simd/kern.h"

/* float -> integer, defined for every input (see the rules above) */
static inline int64_t fp_to_i64(double x)
{
    if (x != x)
        return 0;
    if (x >= 9223372036854775808.0)
        return INT64_MAX;
    if (x < -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)x;
}

static inline uint64_t fp_to_u64(double x)
{
    if (x >= 9223372036854775808.0)
        return x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
    return (uint64_t)fp_to_i64(x);
}

/* double -> float rounded to odd: exact results stay, inexact ones take
 * the neighbour toward zero with its last bit set. Rounding that once more
 * to a format of at most 11 significant bits is correctly rounded. */
static inline float f64_to_f32_odd(double d)
{
    float f = (float)d;
    if (f == f && (double)f != d) {
        uint32_t u = mc_f32_bits(f);
        if (fabs((double)f) > fabs(d))
            u -= 1;
        f = mc_bits_f32(u | 1u);
    }
    return f;
}

static inline uint16_t f64_to_f16(double d) { return mc_f32_to_f16(f64_to_f32_odd(d)); }
static inline uint16_t f64_to_bf16(double d) { return mc_f32_to_bf16(f64_to_f32_odd(d)); }

/* The 14 conversions out of one integer source type (bool included). */
#define MC_CONV_FROM_INT(sn, ST)                                               \
    static inline uint8_t cv_##sn##_b(ST x) { return x != 0; }                 \
    static inline uint8_t cv_##sn##_u8(ST x) { return (uint8_t)x; }            \
    static inline uint16_t cv_##sn##_u16(ST x) { return (uint16_t)x; }         \
    static inline uint32_t cv_##sn##_u32(ST x) { return (uint32_t)x; }         \
    static inline uint64_t cv_##sn##_u64(ST x) { return (uint64_t)x; }         \
    static inline int8_t cv_##sn##_i8(ST x) { return (int8_t)x; }              \
    static inline int16_t cv_##sn##_i16(ST x) { return (int16_t)x; }           \
    static inline int32_t cv_##sn##_i32(ST x) { return (int32_t)x; }           \
    static inline int64_t cv_##sn##_i64(ST x) { return (int64_t)x; }           \
    static inline uint16_t cv_##sn##_f16(ST x) { return mc_f32_to_f16((float)x); } \
    static inline float cv_##sn##_f32(ST x) { return (float)x; }               \
    static inline double cv_##sn##_f64(ST x) { return (double)x; }             \
    static inline uint16_t cv_##sn##_bf16(ST x) { return mc_f32_to_bf16((float)x); } \
    static inline float _Complex cv_##sn##_c64(ST x) { return (float)x; }      \
    MC_CONV_LOOPS(sn, ST)

/* The 14 conversions out of a floating source; RD reads one element as a
 * double (exactly). */
#define MC_CONV_FROM_FLOAT(sn, ST, RD)                                         \
    static inline uint8_t cv_##sn##_b(ST x) { return RD(x) != 0; }             \
    static inline uint8_t cv_##sn##_u8(ST x) { return (uint8_t)fp_to_i64(RD(x)); } \
    static inline uint16_t cv_##sn##_u16(ST x) { return (uint16_t)fp_to_i64(RD(x)); } \
    static inline uint32_t cv_##sn##_u32(ST x) { return (uint32_t)fp_to_i64(RD(x)); } \
    static inline uint64_t cv_##sn##_u64(ST x) { return fp_to_u64(RD(x)); }   \
    static inline int8_t cv_##sn##_i8(ST x) { return (int8_t)fp_to_i64(RD(x)); } \
    static inline int16_t cv_##sn##_i16(ST x) { return (int16_t)fp_to_i64(RD(x)); } \
    static inline int32_t cv_##sn##_i32(ST x) { return (int32_t)fp_to_i64(RD(x)); } \
    static inline int64_t cv_##sn##_i64(ST x) { return fp_to_i64(RD(x)); }     \
    static inline uint16_t cv_##sn##_f16(ST x) { return f64_to_f16(RD(x)); }   \
    static inline float cv_##sn##_f32(ST x) { return (float)RD(x); }           \
    static inline double cv_##sn##_f64(ST x) { return RD(x); }                 \
    static inline uint16_t cv_##sn##_bf16(ST x) { return f64_to_bf16(RD(x)); } \
    static inline float _Complex cv_##sn##_c64(ST x) { return (float)RD(x); }  \
    MC_CONV_LOOPS(sn, ST)

#define MC_CONV_LOOPS(sn, ST)                                                  \
    MC_UNARY_LOOP(conv_##sn##_b, ST, uint8_t, cv_##sn##_b)                     \
    MC_UNARY_LOOP(conv_##sn##_u8, ST, uint8_t, cv_##sn##_u8)                   \
    MC_UNARY_LOOP(conv_##sn##_u16, ST, uint16_t, cv_##sn##_u16)                \
    MC_UNARY_LOOP(conv_##sn##_u32, ST, uint32_t, cv_##sn##_u32)                \
    MC_UNARY_LOOP(conv_##sn##_u64, ST, uint64_t, cv_##sn##_u64)                \
    MC_UNARY_LOOP(conv_##sn##_i8, ST, int8_t, cv_##sn##_i8)                    \
    MC_UNARY_LOOP(conv_##sn##_i16, ST, int16_t, cv_##sn##_i16)                 \
    MC_UNARY_LOOP(conv_##sn##_i32, ST, int32_t, cv_##sn##_i32)                 \
    MC_UNARY_LOOP(conv_##sn##_i64, ST, int64_t, cv_##sn##_i64)                 \
    MC_UNARY_LOOP(conv_##sn##_f16, ST, uint16_t, cv_##sn##_f16)                \
    MC_UNARY_LOOP(conv_##sn##_f32, ST, float, cv_##sn##_f32)                   \
    MC_UNARY_LOOP(conv_##sn##_f64, ST, double, cv_##sn##_f64)                  \
    MC_UNARY_LOOP(conv_##sn##_bf16, ST, uint16_t, cv_##sn##_bf16)              \
    MC_UNARY_LOOP(conv_##sn##_c64, ST, float _Complex, cv_##sn##_c64)

#define RD_PLAIN(x) ((double)(x))
#define RD_F16(x) ((double)mc_f16_to_f32(x))
#define RD_BF16(x) ((double)mc_bf16_to_f32(x))
#define RD_C64(x) ((double)crealf(x))

MC_CONV_FROM_INT(b, uint8_t)
MC_CONV_FROM_INT(u8, uint8_t)
MC_CONV_FROM_INT(u16, uint16_t)
MC_CONV_FROM_INT(u32, uint32_t)
MC_CONV_FROM_INT(u64, uint64_t)
MC_CONV_FROM_INT(i8, int8_t)
MC_CONV_FROM_INT(i16, int16_t)
MC_CONV_FROM_INT(i32, int32_t)
MC_CONV_FROM_INT(i64, int64_t)
MC_CONV_FROM_FLOAT(f16, uint16_t, RD_F16)
MC_CONV_FROM_FLOAT(f32, float, RD_PLAIN)
MC_CONV_FROM_FLOAT(f64, double, RD_PLAIN)
MC_CONV_FROM_FLOAT(bf16, uint16_t, RD_BF16)
MC_CONV_FROM_FLOAT(c64, float _Complex, RD_C64)

/* The hot half conversions: whole blocks, vectorized by vec.h. */
static void blk_f16_f32(const void *x, void *y, size_t n) { mc_blk_f16_to_f32(x, y, n); }
static void blk_f32_f16(const void *x, void *y, size_t n) { mc_blk_f32_to_f16(x, y, n); }
static void blk_bf16_f32(const void *x, void *y, size_t n) { mc_blk_bf16_to_f32(x, y, n); }
static void blk_f32_bf16(const void *x, void *y, size_t n) { mc_blk_f32_to_bf16(x, y, n); }

#define MC_SET_CONV_ROW(t, sdt, sn)                                            \
    do {                                                                       \
        mc_convert_kernel *row_ = (t)->convert[sdt];                           \
        row_[MC_SIMD_BOOL] = conv_##sn##_b;                                        \
        row_[MC_SIMD_UINT8] = conv_##sn##_u8;                                      \
        row_[MC_SIMD_UINT16] = conv_##sn##_u16;                                    \
        row_[MC_SIMD_UINT32] = conv_##sn##_u32;                                    \
        row_[MC_SIMD_UINT64] = conv_##sn##_u64;                                    \
        row_[MC_SIMD_INT8] = conv_##sn##_i8;                                       \
        row_[MC_SIMD_INT16] = conv_##sn##_i16;                                     \
        row_[MC_SIMD_INT32] = conv_##sn##_i32;                                     \
        row_[MC_SIMD_INT64] = conv_##sn##_i64;                                     \
        row_[MC_SIMD_FLOAT16] = conv_##sn##_f16;                                   \
        row_[MC_SIMD_FLOAT32] = conv_##sn##_f32;                                   \
        row_[MC_SIMD_FLOAT64] = conv_##sn##_f64;                                   \
        row_[MC_SIMD_BFLOAT16] = conv_##sn##_bf16;                                 \
        row_[MC_SIMD_COMPLEX64] = conv_##sn##_c64;                                 \
    } while (0)

void MC_ISA_FN(mc_fill_convert)(mc_kernel_table *t)
{
    MC_SET_CONV_ROW(t, MC_SIMD_BOOL, b);
    MC_SET_CONV_ROW(t, MC_SIMD_UINT8, u8);
    MC_SET_CONV_ROW(t, MC_SIMD_UINT16, u16);
    MC_SET_CONV_ROW(t, MC_SIMD_UINT32, u32);
    MC_SET_CONV_ROW(t, MC_SIMD_UINT64, u64);
    MC_SET_CONV_ROW(t, MC_SIMD_INT8, i8);
    MC_SET_CONV_ROW(t, MC_SIMD_INT16, i16);
    MC_SET_CONV_ROW(t, MC_SIMD_INT32, i32);
    MC_SET_CONV_ROW(t, MC_SIMD_INT64, i64);
    MC_SET_CONV_ROW(t, MC_SIMD_FLOAT16, f16);
    MC_SET_CONV_ROW(t, MC_SIMD_FLOAT32, f32);
    MC_SET_CONV_ROW(t, MC_SIMD_FLOAT64, f64);
    MC_SET_CONV_ROW(t, MC_SIMD_BFLOAT16, bf16);
    MC_SET_CONV_ROW(t, MC_SIMD_COMPLEX64, c64);
    t->convert[MC_SIMD_FLOAT16][MC_SIMD_FLOAT32] = blk_f16_f32;
    t->convert[MC_SIMD_FLOAT32][MC_SIMD_FLOAT16] = blk_f32_f16;
    t->convert[MC_SIMD_BFLOAT16][MC_SIMD_FLOAT32] = blk_bf16_f32;
    t->convert[MC_SIMD_FLOAT32][MC_SIMD_BFLOAT16] = blk_f32_bf16;
}
