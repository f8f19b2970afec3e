/* simd/: every kernel of every ISA table this CPU runs against the scalar
 * reference (awkward lengths, special values, ULP bounds for floats and
 * exact equality elsewhere), the reference itself against libm and known
 * answers (MLX's integer semantics, rounding, NaN rules, conversions), the
 * strided walkers against a naive loop, and the MLX_CPU_ISA choice.
 *
 * ULP bounds between an ISA kernel and the scalar reference (which calls
 * glibc's libm): 0 for exact operations (arithmetic, sqrt, rounding,
 * comparisons, conversions), 2 for functions on SLEEF's 1.0-ULP entry
 * points and our float32 exp, 3 for our float32 erf, 5 for the float32 functions on 3.5-ULP ones, 4 for sigmoid, 8
 * for float32 erfinv, 4 ULP of the larger input for logaddexp (its sum may
 * cancel); float16/bfloat16 results may differ by
 * 1 unit of the half type wherever float32 ones may differ at all. Against
 * the exact answer (float64 libm), the float32 kernels of the best ISA must
 * stay within the bounds vec_math.h documents (checked separately). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <complex.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mlx/c/cpu.h"
#include "simd/half_convert.h"
#include "simd/reduce.h"
#include "simd/simd.h"

static const char *const dtype_names[MC_SIMD_NUM_DTYPES] = {
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16",
    "int32", "int64", "float16", "float32", "float64", "bfloat16", "complex64"};
static const size_t lengths[] = {0, 1, 7, 8, 9, 33, 1003};
enum { MAXN = 1003 };

static size_t dsize(int dt)
{
    static const size_t s[MC_SIMD_NUM_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8};
    return s[dt];
}

static int is_half(int dt) { return dt == MC_SIMD_FLOAT16 || dt == MC_SIMD_BFLOAT16; }
static int is_float(int dt)
{
    return dt == MC_SIMD_FLOAT32 || dt == MC_SIMD_FLOAT64 || is_half(dt);
}

/* ---- deterministic data with special values ---- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double rnd_unit(void) { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* A float: specials first, then a mix of small, moderate and huge values. */
static double rnd_real(size_t i, int f64)
{
    static const double special[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5,
                                     INFINITY, -INFINITY, NAN, 1e-40, -1e-40, 3.4e38,
                                     -3.4e38, 88.7, -88.7, 100.0, -100.0, 1e-300,
                                     1.7e308, 0.9999999, -0.9999999, 3.0, 1e6};
    size_t ns = sizeof special / sizeof special[0];
    if (i < ns)
        return special[i];
    double u = rnd_unit();
    switch (rnd() % 4) {
    case 0:
        return 2 * u - 1;
    case 1:
        return 40 * u - 20;
    case 2: {
        double e = (f64 ? 600 : 70) * rnd_unit() - (f64 ? 300 : 35);
        return (rnd() & 1 ? -1 : 1) * pow(10.0, e);
    }
    default:
        return (double)(int)(20 * u - 10) + (rnd() & 1 ? 0.5 : 0.0);
    }
}

/* An integer: specials (0, +-1, extremes, shift widths) then random bits. */
static uint64_t rnd_int(size_t i)
{
    static const int64_t special[] = {0, 1, -1, 2, -2, 7, 8, 31, 32, 33, 63, 64, 65,
                                      INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX, -128,
                                      127, 255, 32767, -32768, 65535};
    size_t ns = sizeof special / sizeof special[0];
    if (i < ns)
        return (uint64_t)special[i];
    switch (rnd() % 3) {
    case 0:
        return rnd() % 70;
    case 1:
        return (uint64_t)-(int64_t)(rnd() % 70);
    default:
        return rnd();
    }
}

/* Fills n elements of dtype dt; `salt` changes the random part. */
static void fill(int dt, void *buf, size_t n, uint64_t salt)
{
    rng_state = 0x9e3779b97f4a7c15ull ^ (salt * 0x100000001b3ull) ^ (uint64_t)dt;
    for (size_t k = 0; k < 8; k++)
        rnd();
    for (size_t i = 0; i < n; i++) {
        /* shift the specials so pairs (a[i], b[i]) meet in many combinations */
        size_t si = (i + (size_t)salt * 5) % (n + 29);
        switch (dt) {
        case MC_SIMD_BOOL:
            ((uint8_t *)buf)[i] = (uint8_t)(rnd() & 1);
            break;
        case MC_SIMD_UINT8:
        case MC_SIMD_INT8:
            ((uint8_t *)buf)[i] = (uint8_t)rnd_int(si);
            break;
        case MC_SIMD_UINT16:
        case MC_SIMD_INT16:
            ((uint16_t *)buf)[i] = (uint16_t)rnd_int(si);
            break;
        case MC_SIMD_UINT32:
        case MC_SIMD_INT32:
            ((uint32_t *)buf)[i] = (uint32_t)rnd_int(si);
            break;
        case MC_SIMD_UINT64:
        case MC_SIMD_INT64:
            ((uint64_t *)buf)[i] = rnd_int(si);
            break;
        case MC_SIMD_FLOAT16:
            ((uint16_t *)buf)[i] = mc_f32_to_f16((float)rnd_real(si, 0));
            break;
        case MC_SIMD_BFLOAT16:
            ((uint16_t *)buf)[i] = mc_f32_to_bf16((float)rnd_real(si, 0));
            break;
        case MC_SIMD_FLOAT32:
            ((float *)buf)[i] = (float)rnd_real(si, 0);
            break;
        case MC_SIMD_FLOAT64:
            ((double *)buf)[i] = rnd_real(si, 1);
            break;
        case MC_SIMD_COMPLEX64: {
            float p[2] = {(float)rnd_real(si, 0), (float)rnd_real((si * 7 + 3) % (n + 29), 0)};
            memcpy((char *)buf + 8 * i, p, 8);
            break;
        }
        }
    }
}

/* ---- comparing outputs ---- */

static int64_t ord32(float f)
{
    uint32_t u = mc_f32_bits(f);
    return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}
static int64_t ord64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return (u >> 63) ? -(int64_t)(u & 0x7fffffffffffffffull) : (int64_t)u;
}
static int64_t ord16(uint16_t h)
{
    return (h & 0x8000u) ? -(int64_t)(h & 0x7fffu) : (int64_t)h;
}
static int half_isnan(int dt, uint16_t h)
{
    return (h & 0x7fffu) > (dt == MC_SIMD_FLOAT16 ? 0x7c00u : 0x7f80u);
}

/* ULP distance of element i (0 if both NaN, INT64_MAX if only one is). */
static int64_t ulp_diff(int dt, const void *x, const void *y, size_t i)
{
    int64_t d;
    switch (dt) {
    case MC_SIMD_FLOAT32: {
        float a = ((const float *)x)[i], b = ((const float *)y)[i];
        if (isnan(a) || isnan(b))
            return isnan(a) && isnan(b) ? 0 : INT64_MAX;
        d = ord32(a) - ord32(b);
        break;
    }
    case MC_SIMD_FLOAT64: {
        double a = ((const double *)x)[i], b = ((const double *)y)[i];
        if (isnan(a) || isnan(b))
            return isnan(a) && isnan(b) ? 0 : INT64_MAX;
        d = ord64(a) - ord64(b);
        break;
    }
    case MC_SIMD_FLOAT16:
    case MC_SIMD_BFLOAT16: {
        uint16_t a = ((const uint16_t *)x)[i], b = ((const uint16_t *)y)[i];
        if (half_isnan(dt, a) || half_isnan(dt, b))
            return half_isnan(dt, a) && half_isnan(dt, b) ? 0 : INT64_MAX;
        d = ord16(a) - ord16(b);
        break;
    }
    default:
        return 0;
    }
    return d < 0 ? -d : d;
}

static void describe(int dt, const void *p, size_t i, char *out, size_t cap)
{
    const char *e = (const char *)p + i * dsize(dt);
    switch (dt) {
    case MC_SIMD_FLOAT32:
        snprintf(out, cap, "%.9g", *(const float *)e);
        break;
    case MC_SIMD_FLOAT64:
        snprintf(out, cap, "%.17g", *(const double *)e);
        break;
    case MC_SIMD_FLOAT16:
        snprintf(out, cap, "%.6g (0x%04x)", mc_f16_to_f32(*(const uint16_t *)e),
                 *(const uint16_t *)e);
        break;
    case MC_SIMD_BFLOAT16:
        snprintf(out, cap, "%.6g (0x%04x)", mc_bf16_to_f32(*(const uint16_t *)e),
                 *(const uint16_t *)e);
        break;
    case MC_SIMD_COMPLEX64: {
        float c[2];
        memcpy(c, e, 8);
        snprintf(out, cap, "(%.9g, %.9g)", c[0], c[1]);
        break;
    }
    default: {
        uint64_t v = 0;
        memcpy(&v, e, dsize(dt));
        snprintf(out, cap, "0x%llx", (unsigned long long)v);
    }
    }
}

