/* The dtypes suite: element sizes, MLX's type promotion as seen through
 * mlx_add/subtract/multiply/divide, and astype conversions (round trips and
 * the edges: truncation, bool, half-precision rounding, wide integers). */
#include <complex.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#define S tu_stream()
#define N_DTYPES 14

static const mlx_dtype all_dtypes[N_DTYPES] = {
    MLX_BOOL, MLX_UINT8, MLX_UINT16, MLX_UINT32, MLX_UINT64, MLX_INT8, MLX_INT16,
    MLX_INT32, MLX_INT64, MLX_FLOAT16, MLX_FLOAT32, MLX_FLOAT64, MLX_BFLOAT16, MLX_COMPLEX64,
};

static const char *dname(mlx_dtype d)
{
    static const char *const names[N_DTYPES] = {"bool", "uint8", "uint16", "uint32", "uint64",
                                                "int8", "int16", "int32", "int64", "float16",
                                                "float32", "float64", "bfloat16", "complex64"};
    return (unsigned)d < N_DTYPES ? names[d] : "?";
}

/* ---- an independent statement of MLX's promotion rule ----
 * MLX's table (mlx/dtype.cpp, after JAX) follows these rules; the test
 * derives each of the 196 entries from them rather than from a copied
 * table, so a typo in either place shows up as a mismatch. */
typedef enum { K_BOOL, K_UINT, K_INT, K_FLOAT, K_COMPLEX } kind;

static kind kind_of(mlx_dtype d)
{
    switch (d) {
    case MLX_BOOL: return K_BOOL;
    case MLX_UINT8: case MLX_UINT16: case MLX_UINT32: case MLX_UINT64: return K_UINT;
    case MLX_INT8: case MLX_INT16: case MLX_INT32: case MLX_INT64: return K_INT;
    case MLX_COMPLEX64: return K_COMPLEX;
    default: return K_FLOAT;
    }
}

static int bits_of(mlx_dtype d)
{
    static const int b[N_DTYPES] = {8, 8, 16, 32, 64, 8, 16, 32, 64, 16, 32, 64, 16, 64};
    return b[d];
}

static mlx_dtype signed_of_bits(int bits)
{
    return bits <= 8 ? MLX_INT8 : bits <= 16 ? MLX_INT16 : bits <= 32 ? MLX_INT32 : MLX_INT64;
}

static mlx_dtype expected_promotion(mlx_dtype a, mlx_dtype b)
{
    kind ka = kind_of(a), kb = kind_of(b);
    if (a == b)
        return a;
    if (ka == K_COMPLEX || kb == K_COMPLEX)
        return MLX_COMPLEX64;
    if (ka == K_BOOL)
        return b;
    if (kb == K_BOOL)
        return a;
    if (ka == K_FLOAT && kb == K_FLOAT) {
        if (a == MLX_FLOAT64 || b == MLX_FLOAT64)
            return MLX_FLOAT64;
        /* float32 with a half type, or float16 with bfloat16 */
        return MLX_FLOAT32;
    }
    if (ka == K_FLOAT)
        return a; /* any float beats any integer, even float16 vs int64 */
    if (kb == K_FLOAT)
        return b;
    if (ka == kb)
        return bits_of(a) >= bits_of(b) ? a : b;
    /* one unsigned, one signed: a signed type wide enough for both, which
     * for uint64 does not exist, so MLX falls back to float32 */
    mlx_dtype u = ka == K_UINT ? a : b, s = ka == K_UINT ? b : a;
    if (u == MLX_UINT64)
        return MLX_FLOAT32;
    int need = 2 * bits_of(u) > bits_of(s) ? 2 * bits_of(u) : bits_of(s);
    return signed_of_bits(need);
}

/* A 0-d array of dtype d holding v (converted as C converts, bool = v != 0). */
static mlx_array scalar_of(mlx_dtype d, double v) { return tu_array_of(d, &v, NULL, 0); }

/* ---- sizes ---- */

static void test_dtype_size_of_every_dtype(void **state)
{
    (void)state;
    static const size_t want[N_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8};
    for (int i = 0; i < N_DTYPES; i++)
        assert_int_equal(mlx_dtype_size(all_dtypes[i]), want[i]);
}

static void test_dtype_size_of_unknown_value_is_zero_with_a_message(void **state)
{
    (void)state;
    int bad[3] = {99, -1, N_DTYPES};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mlx_dtype_size((mlx_dtype)bad[i]), 0);
        tu_expect_error("[mlx_dtype_size]");
    }
}

