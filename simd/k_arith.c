/* Arithmetic kernels of one ISA (compiled once per ISA): add, subtract,
 * multiply, divide, floor_divide, remainder, power, maximum, minimum,
 * arctan2 and logaddexp on real dtypes, and the unary negative, abs, sign
 * and square. Integer division, integer power and complex64 are in
 * common.c; every kernel here is lane-wise over vec.h.
 *
 * Integer arithmetic wraps: it runs on the unsigned type of the same width
 * (two's complement makes the bits identical, and signed overflow would be
 * undefined), so each signed dtype shares its unsigned twin's kernel. */
#include "simd/kern.h"
#include "simd/vec_math.h"

#define ADD(a, b) ((a) + (b))
#define SUB(a, b) ((a) - (b))
#define MUL(a, b) ((a) * (b))
#define DIV(a, b) ((a) / (b))
#define AND(a, b) ((a) & (b))
#define OR(a, b) ((a) | (b))
#define XOR(a, b) ((a) ^ (b))

/* add, subtract, multiply: unsigned lanes for every integer width */
MC_BINARY(add_u8, uint8_t, mc_vu8, uint8_t, mc_vu8, ADD)
MC_BINARY(add_u16, uint16_t, mc_vu16, uint16_t, mc_vu16, ADD)
MC_BINARY(add_u32, uint32_t, mc_vu32, uint32_t, mc_vu32, ADD)
MC_BINARY(add_u64, uint64_t, mc_vu64, uint64_t, mc_vu64, ADD)
MC_BINARY(add_f32, float, mc_vf32, float, mc_vf32, ADD)
MC_BINARY(add_f64, double, mc_vf64, double, mc_vf64, ADD)
MC_BINARY(sub_u8, uint8_t, mc_vu8, uint8_t, mc_vu8, SUB)
MC_BINARY(sub_u16, uint16_t, mc_vu16, uint16_t, mc_vu16, SUB)
MC_BINARY(sub_u32, uint32_t, mc_vu32, uint32_t, mc_vu32, SUB)
MC_BINARY(sub_u64, uint64_t, mc_vu64, uint64_t, mc_vu64, SUB)
MC_BINARY(sub_f32, float, mc_vf32, float, mc_vf32, SUB)
MC_BINARY(sub_f64, double, mc_vf64, double, mc_vf64, SUB)
MC_BINARY(mul_u8, uint8_t, mc_vu8, uint8_t, mc_vu8, MUL)
MC_BINARY(mul_u16, uint16_t, mc_vu16, uint16_t, mc_vu16, MUL)
MC_BINARY(mul_u32, uint32_t, mc_vu32, uint32_t, mc_vu32, MUL)
MC_BINARY(mul_u64, uint64_t, mc_vu64, uint64_t, mc_vu64, MUL)
MC_BINARY(mul_f32, float, mc_vf32, float, mc_vf32, MUL)
MC_BINARY(mul_f64, double, mc_vf64, double, mc_vf64, MUL)
MC_BINARY(div_f32, float, mc_vf32, float, mc_vf32, DIV)
MC_BINARY(div_f64, double, mc_vf64, double, mc_vf64, DIV)

/* bool (bytes 0 or 1), as C++ bool arithmetic converted back to bool:
 * a + b is a or b, a - b is a xor b, a * b is a and b; maximum is or,
 * minimum is and. */
MC_BINARY(or_b, uint8_t, mc_vu8, uint8_t, mc_vu8, OR)
MC_BINARY(xor_b, uint8_t, mc_vu8, uint8_t, mc_vu8, XOR)
MC_BINARY(and_b, uint8_t, mc_vu8, uint8_t, mc_vu8, AND)

/* floor_divide on floats: floor(a / b), as MLX's ops layer composes it */
static inline mc_vf32 fdiv_f32(mc_vf32 a, mc_vf32 b) { return mc_floor_f32(a / b); }
static inline mc_vf64 fdiv_f64(mc_vf64 a, mc_vf64 b) { return mc_floor_f64(a / b); }
MC_BINARY(fdiv_f32, float, mc_vf32, float, mc_vf32, fdiv_f32)
MC_BINARY(fdiv_f64, double, mc_vf64, double, mc_vf64, fdiv_f64)