/* Compares n elements of dtype dt; returns 0 or reports the first bad one. */
static int same(int dt, const void *ref, const void *got, size_t n, int64_t tol, const char *what,
                const void *in_a, const void *in_b, int in_dt)
{
    for (size_t i = 0; i < n; i++) {
        int bad;
        if (is_float(dt)) {
            bad = ulp_diff(dt, ref, got, i) > tol;
        } else if (dt == MC_SIMD_COMPLEX64) {
            bad = ulp_diff(MC_SIMD_FLOAT32, ref, got, 2 * i) > tol ||
                  ulp_diff(MC_SIMD_FLOAT32, ref, got, 2 * i + 1) > tol;
        } else {
            bad = memcmp((const char *)ref + i * dsize(dt), (const char *)got + i * dsize(dt),
                         dsize(dt)) != 0;
        }
        if (bad) {
            char r[64], g[64], a[64] = "", b[64] = "";
            describe(dt, ref, i, r, sizeof r);
            describe(dt, got, i, g, sizeof g);
            if (in_a)
                describe(in_dt, in_a, i, a, sizeof a);
            if (in_b)
                describe(in_dt, in_b, i, b, sizeof b);
            print_error("%s: element %zu of %zu: reference %s, got %s (inputs %s %s)\n", what, i,
                        n, r, g, a, b);
            return 1;
        }
    }
    return 0;
}

/* Element i of a float dtype as a double. */
static double elem(int dt, const void *p, size_t i)
{
    switch (dt) {
    case MC_SIMD_FLOAT32:
        return ((const float *)p)[i];
    case MC_SIMD_FLOAT64:
        return ((const double *)p)[i];
    case MC_SIMD_FLOAT16:
        return mc_f16_to_f32(((const uint16_t *)p)[i]);
    default:
        return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    }
}

/* logaddexp adds log1p(...) to max(a, b) and may cancel most of it, so its
 * error is bounded in units of the larger input, not of the result: both
 * results within 4 ULP of max(|a|, |b|, |result|). */
static int same_logaddexp(int dt, const void *ref, const void *got, const void *a,
                          const void *b, int cls, size_t n, const char *what)
{
    static const int mant[MC_SIMD_NUM_DTYPES] = {[MC_SIMD_FLOAT16] = 10, [MC_SIMD_FLOAT32] = 23,
                                                 [MC_SIMD_FLOAT64] = 52, [MC_SIMD_BFLOAT16] = 7};
    for (size_t i = 0; i < n; i++) {
        double r = elem(dt, ref, i), g = elem(dt, got, i);
        double va = elem(dt, a, cls == MC_SV ? 0 : i), vb = elem(dt, b, cls == MC_VS ? 0 : i);
        if (isnan(r) || isnan(g) || isinf(r) || isinf(g)) {
            if (!(isnan(r) && isnan(g)) && r != g) {
                print_error("%s: element %zu: %g vs %g\n", what, i, r, g);
                return 1;
            }
            continue;
        }
        double scale = fmax(fmax(fabs(va), fabs(vb)), fabs(r));
        if (isinf(scale) || scale == 0)
            scale = fabs(r);
        double ulp = scale > 0 ? ldexp(1.0, ilogb(scale) - mant[dt]) : 0;
        if (fabs(r - g) > 4 * ulp && r != g) {
            print_error("%s: element %zu: %.17g vs %.17g (inputs %.17g %.17g)\n", what, i, r, g,
                        va, vb);
            return 1;
        }
    }
    return 0;
}

/* ---- output dtypes and tolerances ---- */

static int unary_out(int op, int dt)
{
    switch (op) {
    case MC_U_ABS:
        return dt == MC_SIMD_COMPLEX64 ? MC_SIMD_FLOAT32 : dt;
    case MC_U_REAL:
    case MC_U_IMAG:
        return MC_SIMD_FLOAT32;
    case MC_U_ISNAN:
    case MC_U_ISINF:
    case MC_U_ISFINITE:
    case MC_U_ISPOSINF:
    case MC_U_ISNEGINF:
    case MC_U_LOGICAL_NOT:
        return MC_SIMD_BOOL;
    default:
        return dt;
    }
}

static int binary_out(int op, int dt)
{
    switch (op) {
    case MC_B_EQUAL:
    case MC_B_NOT_EQUAL:
    case MC_B_LESS:
    case MC_B_LESS_EQUAL:
    case MC_B_GREATER:
    case MC_B_GREATER_EQUAL:
    case MC_B_LOGICAL_AND:
    case MC_B_LOGICAL_OR:
    case MC_B_EQUAL_NAN:
        return MC_SIMD_BOOL;
    default:
        return dt;
    }
}

/* float32 ULP bound of a unary op between an ISA and the reference */
static int64_t unary_tol_f32(int op)
{
    switch (op) {
    case MC_U_EXP:
    case MC_U_EXPM1:
    case MC_U_LOG1P:
    case MC_U_LOG10:
    case MC_U_ARCSINH:
    case MC_U_ARCCOSH:
    case MC_U_ARCTANH:
        return 2;
    case MC_U_ERF:
        return 3;
    case MC_U_LOG:
    case MC_U_LOG2:
    case MC_U_SIN:
    case MC_U_COS:
    case MC_U_TAN:
    case MC_U_ARCSIN:
    case MC_U_ARCCOS:
    case MC_U_ARCTAN:
    case MC_U_SINH:
    case MC_U_COSH:
    case MC_U_TANH:
        return 5;
    case MC_U_SIGMOID:
        return 4;
    case MC_U_ERFINV:
        return 8;
    default:
        return 0;
    }
}

static int64_t unary_tol(int op, int dt)
{
    int64_t t32 = unary_tol_f32(op);
    if (dt == MC_SIMD_FLOAT64)
        return t32 == 0 ? 0 : op == MC_U_ERFINV || op == MC_U_SIGMOID ? 4 : 2;
    if (is_half(dt))
        return t32 ? 1 : 0;
    return dt == MC_SIMD_FLOAT32 ? t32 : 0;
}

static int64_t binary_tol(int op, int dt)
{
    int64_t t = 0;
    if (op == MC_B_POWER)
        t = 2;
    else if (op == MC_B_ARCTAN2)
        t = dt == MC_SIMD_FLOAT32 ? 5 : 2;
    else if (op == MC_B_LOGADDEXP)
        t = 4;
    if (dt == MC_SIMD_COMPLEX64)
        return 0;
    if (is_half(dt))
        return t ? 1 : 0;
    return is_float(dt) ? t : 0;
}

/* ---- every ISA against the scalar reference ---- */

static const mc_kernel_table *reference(void)
{
    const mc_kernel_table *t = mc_kernels_for("scalar");
    assert_non_null(t);
    return t;
}

/* How many ISAs beyond scalar this host must compare, judged without
 * dispatch.c's own checks: NEON is baseline on aarch64; on x86_64, AVX2
 * where the CPU (and OS) has it. Guards the "every ISA" loops, which skip
 * the ISAs a host lacks, against comparing nothing. */
static size_t isas_beyond_scalar_expected(void)
{
#if defined(__aarch64__)
    return 1;
#elif defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
#else
    return 0;
#endif
}

static _Alignas(64) unsigned char in_a[MAXN * 8 + 64], in_b[MAXN * 8 + 64];
static _Alignas(64) unsigned char out_ref[MAXN * 8 + 64], out_isa[MAXN * 8 + 64];

static void test_every_isa_unary_kernel_matches_the_reference(void **state)
{
    (void)state;
    const mc_kernel_table *ref = reference();
    int failures = 0;
    size_t compared = 0;
    for (int k = 1; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        compared++;
        for (int op = 0; op < MC_U_COUNT; op++) {
            for (int dt = 0; dt < MC_SIMD_NUM_DTYPES; dt++) {
                mc_unary_kernel kr = ref->unary[op][dt], kt = t->unary[op][dt];
                if ((kr == NULL) != (kt == NULL)) {
                    print_error("%s: unary op %d on %s is NULL in one table only\n", t->isa, op,
                                dtype_names[dt]);
                    failures++;
                    continue;
                }
                if (!kr)
                    continue;
                int od = unary_out(op, dt);
                for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
                    size_t n = lengths[li];
                    fill(dt, in_a, n, (uint64_t)op + 1);
                    memset(out_ref, 0xa5, sizeof out_ref);
                    memset(out_isa, 0x5a, sizeof out_isa);
                    kr(in_a, out_ref, n);
                    kt(in_a, out_isa, n);
                    char what[96];
                    snprintf(what, sizeof what, "%s unary %d %s n=%zu", t->isa, op,
                             dtype_names[dt], n);
                    if (same(od, out_ref, out_isa, n, unary_tol(op, dt), what, in_a, NULL, dt)) {
                        failures++;
                        break;
                    }
                    /* nothing past n is written */
                    if (out_isa[n * dsize(od)] != 0x5a) {
                        print_error("%s: wrote past the end\n", what);
                        failures++;
                    }
                }
            }
        }
    }
    assert_int_equal(failures, 0);
    assert_true(compared >= isas_beyond_scalar_expected());
}