/* ---- promotion ---- */

static void test_expected_promotion_matches_named_mlx_entries(void **state)
{
    (void)state;
    /* spot checks of the rule above against entries read off MLX's table */
    assert_int_equal(expected_promotion(MLX_UINT8, MLX_INT8), MLX_INT16);
    assert_int_equal(expected_promotion(MLX_UINT32, MLX_INT8), MLX_INT64);
    assert_int_equal(expected_promotion(MLX_INT16, MLX_UINT64), MLX_FLOAT32);
    assert_int_equal(expected_promotion(MLX_INT64, MLX_FLOAT16), MLX_FLOAT16);
    assert_int_equal(expected_promotion(MLX_BFLOAT16, MLX_FLOAT16), MLX_FLOAT32);
    assert_int_equal(expected_promotion(MLX_UINT64, MLX_BFLOAT16), MLX_BFLOAT16);
    assert_int_equal(expected_promotion(MLX_FLOAT64, MLX_COMPLEX64), MLX_COMPLEX64);
    assert_int_equal(expected_promotion(MLX_BOOL, MLX_INT8), MLX_INT8);
    assert_int_equal(expected_promotion(MLX_UINT16, MLX_INT32), MLX_INT32);
}

/* 1 (of dtype a) + 2 (of dtype b), each converted to its own dtype first. */
static double expected_sum(mlx_dtype a, mlx_dtype b, mlx_dtype out)
{
    (void)a;
    double s = 1 + (b == MLX_BOOL ? 1 : 2);
    return out == MLX_BOOL ? (s != 0) : s;
}

static void test_add_promotes_every_pair_like_mlx(void **state)
{
    (void)state;
    int bad = 0;
    for (int i = 0; i < N_DTYPES; i++) {
        for (int j = 0; j < N_DTYPES; j++) {
            mlx_dtype a = all_dtypes[i], b = all_dtypes[j];
            mlx_array x = scalar_of(a, 1), y = scalar_of(b, 2), z = mlx_array_new();
            int rc = mlx_add(&z, x, y, S);
            mlx_dtype want = expected_promotion(a, b);
            if (rc) {
                print_error("add(%s, %s) failed: %s\n", dname(a), dname(b), tu_last_error());
                tu_reset_errors();
                bad++;
            } else if (mlx_array_dtype(z) != want) {
                print_error("add(%s, %s) -> %s, MLX gives %s\n", dname(a), dname(b),
                            dname(mlx_array_dtype(z)), dname(want));
                bad++;
            } else if (tu_get(z, 0) != expected_sum(a, b, want)) {
                print_error("add(%s, %s) = %g, want %g\n", dname(a), dname(b), tu_get(z, 0),
                            expected_sum(a, b, want));
                bad++;
            }
            TU_FREE(x, y, z);
        }
    }
    assert_int_equal(bad, 0);
}

static void test_subtract_and_multiply_promote_like_add(void **state)
{
    (void)state;
    static const mlx_dtype pairs[][2] = {{MLX_UINT8, MLX_INT8},     {MLX_UINT64, MLX_INT32},
                                         {MLX_FLOAT16, MLX_BFLOAT16}, {MLX_INT64, MLX_FLOAT16},
                                         {MLX_UINT16, MLX_INT32},   {MLX_FLOAT32, MLX_FLOAT64}};
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        mlx_array x = scalar_of(pairs[k][0], 6), y = scalar_of(pairs[k][1], 2);
        mlx_array d = mlx_array_new(), m = mlx_array_new();
        assert_int_equal(mlx_subtract(&d, x, y, S), 0);
        assert_int_equal(mlx_multiply(&m, x, y, S), 0);
        mlx_dtype want = expected_promotion(pairs[k][0], pairs[k][1]);
        assert_int_equal(mlx_array_dtype(d), want);
        assert_int_equal(mlx_array_dtype(m), want);
        assert_true(tu_get(d, 0) == 4);
        assert_true(tu_get(m, 0) == 12);
        TU_FREE(x, y, d, m);
    }
}