/* remainder on floats, as MLX: IEEE remainder (exact), then moved into
 * the divisor's sign by adding b when the signs differ; so the result has
 * b's sign like Python's %. */
/* libm per lane: SLEEF's remainder returns NaN for subnormal divisors and
 * huge dividends, and remainder is exact, so every libm agrees. */
static inline mc_vf32 ieee_rem_f32(mc_vf32 a, mc_vf32 b)
{
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++)
        a[k] = remainderf(a[k], b[k]);
    return a;
}
static inline mc_vf64 ieee_rem_f64(mc_vf64 a, mc_vf64 b)
{
    for (size_t k = 0; k < sizeof a / sizeof a[0]; k++)
        a[k] = remainder(a[k], b[k]);
    return a;
}
static inline mc_vf32 rem_f32(mc_vf32 a, mc_vf32 b)
{
    mc_vf32 r = ieee_rem_f32(a, b);
    mc_vi32 fix = (r != 0.0f) & ((r < 0.0f) ^ (b < 0.0f));
    return mc_sel_f32(fix, r + b, r);
}
static inline mc_vf64 rem_f64(mc_vf64 a, mc_vf64 b)
{
    mc_vf64 r = ieee_rem_f64(a, b);
    mc_vi64 fix = (r != 0.0) & ((r < 0.0) ^ (b < 0.0));
    return mc_sel_f64(fix, r + b, r);
}
MC_BINARY(rem_f32, float, mc_vf32, float, mc_vf32, rem_f32)
MC_BINARY(rem_f64, double, mc_vf64, double, mc_vf64, rem_f64)

MC_BINARY(pow_f32, float, mc_vf32, float, mc_vf32, mc_pow_f32)
MC_BINARY(pow_f64, double, mc_vf64, double, mc_vf64, mc_pow_f64)
MC_BINARY(atan2_f32, float, mc_vf32, float, mc_vf32, mc_atan2_f32)
MC_BINARY(atan2_f64, double, mc_vf64, double, mc_vf64, mc_atan2_f64)
MC_BINARY(lae_f32, float, mc_vf32, float, mc_vf32, mc_logaddexp_f32)
MC_BINARY(lae_f64, double, mc_vf64, double, mc_vf64, mc_logaddexp_f64)