static void test_every_isa_binary_kernel_matches_the_reference(void **state)
{
    (void)state;
    const mc_kernel_table *ref = reference();
    int failures = 0;
    size_t compared = 0;
    for (int k = 1; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        compared++;
        for (int op = 0; op < MC_B_COUNT; op++) {
            for (int dt = 0; dt < MC_SIMD_NUM_DTYPES; dt++) {
                for (int cls = 0; cls < MC_BINARY_CLASSES; cls++) {
                    mc_binary_kernel kr = ref->binary[op][dt][cls], kt = t->binary[op][dt][cls];
                    if ((kr == NULL) != (kt == NULL)) {
                        print_error("%s: binary op %d on %s is NULL in one table only\n", t->isa,
                                    op, dtype_names[dt]);
                        failures++;
                        continue;
                    }
                    if (!kr)
                        continue;
                    int od = binary_out(op, dt);
                    for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
                        size_t n = lengths[li];
                        /* a scalar operand still needs one readable element */
                        fill(dt, in_a, n ? n : 1, (uint64_t)op * 3 + 1);
                        fill(dt, in_b, n ? n : 1, (uint64_t)op * 3 + 2);
                        memset(out_ref, 0xa5, sizeof out_ref);
                        memset(out_isa, 0x5a, sizeof out_isa);
                        kr(in_a, in_b, out_ref, n);
                        kt(in_a, in_b, out_isa, n);
                        char what[96];
                        snprintf(what, sizeof what, "%s binary %d %s class %d n=%zu", t->isa, op,
                                 dtype_names[dt], cls, n);
                        int bad = op == MC_B_LOGADDEXP && is_float(dt)
                                      ? same_logaddexp(dt, out_ref, out_isa, in_a, in_b, cls, n,
                                                       what)
                                      : same(od, out_ref, out_isa, n, binary_tol(op, dt), what,
                                             cls == MC_SV ? NULL : in_a,
                                             cls == MC_VS ? NULL : in_b, dt);
                        if (bad) {
                            failures++;
                            break;
                        }
                        if (out_isa[n * dsize(od)] != 0x5a) {
                            print_error("%s: wrote past the end\n", what);
                            failures++;
                        }
                    }
                }
            }
        }
    }
    assert_int_equal(failures, 0);
    assert_true(compared >= isas_beyond_scalar_expected());
}

static void test_every_isa_convert_kernel_matches_the_reference(void **state)
{
    (void)state;
    const mc_kernel_table *ref = reference();
    int failures = 0;
    size_t compared = 0;
    for (int from = 0; from < MC_SIMD_NUM_DTYPES; from++)
        for (int to = 0; to < MC_SIMD_NUM_DTYPES; to++)
            if (!ref->convert[from][to]) {
                print_error("convert %s -> %s missing\n", dtype_names[from], dtype_names[to]);
                failures++;
            }
    for (int k = 1; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        compared++;
        for (int from = 0; from < MC_SIMD_NUM_DTYPES; from++) {
            for (int to = 0; to < MC_SIMD_NUM_DTYPES; to++) {
                for (size_t li = 0; li < sizeof lengths / sizeof lengths[0]; li++) {
                    size_t n = lengths[li];
                    fill(from, in_a, n, 77);
                    memset(out_ref, 0xa5, sizeof out_ref);
                    memset(out_isa, 0x5a, sizeof out_isa);
                    ref->convert[from][to](in_a, out_ref, n);
                    t->convert[from][to](in_a, out_isa, n);
                    char what[96];
                    snprintf(what, sizeof what, "%s convert %s -> %s n=%zu", t->isa,
                             dtype_names[from], dtype_names[to], n);
                    if (same(to, out_ref, out_isa, n, 0, what, in_a, NULL, from)) {
                        failures++;
                        break;
                    }
                }
            }
        }
    }
    assert_int_equal(failures, 0);
    assert_true(compared >= isas_beyond_scalar_expected());
}

/* Every float16 and bfloat16 bit pattern converts to float32 and back
 * unchanged (NaNs stay NaN), on every ISA's block conversion. */