static void test_divide_of_integers_gives_float32(void **state)
{
    (void)state;
    static const struct {
        mlx_dtype a, b, want;
    } cases[] = {
        {MLX_INT32, MLX_INT32, MLX_FLOAT32},   {MLX_UINT8, MLX_INT8, MLX_FLOAT32},
        {MLX_INT64, MLX_UINT64, MLX_FLOAT32},  {MLX_BOOL, MLX_BOOL, MLX_FLOAT32},
        {MLX_UINT64, MLX_UINT64, MLX_FLOAT32}, {MLX_FLOAT16, MLX_INT32, MLX_FLOAT16},
        {MLX_INT8, MLX_FLOAT64, MLX_FLOAT64},  {MLX_UINT8, MLX_BFLOAT16, MLX_BFLOAT16},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        bool is_bool = cases[k].a == MLX_BOOL;
        mlx_array x = scalar_of(cases[k].a, is_bool ? 1 : 7), y = scalar_of(cases[k].b, is_bool ? 1 : 2);
        mlx_array q = mlx_array_new();
        assert_int_equal(mlx_divide(&q, x, y, S), 0);
        assert_int_equal(mlx_array_dtype(q), cases[k].want);
        assert_true(tu_get(q, 0) == (is_bool ? 1.0 : 3.5));
        TU_FREE(x, y, q);
    }
}

/* ---- astype ---- */

static mlx_array cast(mlx_array a, mlx_dtype d)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_astype(&r, a, d, S), 0);
    assert_int_equal(mlx_array_dtype(r), d);
    return r;
}

static void test_astype_round_trips_of_small_values_are_exact(void **state)
{
    (void)state;
    /* 0, 1, 5 and 100 exist in every dtype but bool (which keeps 0 and 1) */
    static const double vals[4] = {0, 1, 5, 100};
    for (int i = 0; i < N_DTYPES; i++) {
        for (int j = 0; j < N_DTYPES; j++) {
            mlx_dtype a = all_dtypes[i], b = all_dtypes[j];
            int n = (a == MLX_BOOL || b == MLX_BOOL) ? 2 : 4;
            for (int k = 0; k < n; k++) {
                mlx_array x = scalar_of(a, vals[k]);
                mlx_array y = cast(x, b);
                mlx_array z = cast(y, a);
                if (tu_get(z, 0) != vals[k] || tu_get(y, 0) != vals[k])
                    fail_msg("%s -> %s -> %s of %g gave %g via %g", dname(a), dname(b), dname(a),
                             vals[k], tu_get(z, 0), tu_get(y, 0));
                TU_FREE(x, y, z);
            }
        }
    }
}

static void test_astype_float_to_int_truncates_toward_zero(void **state)
{
    (void)state;
    /* expected values from numpy 1.24: np.array(v, np.float32).astype(np.int32) */
    float v[7] = {-2.7f, -0.5f, 0.5f, 2.7f, -1e9f, 1e9f, 2147483520.0f};
    int32_t want[7] = {-2, 0, 0, 2, -1000000000, 1000000000, 2147483520};
    int shape[1] = {7};
    mlx_array a = tu_f32(v, shape, 1), b = cast(a, MLX_INT32);
    assert_memory_equal(mlx_array_data_int32(b), want, sizeof want);
    double dv[4] = {-7.999, 7.999, -0.0, 1e15};
    int64_t w64[4] = {-7, 7, 0, 1000000000000000ll};
    int s4[1] = {4};
    mlx_array c = tu_f64(dv, s4, 1), d = cast(c, MLX_INT64);
    assert_memory_equal(mlx_array_data_int64(d), w64, sizeof w64);
    mlx_array e = cast(a, MLX_INT8); /* -2.7 -> -2 in a narrow type too */
    assert_int_equal(mlx_array_data_int8(e)[0], -2);
    assert_int_equal(mlx_array_data_int8(e)[3], 2);
    TU_FREE(a, b, c, d, e);
}

static void test_astype_to_bool_is_true_for_nonzero_and_nan(void **state)
{
    (void)state;
    float v[6] = {0.0f, -0.0f, 0.1f, NAN, -3.0f, INFINITY};
    bool want[6] = {false, false, true, true, true, true};
    int shape[1] = {6};
    mlx_array a = tu_f32(v, shape, 1), b = cast(a, MLX_BOOL);
    assert_memory_equal(mlx_array_data_bool(b), want, sizeof want);
    int32_t iv[3] = {0, -1, 256}; /* 256 is not truncated to a byte */
    int s3[1] = {3};
    mlx_array c = tu_i32(iv, s3, 1), d = cast(c, MLX_BOOL);
    const bool *db = mlx_array_data_bool(d);
    assert_false(db[0]);
    assert_true(db[1]);
    assert_true(db[2]);
    /* MLX converts complex64 to any other type through its real part
     * (complex64_t::operator float in mlx/types/complex.h, used by the
     * static_cast of backend/cpu/copy.cpp), so 1i is false, unlike numpy */
    mlx_complex64_t cv[3] = {tu_c64(0, 1), tu_c64(0, 0), tu_c64(-2, 0)};
    int s3c[1] = {3};
    mlx_array e = mlx_array_new_data(cv, s3c, 1, MLX_COMPLEX64), f = cast(e, MLX_BOOL);
    assert_false(mlx_array_data_bool(f)[0]);
    assert_false(mlx_array_data_bool(f)[1]);
    assert_true(mlx_array_data_bool(f)[2]);
    TU_FREE(a, b, c, d, e, f);
}