/* maximum / minimum: floats propagate NaN (vec_math.h); integers compare. */
MC_BINARY(max_f32, float, mc_vf32, float, mc_vf32, mc_max_f32)
MC_BINARY(max_f64, double, mc_vf64, double, mc_vf64, mc_max_f64)
MC_BINARY(min_f32, float, mc_vf32, float, mc_vf32, mc_min_f32)
MC_BINARY(min_f64, double, mc_vf64, double, mc_vf64, mc_min_f64)
#define MC_INT_MAXMIN(sfx, T, V)                                               \
    static inline V max_##sfx(V a, V b) { return mc_sel_##sfx(a > b, a, b); }  \
    static inline V min_##sfx(V a, V b) { return mc_sel_##sfx(a < b, a, b); }  \
    MC_BINARY(max_##sfx, T, V, T, V, max_##sfx)                                \
    MC_BINARY(min_##sfx, T, V, T, V, min_##sfx)
MC_INT_MAXMIN(u8, uint8_t, mc_vu8)
MC_INT_MAXMIN(u16, uint16_t, mc_vu16)
MC_INT_MAXMIN(u32, uint32_t, mc_vu32)
MC_INT_MAXMIN(u64, uint64_t, mc_vu64)
MC_INT_MAXMIN(i8, int8_t, mc_vi8)
MC_INT_MAXMIN(i16, int16_t, mc_vi16)
MC_INT_MAXMIN(i32, int32_t, mc_vi32)
MC_INT_MAXMIN(i64, int64_t, mc_vi64)
#undef MC_INT_MAXMIN

/* float16 / bfloat16 through float32 */
MC_HALF_BINARY(add, add_f32, 2)
MC_HALF_BINARY(sub, sub_f32, 2)
MC_HALF_BINARY(mul, mul_f32, 2)
MC_HALF_BINARY(div, div_f32, 2)
MC_HALF_BINARY(rem, rem_f32, 2)
MC_HALF_BINARY(pow, pow_f32, 2)
MC_HALF_BINARY(max, max_f32, 2)
MC_HALF_BINARY(min, min_f32, 2)
MC_HALF_BINARY(atan2, atan2_f32, 2)
MC_HALF_BINARY(lae, lae_f32, 2)

/* floor_divide on halves rounds the quotient to the half type before the
 * floor, as MLX's floor(divide(a, b)) does in that type. */
static inline mc_vf32 round_f16_f32(mc_vf32 q)
{
    float f[sizeof(mc_vf32) / sizeof(float)];
    uint16_t h[sizeof(mc_vf32) / sizeof(float)];
    memcpy(f, &q, sizeof f);
    mc_blk_f32_to_f16(f, h, sizeof f / sizeof f[0]);
    mc_blk_f16_to_f32(h, f, sizeof f / sizeof f[0]);
    memcpy(&q, f, sizeof f);
    return q;
}
static inline mc_vf32 round_bf16_f32(mc_vf32 q)
{
    float f[sizeof(mc_vf32) / sizeof(float)];
    uint16_t h[sizeof(mc_vf32) / sizeof(float)];
    memcpy(f, &q, sizeof f);
    mc_blk_f32_to_bf16(f, h, sizeof f / sizeof f[0]);
    mc_blk_bf16_to_f32(h, f, sizeof f / sizeof f[0]);
    memcpy(&q, f, sizeof f);
    return q;
}
static inline mc_vf32 fdiv_h_f32(mc_vf32 a, mc_vf32 b) { return mc_floor_f32(round_f16_f32(a / b)); }
static inline mc_vf32 fdiv_bh_f32(mc_vf32 a, mc_vf32 b) { return mc_floor_f32(round_bf16_f32(a / b)); }
MC_BINARY(fdiv_h_f32, float, mc_vf32, float, mc_vf32, fdiv_h_f32)
MC_BINARY(fdiv_bh_f32, float, mc_vf32, float, mc_vf32, fdiv_bh_f32)
MC_HALF_BINARY_ONE(fdiv_f16_vv, fdiv_h_f32_vv, 0, MC_VV, 2)
MC_HALF_BINARY_ONE(fdiv_f16_sv, fdiv_h_f32_sv, 0, MC_SV, 2)
MC_HALF_BINARY_ONE(fdiv_f16_vs, fdiv_h_f32_vs, 0, MC_VS, 2)
MC_HALF_BINARY_ONE(fdiv_bf16_vv, fdiv_bh_f32_vv, 1, MC_VV, 2)
MC_HALF_BINARY_ONE(fdiv_bf16_sv, fdiv_bh_f32_sv, 1, MC_SV, 2)
MC_HALF_BINARY_ONE(fdiv_bf16_vs, fdiv_bh_f32_vs, 1, MC_VS, 2)

/* unary: negative, abs, sign, square */
static inline mc_vu8 l_neg_u8(mc_vu8 x) { return 0 - x; }
static inline mc_vu16 l_neg_u16(mc_vu16 x) { return 0 - x; }
static inline mc_vu32 l_neg_u32(mc_vu32 x) { return 0 - x; }
static inline mc_vu64 l_neg_u64(mc_vu64 x) { return 0 - x; }
static inline mc_vf32 l_neg_f32(mc_vf32 x) { return -x; }
static inline mc_vf64 l_neg_f64(mc_vf64 x) { return -x; }
MC_UNARY(neg_u8, uint8_t, mc_vu8, uint8_t, mc_vu8, l_neg_u8)
MC_UNARY(neg_u16, uint16_t, mc_vu16, uint16_t, mc_vu16, l_neg_u16)
MC_UNARY(neg_u32, uint32_t, mc_vu32, uint32_t, mc_vu32, l_neg_u32)
MC_UNARY(neg_u64, uint64_t, mc_vu64, uint64_t, mc_vu64, l_neg_u64)
MC_UNARY(neg_f32, float, mc_vf32, float, mc_vf32, l_neg_f32)
MC_UNARY(neg_f64, double, mc_vf64, double, mc_vf64, l_neg_f64)

/* abs of the most negative integer wraps to itself, as in MLX */
#define MC_INT_SIGNED_UNARY(sfx, T, V, U)                                      \
    static inline V l_abs_##sfx(V x) { return mc_sel_##sfx(x < 0, (V)(0 - (U)x), x); } \
    static inline V l_sign_##sfx(V x) { return (V)((x < 0) | ((x > 0) & 1)); }   \
    MC_UNARY(abs_##sfx, T, V, T, V, l_abs_##sfx)                                 \
    MC_UNARY(sign_##sfx, T, V, T, V, l_sign_##sfx)
MC_INT_SIGNED_UNARY(i8, int8_t, mc_vi8, mc_vu8)
MC_INT_SIGNED_UNARY(i16, int16_t, mc_vi16, mc_vu16)
MC_INT_SIGNED_UNARY(i32, int32_t, mc_vi32, mc_vu32)
MC_INT_SIGNED_UNARY(i64, int64_t, mc_vi64, mc_vu64)
#undef MC_INT_SIGNED_UNARY

/* sign of an unsigned integer is 0 or 1 */
#define MC_UINT_SIGN(sfx, T, V)                                                \
    static inline V l_sign_##sfx(V x) { return (V)(x != 0) & 1; }                \
    MC_UNARY(sign_##sfx, T, V, T, V, l_sign_##sfx)
MC_UINT_SIGN(u8, uint8_t, mc_vu8)
MC_UINT_SIGN(u16, uint16_t, mc_vu16)
MC_UINT_SIGN(u32, uint32_t, mc_vu32)
MC_UINT_SIGN(u64, uint64_t, mc_vu64)
#undef MC_UINT_SIGN

/* sign of a float as MLX: -1, 0 or 1, and 0 for NaN */
static inline mc_vf32 l_sign_f32(mc_vf32 x)
{
    mc_vf32 one = MC_SPLAT(mc_vf32, 1.0f), zero = {0};
    return mc_sel_f32(x < 0.0f, -one, mc_sel_f32(x > 0.0f, one, zero));
}
static inline mc_vf64 l_sign_f64(mc_vf64 x)
{
    mc_vf64 one = MC_SPLAT(mc_vf64, 1.0), zero = {0};
    return mc_sel_f64(x < 0.0, -one, mc_sel_f64(x > 0.0, one, zero));
}
MC_UNARY(sign_f32, float, mc_vf32, float, mc_vf32, l_sign_f32)
MC_UNARY(sign_f64, double, mc_vf64, double, mc_vf64, l_sign_f64)
MC_UNARY(abs_f32, float, mc_vf32, float, mc_vf32, mc_fabs_f32)
MC_UNARY(abs_f64, double, mc_vf64, double, mc_vf64, mc_fabs_f64)

static inline mc_vu8 l_sq_u8(mc_vu8 x) { return x * x; }
static inline mc_vu16 l_sq_u16(mc_vu16 x) { return x * x; }
static inline mc_vu32 l_sq_u32(mc_vu32 x) { return x * x; }
static inline mc_vu64 l_sq_u64(mc_vu64 x) { return x * x; }
static inline mc_vf32 l_sq_f32(mc_vf32 x) { return x * x; }
static inline mc_vf64 l_sq_f64(mc_vf64 x) { return x * x; }
MC_UNARY(sq_u8, uint8_t, mc_vu8, uint8_t, mc_vu8, l_sq_u8)
MC_UNARY(sq_u16, uint16_t, mc_vu16, uint16_t, mc_vu16, l_sq_u16)
MC_UNARY(sq_u32, uint32_t, mc_vu32, uint32_t, mc_vu32, l_sq_u32)
MC_UNARY(sq_u64, uint64_t, mc_vu64, uint64_t, mc_vu64, l_sq_u64)
MC_UNARY(sq_f32, float, mc_vf32, float, mc_vf32, l_sq_f32)
MC_UNARY(sq_f64, double, mc_vf64, double, mc_vf64, l_sq_f64)

/* Halves: negative and abs only touch the sign bit, exactly as in float32;
 * sign and square go through float32 like everything else. */
static inline mc_vu16 l_neg_h(mc_vu16 x) { return x ^ 0x8000u; }
static inline mc_vu16 l_abs_h(mc_vu16 x) { return x & 0x7fffu; }
MC_UNARY(neg_h, uint16_t, mc_vu16, uint16_t, mc_vu16, l_neg_h)
MC_UNARY(abs_h, uint16_t, mc_vu16, uint16_t, mc_vu16, l_abs_h)
MC_HALF_UNARY(sign, sign_f32, 2)
MC_HALF_UNARY(sq, sq_f32, 2)

void MC_ISA_FN(mc_fill_arith)(mc_kernel_table *t)
{
    /* integer dtypes in pairs: unsigned and signed of one width */
    static const int uns[4] = {MC_SIMD_UINT8, MC_SIMD_UINT16, MC_SIMD_UINT32, MC_SIMD_UINT64};
    static const int sig[4] = {MC_SIMD_INT8, MC_SIMD_INT16, MC_SIMD_INT32, MC_SIMD_INT64};
    for (int k = 0; k < 2; k++) {
        const int *dts = k ? sig : uns;
        MC_SET_BINARY(t, MC_B_ADD, dts[0], add_u8);
        MC_SET_BINARY(t, MC_B_ADD, dts[1], add_u16);
        MC_SET_BINARY(t, MC_B_ADD, dts[2], add_u32);
        MC_SET_BINARY(t, MC_B_ADD, dts[3], add_u64);
        MC_SET_BINARY(t, MC_B_SUBTRACT, dts[0], sub_u8);
        MC_SET_BINARY(t, MC_B_SUBTRACT, dts[1], sub_u16);
        MC_SET_BINARY(t, MC_B_SUBTRACT, dts[2], sub_u32);
        MC_SET_BINARY(t, MC_B_SUBTRACT, dts[3], sub_u64);
        MC_SET_BINARY(t, MC_B_MULTIPLY, dts[0], mul_u8);
        MC_SET_BINARY(t, MC_B_MULTIPLY, dts[1], mul_u16);
        MC_SET_BINARY(t, MC_B_MULTIPLY, dts[2], mul_u32);
        MC_SET_BINARY(t, MC_B_MULTIPLY, dts[3], mul_u64);
        t->unary[MC_U_NEGATIVE][dts[0]] = neg_u8;
        t->unary[MC_U_NEGATIVE][dts[1]] = neg_u16;
        t->unary[MC_U_NEGATIVE][dts[2]] = neg_u32;
        t->unary[MC_U_NEGATIVE][dts[3]] = neg_u64;
        t->unary[MC_U_SQUARE][dts[0]] = sq_u8;
        t->unary[MC_U_SQUARE][dts[1]] = sq_u16;
        t->unary[MC_U_SQUARE][dts[2]] = sq_u32;
        t->unary[MC_U_SQUARE][dts[3]] = sq_u64;
    }
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_UINT8, max_u8);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_UINT16, max_u16);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_UINT32, max_u32);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_UINT64, max_u64);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_INT8, max_i8);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_INT16, max_i16);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_INT32, max_i32);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_INT64, max_i64);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_UINT8, min_u8);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_UINT16, min_u16);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_UINT32, min_u32);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_UINT64, min_u64);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_INT8, min_i8);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_INT16, min_i16);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_INT32, min_i32);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_INT64, min_i64);
    t->unary[MC_U_ABS][MC_SIMD_INT8] = abs_i8;
    t->unary[MC_U_ABS][MC_SIMD_INT16] = abs_i16;
    t->unary[MC_U_ABS][MC_SIMD_INT32] = abs_i32;
    t->unary[MC_U_ABS][MC_SIMD_INT64] = abs_i64;
    t->unary[MC_U_SIGN][MC_SIMD_INT8] = sign_i8;
    t->unary[MC_U_SIGN][MC_SIMD_INT16] = sign_i16;
    t->unary[MC_U_SIGN][MC_SIMD_INT32] = sign_i32;
    t->unary[MC_U_SIGN][MC_SIMD_INT64] = sign_i64;
    t->unary[MC_U_SIGN][MC_SIMD_UINT8] = sign_u8;
    t->unary[MC_U_SIGN][MC_SIMD_UINT16] = sign_u16;
    t->unary[MC_U_SIGN][MC_SIMD_UINT32] = sign_u32;
    t->unary[MC_U_SIGN][MC_SIMD_UINT64] = sign_u64;

    MC_SET_BINARY(t, MC_B_ADD, MC_SIMD_BOOL, or_b);
    MC_SET_BINARY(t, MC_B_SUBTRACT, MC_SIMD_BOOL, xor_b);
    MC_SET_BINARY(t, MC_B_MULTIPLY, MC_SIMD_BOOL, and_b);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_BOOL, or_b);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_BOOL, and_b);

    MC_SET_BINARY(t, MC_B_ADD, MC_SIMD_FLOAT32, add_f32);
    MC_SET_BINARY(t, MC_B_ADD, MC_SIMD_FLOAT64, add_f64);
    MC_SET_BINARY(t, MC_B_ADD, MC_SIMD_FLOAT16, add_f16);
    MC_SET_BINARY(t, MC_B_ADD, MC_SIMD_BFLOAT16, add_bf16);
    MC_SET_BINARY(t, MC_B_SUBTRACT, MC_SIMD_FLOAT32, sub_f32);
    MC_SET_BINARY(t, MC_B_SUBTRACT, MC_SIMD_FLOAT64, sub_f64);
    MC_SET_BINARY(t, MC_B_SUBTRACT, MC_SIMD_FLOAT16, sub_f16);
    MC_SET_BINARY(t, MC_B_SUBTRACT, MC_SIMD_BFLOAT16, sub_bf16);
    MC_SET_BINARY(t, MC_B_MULTIPLY, MC_SIMD_FLOAT32, mul_f32);
    MC_SET_BINARY(t, MC_B_MULTIPLY, MC_SIMD_FLOAT64, mul_f64);
    MC_SET_BINARY(t, MC_B_MULTIPLY, MC_SIMD_FLOAT16, mul_f16);
    MC_SET_BINARY(t, MC_B_MULTIPLY, MC_SIMD_BFLOAT16, mul_bf16);
    MC_SET_BINARY(t, MC_B_DIVIDE, MC_SIMD_FLOAT32, div_f32);
    MC_SET_BINARY(t, MC_B_DIVIDE, MC_SIMD_FLOAT64, div_f64);
    MC_SET_BINARY(t, MC_B_DIVIDE, MC_SIMD_FLOAT16, div_f16);
    MC_SET_BINARY(t, MC_B_DIVIDE, MC_SIMD_BFLOAT16, div_bf16);
    MC_SET_BINARY(t, MC_B_FLOOR_DIVIDE, MC_SIMD_FLOAT32, fdiv_f32);
    MC_SET_BINARY(t, MC_B_FLOOR_DIVIDE, MC_SIMD_FLOAT64, fdiv_f64);
    MC_SET_BINARY(t, MC_B_FLOOR_DIVIDE, MC_SIMD_FLOAT16, fdiv_f16);
    MC_SET_BINARY(t, MC_B_FLOOR_DIVIDE, MC_SIMD_BFLOAT16, fdiv_bf16);
    MC_SET_BINARY(t, MC_B_REMAINDER, MC_SIMD_FLOAT32, rem_f32);
    MC_SET_BINARY(t, MC_B_REMAINDER, MC_SIMD_FLOAT64, rem_f64);
    MC_SET_BINARY(t, MC_B_REMAINDER, MC_SIMD_FLOAT16, rem_f16);
    MC_SET_BINARY(t, MC_B_REMAINDER, MC_SIMD_BFLOAT16, rem_bf16);
    MC_SET_BINARY(t, MC_B_POWER, MC_SIMD_FLOAT32, pow_f32);
    MC_SET_BINARY(t, MC_B_POWER, MC_SIMD_FLOAT64, pow_f64);
    MC_SET_BINARY(t, MC_B_POWER, MC_SIMD_FLOAT16, pow_f16);
    MC_SET_BINARY(t, MC_B_POWER, MC_SIMD_BFLOAT16, pow_bf16);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_FLOAT32, max_f32);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_FLOAT64, max_f64);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_FLOAT16, max_f16);
    MC_SET_BINARY(t, MC_B_MAXIMUM, MC_SIMD_BFLOAT16, max_bf16);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_FLOAT32, min_f32);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_FLOAT64, min_f64);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_FLOAT16, min_f16);
    MC_SET_BINARY(t, MC_B_MINIMUM, MC_SIMD_BFLOAT16, min_bf16);
    MC_SET_BINARY(t, MC_B_ARCTAN2, MC_SIMD_FLOAT32, atan2_f32);
    MC_SET_BINARY(t, MC_B_ARCTAN2, MC_SIMD_FLOAT64, atan2_f64);
    MC_SET_BINARY(t, MC_B_ARCTAN2, MC_SIMD_FLOAT16, atan2_f16);
    MC_SET_BINARY(t, MC_B_ARCTAN2, MC_SIMD_BFLOAT16, atan2_bf16);
    MC_SET_BINARY(t, MC_B_LOGADDEXP, MC_SIMD_FLOAT32, lae_f32);
    MC_SET_BINARY(t, MC_B_LOGADDEXP, MC_SIMD_FLOAT64, lae_f64);
    MC_SET_BINARY(t, MC_B_LOGADDEXP, MC_SIMD_FLOAT16, lae_f16);
    MC_SET_BINARY(t, MC_B_LOGADDEXP, MC_SIMD_BFLOAT16, lae_bf16);

    t->unary[MC_U_NEGATIVE][MC_SIMD_FLOAT32] = neg_f32;
    t->unary[MC_U_NEGATIVE][MC_SIMD_FLOAT64] = neg_f64;
    t->unary[MC_U_NEGATIVE][MC_SIMD_FLOAT16] = neg_h;
    t->unary[MC_U_NEGATIVE][MC_SIMD_BFLOAT16] = neg_h;
    t->unary[MC_U_ABS][MC_SIMD_FLOAT32] = abs_f32;
    t->unary[MC_U_ABS][MC_SIMD_FLOAT64] = abs_f64;
    t->unary[MC_U_ABS][MC_SIMD_FLOAT16] = abs_h;
    t->unary[MC_U_ABS][MC_SIMD_BFLOAT16] = abs_h;
    t->unary[MC_U_SIGN][MC_SIMD_FLOAT32] = sign_f32;
    t->unary[MC_U_SIGN][MC_SIMD_FLOAT64] = sign_f64;
    t->unary[MC_U_SIGN][MC_SIMD_FLOAT16] = sign_f16;
    t->unary[MC_U_SIGN][MC_SIMD_BFLOAT16] = sign_bf16;
    t->unary[MC_U_SQUARE][MC_SIMD_FLOAT32] = sq_f32;
    t->unary[MC_U_SQUARE][MC_SIMD_FLOAT64] = sq_f64;
    t->unary[MC_U_SQUARE][MC_SIMD_FLOAT16] = sq_f16;
    t->unary[MC_U_SQUARE][MC_SIMD_BFLOAT16] = sq_bf16;
}