static void test_half_round_trips_are_exact_on_every_isa(void **state)
{
    (void)state;
    static uint16_t h[65536], back[65536];
    static float f[65536];
    for (unsigned i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    for (int k = 0; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        for (int dt = MC_SIMD_FLOAT16; dt <= MC_SIMD_BFLOAT16; dt += MC_SIMD_BFLOAT16 - MC_SIMD_FLOAT16) {
            t->convert[dt][MC_SIMD_FLOAT32](h, f, 65536);
            t->convert[MC_SIMD_FLOAT32][dt](f, back, 65536);
            for (unsigned i = 0; i < 65536; i++) {
                float want = dt == MC_SIMD_FLOAT16 ? mc_f16_to_f32(h[i]) : mc_bf16_to_f32(h[i]);
                if (half_isnan(dt, h[i])) {
                    assert_true(isnan(f[i]));
                    assert_true(half_isnan(dt, back[i]));
                } else {
                    assert_memory_equal(&f[i], &want, 4);
                    assert_int_equal(back[i], h[i]);
                }
            }
        }
    }
}

/* ---- the scalar reference against known answers ---- */

static void run_binary(int op, int dt, const void *a, const void *b, void *y, size_t n)
{
    const mc_kernel_table *t = reference();
    assert_non_null(t->binary[op][dt][MC_VV]);
    t->binary[op][dt][MC_VV](a, b, y, n);
}

static void run_unary(int op, int dt, const void *x, void *y, size_t n)
{
    const mc_kernel_table *t = reference();
    assert_non_null(t->unary[op][dt]);
    t->unary[op][dt](x, y, n);
}

static void test_integer_division_truncates_and_remainder_takes_divisor_sign(void **state)
{
    (void)state;
    const int32_t a[] = {-7, 7, -7, 7, 5, INT32_MIN, INT32_MIN, 9, 0};
    const int32_t b[] = {2, -2, -2, 2, 0, -1, 1, -1, 3};
    /* MLX: floor_divide on integers is C's truncating division */
    const int32_t q[] = {-3, -3, 3, 3, 0, INT32_MIN, INT32_MIN, -9, 0};
    const int32_t r[] = {1, -1, -1, 1, 0, 0, 0, 0, 0};
    int32_t y[9];
    run_binary(MC_B_FLOOR_DIVIDE, MC_SIMD_INT32, a, b, y, 9);
    assert_memory_equal(y, q, sizeof q);
    run_binary(MC_B_REMAINDER, MC_SIMD_INT32, a, b, y, 9);
    assert_memory_equal(y, r, sizeof r);

    const uint8_t ua[] = {7, 200, 5}, ub[] = {2, 7, 0};
    uint8_t uy[3];
    run_binary(MC_B_FLOOR_DIVIDE, MC_SIMD_UINT8, ua, ub, uy, 3);
    assert_int_equal(uy[0], 3);
    assert_int_equal(uy[1], 28);
    assert_int_equal(uy[2], 0);
    run_binary(MC_B_REMAINDER, MC_SIMD_UINT8, ua, ub, uy, 3);
    assert_int_equal(uy[0], 1);
    assert_int_equal(uy[1], 4);
    assert_int_equal(uy[2], 0);
}

static void test_float_remainder_and_floor_divide_follow_python(void **state)
{
    (void)state;
    const float a[] = {-7.0f, 7.0f, 5.5f, -5.5f, 1.0f};
    const float b[] = {2.0f, -2.0f, 2.0f, 2.0f, INFINITY};
    const float r[] = {1.0f, -1.0f, 1.5f, 0.5f, 1.0f};
    const float q[] = {-4.0f, -4.0f, 2.0f, -3.0f, 0.0f};
    float y[5];
    run_binary(MC_B_REMAINDER, MC_SIMD_FLOAT32, a, b, y, 5);
    assert_memory_equal(y, r, sizeof r);
    run_binary(MC_B_FLOOR_DIVIDE, MC_SIMD_FLOAT32, a, b, y, 5);
    assert_memory_equal(y, q, sizeof q);
}

static void test_integer_overflow_wraps(void **state)
{
    (void)state;
    const int32_t a[] = {INT32_MAX, INT32_MIN, 65536};
    const int32_t b[] = {1, 1, 65536};
    int32_t y[3];
    run_binary(MC_B_ADD, MC_SIMD_INT32, a, b, y, 3);
    assert_int_equal(y[0], INT32_MIN);
    run_binary(MC_B_SUBTRACT, MC_SIMD_INT32, a, b, y, 3);
    assert_int_equal(y[1], INT32_MAX);
    run_binary(MC_B_MULTIPLY, MC_SIMD_INT32, a, b, y, 3);
    assert_int_equal(y[2], 0);
    const int8_t x[] = {INT8_MIN, -5, 5, 0};
    int8_t z[4];
    run_unary(MC_U_ABS, MC_SIMD_INT8, x, z, 4);
    assert_int_equal(z[0], INT8_MIN); /* abs of the minimum wraps */
    assert_int_equal(z[1], 5);
    run_unary(MC_U_NEGATIVE, MC_SIMD_INT8, x, z, 4);
    assert_int_equal(z[0], INT8_MIN);
    run_unary(MC_U_SIGN, MC_SIMD_INT8, x, z, 4);
    assert_int_equal(z[0], -1);
    assert_int_equal(z[2], 1);
    assert_int_equal(z[3], 0);
    const uint16_t u[] = {0, 9};
    uint16_t uz[2];
    run_unary(MC_U_SIGN, MC_SIMD_UINT16, u, uz, 2);
    assert_int_equal(uz[0], 0);
    assert_int_equal(uz[1], 1);
}

static void test_integer_power_squares_and_negative_exponent_gives_zero(void **state)
{
    (void)state;
    const int64_t a[] = {2, 3, -2, 1, -1, 7, 2};
    const int64_t b[] = {10, 4, 3, -1, -3, 0, 64};
    const int64_t want[] = {1024, 81, -8, 0, 0, 1, 0};
    int64_t y[7];
    run_binary(MC_B_POWER, MC_SIMD_INT64, a, b, y, 7);
    assert_memory_equal(y, want, sizeof want);
    const uint8_t ua[] = {3, 2}, ub[] = {5, 9};
    uint8_t uy[2];
    run_binary(MC_B_POWER, MC_SIMD_UINT8, ua, ub, uy, 2);
    assert_int_equal(uy[0], 243);
    assert_int_equal(uy[1], 0); /* 512 wraps */
}

static void test_shifts_past_the_width_give_zero_or_sign(void **state)
{
    (void)state;
    const int32_t a[] = {1, -8, -8, 1, 5, 3};
    const int32_t b[] = {40, 40, 1, -1, 31, 0};
    int32_t y[6];
    run_binary(MC_B_LEFT_SHIFT, MC_SIMD_INT32, a, b, y, 6);
    assert_int_equal(y[0], 0);
    assert_int_equal(y[2], -16);
    assert_int_equal(y[3], 0);
    assert_int_equal(y[4], INT32_MIN); /* 5 << 31 wraps */
    assert_int_equal(y[5], 3);
    run_binary(MC_B_RIGHT_SHIFT, MC_SIMD_INT32, a, b, y, 6);
    assert_int_equal(y[0], 0);
    assert_int_equal(y[1], -1);
    assert_int_equal(y[2], -4);
    assert_int_equal(y[3], 0);
    const int8_t c[] = {-128, 1}, s[] = {1, 7};
    int8_t z[2];
    run_binary(MC_B_LEFT_SHIFT, MC_SIMD_INT8, c, s, z, 2);
    assert_int_equal(z[0], 0);
    assert_int_equal(z[1], -128);
}

static void test_maximum_and_minimum_propagate_nan_from_either_side(void **state)
{
    (void)state;
    const float a[] = {NAN, 1.0f, 2.0f, -0.0f};
    const float b[] = {1.0f, NAN, 1.0f, 0.0f};
    float y[4];
    run_binary(MC_B_MAXIMUM, MC_SIMD_FLOAT32, a, b, y, 4);
    assert_true(isnan(y[0]) && isnan(y[1]));
    assert_true(y[2] == 2.0f);
    run_binary(MC_B_MINIMUM, MC_SIMD_FLOAT32, a, b, y, 4);
    assert_true(isnan(y[0]) && isnan(y[1]));
    assert_true(y[2] == 1.0f);
}

static void test_round_is_half_to_even_and_sign_of_nan_is_zero(void **state)
{
    (void)state;
    const float x[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.7f};
    const float want[] = {0.0f, 2.0f, 2.0f, -0.0f, -2.0f, 4.0f};
    float y[6];
    run_unary(MC_U_ROUND, MC_SIMD_FLOAT32, x, y, 6);
    assert_memory_equal(y, want, sizeof want);
    const double s[] = {NAN, -3.0, 0.0, 2.0};
    double sy[4];
    run_unary(MC_U_SIGN, MC_SIMD_FLOAT64, s, sy, 4);
    assert_true(sy[0] == 0.0 && sy[1] == -1.0 && sy[2] == 0.0 && sy[3] == 1.0);
}

static void test_reference_math_matches_libm(void **state)
{
    (void)state;
    double x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = -8.0 + 0.25 * i;
    run_unary(MC_U_EXP, MC_SIMD_FLOAT64, x, y, 64);
    for (int i = 0; i < 64; i++)
        assert_true(y[i] == exp(x[i]));
    run_unary(MC_U_TANH, MC_SIMD_FLOAT64, x, y, 64);
    for (int i = 0; i < 64; i++)
        assert_true(y[i] == tanh(x[i]));
    float xf[64], yf[64];
    for (int i = 0; i < 64; i++)
        xf[i] = 0.1f + 0.5f * (float)i;
    run_unary(MC_U_LOG, MC_SIMD_FLOAT32, xf, yf, 64);
    for (int i = 0; i < 64; i++)
        assert_true(yf[i] == logf(xf[i]));
    run_unary(MC_U_SIN, MC_SIMD_FLOAT32, xf, yf, 64);
    for (int i = 0; i < 64; i++)
        assert_true(yf[i] == sinf(xf[i]));
}

static void test_sigmoid_logaddexp_and_erfinv_known_values(void **state)
{
    (void)state;
    const float x[] = {-200.0f, 0.0f, 200.0f, -20.0f, NAN};
    float y[5];
    run_unary(MC_U_SIGMOID, MC_SIMD_FLOAT32, x, y, 5);
    assert_true(y[0] == 0.0f && y[1] == 0.5f && y[2] == 1.0f);
    assert_true(fabsf(y[3] - 2.0611537e-09f) < 1e-15f);
    assert_true(isnan(y[4]));

    const double a[] = {-INFINITY, INFINITY, 1.0, -INFINITY, 1000.0};
    const double b[] = {-INFINITY, INFINITY, 1.0, 3.0, -1000.0};
    double l[5];
    run_binary(MC_B_LOGADDEXP, MC_SIMD_FLOAT64, a, b, l, 5);
    assert_true(l[0] == -INFINITY && l[1] == INFINITY && l[3] == 3.0 && l[4] == 1000.0);
    assert_true(fabs(l[2] - (1.0 + M_LN2)) < 1e-15);

    const double e[] = {0.0, -0.0, 1.0, -1.0, 1.5, 0.5, -0.999999, 1e-300};
    double ey[8];
    run_unary(MC_U_ERFINV, MC_SIMD_FLOAT64, e, ey, 8);
    assert_true(ey[0] == 0.0 && !signbit(ey[0]) && signbit(ey[1]));
    assert_true(ey[2] == INFINITY && ey[3] == -INFINITY && isnan(ey[4]));
    assert_true(fabs(erf(ey[5]) - 0.5) < 1e-16);
    assert_true(fabs(erf(ey[6]) + 0.999999) < 1e-16);
    assert_true(fabs(ey[7] - 1e-300 * 0.88622692545275801) < 1e-314);
}

/* erf(erfinv(x)) returns x to the last bits, on every ISA, across (-1, 1)
 * including the tails near +-1. */
static void test_erfinv_inverts_erf_on_every_isa(void **state)
{
    (void)state;
    enum { N = 4000 };
    static double x[N], y[N];
    static float xf[N], yf[N];
    for (int i = 0; i < N; i++) {
        double u = (i + 0.5) / N;
        x[i] = i % 2 ? 2 * u - 1 : (i % 4 ? 1 : -1) * (1 - pow(10.0, -15.0 * u));
        xf[i] = (float)(2 * u - 1);
    }
    for (int k = 0; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        t->unary[MC_U_ERFINV][MC_SIMD_FLOAT64](x, y, N);
        t->unary[MC_U_ERFINV][MC_SIMD_FLOAT32](xf, yf, N);
        for (int i = 0; i < N; i++) {
            /* erf's slope near the tails magnifies y's error into x's less
             * than 1, so x is the right yardstick: a few ULP of x */
            double back = fabs(x[i]) > 0.5 ? copysign(1 - erfc(fabs(y[i])), y[i]) : erf(y[i]);
            double err = fabs(back - x[i]) / fmax(fabs(x[i]) * DBL_EPSILON, DBL_MIN);
            if (err > 8.0)
                fail_msg("%s erfinv(%.17g) = %.17g, erf of it off by %.1f ulp", t->isa, x[i], y[i],
                         err);
            /* float32 against the float64 result */
            double exact = 0;
            t->unary[MC_U_ERFINV][MC_SIMD_FLOAT64](&(double){(double)xf[i]}, &exact, 1);
            double ulp32 = fabs((double)yf[i] - exact) /
                           (fabs(exact) > FLT_MIN ? ldexp(1.0, ilogb(exact) - 23) : 1e-45);
            if (ulp32 > 4.0)
                fail_msg("%s float32 erfinv(%.9g) = %.9g, want %.9g (%.1f ulp)", t->isa, xf[i],
                         yf[i], exact, ulp32);
        }
    }
}

/* Error in ULP of y against the exact answer; results below FLT_MIN count
 * in units of the smallest subnormal. */
static double ulps_from_exact(float y, double want)
{
    if (isnan(want))
        return isnan(y) ? 0 : INFINITY;
    if (isinf(want) || want == 0)
        return (double)y == want ? 0 : INFINITY;
    if (fabs(want) > FLT_MAX) /* rounds to FLT_MAX or overflows */
        return fabs((double)y) >= FLT_MAX ? 0 : INFINITY;
    double ulp = fabs(want) < FLT_MIN ? 0x1p-149 : ldexp(1.0, ilogb(want) - 23);
    return fabs((double)y - want) / ulp;
}

/* Runs op's float32 kernel of t over x (into y) and returns its worst error
 * in ULP against f in float64, with the input where it happened. */
static double worst_ulps(const mc_kernel_table *t, int op, double (*f)(double), const float *x,
                         float *y, size_t n, float *at)
{
    t->unary[op][MC_SIMD_FLOAT32](x, y, n);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = ulps_from_exact(y[i], f((double)x[i]));
        if (e > worst)
            worst = e, *at = x[i];
    }
    return worst;
}

