/* Kernels that are the same on every ISA, built once with generic flags
 * and put into every table by mc_fill_common: copies (the diagonal of
 * convert, and MLX's no-op cases such as floor of an integer), integer
 * division, remainder and power (no vector division exists), the constant
 * answers of isnan & co. on integers, and all of complex64 (C's complex
 * arithmetic in plain loops).
 *
 * Integer semantics (MLX's, from mlx/backend/cpu/simd/base_simd.h and
 * mlx/ops.cpp; where MLX's C++ is undefined we pick and say so):
 * - floor_divide (and divide, which MLX reaches only through floor_divide
 *   on integers) truncates toward zero, as C's / does.
 * - remainder takes the divisor's sign: r = a % b, plus b when r != 0 and
 *   the signs of r and b differ.
 * - division or remainder by zero gives 0 (ours, as numpy; C traps), and
 *   INT_MIN / -1 wraps to INT_MIN with remainder 0 (ours; C traps).
 * - power by repeated squaring, wrapping; a negative exponent of a signed
 *   type gives 0 (MLX), also for a base of 1 or -1.
 * - bool follows as bytes 0/1: a / b is a and b, a % b is 0, a ** b is
 *   a or not b. */
#include <complex.h>
#include <math.h>

#include "simd/kern.h"

size_t mc_simd_dtype_size(int dtype)
{
    switch (dtype) {
    case MC_SIMD_BOOL:
    case MC_SIMD_UINT8:
    case MC_SIMD_INT8:
        return 1;
    case MC_SIMD_UINT16:
    case MC_SIMD_INT16:
    case MC_SIMD_FLOAT16:
    case MC_SIMD_BFLOAT16:
        return 2;
    case MC_SIMD_UINT32:
    case MC_SIMD_INT32:
    case MC_SIMD_FLOAT32:
        return 4;
    case MC_SIMD_UINT64:
    case MC_SIMD_INT64:
    case MC_SIMD_FLOAT64:
    case MC_SIMD_COMPLEX64:
        return 8;
    default:
        return 0;
    }
}

/* copies, y may equal x */
static void copy1(const void *x, void *y, size_t n) { memmove(y, x, n); }
static void copy2(const void *x, void *y, size_t n) { memmove(y, x, 2 * n); }
static void copy4(const void *x, void *y, size_t n) { memmove(y, x, 4 * n); }
static void copy8(const void *x, void *y, size_t n) { memmove(y, x, 8 * n); }

static mc_unary_kernel copy_of_size(size_t size)
{
    switch (size) {
    case 1:
        return copy1;
    case 2:
        return copy2;
    case 4:
        return copy4;
    default:
        return copy8;
    }
}

/* isnan & co. of integers and bool: a constant answer */
static void bool_false(const void *x, void *y, size_t n)
{
    (void)x;
    memset(y, 0, n);
}
static void bool_true(const void *x, void *y, size_t n)
{
    (void)x;
    memset(y, 1, n);
}

/* Integer division family. Unsigned types: plain C, guarded against 0.
 * U is the unsigned type the arithmetic runs in: at least 32 bits except
 * for uint8, whose products of two bytes fit the int they are promoted
 * to, so no multiplication overflows a signed type. */
#define MC_POW_LOOP(U, a, b)                                                   \
    U base = (U)(a), e = (U)(b), r = 1;                                        \
    while (e) {                                                                \
        if (e & 1u)                                                            \
            r = (U)(r * base);                                                 \
        e >>= 1;                                                               \
        base = (U)(base * base);                                               \
    }