static void test_astype_bool_to_numbers_gives_0_and_1(void **state)
{
    (void)state;
    bool v[3] = {true, false, true};
    int shape[1] = {3};
    mlx_array a = mlx_array_new_data(v, shape, 1, MLX_BOOL);
    for (int i = 1; i < N_DTYPES; i++) {
        mlx_array b = cast(a, all_dtypes[i]);
        assert_true(tu_get(b, 0) == 1 && tu_get(b, 1) == 0 && tu_get(b, 2) == 1);
        mlx_array_free(b);
    }
    mlx_array f = cast(a, MLX_FLOAT32);
    assert_true(mlx_array_data_float32(f)[0] == 1.0f);
    TU_FREE(a, f);
}

static void test_astype_float32_to_float16_rounds_to_nearest_even(void **state)
{
    (void)state;
    /* inputs and expected bits from numpy 1.24: v.astype(np.float16).view(np.uint16) */
    float v[13] = {
        1.0f + 0x1p-11f,              /* tie: down to even 1.0 */
        1.0f + 3 * 0x1p-11f,          /* tie: up to even */
        1.0f + 0x1p-11f + 0x1p-20f,   /* just above the tie */
        65504.0f,                     /* largest half */
        65519.0f,                     /* below the tie with 65536 */
        65520.0f,                     /* tie: to even, which is inf */
        0x1p-24f,                     /* smallest subnormal */
        0x1p-25f,                     /* tie: to even 0 */
        3 * 0x1p-25f,                 /* tie: to even 2 * 2^-24 */
        -0.0f,
        INFINITY,
        -1e-30f,                      /* underflow keeps the sign */
        0x1p-14f - 0x1p-25f,          /* rounds up into the normals */
    };
    uint16_t want[13] = {0x3c00, 0x3c02, 0x3c01, 0x7bff, 0x7bff, 0x7c00, 0x0001,
                         0x0000, 0x0002, 0x8000, 0x7c00, 0x8000, 0x0400};
    int shape[1] = {13};
    mlx_array a = tu_f32(v, shape, 1), h = cast(a, MLX_FLOAT16);
    const uint16_t *got = (const uint16_t *)(const void *)mlx_array_data_float16(h);
    for (int i = 0; i < 13; i++)
        if (got[i] != want[i])
            fail_msg("float16(%a) = 0x%04x, want 0x%04x", (double)v[i], got[i], want[i]);
    float nanv = NAN;
    mlx_array n = tu_f32(&nanv, NULL, 0), nh = cast(n, MLX_FLOAT16);
    uint16_t nb;
    memcpy(&nb, (const void *)mlx_array_data_float16(nh), 2);
    assert_true((nb & 0x7c00) == 0x7c00 && (nb & 0x3ff) != 0);
    TU_FREE(a, h, n, nh);
}

static void test_astype_float16_to_float32_is_exact(void **state)
{
    (void)state;
    uint16_t bits[6] = {0x3c01, 0x0001, 0x03ff, 0x7bff, 0xfc00, 0xc500};
    float want[6] = {1.0009765625f, 0x1p-24f, 1023 * 0x1p-24f, 65504.0f, -INFINITY, -5.0f};
    int shape[1] = {6};
    mlx_array h = mlx_array_new_data(bits, shape, 1, MLX_FLOAT16), f = cast(h, MLX_FLOAT32);
    assert_memory_equal(mlx_array_data_float32(f), want, sizeof want);
    mlx_array d = cast(h, MLX_FLOAT64);
    assert_true(mlx_array_data_float64(d)[1] == 0x1p-24);
    TU_FREE(h, f, d);
}