/* The float32 kernels of every ISA keep the bounds vec_math.h states,
 * measured against float64 libm rounded once. */
static void test_float32_math_keeps_documented_ulp_bounds(void **state)
{
    (void)state;
    static const struct {
        int op;
        double (*f)(double);
        double lo, hi, bound;
    } cases[] = {
        {MC_U_EXP, exp, -87, 88, 1.0},       {MC_U_EXPM1, expm1, -10, 10, 1.46},
        {MC_U_LOG, log, 1e-3, 1e4, 3.5},     {MC_U_LOG1P, log1p, -0.9, 100, 1.0},
        {MC_U_LOG2, log2, 1e-3, 1e4, 3.5},   {MC_U_LOG10, log10, 1e-3, 1e4, 1.0},
        {MC_U_SIN, sin, -100, 100, 3.5},     {MC_U_COS, cos, -100, 100, 3.5},
        {MC_U_TAN, tan, -10, 10, 3.5},       {MC_U_ARCSIN, asin, -1, 1, 3.5},
        {MC_U_ARCCOS, acos, -1, 1, 3.5},     {MC_U_ARCTAN, atan, -50, 50, 3.5},
        {MC_U_SINH, sinh, -20, 20, 3.5},     {MC_U_COSH, cosh, -20, 20, 3.5},
        {MC_U_TANH, tanh, -10, 10, 3.5},     {MC_U_ARCSINH, asinh, -100, 100, 1.0},
        {MC_U_ARCCOSH, acosh, 1, 100, 1.0},  {MC_U_ARCTANH, atanh, -0.99, 0.99, 1.0},
        {MC_U_ERF, erf, -4, 4, 1.8},
    };
    enum { N = 20000 };
    static float x[N], y[N];
    for (int k = 1; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int i = 0; i < N; i++)
                x[i] = (float)(cases[c].lo + (cases[c].hi - cases[c].lo) * (i + 0.5) / N);
            float at = 0;
            double worst = worst_ulps(t, cases[c].op, cases[c].f, x, y, N, &at);
            if (worst > cases[c].bound + 0.5)
                fail_msg("%s op %d: %.2f ulp at %a, bound %.1f", t->isa, cases[c].op, worst,
                         (double)at, cases[c].bound);
        }
    }
}

/* exp, expm1, tanh, log, sin, cos and erf are our own float32 kernels
 * (simd/vec_math_f32.h), not SLEEF's: sweep the whole float32 range (every
 * 1021st bit pattern, both signs, so every exponent and each fast path's
 * edge is crossed) against float64 libm. Within the fast path the bound is
 * the one docs/api.md states; outside it the vector goes to SLEEF, whose
 * bound applies. */
static void test_own_float32_math_holds_its_bounds_over_the_whole_range(void **state)
{
    (void)state;
    static const struct {
        int op;
        double (*f)(double);
        double bound, lo, hi, sleef_bound; /* fast path: lo <= x <= hi */
    } cases[] = {
        {MC_U_EXP, exp, 1.02, -87, 87, 1.0},
        {MC_U_TANH, tanh, 2.7, -INFINITY, INFINITY, 3.5},
        {MC_U_LOG, log, 0.93, 0x1p-126, 0x1p127, 1.0},
        {MC_U_SIN, sin, 2.4, -0x1p13, 0x1p13, 3.5},
        {MC_U_COS, cos, 2.4, -0x1p13, 0x1p13, 3.5},
        {MC_U_ERF, erf, 1.8, -INFINITY, INFINITY, 1.0},
        {MC_U_EXPM1, expm1, 1.46, -87, 87, 1.0},
    };
    enum { N = 4096, STRIDE = 1021 };
    static float x[N], y[N];
    for (int k = 1; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            /* [0]: inputs within the fast path, [1]: beyond it */
            double worst[2] = {0, 0};
            float worst_x[2] = {0, 0};
            uint64_t bits = 0;
            while (bits < ((uint64_t)1 << 32)) {
                int n[2] = {0, 0};
                static float part[2][N];
                while (n[0] < N && n[1] < N && bits < ((uint64_t)1 << 32)) {
                    uint32_t u = (uint32_t)bits;
                    float v;
                    memcpy(&v, &u, sizeof v);
                    int side = !(v >= cases[c].lo && v <= cases[c].hi);
                    part[side][n[side]++] = v;
                    bits += STRIDE;
                }
                for (int side = 0; side < 2; side++) {
                    float at = 0;
                    memcpy(x, part[side], (size_t)n[side] * sizeof x[0]);
                    double e = worst_ulps(t, cases[c].op, cases[c].f, x, y, (size_t)n[side], &at);
                    if (e > worst[side])
                        worst[side] = e, worst_x[side] = at;
                }
            }
            if (worst[0] > cases[c].bound)
                fail_msg("%s op %d: %.3f ulp at %a, bound %.2f", t->isa, cases[c].op, worst[0],
                         (double)worst_x[0], cases[c].bound);
            if (worst[1] > cases[c].sleef_bound)
                fail_msg("%s op %d (SLEEF's range): %.3f ulp at %a, bound %.2f", t->isa,
                         cases[c].op, worst[1], (double)worst_x[1], cases[c].sleef_bound);
        }
    }
}

/* The own float32 kernels run blocks of vectors through their fast path and
 * compute a block again through SLEEF when a lane is outside it; in place
 * (y = x, a donated buffer) that needs the block's inputs kept aside. Out of
 * range lanes planted in one block, the tail and the head: in place and out
 * of place agree bit for bit, and the planted lanes get libm's answer
 * within SLEEF's bound (NaN for NaN, the limits for inf). */