#define MC_UINT_DIVISION(sfx, T, U)                                            \
    static inline T idiv_##sfx(T a, T b) { return b == 0 ? 0 : (T)(a / b); }   \
    static inline T irem_##sfx(T a, T b) { return b == 0 ? 0 : (T)(a % b); }   \
    static inline T ipow_##sfx(T a, T b)                                       \
    {                                                                          \
        MC_POW_LOOP(U, a, b)                                                   \
        return (T)r;                                                           \
    }                                                                          \
    MC_BINARY_LOOP(idiv_##sfx, T, T, idiv_##sfx)                               \
    MC_BINARY_LOOP(irem_##sfx, T, T, irem_##sfx)                               \
    MC_BINARY_LOOP(ipow_##sfx, T, T, ipow_##sfx)

/* Signed types: -1 is a divisor of its own (INT_MIN / -1 overflows), and
 * the remainder moves into the divisor's sign. */
#define MC_SINT_DIVISION(sfx, T, U)                                            \
    static inline T idiv_##sfx(T a, T b)                                       \
    {                                                                          \
        if (b == 0)                                                            \
            return 0;                                                          \
        if (b == -1)                                                           \
            return (T)(0u - (U)a);                                             \
        return (T)(a / b);                                                     \
    }                                                                          \
    static inline T irem_##sfx(T a, T b)                                       \
    {                                                                          \
        if (b == 0 || b == -1)                                                 \
            return 0;                                                          \
        T r = (T)(a % b);                                                      \
        if (r != 0 && ((r < 0) != (b < 0)))                                    \
            r = (T)(r + b);                                                    \
        return r;                                                              \
    }                                                                          \
    static inline T ipow_##sfx(T a, T b)                                       \
    {                                                                          \
        if (b < 0)                                                             \
            return 0;                                                          \
        MC_POW_LOOP(U, a, b)                                                   \
        return (T)r;                                                           \
    }                                                                          \
    MC_BINARY_LOOP(idiv_##sfx, T, T, idiv_##sfx)                               \
    MC_BINARY_LOOP(irem_##sfx, T, T, irem_##sfx)                               \
    MC_BINARY_LOOP(ipow_##sfx, T, T, ipow_##sfx)

MC_UINT_DIVISION(u8, uint8_t, uint8_t)
MC_UINT_DIVISION(u16, uint16_t, uint32_t)
MC_UINT_DIVISION(u32, uint32_t, uint32_t)
MC_UINT_DIVISION(u64, uint64_t, uint64_t)
MC_SINT_DIVISION(i8, int8_t, uint32_t)
MC_SINT_DIVISION(i16, int16_t, uint32_t)
MC_SINT_DIVISION(i32, int32_t, uint32_t)
MC_SINT_DIVISION(i64, int64_t, uint64_t)
#undef MC_UINT_DIVISION
#undef MC_SINT_DIVISION

/* complex64 */
typedef float _Complex c64;

/* x + iy; C11's CMPLXF is missing from glibc's headers under clang 14, and
 * x + y * I would turn an infinite y into a NaN real part. A complex is
 * laid out as an array of its two parts (C11 6.2.5). */
static inline c64 cmk(float x, float y)
{
    c64 z;
    float parts[2] = {x, y};
    memcpy(&z, parts, sizeof z);
    return z;
}

static inline c64 cmul(c64 a, c64 b)
{
    /* the textbook product, as std::complex computes it without Annex G's
     * recovery of infinities (which __mulsc3 would add) */
    float ar = crealf(a), ai = cimagf(a), br = crealf(b), bi = cimagf(b);
    return cmk(ar * br - ai * bi, ar * bi + ai * br);
}
static inline c64 cadd(c64 a, c64 b) { return a + b; }
static inline c64 csub(c64 a, c64 b) { return a - b; }
static inline c64 cdiv(c64 a, c64 b) { return a / b; }
static inline c64 cpow_(c64 a, c64 b) { return cpowf(a, b); }

/* ordering as MLX's complex64_t: by real part, then imaginary part */
static inline int cgt(c64 a, c64 b)
{
    return crealf(a) > crealf(b) || (crealf(a) == crealf(b) && cimagf(a) > cimagf(b));
}
static inline int cge(c64 a, c64 b)
{
    return crealf(a) > crealf(b) || (crealf(a) == crealf(b) && cimagf(a) >= cimagf(b));
}
static inline uint8_t ceq(c64 a, c64 b) { return crealf(a) == crealf(b) && cimagf(a) == cimagf(b); }
static inline uint8_t cne(c64 a, c64 b) { return !ceq(a, b); }
static inline uint8_t clt(c64 a, c64 b) { return (uint8_t)cgt(b, a); }
static inline uint8_t cle(c64 a, c64 b) { return (uint8_t)cge(b, a); }
static inline uint8_t cgt_(c64 a, c64 b) { return (uint8_t)cgt(a, b); }
static inline uint8_t cge_(c64 a, c64 b) { return (uint8_t)cge(a, b); }
/* NaN-equal: each part equal or NaN in both */
static inline uint8_t ceqn(c64 a, c64 b)
{
    float ar = crealf(a), ai = cimagf(a), br = crealf(b), bi = cimagf(b);
    return (ar == br || (isnan(ar) && isnan(br))) && (ai == bi || (isnan(ai) && isnan(bi)));
}
/* maximum / minimum as MLX: a NaN real part of a wins, else the ordering */
static inline c64 cmax(c64 a, c64 b) { return isnan(crealf(a)) || cgt(a, b) ? a : b; }
static inline c64 cmin(c64 a, c64 b) { return isnan(crealf(a)) || cgt(b, a) ? a : b; }

MC_BINARY_LOOP(c_add, c64, c64, cadd)
MC_BINARY_LOOP(c_sub, c64, c64, csub)
MC_BINARY_LOOP(c_mul, c64, c64, cmul)
MC_BINARY_LOOP(c_div, c64, c64, cdiv)
MC_BINARY_LOOP(c_pow, c64, c64, cpow_)
MC_BINARY_LOOP(c_max, c64, c64, cmax)
MC_BINARY_LOOP(c_min, c64, c64, cmin)
MC_BINARY_LOOP(c_eq, c64, uint8_t, ceq)
MC_BINARY_LOOP(c_ne, c64, uint8_t, cne)
MC_BINARY_LOOP(c_lt, c64, uint8_t, clt)
MC_BINARY_LOOP(c_le, c64, uint8_t, cle)
MC_BINARY_LOOP(c_gt, c64, uint8_t, cgt_)
MC_BINARY_LOOP(c_ge, c64, uint8_t, cge_)
MC_BINARY_LOOP(c_eqn, c64, uint8_t, ceqn)

static inline c64 cneg(c64 x) { return -x; }
static inline c64 csq(c64 x) { return cmul(x, x); }
static inline c64 csign(c64 x) { return x == 0 ? x : x / cabsf(x); }
static inline c64 crsqrt(c64 x) { return 1.0f / csqrtf(x); }
static inline c64 crecip(c64 x) { return 1.0f / x; }
static inline c64 mc_clog2(c64 x)
{
    c64 l = clogf(x);
    const float ln2 = 0.693147180559945309f;
    return cmk(crealf(l) / ln2, cimagf(l) / ln2);
}
static inline c64 mc_clog10(c64 x)
{
    c64 l = clogf(x);
    const float ln10 = 2.30258509299404568f;
    return cmk(crealf(l) / ln10, cimagf(l) / ln10);
}
/* log1p as MLX: near 0 use log1p of |1 + x|^2 - 1 computed without
 * cancellation, else log|1 + x| */
static inline c64 mc_clog1p(c64 z)
{
    float x = crealf(z), y = cimagf(z);
    float theta = atan2f(y, x + 1.0f);
    if (cabsf(z) < 0.5f) {
        float r = x * (2.0f + x) + y * y;
        if (r == 0.0f)
            return cmk(x, theta);
        return cmk(0.5f * log1pf(r), theta);
    }
    return cmk(logf(hypotf(x + 1.0f, y)), theta);
}
static inline c64 mc_crint(c64 x) { return cmk(nearbyintf(crealf(x)), nearbyintf(cimagf(x))); }
static inline float cabs_(c64 x) { return cabsf(x); }
static inline float creal_(c64 x) { return crealf(x); }
static inline float cimag_(c64 x) { return cimagf(x); }
static inline uint8_t cisnan(c64 x) { return isnan(crealf(x)) || isnan(cimagf(x)); }
static inline uint8_t cisinf(c64 x) { return isinf(crealf(x)) || isinf(cimagf(x)); }
static inline uint8_t cisfin(c64 x) { return isfinite(crealf(x)) && isfinite(cimagf(x)); }
/* isposinf / isneginf as MLX: equal to (+-inf, 0) */
static inline uint8_t cispinf(c64 x) { return crealf(x) == INFINITY && cimagf(x) == 0.0f; }
static inline uint8_t cisninf(c64 x) { return crealf(x) == -INFINITY && cimagf(x) == 0.0f; }

MC_UNARY_LOOP(c_neg, c64, c64, cneg)
MC_UNARY_LOOP(c_sq, c64, c64, csq)
MC_UNARY_LOOP(c_sign, c64, c64, csign)
MC_UNARY_LOOP(c_sqrt, c64, c64, csqrtf)
MC_UNARY_LOOP(c_rsqrt, c64, c64, crsqrt)
MC_UNARY_LOOP(c_recip, c64, c64, crecip)
MC_UNARY_LOOP(c_exp, c64, c64, cexpf)
MC_UNARY_LOOP(c_log, c64, c64, clogf)
MC_UNARY_LOOP(c_log2, c64, c64, mc_clog2)
MC_UNARY_LOOP(c_log10, c64, c64, mc_clog10)
MC_UNARY_LOOP(c_log1p, c64, c64, mc_clog1p)
MC_UNARY_LOOP(c_sin, c64, c64, csinf)
MC_UNARY_LOOP(c_cos, c64, c64, ccosf)
MC_UNARY_LOOP(c_tan, c64, c64, ctanf)
MC_UNARY_LOOP(c_asin, c64, c64, casinf)
MC_UNARY_LOOP(c_acos, c64, c64, cacosf)
MC_UNARY_LOOP(c_atan, c64, c64, catanf)
MC_UNARY_LOOP(c_sinh, c64, c64, csinhf)
MC_UNARY_LOOP(c_cosh, c64, c64, ccoshf)
MC_UNARY_LOOP(c_tanh, c64, c64, ctanhf)
MC_UNARY_LOOP(c_asinh, c64, c64, casinhf)
MC_UNARY_LOOP(c_acosh, c64, c64, cacoshf)
MC_UNARY_LOOP(c_atanh, c64, c64, catanhf)
MC_UNARY_LOOP(c_rint, c64, c64, mc_crint)
MC_UNARY_LOOP(c_conj, c64, c64, conjf)
MC_UNARY_LOOP(c_abs, c64, float, cabs_)
MC_UNARY_LOOP(c_real, c64, float, creal_)
MC_UNARY_LOOP(c_imag, c64, float, cimag_)
MC_UNARY_LOOP(c_isnan, c64, uint8_t, cisnan)
MC_UNARY_LOOP(c_isinf, c64, uint8_t, cisinf)
MC_UNARY_LOOP(c_isfin, c64, uint8_t, cisfin)
MC_UNARY_LOOP(c_ispinf, c64, uint8_t, cispinf)
MC_UNARY_LOOP(c_isninf, c64, uint8_t, cisninf)

#define MC_SET_BINARY_LOOP(t, op, dt, name)                                    \
    do {                                                                       \
        (t)->binary[op][dt][MC_VV] = name##_vv;                                \
        (t)->binary[op][dt][MC_SV] = name##_sv;                                \
        (t)->binary[op][dt][MC_VS] = name##_vs;                                \
    } while (0)

static void fill_complex(mc_kernel_table *t)
{
    const int c = MC_SIMD_COMPLEX64;
    MC_SET_BINARY_LOOP(t, MC_B_ADD, c, c_add);
    MC_SET_BINARY_LOOP(t, MC_B_SUBTRACT, c, c_sub);
    MC_SET_BINARY_LOOP(t, MC_B_MULTIPLY, c, c_mul);
    MC_SET_BINARY_LOOP(t, MC_B_DIVIDE, c, c_div);
    MC_SET_BINARY_LOOP(t, MC_B_POWER, c, c_pow);
    MC_SET_BINARY_LOOP(t, MC_B_MAXIMUM, c, c_max);
    MC_SET_BINARY_LOOP(t, MC_B_MINIMUM, c, c_min);
    MC_SET_BINARY_LOOP(t, MC_B_EQUAL, c, c_eq);
    MC_SET_BINARY_LOOP(t, MC_B_NOT_EQUAL, c, c_ne);
    MC_SET_BINARY_LOOP(t, MC_B_LESS, c, c_lt);
    MC_SET_BINARY_LOOP(t, MC_B_LESS_EQUAL, c, c_le);
    MC_SET_BINARY_LOOP(t, MC_B_GREATER, c, c_gt);
    MC_SET_BINARY_LOOP(t, MC_B_GREATER_EQUAL, c, c_ge);
    MC_SET_BINARY_LOOP(t, MC_B_EQUAL_NAN, c, c_eqn);

    mc_unary_kernel *u[MC_U_COUNT];
    for (int op = 0; op < MC_U_COUNT; op++)
        u[op] = &t->unary[op][c];
    *u[MC_U_ABS] = c_abs;
    *u[MC_U_NEGATIVE] = c_neg;
    *u[MC_U_SIGN] = c_sign;
    *u[MC_U_SQUARE] = c_sq;
    *u[MC_U_SQRT] = c_sqrt;
    *u[MC_U_RSQRT] = c_rsqrt;
    *u[MC_U_RECIPROCAL] = c_recip;
    *u[MC_U_EXP] = c_exp;
    *u[MC_U_LOG] = c_log;
    *u[MC_U_LOG1P] = c_log1p;
    *u[MC_U_LOG2] = c_log2;
    *u[MC_U_LOG10] = c_log10;
    *u[MC_U_SIN] = c_sin;
    *u[MC_U_COS] = c_cos;
    *u[MC_U_TAN] = c_tan;
    *u[MC_U_ARCSIN] = c_asin;
    *u[MC_U_ARCCOS] = c_acos;
    *u[MC_U_ARCTAN] = c_atan;
    *u[MC_U_SINH] = c_sinh;
    *u[MC_U_COSH] = c_cosh;
    *u[MC_U_TANH] = c_tanh;
    *u[MC_U_ARCSINH] = c_asinh;
    *u[MC_U_ARCCOSH] = c_acosh;
    *u[MC_U_ARCTANH] = c_atanh;
    *u[MC_U_ROUND] = c_rint;
    *u[MC_U_CONJUGATE] = c_conj;
    *u[MC_U_REAL] = c_real;
    *u[MC_U_IMAG] = c_imag;
    *u[MC_U_ISNAN] = c_isnan;
    *u[MC_U_ISINF] = c_isinf;
    *u[MC_U_ISFINITE] = c_isfin;
    *u[MC_U_ISPOSINF] = c_ispinf;
    *u[MC_U_ISNEGINF] = c_isninf;
}

void mc_fill_common(mc_kernel_table *t)
{
    static const int ints[9] = {MC_SIMD_BOOL,  MC_SIMD_UINT8, MC_SIMD_UINT16, MC_SIMD_UINT32, MC_SIMD_UINT64,
                                MC_SIMD_INT8, MC_SIMD_INT16, MC_SIMD_INT32,  MC_SIMD_INT64};
    for (int d = 0; d < MC_SIMD_NUM_DTYPES; d++)
        t->convert[d][d] = copy_of_size(mc_simd_dtype_size(d));
    for (int k = 0; k < 9; k++) {
        int d = ints[k];
        mc_unary_kernel copy = copy_of_size(mc_simd_dtype_size(d));
        /* MLX's no-ops: rounding an integer, and abs of an unsigned */
        t->unary[MC_U_FLOOR][d] = copy;
        t->unary[MC_U_CEIL][d] = copy;
        t->unary[MC_U_ROUND][d] = copy;
        if (d <= MC_SIMD_UINT64)
            t->unary[MC_U_ABS][d] = copy;
        t->unary[MC_U_ISNAN][d] = bool_false;
        t->unary[MC_U_ISINF][d] = bool_false;
        t->unary[MC_U_ISPOSINF][d] = bool_false;
        t->unary[MC_U_ISNEGINF][d] = bool_false;
        t->unary[MC_U_ISFINITE][d] = bool_true;
    }
    /* bool: sign and square are the identity */
    t->unary[MC_U_SIGN][MC_SIMD_BOOL] = copy1;
    t->unary[MC_U_SQUARE][MC_SIMD_BOOL] = copy1;

    MC_SET_BINARY_LOOP(t, MC_B_DIVIDE, MC_SIMD_BOOL, idiv_u8);
    MC_SET_BINARY_LOOP(t, MC_B_FLOOR_DIVIDE, MC_SIMD_BOOL, idiv_u8);
    MC_SET_BINARY_LOOP(t, MC_B_REMAINDER, MC_SIMD_BOOL, irem_u8);
    MC_SET_BINARY_LOOP(t, MC_B_POWER, MC_SIMD_BOOL, ipow_u8);
#define MC_SET_INT_DIVISION(dt, sfx)                                           \
    do {                                                                       \
        MC_SET_BINARY_LOOP(t, MC_B_DIVIDE, dt, idiv_##sfx);                    \
        MC_SET_BINARY_LOOP(t, MC_B_FLOOR_DIVIDE, dt, idiv_##sfx);              \
        MC_SET_BINARY_LOOP(t, MC_B_REMAINDER, dt, irem_##sfx);                 \
        MC_SET_BINARY_LOOP(t, MC_B_POWER, dt, ipow_##sfx);                     \
    } while (0)
    MC_SET_INT_DIVISION(MC_SIMD_UINT8, u8);
    MC_SET_INT_DIVISION(MC_SIMD_UINT16, u16);
    MC_SET_INT_DIVISION(MC_SIMD_UINT32, u32);
    MC_SET_INT_DIVISION(MC_SIMD_UINT64, u64);
    MC_SET_INT_DIVISION(MC_SIMD_INT8, i8);
    MC_SET_INT_DIVISION(MC_SIMD_INT16, i16);
    MC_SET_INT_DIVISION(MC_SIMD_INT32, i32);
    MC_SET_INT_DIVISION(MC_SIMD_INT64, i64);
#undef MC_SET_INT_DIVISION
    fill_complex(t);
}
