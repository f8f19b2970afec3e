/* What the quantization suites (test_quant.c, test_quant_fp.c) share: the
 * input formula of their fixture scripts (scripts/make_quant_fixtures.py
 * and make_quant_fp_fixtures.py gen()), arrays of it, and exact
 * comparison with float32 bit patterns. Static functions: each suite is
 * its own program and includes this once. */
#ifndef MC_TEST_QUANT_INPUTS_H
#define MC_TEST_QUANT_INPUTS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

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

#endif