static void test_own_float32_kernels_agree_in_place_with_out_of_range_lanes(void **state)
{
    (void)state;
    static const struct {
        int op;
        double (*f)(double);
        float lo, hi; /* the ordinary inputs */
    } cases[] = {
        {MC_U_EXP, exp, -20, 20},    {MC_U_EXPM1, expm1, -20, 20}, {MC_U_TANH, tanh, -12, 12},
        {MC_U_LOG, log, 1e-3f, 1e3f}, {MC_U_SIN, sin, -50, 50},     {MC_U_COS, cos, -50, 50},
        {MC_U_ERF, erf, -5, 5},
    };
    static const float planted[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 0.0f, -1.0f, 1e-40f, 2e4f};
    enum { N = 3001 };
    static float x[N], y[N], z[N];
    for (int k = 1; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (!t)
            continue;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int i = 0; i < N; i++)
                x[i] = cases[c].lo + (cases[c].hi - cases[c].lo) * (float)((i * 7919) % N) / N;
            const size_t at[] = {0, 1500, 1517, N - 1};
            for (size_t p = 0; p < sizeof at / sizeof at[0]; p++)
                x[at[p]] = planted[(p * 3 + c) % (sizeof planted / sizeof planted[0])];
            for (size_t p = 0; p < sizeof planted / sizeof planted[0]; p++)
                x[1400 + 3 * p] = planted[p];
            memcpy(z, x, sizeof z);
            t->unary[cases[c].op][MC_SIMD_FLOAT32](x, y, N);
            t->unary[cases[c].op][MC_SIMD_FLOAT32](z, z, N);
            for (int i = 0; i < N; i++) {
                if (memcmp(&y[i], &z[i], sizeof y[i]) != 0 && !(isnan(y[i]) && isnan(z[i])))
                    fail_msg("%s op %d: x[%d] = %a gives %a in place, %a not", t->isa,
                             cases[c].op, i, (double)x[i], (double)z[i], (double)y[i]);
                double e = ulps_from_exact(y[i], cases[c].f((double)x[i]));
                if (e > 3.5)
                    fail_msg("%s op %d: x[%d] = %a gives %a, %.1f ulp", t->isa, cases[c].op, i,
                             (double)x[i], (double)y[i], e);
            }
        }
    }
}

static void test_conversions_follow_astype_rules(void **state)
{
    (void)state;
    const mc_kernel_table *t = reference();
    const double d[] = {NAN, -1.0, 300.7, -300.7, 1e20, -1e20, 2.9, -2.9};
    uint8_t u8[8];
    int64_t i64[8];
    int32_t i32[8];
    uint8_t b[8];
    t->convert[MC_SIMD_FLOAT64][MC_SIMD_UINT8](d, u8, 8);
    assert_int_equal(u8[0], 0);
    assert_int_equal(u8[1], 255);
    assert_int_equal(u8[2], 44);
    assert_int_equal(u8[3], 212);
    t->convert[MC_SIMD_FLOAT64][MC_SIMD_INT64](d, i64, 8);
    assert_true(i64[0] == 0 && i64[4] == INT64_MAX && i64[5] == INT64_MIN);
    assert_true(i64[6] == 2 && i64[7] == -2);
    t->convert[MC_SIMD_FLOAT64][MC_SIMD_INT32](d, i32, 8);
    assert_true(i32[2] == 300 && i32[3] == -300 && i32[6] == 2 && i32[7] == -2);
    t->convert[MC_SIMD_FLOAT64][MC_SIMD_BOOL](d, b, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(b[i], 1); /* NaN is true too */

    /* float64 -> float16 rounds once: 1 + 2^-11 + 2^-40 is just above the
     * tie between 1 and 1 + 2^-10, so it rounds up; via float32 (round to
     * nearest) it would land on the tie and round to even, down to 1. */
    const double tie = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40);
    uint16_t h;
    t->convert[MC_SIMD_FLOAT64][MC_SIMD_FLOAT16](&tie, &h, 1);
    assert_int_equal(h, 0x3c01);

    /* complex64 -> real takes the real part, to bool too (as MLX) */
    float c[4] = {0.0f, 5.0f, -2.5f, 0.0f};
    uint8_t cb[2];
    float cf[2];
    t->convert[MC_SIMD_COMPLEX64][MC_SIMD_BOOL](c, cb, 2);
    assert_int_equal(cb[0], 0);
    assert_int_equal(cb[1], 1);
    t->convert[MC_SIMD_COMPLEX64][MC_SIMD_FLOAT32](c, cf, 2);
    assert_true(cf[0] == 0.0f && cf[1] == -2.5f);
    const int16_t i16[2] = {-3, 7};
    float out[4];
    t->convert[MC_SIMD_INT16][MC_SIMD_COMPLEX64](i16, out, 2);
    assert_true(out[0] == -3.0f && out[1] == 0.0f && out[2] == 7.0f && out[3] == 0.0f);
}

static void test_complex_comparisons_are_lexicographic(void **state)
{
    (void)state;
    const float a[] = {1, 5, 1, 2, 1, 2};
    const float b[] = {1, 6, 0, 9, 1, 2};
    uint8_t y[3];
    run_binary(MC_B_LESS, MC_SIMD_COMPLEX64, a, b, y, 3);
    assert_true(y[0] == 1 && y[1] == 0 && y[2] == 0);
    run_binary(MC_B_GREATER_EQUAL, MC_SIMD_COMPLEX64, a, b, y, 3);
    assert_true(y[0] == 0 && y[1] == 1 && y[2] == 1);
    run_binary(MC_B_EQUAL, MC_SIMD_COMPLEX64, a, b, y, 3);
    assert_true(y[0] == 0 && y[1] == 0 && y[2] == 1);
    float m[6];
    run_binary(MC_B_MULTIPLY, MC_SIMD_COMPLEX64, a, b, m, 3);
    assert_true(m[0] == 1 * 1 - 5 * 6 && m[1] == 1 * 6 + 5 * 1);
    float ab[3];
    run_unary(MC_U_ABS, MC_SIMD_COMPLEX64, (const float[]){3, 4, 0, 0, -5, 12}, ab, 3);
    assert_true(ab[0] == 5.0f && ab[1] == 0.0f && ab[2] == 13.0f);
}

static void test_bool_arithmetic_is_logical(void **state)
{
    (void)state;
    const uint8_t a[] = {0, 0, 1, 1}, b[] = {0, 1, 0, 1};
    uint8_t y[4];
    run_binary(MC_B_ADD, MC_SIMD_BOOL, a, b, y, 4);
    assert_memory_equal(y, ((uint8_t[]){0, 1, 1, 1}), 4);
    run_binary(MC_B_MULTIPLY, MC_SIMD_BOOL, a, b, y, 4);
    assert_memory_equal(y, ((uint8_t[]){0, 0, 0, 1}), 4);
    run_binary(MC_B_POWER, MC_SIMD_BOOL, a, b, y, 4);
    assert_memory_equal(y, ((uint8_t[]){1, 0, 1, 1}), 4);
    run_unary(MC_U_BITWISE_INVERT, MC_SIMD_BOOL, a, y, 4);
    assert_memory_equal(y, ((uint8_t[]){1, 1, 0, 0}), 4);
}

/* ---- strided walkers ---- */

static float at3(const float *base, const int64_t *st, int i, int j, int k)
{
    return base[i * st[0] + j * st[1] + k * st[2]];
}

static void test_unary_strided_matches_a_naive_loop(void **state)
{
    (void)state;
    const mc_kernel_table *t = reference();
    static float src[4 * 5 * 300], dst[4 * 5 * 300], want[4 * 5 * 300];
    for (int i = 0; i < 4 * 5 * 300; i++)
        src[i] = (float)i * 0.25f - 100.0f;
    const int shape[3] = {4, 5, 300};
    /* transposed input (axes reversed), broadcast middle axis, and a
     * negative innermost stride from the end of the buffer */
    const int64_t xs_list[3][3] = {{1, 4, 20}, {1500, 0, 5}, {1500, 300, -1}};
    const int64_t off_list[3] = {0, 0, 299};
    const int64_t ys[3] = {1500, 300, 1};
    for (int c = 0; c < 3; c++) {
        const int64_t *xs = xs_list[c];
        const float *x = src + off_list[c];
        mc_unary_strided(t->unary[MC_U_NEGATIVE][MC_SIMD_FLOAT32], 4, 4, x, xs, dst, ys, 3, shape);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 5; j++)
                for (int k = 0; k < 300; k++)
                    want[i * 1500 + j * 300 + k] = -at3(x, xs, i, j, k);
        assert_memory_equal(dst, want, sizeof want);
    }
    /* a non-contiguous output (every other element) and a 0-d call */
    static float out2[2 * 600];
    const int shape2[1] = {600};
    const int64_t one[1] = {1}, two[1] = {2};
    memset(out2, 0, sizeof out2);
    mc_unary_strided(t->unary[MC_U_SQUARE][MC_SIMD_FLOAT32], 4, 4, src, one, out2, two, 1, shape2);
    for (int i = 0; i < 600; i++) {
        assert_true(out2[2 * i] == src[i] * src[i]);
        assert_true(out2[2 * i + 1] == 0.0f);
    }
    float s = 3.0f, r = 0;
    mc_unary_strided(t->unary[MC_U_SQUARE][MC_SIMD_FLOAT32], 4, 4, &s, NULL, &r, NULL, 0, NULL);
    assert_true(r == 9.0f);
    /* size 0 writes nothing */
    const int shape0[2] = {3, 0};
    const int64_t st0[2] = {0, 1};
    r = 1.0f;
    mc_unary_strided(t->unary[MC_U_SQUARE][MC_SIMD_FLOAT32], 4, 4, &s, st0, &r, st0, 2, shape0);
    assert_true(r == 1.0f);
    /* a converting kernel (int8 -> float32) with a transposed input */
    static int8_t i8[6 * 7];
    static float f[6 * 7];
    for (int i = 0; i < 42; i++)
        i8[i] = (int8_t)(i - 20);
    const int sh[2] = {6, 7};
    const int64_t ixs[2] = {1, 6}, fys[2] = {7, 1};
    mc_unary_strided(t->convert[MC_SIMD_INT8][MC_SIMD_FLOAT32], 1, 4, i8, ixs, f, fys, 2, sh);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 7; j++)
            assert_true(f[i * 7 + j] == (float)i8[i + j * 6]);
}

