/* Comparison, logical, bitwise and classification kernels of one ISA
 * (compiled once per ISA): equal ... greater_equal on every real dtype,
 * NaN-equal on floats, logical and/or/not on bool, bitwise and/or/xor/
 * invert and shifts on integers (and/or/xor/invert also on bool), and
 * isnan/isinf/isfinite/isposinf/isneginf on floats. Complex64 comparisons
 * are in common.c. */
#include "simd/kern.h"
#include "simd/vec_math.h"

/* The six comparisons of one dtype, T in vectors V, giving bool lanes VB. */
#define MC_CMP(sfx, T, V, VB, tobool)                                          \
    static inline VB eq_##sfx(V a, V b) { return tobool(a == b); }             \
    static inline VB ne_##sfx(V a, V b) { return tobool(a != b); }             \
    static inline VB lt_##sfx(V a, V b) { return tobool(a < b); }              \
    static inline VB le_##sfx(V a, V b) { return tobool(a <= b); }             \
    static inline VB gt_##sfx(V a, V b) { return tobool(a > b); }              \
    static inline VB ge_##sfx(V a, V b) { return tobool(a >= b); }             \
    MC_BINARY(eq_##sfx, T, V, uint8_t, VB, eq_##sfx)                           \
    MC_BINARY(ne_##sfx, T, V, uint8_t, VB, ne_##sfx)                           \
    MC_BINARY(lt_##sfx, T, V, uint8_t, VB, lt_##sfx)                           \
    MC_BINARY(le_##sfx, T, V, uint8_t, VB, le_##sfx)                           \
    MC_BINARY(gt_##sfx, T, V, uint8_t, VB, gt_##sfx)                           \
    MC_BINARY(ge_##sfx, T, V, uint8_t, VB, ge_##sfx)

MC_CMP(u8, uint8_t, mc_vu8, mc_vu8, mc_bool8)
MC_CMP(u16, uint16_t, mc_vu16, mc_vb16, mc_bool16)
MC_CMP(u32, uint32_t, mc_vu32, mc_vb32, mc_bool32)
MC_CMP(u64, uint64_t, mc_vu64, mc_vb64, mc_bool64)
MC_CMP(i8, int8_t, mc_vi8, mc_vu8, mc_bool8)
MC_CMP(i16, int16_t, mc_vi16, mc_vb16, mc_bool16)
MC_CMP(i32, int32_t, mc_vi32, mc_vb32, mc_bool32)
MC_CMP(i64, int64_t, mc_vi64, mc_vb64, mc_bool64)
MC_CMP(f32, float, mc_vf32, mc_vb32, mc_bool32)
MC_CMP(f64, double, mc_vf64, mc_vb64, mc_bool64)
#undef MC_CMP

/* equal with NaN == NaN (MLX's equal_nan, used by array_equal) */
static inline mc_vb32 eqn_f32(mc_vf32 a, mc_vf32 b)
{
    return mc_bool32((a == b) | (mc_isnan_f32(a) & mc_isnan_f32(b)));
}
static inline mc_vb64 eqn_f64(mc_vf64 a, mc_vf64 b)
{
    return mc_bool64((a == b) | (mc_isnan_f64(a) & mc_isnan_f64(b)));
}
MC_BINARY(eqn_f32, float, mc_vf32, uint8_t, mc_vb32, eqn_f32)
MC_BINARY(eqn_f64, double, mc_vf64, uint8_t, mc_vb64, eqn_f64)

MC_HALF_BINARY(eq, eq_f32, 1)
MC_HALF_BINARY(ne, ne_f32, 1)
MC_HALF_BINARY(lt, lt_f32, 1)
MC_HALF_BINARY(le, le_f32, 1)
MC_HALF_BINARY(gt, gt_f32, 1)
MC_HALF_BINARY(ge, ge_f32, 1)
MC_HALF_BINARY(eqn, eqn_f32, 1)

/* logical ops: any non-zero byte counts as true, the result is 0 or 1 */
static inline mc_vu8 land(mc_vu8 a, mc_vu8 b) { return mc_bool8(mc_mask8(a) & mc_mask8(b)); }
static inline mc_vu8 lor(mc_vu8 a, mc_vu8 b) { return mc_bool8(mc_mask8(a) | mc_mask8(b)); }
static inline mc_vu8 l_lnot(mc_vu8 a) { return mc_bool8(~mc_mask8(a)); }
MC_BINARY(land, uint8_t, mc_vu8, uint8_t, mc_vu8, land)
MC_BINARY(lor, uint8_t, mc_vu8, uint8_t, mc_vu8, lor)
MC_UNARY(lnot, uint8_t, mc_vu8, uint8_t, mc_vu8, l_lnot)

/* bitwise and/or/xor/invert: the bits are the same for signed and
 * unsigned, so each width has one kernel; bool bytes 0/1 stay 0/1 */
#define MC_BITWISE(sfx, T, V)                                                  \
    static inline V band_##sfx(V a, V b) { return a & b; }                     \
    static inline V bor_##sfx(V a, V b) { return a | b; }                      \
    static inline V bxor_##sfx(V a, V b) { return a ^ b; }                     \
    static inline V l_binv_##sfx(V a) { return ~a; }                             \
    MC_BINARY(band_##sfx, T, V, T, V, band_##sfx)                              \
    MC_BINARY(bor_##sfx, T, V, T, V, bor_##sfx)                                \
    MC_BINARY(bxor_##sfx, T, V, T, V, bxor_##sfx)                              \
    MC_UNARY(binv_##sfx, T, V, T, V, l_binv_##sfx)
MC_BITWISE(u8, uint8_t, mc_vu8)
MC_BITWISE(u16, uint16_t, mc_vu16)
MC_BITWISE(u32, uint32_t, mc_vu32)
MC_BITWISE(u64, uint64_t, mc_vu64)
#undef MC_BITWISE

/* Shifts. A count that is negative or at least the width shifts every bit
 * out: left gives 0, right gives 0 or (signed, negative a) -1, as numpy
 * does and as MLX gives for its narrow types, instead of C's undefined
 * behaviour. Left shifts run on the unsigned type, so they wrap. */
#define MC_SHIFTS_U(sfx, T, V, M)                                              \
    static inline V shl_##sfx(V a, V b)                                        \
    {                                                                          \
        M out = b >= (T)(8 * sizeof(T));                                       \
        V s = mc_sel_##sfx(out, (V){0}, b);                                    \
        return mc_sel_##sfx(out, (V){0}, a << s);                              \
    }                                                                          \
    static inline V shr_##sfx(V a, V b)                                        \
    {                                                                          \
        M out = b >= (T)(8 * sizeof(T));                                       \
        V s = mc_sel_##sfx(out, (V){0}, b);                                    \
        return mc_sel_##sfx(out, (V){0}, a >> s);                              \
    }                                                                          \
    MC_BINARY(shl_##sfx, T, V, T, V, shl_##sfx)                                \
    MC_BINARY(shr_##sfx, T, V, T, V, shr_##sfx)
MC_SHIFTS_U(u8, uint8_t, mc_vu8, mc_vi8)
MC_SHIFTS_U(u16, uint16_t, mc_vu16, mc_vi16)
MC_SHIFTS_U(u32, uint32_t, mc_vu32, mc_vi32)
MC_SHIFTS_U(u64, uint64_t, mc_vu64, mc_vi64)
#undef MC_SHIFTS_U

#define MC_SHIFTS_S(sfx, usfx, T, UT, V, U)                                    \
    static inline V shl_##sfx(V a, V b)                                        \
    {                                                                          \
        return (V)shl_##usfx((U)a, (U)b);                                      \
    }                                                                          \
    static inline V shr_##sfx(V a, V b)                                        \
    {                                                                          \
        V out = (V)((U)b >= (UT)(8 * sizeof(T)));                              \
        V s = mc_sel_##sfx(out, (V){0}, b);                                    \
        return mc_sel_##sfx(out, (V)(a < 0), a >> s);                          \
    }                                                                          \
    MC_BINARY(shl_##sfx, T, V, T, V, shl_##sfx)                                \
    MC_BINARY(shr_##sfx, T, V, T, V, shr_##sfx)
MC_SHIFTS_S(i8, u8, int8_t, uint8_t, mc_vi8, mc_vu8)
MC_SHIFTS_S(i16, u16, int16_t, uint16_t, mc_vi16, mc_vu16)
MC_SHIFTS_S(i32, u32, int32_t, uint32_t, mc_vi32, mc_vu32)
MC_SHIFTS_S(i64, u64, int64_t, uint64_t, mc_vi64, mc_vu64)
#undef MC_SHIFTS_S

/* classification of floats */
static inline mc_vb32 l_isnan_f32(mc_vf32 x) { return mc_bool32(x != x); }
static inline mc_vb64 l_isnan_f64(mc_vf64 x) { return mc_bool64(x != x); }
static inline mc_vb32 l_isinf_f32(mc_vf32 x) { return mc_bool32(mc_fabs_f32(x) == INFINITY); }
static inline mc_vb64 l_isinf_f64(mc_vf64 x)
{
    return mc_bool64(mc_fabs_f64(x) == (double)INFINITY);
}
static inline mc_vb32 l_isfin_f32(mc_vf32 x) { return mc_bool32(mc_fabs_f32(x) < INFINITY); }
static inline mc_vb64 l_isfin_f64(mc_vf64 x)
{
    return mc_bool64(mc_fabs_f64(x) < (double)INFINITY);
}
static inline mc_vb32 l_ispinf_f32(mc_vf32 x) { return mc_bool32(x == INFINITY); }
static inline mc_vb64 l_ispinf_f64(mc_vf64 x) { return mc_bool64(x == (double)INFINITY); }
static inline mc_vb32 l_isninf_f32(mc_vf32 x) { return mc_bool32(x == -INFINITY); }
static inline mc_vb64 l_isninf_f64(mc_vf64 x) { return mc_bool64(x == -(double)INFINITY); }
MC_UNARY(isnan_f32, float, mc_vf32, uint8_t, mc_vb32, l_isnan_f32)
MC_UNARY(isnan_f64, double, mc_vf64, uint8_t, mc_vb64, l_isnan_f64)
MC_UNARY(isinf_f32, float, mc_vf32, uint8_t, mc_vb32, l_isinf_f32)
MC_UNARY(isinf_f64, double, mc_vf64, uint8_t, mc_vb64, l_isinf_f64)
MC_UNARY(isfin_f32, float, mc_vf32, uint8_t, mc_vb32, l_isfin_f32)
MC_UNARY(isfin_f64, double, mc_vf64, uint8_t, mc_vb64, l_isfin_f64)
MC_UNARY(ispinf_f32, float, mc_vf32, uint8_t, mc_vb32, l_ispinf_f32)
MC_UNARY(ispinf_f64, double, mc_vf64, uint8_t, mc_vb64, l_ispinf_f64)
MC_UNARY(isninf_f32, float, mc_vf32, uint8_t, mc_vb32, l_isninf_f32)
MC_UNARY(isninf_f64, double, mc_vf64, uint8_t, mc_vb64, l_isninf_f64)

/* halves are classified on their bits: exponent all ones is inf or NaN */
#define MC_HALF_CLASS(sfx, INF)                                                \
    static inline mc_vb16 l_isnan_##sfx(mc_vu16 h) { return mc_bool16((mc_vi16)((h & 0x7fffu) > INF)); } \
    static inline mc_vb16 l_isinf_##sfx(mc_vu16 h) { return mc_bool16((mc_vi16)((h & 0x7fffu) == INF)); } \
    static inline mc_vb16 l_isfin_##sfx(mc_vu16 h) { return mc_bool16((mc_vi16)((h & 0x7fffu) < INF)); } \
    static inline mc_vb16 l_ispinf_##sfx(mc_vu16 h) { return mc_bool16((mc_vi16)(h == INF)); } \
    static inline mc_vb16 l_isninf_##sfx(mc_vu16 h) { return mc_bool16((mc_vi16)(h == (INF | 0x8000u))); } \
    MC_UNARY(isnan_##sfx, uint16_t, mc_vu16, uint8_t, mc_vb16, l_isnan_##sfx)   \
    MC_UNARY(isinf_##sfx, uint16_t, mc_vu16, uint8_t, mc_vb16, l_isinf_##sfx)   \
    MC_UNARY(isfin_##sfx, uint16_t, mc_vu16, uint8_t, mc_vb16, l_isfin_##sfx)   \
    MC_UNARY(ispinf_##sfx, uint16_t, mc_vu16, uint8_t, mc_vb16, l_ispinf_##sfx) \
    MC_UNARY(isninf_##sfx, uint16_t, mc_vu16, uint8_t, mc_vb16, l_isninf_##sfx)
MC_HALF_CLASS(f16, 0x7c00u)
MC_HALF_CLASS(bf16, 0x7f80u)
#undef MC_HALF_CLASS

#define MC_SET_CMP(t, dt, sfx)                                                 \
    do {                                                                       \
        MC_SET_BINARY(t, MC_B_EQUAL, dt, eq_##sfx);                            \
        MC_SET_BINARY(t, MC_B_NOT_EQUAL, dt, ne_##sfx);                        \
        MC_SET_BINARY(t, MC_B_LESS, dt, lt_##sfx);                             \
        MC_SET_BINARY(t, MC_B_LESS_EQUAL, dt, le_##sfx);                       \
        MC_SET_BINARY(t, MC_B_GREATER, dt, gt_##sfx);                          \
        MC_SET_BINARY(t, MC_B_GREATER_EQUAL, dt, ge_##sfx);                    \
    } while (0)

#define MC_SET_CLASS(t, dt, sfx)                                               \
    do {                                                                       \
        (t)->unary[MC_U_ISNAN][dt] = isnan_##sfx;                              \
        (t)->unary[MC_U_ISINF][dt] = isinf_##sfx;                              \
        (t)->unary[MC_U_ISFINITE][dt] = isfin_##sfx;                           \
        (t)->unary[MC_U_ISPOSINF][dt] = ispinf_##sfx;                          \
        (t)->unary[MC_U_ISNEGINF][dt] = isninf_##sfx;                          \
    } while (0)

void MC_ISA_FN(mc_fill_cmp)(mc_kernel_table *t)
{
    MC_SET_CMP(t, MC_SIMD_BOOL, u8);
    MC_SET_CMP(t, MC_SIMD_UINT8, u8);
    MC_SET_CMP(t, MC_SIMD_UINT16, u16);
    MC_SET_CMP(t, MC_SIMD_UINT32, u32);
    MC_SET_CMP(t, MC_SIMD_UINT64, u64);
    MC_SET_CMP(t, MC_SIMD_INT8, i8);
    MC_SET_CMP(t, MC_SIMD_INT16, i16);
    MC_SET_CMP(t, MC_SIMD_INT32, i32);
    MC_SET_CMP(t, MC_SIMD_INT64, i64);
    MC_SET_CMP(t, MC_SIMD_FLOAT32, f32);
    MC_SET_CMP(t, MC_SIMD_FLOAT64, f64);
    MC_SET_CMP(t, MC_SIMD_FLOAT16, f16);
    MC_SET_CMP(t, MC_SIMD_BFLOAT16, bf16);
    MC_SET_BINARY(t, MC_B_EQUAL_NAN, MC_SIMD_FLOAT32, eqn_f32);
    MC_SET_BINARY(t, MC_B_EQUAL_NAN, MC_SIMD_FLOAT64, eqn_f64);
    MC_SET_BINARY(t, MC_B_EQUAL_NAN, MC_SIMD_FLOAT16, eqn_f16);
    MC_SET_BINARY(t, MC_B_EQUAL_NAN, MC_SIMD_BFLOAT16, eqn_bf16);

    MC_SET_BINARY(t, MC_B_LOGICAL_AND, MC_SIMD_BOOL, land);
    MC_SET_BINARY(t, MC_B_LOGICAL_OR, MC_SIMD_BOOL, lor);
    t->unary[MC_U_LOGICAL_NOT][MC_SIMD_BOOL] = lnot;

    MC_SET_BINARY(t, MC_B_BITWISE_AND, MC_SIMD_BOOL, band_u8);
    MC_SET_BINARY(t, MC_B_BITWISE_OR, MC_SIMD_BOOL, bor_u8);
    MC_SET_BINARY(t, MC_B_BITWISE_XOR, MC_SIMD_BOOL, bxor_u8);
    t->unary[MC_U_BITWISE_INVERT][MC_SIMD_BOOL] = lnot; /* as MLX: logical_not */
    static const int uns[4] = {MC_SIMD_UINT8, MC_SIMD_UINT16, MC_SIMD_UINT32, MC_SIMD_UINT64};
    static const int sig[4] = {MC_SIMD_INT8, MC_SIMD_INT16, MC_SIMD_INT32, MC_SIMD_INT64};
    for (int k = 0; k < 2; k++) {
        const int *dts = k ? sig : uns;
        MC_SET_BINARY(t, MC_B_BITWISE_AND, dts[0], band_u8);
        MC_SET_BINARY(t, MC_B_BITWISE_AND, dts[1], band_u16);
        MC_SET_BINARY(t, MC_B_BITWISE_AND, dts[2], band_u32);
        MC_SET_BINARY(t, MC_B_BITWISE_AND, dts[3], band_u64);
        MC_SET_BINARY(t, MC_B_BITWISE_OR, dts[0], bor_u8);
        MC_SET_BINARY(t, MC_B_BITWISE_OR, dts[1], bor_u16);
        MC_SET_BINARY(t, MC_B_BITWISE_OR, dts[2], bor_u32);
        MC_SET_BINARY(t, MC_B_BITWISE_OR, dts[3], bor_u64);
        MC_SET_BINARY(t, MC_B_BITWISE_XOR, dts[0], bxor_u8);
        MC_SET_BINARY(t, MC_B_BITWISE_XOR, dts[1], bxor_u16);
        MC_SET_BINARY(t, MC_B_BITWISE_XOR, dts[2], bxor_u32);
        MC_SET_BINARY(t, MC_B_BITWISE_XOR, dts[3], bxor_u64);
        t->unary[MC_U_BITWISE_INVERT][dts[0]] = binv_u8;
        t->unary[MC_U_BITWISE_INVERT][dts[1]] = binv_u16;
        t->unary[MC_U_BITWISE_INVERT][dts[2]] = binv_u32;
        t->unary[MC_U_BITWISE_INVERT][dts[3]] = binv_u64;
    }
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_UINT8, shl_u8);
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_UINT16, shl_u16);
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_UINT32, shl_u32);
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_UINT64, shl_u64);
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_INT8, shl_i8);
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_INT16, shl_i16);
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_INT32, shl_i32);
    MC_SET_BINARY(t, MC_B_LEFT_SHIFT, MC_SIMD_INT64, shl_i64);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_UINT8, shr_u8);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_UINT16, shr_u16);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_UINT32, shr_u32);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_UINT64, shr_u64);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_INT8, shr_i8);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_INT16, shr_i16);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_INT32, shr_i32);
    MC_SET_BINARY(t, MC_B_RIGHT_SHIFT, MC_SIMD_INT64, shr_i64);

    MC_SET_CLASS(t, MC_SIMD_FLOAT32, f32);
    MC_SET_CLASS(t, MC_SIMD_FLOAT64, f64);
    MC_SET_CLASS(t, MC_SIMD_FLOAT16, f16);
    MC_SET_CLASS(t, MC_SIMD_BFLOAT16, bf16);
}
