/* What the quantization suites (test_quant.c, test_quant_fp.c) share: the
 * input formula of their fixture scripts (scripts/make_quant_fixtures.py
 * and make_quant_fp_fixtures.py gen()), arrays of it, exact comparison
 * with float32 bit patterns, and the builds of simd/quant_k.c's kernels.
 * Static functions: each suite is its own program and includes this
 * once. */
#ifndef MC_TEST_QUANT_INPUTS_H
#define MC_TEST_QUANT_INPUTS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "simd/quant.h"
#include "simd/simd.h"
#include "test_util.h"

/* Element i of kind 0 (values over [-3, 3]), 1 (halves: rounding ties),
 * 2 (kind 0 scaled by 2^-6 .. 2^6 per 16 values) or 3 (kind 0 with every
 * fourth run of 16 values zero), exact in float32. */
static float qi_gen(int64_t i, int seed, int kind)
{
    float base = (float)((double)((i * 7919 + (int64_t)seed * 104729) % 1999 - 999) / 333.0);
    switch (kind) {
    case 1: return (float)((double)((i * 13 + seed) % 31 - 15) / 2.0);
    case 2: return ldexpf(base, (int)((i / 16) % 13) - 6);
    case 3: return (i / 16) % 4 == 1 ? 0.0f : base;
    default: return base;
    }
}

static mlx_array qi_gen_array(int ndim, const int *shape, int seed, int kind, mlx_dtype d)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    float *v = malloc(sizeof(float) * (n ? n : 1));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = qi_gen((int64_t)i, seed, kind);
    mlx_array a = tu_f32(v, shape, ndim);
    free(v);
    if (d != MLX_FLOAT32)
        assert_int_equal(mlx_astype(&a, a, d, tu_stream()), 0);
    return a;
}

/* a as float32, evaluated: a new array the caller frees. */
static mlx_array qi_as_f32(mlx_array a)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_astype(&r, a, MLX_FLOAT32, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    return r;
}

/* Asserts a (any float dtype) equals the float32 bit patterns exactly. */
static void qi_expect_bits(mlx_array a, const uint32_t *bits, size_t n, const char *what, int ci)
{
    mlx_array f = qi_as_f32(a);
    assert_int_equal(mlx_array_size(f), n);
    const float *v = mlx_array_data_float32(f);
    for (size_t i = 0; i < n; i++)
        if (tu_f32_to_bits(v[i]) != bits[i])
            fail_msg("case %d %s[%zu]: %.9g, MLX %.9g", ci, what, i, (double)v[i],
                     (double)tu_bits_to_f32(bits[i]));
    mlx_array_free(f);
}

/* A call failed with MLX's message exactly. */
static void qi_expect_mlx_error(int rc, const char *msg)
{
    assert_int_not_equal(rc, 0);
    if (strcmp(tu_last_error(), msg) != 0)
        fail_msg("message:\n  %s\nMLX:\n  %s", tu_last_error(), msg);
    tu_reset_errors();
}

/* Each build of simd/quant_k.c (quant_pick.c chooses one at run time). */
#define QK_DECLARE(v)                                                                                       \
    void mc_qdequant_f32_##v(const mc_qmat *q, int row, int e0, int count, float *out);                     \
    size_t mc_qgemv_t_scratch_##v(const mc_qmat *q, int M, int K);                                          \
    void mc_qgemv_t_##v(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *out, size_t ldo, \
                        int n0, int n1, float *tmp);
QK_DECLARE(generic)
#if defined(__x86_64__)
QK_DECLARE(avx2)
QK_DECLARE(avx512)
#endif

typedef void (*qi_gemv_fn)(const mc_qmat *, int, const float *, int, size_t, float *, size_t, int, int, float *);
typedef void (*qi_deq_fn)(const mc_qmat *, int, int, int, float *);

/* The builds this CPU runs: [0] generic, [1] AVX2, [2] AVX-512, NULL
 * where it cannot. */
static void qi_kernel_builds(qi_gemv_fn gemv[3], qi_deq_fn deq[3])
{
    gemv[0] = mc_qgemv_t_generic;
    deq[0] = mc_qdequant_f32_generic;
    gemv[1] = gemv[2] = NULL;
    deq[1] = deq[2] = NULL;
#if defined(__x86_64__)
    if (mc_kernels_for("avx2")) {
        gemv[1] = mc_qgemv_t_avx2;
        deq[1] = mc_qdequant_f32_avx2;
    }
    if (mc_kernels_for("avx512")) {
        gemv[2] = mc_qgemv_t_avx512;
        deq[2] = mc_qdequant_f32_avx512;
    }
#endif
}

#endif