static void test_binary_strided_matches_a_naive_loop(void **state)
{
    (void)state;
    const mc_kernel_table *best = mc_kernels_for("avx512");
    if (!best)
        best = mc_kernels_for("avx2");
    if (!best)
        best = mc_kernels_for("neon");
    if (!best)
        best = reference();
    static double a[6 * 7 * 40], b[6 * 7 * 40], y[6 * 7 * 40];
    for (int i = 0; i < 6 * 7 * 40; i++) {
        a[i] = i * 0.5;
        b[i] = 1000.0 - i;
    }
    const int shape[3] = {6, 7, 40};
    const int64_t ys[3] = {280, 40, 1};
    struct {
        int64_t as[3], bs[3];
        int64_t aoff, boff;
    } cases[] = {
        {{280, 40, 1}, {280, 40, 1}, 0, 0},      /* contiguous */
        {{0, 0, 0}, {280, 40, 1}, 5, 0},         /* scalar a */
        {{280, 40, 1}, {0, 0, 0}, 0, 9},         /* scalar b */
        {{0, 0, 0}, {0, 0, 0}, 3, 4},            /* both scalar */
        {{1, 6, 42}, {280, 40, 1}, 0, 0},        /* a transposed */
        {{40, 0, 1}, {0, 1, 7}, 0, 0},           /* broadcasts in the middle */
        {{-280, -40, -1}, {280, 0, -2}, 1679, 79}, /* negative strides */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double *pa = a + cases[c].aoff, *pb = b + cases[c].boff;
        memset(y, 0, sizeof y);
        mc_binary_strided(best->binary[MC_B_SUBTRACT][MC_SIMD_FLOAT64], 8, 8, pa, cases[c].as, pb,
                          cases[c].bs, y, ys, 3, shape);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 7; j++)
                for (int k = 0; k < 40; k++) {
                    double va = pa[i * cases[c].as[0] + j * cases[c].as[1] + k * cases[c].as[2]];
                    double vb = pb[i * cases[c].bs[0] + j * cases[c].bs[1] + k * cases[c].bs[2]];
                    if (y[i * 280 + j * 40 + k] != va - vb)
                        fail_msg("case %zu at (%d,%d,%d): %g, want %g", c, i, j, k,
                                 y[i * 280 + j * 40 + k], va - vb);
                }
    }
    /* comparison into bool with a transposed output */
    static uint8_t o[6 * 7];
    const int sh[2] = {6, 7};
    const int64_t s1[2] = {7, 1}, os[2] = {1, 6};
    mc_binary_strided(best->binary[MC_B_LESS][MC_SIMD_FLOAT64], 8, 1, a, s1, b, s1, o, os, 2, sh);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 7; j++)
            assert_int_equal(o[i + j * 6], a[i * 7 + j] < b[i * 7 + j]);
}

/* ---- ISA choice ---- */

static void test_isa_request_parsing(void **state)
{
    (void)state;
    assert_string_equal(mc_kernels_select("scalar"), "scalar");
    assert_string_equal(mc_kernels_select("bogus"), "scalar");
    assert_string_equal(mc_kernels_select("avx2"), mc_kernels_for("avx2") ? "avx2" : "scalar");
    assert_string_equal(mc_kernels_select("avx512"),
                        mc_kernels_for("avx512") ? "avx512" : "scalar");
    assert_string_equal(mc_kernels_select("neon"), mc_kernels_for("neon") ? "neon" : "scalar");
    const char *best = mc_kernels_select(NULL);
    assert_non_null(mc_kernels_for(best));
    assert_string_equal(mc_kernels_select(""), best);
    assert_null(mc_kernels_for("bogus"));
    assert_null(mc_kernels_for(NULL));
    /* the "every ISA" loops start after ISA 0, the scalar reference */
    assert_string_equal(mc_kernels_isa_name(0), "scalar");
    assert_null(mc_kernels_isa_name(-1));
    for (int k = 0; mc_kernels_isa_name(k) != NULL; k++) {
        const mc_kernel_table *t = mc_kernels_for(mc_kernels_isa_name(k));
        if (t)
            assert_string_equal(t->isa, mc_kernels_isa_name(k));
    }
}

/* Each racer waits at the barrier, then asks for both tables and runs one
 * kernel of each, so that under TSan a fill not ordered before the read
 * shows as a race. Odd racers first look the table up by name (as the
 * choice would make it), racing the fill against the choice. */
enum { RACERS = 16 };

typedef struct racer {
    pthread_barrier_t *start;
    int odd;
    const mc_kernel_table *looked_up, *kern;
    const mc_reduce_table *red;
    float root[8];
    int32_t sum;
} racer;

static void *race_to_first_use(void *arg)
{
    static const float x[8] = {1, 4, 9, 16, 25, 36, 49, 64};
    static const int32_t v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    racer *r = arg;
    pthread_barrier_wait(r->start);
    if (r->odd)
        r->looked_up = mc_kernels_for(mc_kernels_select(getenv("MLX_CPU_ISA")));
    r->kern = mc_kernels();
    if (!r->odd)
        r->looked_up = mc_kernels_for(mc_kernels_select(getenv("MLX_CPU_ISA")));
    r->red = mc_reduce_kernels();
    r->kern->unary[MC_U_SQRT][MC_SIMD_FLOAT32](x, r->root, 8);
    r->red->row[MC_R_SUM][MC_SIMD_INT32](v, 8, 1, 8, &r->sum);
    return NULL;
}

/* Runs `n` racers in the calling process; 0 if they all got the pair of
 * the ISA `want` (NULL: the best this CPU runs) and computed the same,
 * else a code >= 1. */
static int race(int n, const char *want)
{
    pthread_barrier_t start;
    pthread_t th[RACERS];
    racer r[RACERS];
    if (pthread_barrier_init(&start, NULL, (unsigned)n) != 0)
        return 1;
    for (int i = 0; i < n; i++) {
        r[i] = (racer){.start = &start, .odd = i % 2};
        if (pthread_create(&th[i], NULL, race_to_first_use, &r[i]) != 0)
            return 2; /* the others stay blocked; the child exits anyway */
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < n; i++) {
        if (r[i].kern != r[0].kern || r[i].red != r[0].red || r[i].looked_up != r[0].kern)
            return 3;
        if (memcmp(r[i].root, r[0].root, sizeof r[0].root) != 0 || r[i].sum != 36)
            return 4;
    }
    if (want == NULL)
        want = mc_kernels_select(NULL);
    if (r[0].kern != mc_kernels_for(want) || r[0].red != mc_reduce_kernels_for(want))
        return 5;
    if (strcmp(r[0].red->isa, want) != 0 || strcmp(mlx_cpu_isa(), want) != 0)
        return 6;
    return 0;
}

/* Forks, runs fun(arg) in the child with MLX_CPU_ISA set to isa (unset for
 * NULL) and returns the child's exit code (-1 if it did not exit). */
static int in_fresh_process(const char *isa, int (*fun)(const char *), const char *arg)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (isa)
            setenv("MLX_CPU_ISA", isa, 1);
        else
            unsetenv("MLX_CPU_ISA");
        _exit(fun(arg));
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int race_many(const char *want) { return race(RACERS, want); }
static int race_four(const char *want) { return race(4, want); }

/* In a fresh process (nothing filled or chosen yet), many threads asking
 * for the tables at the same moment all get the same pair, the best ISA's,
 * fully filled. Under TSan (CC=clang meson setup -Db_sanitize=thread) it
 * also shows that the fill and the choice reach every reader without a
 * data race. */
static void test_threads_racing_to_first_use_get_one_table(void **state)
{
    (void)state;
    /* nothing here may touch dispatch before the fork */
    int code = in_fresh_process(NULL, race_many, NULL);
    if (code != 0)
        fail_msg("%d threads at first use: failure %d", RACERS, code);
}

/* In a fresh child process, MLX_CPU_ISA decides mc_kernels(),
 * mc_reduce_kernels() and mlx_cpu_isa(), for threads racing to the first
 * use too; an unknown or unavailable name gives scalar. */