static void test_astype_float32_to_bfloat16_rounds_to_nearest_even(void **state)
{
    (void)state;
    /* worked by hand: bfloat16 keeps the top 16 bits of a float32 */
    uint32_t in[10] = {
        0x3f808000u, /* 1 + 2^-8: tie, down to even 0x3f80 */
        0x3f818000u, /* 1 + 3*2^-8: tie, up to even 0x3f82 */
        0x3f808001u, /* above the tie: 0x3f81 */
        0x3f807fffu, /* below the tie: 0x3f80 */
        0x7f7fffffu, /* FLT_MAX rounds to inf */
        0x80000000u, /* -0 */
        0x00008000u, /* subnormal tie: to even 0 */
        0x00018000u, /* subnormal tie: up to even 2 */
        0xc0490fdbu, /* -pi: 0xc049 (below the tie) */
        0x7f800000u, /* inf */
    };
    uint16_t want[10] = {0x3f80, 0x3f82, 0x3f81, 0x3f80, 0x7f80, 0x8000, 0x0000, 0x0002, 0xc049, 0x7f80};
    float v[10];
    for (int i = 0; i < 10; i++)
        v[i] = tu_bits_to_f32(in[i]);
    int shape[1] = {10};
    mlx_array a = tu_f32(v, shape, 1), b = cast(a, MLX_BFLOAT16);
    const uint16_t *got = (const uint16_t *)(const void *)mlx_array_data_bfloat16(b);
    for (int i = 0; i < 10; i++)
        if (got[i] != want[i])
            fail_msg("bfloat16(0x%08x) = 0x%04x, want 0x%04x", in[i], got[i], want[i]);
    float nanv = NAN;
    mlx_array n = tu_f32(&nanv, NULL, 0), nb = cast(n, MLX_BFLOAT16);
    uint16_t nbits;
    memcpy(&nbits, (const void *)mlx_array_data_bfloat16(nb), 2);
    assert_true((nbits & 0x7f80) == 0x7f80 && (nbits & 0x7f) != 0);
    /* and back: exact */
    mlx_array back = cast(b, MLX_FLOAT32);
    assert_true(mlx_array_data_float32(back)[8] == tu_bits_to_f32(0xc0490000u));
    TU_FREE(a, b, n, nb, back);
}

static void test_astype_between_half_types_goes_through_float(void **state)
{
    (void)state;
    /* float16 1 + 2^-10 has no bfloat16: rounds (tie-free) to 1.0 */
    uint16_t h[2] = {0x3c01, 0x4248}; /* 1.0009765625, 3.140625 */
    int shape[1] = {2};
    mlx_array a = mlx_array_new_data(h, shape, 1, MLX_FLOAT16), b = cast(a, MLX_BFLOAT16);
    const uint16_t *got = (const uint16_t *)(const void *)mlx_array_data_bfloat16(b);
    assert_int_equal(got[0], 0x3f80);
    assert_int_equal(got[1], 0x4049); /* 3.140625 = 0x40490000 exactly */
    TU_FREE(a, b);
}

static void test_astype_wide_integers_to_float64_round_to_nearest(void **state)
{
    (void)state;
    /* expected values from numpy 1.24: np.array(v, np.int64).astype(np.float64) */
    int64_t v[6] = {(1ll << 53) + 1, (1ll << 53) + 3, 1ll << 62, INT64_MIN, INT64_MAX, -(1ll << 53) - 1};
    double want[6] = {9007199254740992.0, 9007199254740996.0, 4611686018427387904.0,
                      -9223372036854775808.0, 9223372036854775808.0, -9007199254740992.0};
    int shape[1] = {6};
    mlx_array a = mlx_array_new_data(v, shape, 1, MLX_INT64), b = cast(a, MLX_FLOAT64);
    assert_memory_equal(mlx_array_data_float64(b), want, sizeof want);
    uint64_t u = UINT64_MAX;
    mlx_array c = mlx_array_new_data(&u, NULL, 0, MLX_UINT64), d = cast(c, MLX_FLOAT64);
    double got;
    assert_int_equal(mlx_array_item_float64(&got, d), 0);
    assert_true(got == 18446744073709551616.0);
    /* and int64 values that fit exactly come back exactly */
    int64_t e = -(1ll << 53);
    mlx_array x = mlx_array_new_data(&e, NULL, 0, MLX_INT64), y = cast(x, MLX_FLOAT64), z = cast(y, MLX_INT64);
    int64_t back = 0;
    assert_int_equal(mlx_array_item_int64(&back, z), 0);
    assert_true(back == e);
    TU_FREE(a, b, c, d, x, y, z);
}