static void test_env_override_picks_the_table_in_a_fresh_process(void **state)
{
    (void)state;
    const char *requests[] = {"scalar", "avx2", "avx512", "neon", "bogus", "", NULL};
    for (size_t r = 0; r < sizeof requests / sizeof requests[0]; r++) {
        const char *want = mc_kernels_select(requests[r]);
        int code = in_fresh_process(requests[r], race_four, want);
        if (code != 0)
            fail_msg("MLX_CPU_ISA=%s did not give %s (failure %d)",
                     requests[r] ? requests[r] : "(unset)", want, code);
    }
}

/* Exact operations through the chosen tables against the scalar tables:
 * 0 if every result is bit-identical (NaNs as NaNs), else a code >= 1. */
static int forced_isa_matches_scalar(const char *isa)
{
    enum { N = 1003, ROWS = 3, LEN = N / ROWS };
    static float fa[N], fb[N], fy[N], fz[N];
    static int32_t ia[N], ib[N], iy[N], iz[N];
    static uint16_t hy[N], hz[N];
    static uint32_t ky[ROWS], kz[ROWS];
    const mc_kernel_table *k = mc_kernels(), *ks = mc_kernels_for("scalar");
    const mc_reduce_table *r = mc_reduce_kernels(), *rs = mc_reduce_kernels_for("scalar");
    if (strcmp(k->isa, isa) != 0 || strcmp(r->isa, isa) != 0 || strcmp(mlx_cpu_isa(), isa) != 0)
        return 1;
    fill(MC_SIMD_FLOAT32, fa, N, 1);
    fill(MC_SIMD_FLOAT32, fb, N, 2);
    fill(MC_SIMD_INT32, ia, N, 3);
    fill(MC_SIMD_INT32, ib, N, 4);
    int bad = 0;
    k->binary[MC_B_ADD][MC_SIMD_FLOAT32][MC_VV](fa, fb, fy, N);
    ks->binary[MC_B_ADD][MC_SIMD_FLOAT32][MC_VV](fa, fb, fz, N);
    bad += same(MC_SIMD_FLOAT32, fz, fy, N, 0, "add float32", fa, fb, MC_SIMD_FLOAT32);
    k->binary[MC_B_MULTIPLY][MC_SIMD_INT32][MC_VS](ia, ib, iy, N);
    ks->binary[MC_B_MULTIPLY][MC_SIMD_INT32][MC_VS](ia, ib, iz, N);
    bad += same(MC_SIMD_INT32, iz, iy, N, 0, "multiply int32 by a scalar", ia, NULL, MC_SIMD_INT32);
    k->unary[MC_U_SQRT][MC_SIMD_FLOAT32](fa, fy, N);
    ks->unary[MC_U_SQRT][MC_SIMD_FLOAT32](fa, fz, N);
    bad += same(MC_SIMD_FLOAT32, fz, fy, N, 0, "sqrt float32", fa, NULL, MC_SIMD_FLOAT32);
    k->convert[MC_SIMD_FLOAT32][MC_SIMD_FLOAT16](fa, hy, N);
    ks->convert[MC_SIMD_FLOAT32][MC_SIMD_FLOAT16](fa, hz, N);
    bad += same(MC_SIMD_FLOAT16, hz, hy, N, 0, "float32 -> float16", fa, NULL, MC_SIMD_FLOAT32);
    r->row[MC_R_SUM][MC_SIMD_INT32](ia, LEN, ROWS, LEN, iy);
    rs->row[MC_R_SUM][MC_SIMD_INT32](ia, LEN, ROWS, LEN, iz);
    bad += same(MC_SIMD_INT32, iz, iy, ROWS, 0, "row sum int32", NULL, NULL, MC_SIMD_INT32);
    r->row[MC_R_MAX][MC_SIMD_FLOAT32](fa, LEN, ROWS, LEN, fy);
    rs->row[MC_R_MAX][MC_SIMD_FLOAT32](fa, LEN, ROWS, LEN, fz);
    bad += same(MC_SIMD_FLOAT32, fz, fy, ROWS, 0, "row max float32", NULL, NULL, MC_SIMD_FLOAT32);
    r->arg_row[MC_ARG_MIN][MC_SIMD_INT32](ib, LEN, ROWS, LEN, ky);
    rs->arg_row[MC_ARG_MIN][MC_SIMD_INT32](ib, LEN, ROWS, LEN, kz);
    bad += same(MC_SIMD_UINT32, kz, ky, ROWS, 0, "argmin int32", NULL, NULL, MC_SIMD_INT32);
    r->scan_row[MC_S_SUM][MC_SIMD_INT32](ib, iy, LEN, ROWS, 0, 1);
    rs->scan_row[MC_S_SUM][MC_SIMD_INT32](ib, iz, LEN, ROWS, 0, 1);
    bad += same(MC_SIMD_INT32, iz, iy, N - N % ROWS, 0, "cumsum int32", ib, NULL, MC_SIMD_INT32);
    return bad ? 2 : 0;
}

/* Every ISA this CPU runs can be forced with MLX_CPU_ISA, and then the
 * elementwise and reduction tables both run it and compute what the scalar
 * kernels compute. At least one ISA beyond scalar is forced where the host
 * has one (NEON on aarch64, AVX2 on most x86_64). */
static void test_every_isa_this_cpu_runs_can_be_forced_and_matches_scalar(void **state)
{
    (void)state;
    size_t forced = 0;
    for (int i = 0; mc_kernels_isa_name(i) != NULL; i++) {
        const char *isa = mc_kernels_isa_name(i);
        if (mc_kernels_for(isa) == NULL)
            continue;
        int code = in_fresh_process(isa, forced_isa_matches_scalar, isa);
        if (code != 0)
            fail_msg("MLX_CPU_ISA=%s: failure %d", isa, code);
        forced += i > 0;
    }
    assert_true(forced >= isas_beyond_scalar_expected());
}

/* On aarch64 NEON is baseline: its table exists, dispatch picks it, and so
 * every "every ISA" test above compares NEON with the scalar reference. */
static void test_aarch64_dispatch_picks_neon(void **state)
{
    (void)state;
#if defined(__aarch64__)
    assert_non_null(mc_kernels_for("neon"));
    assert_string_equal(mc_kernels_select(NULL), "neon");
    if (getenv("MLX_CPU_ISA") == NULL)
        assert_string_equal(mlx_cpu_isa(), "neon");
#else
    assert_null(mc_kernels_for("neon"));
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: the fork test needs a process that has not chosen yet */
        /* first: their children must start with nothing chosen */
        cmocka_unit_test(test_threads_racing_to_first_use_get_one_table),
        cmocka_unit_test(test_env_override_picks_the_table_in_a_fresh_process),
        cmocka_unit_test(test_every_isa_this_cpu_runs_can_be_forced_and_matches_scalar),
        cmocka_unit_test(test_isa_request_parsing),
        cmocka_unit_test(test_aarch64_dispatch_picks_neon),
        cmocka_unit_test(test_every_isa_unary_kernel_matches_the_reference),
        cmocka_unit_test(test_every_isa_binary_kernel_matches_the_reference),
        cmocka_unit_test(test_every_isa_convert_kernel_matches_the_reference),
        cmocka_unit_test(test_half_round_trips_are_exact_on_every_isa),
        cmocka_unit_test(test_integer_division_truncates_and_remainder_takes_divisor_sign),
        cmocka_unit_test(test_float_remainder_and_floor_divide_follow_python),
        cmocka_unit_test(test_integer_overflow_wraps),
        cmocka_unit_test(test_integer_power_squares_and_negative_exponent_gives_zero),
        cmocka_unit_test(test_shifts_past_the_width_give_zero_or_sign),
        cmocka_unit_test(test_maximum_and_minimum_propagate_nan_from_either_side),
        cmocka_unit_test(test_round_is_half_to_even_and_sign_of_nan_is_zero),
        cmocka_unit_test(test_reference_math_matches_libm),
        cmocka_unit_test(test_sigmoid_logaddexp_and_erfinv_known_values),
        cmocka_unit_test(test_erfinv_inverts_erf_on_every_isa),
        cmocka_unit_test(test_float32_math_keeps_documented_ulp_bounds),
        cmocka_unit_test(test_own_float32_math_holds_its_bounds_over_the_whole_range),
        cmocka_unit_test(test_own_float32_kernels_agree_in_place_with_out_of_range_lanes),
        cmocka_unit_test(test_conversions_follow_astype_rules),
        cmocka_unit_test(test_complex_comparisons_are_lexicographic),
        cmocka_unit_test(test_bool_arithmetic_is_logical),
        cmocka_unit_test(test_unary_strided_matches_a_naive_loop),
        cmocka_unit_test(test_binary_strided_matches_a_naive_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