static void test_astype_narrowing_integers_wraps_modulo(void **state)
{
    (void)state;
    /* expected values from numpy 1.24 (two's complement wrap) */
    int32_t v[5] = {300, -1, -129, 255, 128};
    uint8_t want_u8[5] = {44, 255, 127, 255, 128};
    int8_t want_i8[5] = {44, -1, 127, -1, -128};
    int shape[1] = {5};
    mlx_array a = tu_i32(v, shape, 1), b = cast(a, MLX_UINT8), c = cast(a, MLX_INT8);
    assert_memory_equal(mlx_array_data_uint8(b), want_u8, 5);
    assert_memory_equal(mlx_array_data_int8(c), want_i8, 5);
    mlx_array d = cast(b, MLX_INT32); /* widening unsigned does not sign-extend */
    assert_int_equal(mlx_array_data_int32(d)[1], 255);
    mlx_array e = cast(c, MLX_INT64); /* widening signed does */
    assert_true(mlx_array_data_int64(e)[1] == -1);
    TU_FREE(a, b, c, d, e);
}

static void test_astype_float64_to_float32_rounds_to_nearest_even(void **state)
{
    (void)state;
    double v[4] = {1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-50, 1.0 + 3 * 0x1p-24, 1e300};
    float want[4] = {1.0f, 1.0f + 0x1p-23f, 1.0f + 0x1p-22f, INFINITY};
    int shape[1] = {4};
    mlx_array a = tu_f64(v, shape, 1), b = cast(a, MLX_FLOAT32);
    assert_memory_equal(mlx_array_data_float32(b), want, sizeof want);
    TU_FREE(a, b);
}

static void test_astype_to_and_from_complex64(void **state)
{
    (void)state;
    float v[2] = {1.5f, -2.0f};
    int shape[1] = {2};
    mlx_array a = tu_f32(v, shape, 1), c = cast(a, MLX_COMPLEX64);
    const mlx_complex64_t *cv = mlx_array_data_complex64(c);
    assert_true(crealf(cv[0]) == 1.5f && cimagf(cv[0]) == 0.0f);
    assert_true(crealf(cv[1]) == -2.0f && cimagf(cv[1]) == 0.0f);
    mlx_complex64_t z = tu_c64(3.25f, 7.0f);
    mlx_array y = mlx_array_new_data(&z, NULL, 0, MLX_COMPLEX64), r = cast(y, MLX_FLOAT32);
    float re = 0;
    assert_int_equal(mlx_array_item_float32(&re, r), 0);
    assert_true(re == 3.25f); /* MLX keeps the real part */
    TU_FREE(a, c, y, r);
}

static void test_astype_to_the_same_dtype_keeps_values(void **state)
{
    (void)state;
    int32_t v[3] = {1, -2, 3};
    int shape[1] = {3};
    mlx_array a = tu_i32(v, shape, 1), b = cast(a, MLX_INT32);
    assert_memory_equal(mlx_array_data_int32(b), v, sizeof v);
    TU_FREE(a, b);
}

#define T(f) cmocka_unit_test_setup_teardown(f, NULL, tu_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_dtype_size_of_every_dtype),
        T(test_dtype_size_of_unknown_value_is_zero_with_a_message),
        T(test_expected_promotion_matches_named_mlx_entries),
        T(test_add_promotes_every_pair_like_mlx),
        T(test_subtract_and_multiply_promote_like_add),
        T(test_divide_of_integers_gives_float32),
        T(test_astype_round_trips_of_small_values_are_exact),
        T(test_astype_float_to_int_truncates_toward_zero),
        T(test_astype_to_bool_is_true_for_nonzero_and_nan),
        T(test_astype_bool_to_numbers_gives_0_and_1),
        T(test_astype_float32_to_float16_rounds_to_nearest_even),
        T(test_astype_float16_to_float32_is_exact),
        T(test_astype_float32_to_bfloat16_rounds_to_nearest_even),
        T(test_astype_between_half_types_goes_through_float),
        T(test_astype_wide_integers_to_float64_round_to_nearest),
        T(test_astype_narrowing_integers_wraps_modulo),
        T(test_astype_float64_to_float32_rounds_to_nearest_even),
        T(test_astype_to_and_from_complex64),
        T(test_astype_to_the_same_dtype_keeps_values),
    };
    return cmocka_run_group_tests_name("dtypes", tests, tu_group_setup, tu_group_teardown);
}
