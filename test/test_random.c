/* mlx-c's random.h against MLX 0.31.1: every function's output bytes,
 * dtype and shape equal MLX's for the calls in
 * test/fixtures/random_op_cases.h (scripts/make_random_op_fixtures.py),
 * bits equal test/fixtures/random_cases.h, results do not depend on the
 * thread count, bad arguments fail with MLX's errors, and the global key
 * hands each of several threads distinct keys of its sequence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures/random_cases.h"
#include "fixtures/random_op_cases.h"
#include "runtime/alloc.h"
#include "fault_sweep.h"
#include "test_util.h"

static const char *const dtype_names[] = {"bool",    "uint8",   "uint16",   "uint32",   "uint64",
                                          "int8",    "int16",   "int32",    "int64",    "float16",
                                          "float32", "float64", "bfloat16", "complex64"};

static mlx_dtype dtype_named(const char *name)
{
    for (int d = 0; d < (int)(sizeof dtype_names / sizeof dtype_names[0]); d++)
        if (strcmp(dtype_names[d], name) == 0)
            return (mlx_dtype)d;
    fail_msg("unknown dtype %s", name);
    return MLX_FLOAT32;
}

static mlx_array param_array(const ro_param *p)
{
    if (!p->dtype)
        return mlx_array_new();
    return tu_array_of(dtype_named(p->dtype), ro_params + p->off, p->shape, p->ndim);
}

static mlx_array key_of(const ro_case *c)
{
    if (!c->use_key)
        return mlx_array_new();
    int two = 2;
    return mlx_array_new_data(c->key, &two, 1, MLX_UINT32);
}

/* Calls the case's function; returns its status. */
static int call(const ro_case *c, mlx_array *out)
{
    mlx_stream s = tu_stream();
    mlx_array key = key_of(c), p0 = param_array(&c->p0), p1 = param_array(&c->p1), other = mlx_array_new();
    mlx_dtype dt = dtype_named(c->dtype);
    const char *fn = c->fn;
    int rc = -1;
    if (c->use_seed)
        mlx_random_seed(c->seed);
    if (!strcmp(fn, "key"))
        rc = mlx_random_key(out, c->seed);
    else if (!strcmp(fn, "split0"))
        rc = mlx_random_split(out, &other, key, s);
    else if (!strcmp(fn, "split1"))
        rc = mlx_random_split(&other, out, key, s);
    else if (!strcmp(fn, "split_num"))
        rc = mlx_random_split_num(out, key, c->num, s);
    else if (!strcmp(fn, "uniform"))
        rc = mlx_random_uniform(out, p0, p1, c->shape, (size_t)c->ndim, dt, key, s);
    else if (!strcmp(fn, "normal"))
        rc = mlx_random_normal(out, c->shape, (size_t)c->ndim, dt, (float)c->a, (float)c->b, key, s);
    else if (!strcmp(fn, "normal_broadcast"))
        rc = mlx_random_normal_broadcast(out, c->shape, (size_t)c->ndim, dt, p0, p1, key, s);
    else if (!strcmp(fn, "gumbel"))
        rc = mlx_random_gumbel(out, c->shape, (size_t)c->ndim, dt, key, s);
    else if (!strcmp(fn, "laplace"))
        rc = mlx_random_laplace(out, c->shape, (size_t)c->ndim, dt, (float)c->a, (float)c->b, key, s);
    else if (!strcmp(fn, "truncated_normal"))
        rc = mlx_random_truncated_normal(out, p0, p1, c->shape, (size_t)c->ndim, dt, key, s);
    else if (!strcmp(fn, "bernoulli"))
        rc = mlx_random_bernoulli(out, p0, c->shape, (size_t)c->ndim, key, s);
    else if (!strcmp(fn, "randint"))
        rc = mlx_random_randint(out, p0, p1, c->shape, (size_t)c->ndim, dt, key, s);
    else if (!strcmp(fn, "categorical"))
        rc = mlx_random_categorical(out, p0, c->axis, key, s);
    else if (!strcmp(fn, "categorical_shape"))
        rc = mlx_random_categorical_shape(out, p0, c->axis, c->shape, (size_t)c->ndim, key, s);
    else if (!strcmp(fn, "categorical_num_samples"))
        rc = mlx_random_categorical_num_samples(out, p0, c->axis, c->num, key, s);
    else if (!strcmp(fn, "permutation_arange"))
        rc = mlx_random_permutation_arange(out, c->num, key, s);
    else if (!strcmp(fn, "multivariate_normal"))
        rc = mlx_random_multivariate_normal(out, p0, p1, c->shape, (size_t)c->ndim, dt, key, s);
    else if (!strcmp(fn, "permutation"))
        rc = mlx_random_permutation(out, p0, c->axis, key, s);
    else
        fail_msg("no call for %s", fn);
    mlx_array_free(key), mlx_array_free(p0), mlx_array_free(p1), mlx_array_free(other);
    return rc;
}

/* The row-major bytes of an evaluated array (a contiguous copy in *tmp). */
static const void *bytes_of(mlx_array a, mlx_array *tmp)
{
    assert_int_equal(mlx_contiguous(tmp, a, false, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(*tmp), 0);
    switch (mlx_array_dtype(*tmp)) {
    case MLX_BOOL: return mlx_array_data_bool(*tmp);
    case MLX_UINT8: return mlx_array_data_uint8(*tmp);
    case MLX_UINT16: return mlx_array_data_uint16(*tmp);
    case MLX_UINT32: return mlx_array_data_uint32(*tmp);
    case MLX_UINT64: return mlx_array_data_uint64(*tmp);
    case MLX_INT8: return mlx_array_data_int8(*tmp);
    case MLX_INT16: return mlx_array_data_int16(*tmp);
    case MLX_INT32: return mlx_array_data_int32(*tmp);
    case MLX_INT64: return mlx_array_data_int64(*tmp);
    case MLX_FLOAT32: return mlx_array_data_float32(*tmp);
    case MLX_FLOAT64: return mlx_array_data_float64(*tmp);
    case MLX_FLOAT16: return (const void *)mlx_array_data_float16(*tmp);
    case MLX_BFLOAT16: return (const void *)mlx_array_data_bfloat16(*tmp);
    default: fail_msg("unexpected dtype"); return NULL;
    }
}

static void check_case(const ro_case *c)
{
    mlx_array out = mlx_array_new(), tmp = mlx_array_new();
    if (call(c, &out) != 0)
        fail_msg("%s: the call failed: %s", c->name, tu_last_error());
    if (mlx_array_dtype(out) != dtype_named(c->out_dtype))
        fail_msg("%s: dtype %s, MLX %s", c->name, dtype_names[mlx_array_dtype(out)], c->out_dtype);
    if (!tu_shape_is(out, c->out_ndim, c->out_shape))
        fail_msg("%s: shape differs from MLX's", c->name);
    const unsigned char *got = bytes_of(out, &tmp), *want = ro_bytes + c->off;
    assert_int_equal(mlx_array_nbytes(tmp), c->nbytes);
    for (size_t i = 0; i < c->nbytes; i++)
        if (got[i] != want[i])
            fail_msg("%s: byte %zu is 0x%02x, MLX 0x%02x", c->name, i, got[i], want[i]);
    mlx_array_free(out), mlx_array_free(tmp);
}

static void run_cases(const char *prefix)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof ro_cases / sizeof ro_cases[0]; i++)
        if (strncmp(ro_cases[i].name, prefix, strlen(prefix)) == 0) {
            check_case(&ro_cases[i]);
            n++;
        }
    assert_true(n > 0);
}

static void test_keys_and_splits_equal_mlx(void **state)
{
    (void)state;
    run_cases("key_");
    run_cases("split");
}

static void test_uniform_equals_mlx_in_every_dtype_shape_and_broadcast(void **state)
{
    (void)state;
    run_cases("uniform");
}

static void test_normal_equals_mlx_with_loc_scale_and_broadcast_arrays(void **state)
{
    (void)state;
    run_cases("normal");
}

static void test_gumbel_laplace_truncated_normal_equal_mlx(void **state)
{
    (void)state;
    run_cases("gumbel");
    run_cases("laplace");
    run_cases("truncated_normal");
}

static void test_bernoulli_and_randint_equal_mlx(void **state)
{
    (void)state;
    run_cases("bernoulli");
    run_cases("randint");
}

static void test_categorical_three_forms_equal_mlx(void **state)
{
    (void)state;
    run_cases("categorical");
}

static void test_permutations_equal_mlx(void **state)
{
    (void)state;
    run_cases("permutation");
    mlx_array p = mlx_array_new();
    mlx_array key = mlx_array_new();
    assert_int_equal(mlx_random_key(&key, 3), 0);
    assert_int_equal(mlx_random_permutation_arange(&p, 0, key, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(p), 0); /* MLX dies here (SIGFPE); we give the empty result */
    assert_int_equal(mlx_array_size(p), 0);
    mlx_array_free(p), mlx_array_free(key);
}

/* multivariate_normal goes through LAPACK's SVD and two sgemm calls, whose
 * last bits depend on the LAPACK and BLAS builds: MLX's values within a
 * small relative error (the standard normal draw itself is bit for bit). */
static void test_multivariate_normal_matches_mlx_closely(void **state)
{
    (void)state;
    size_t seen = 0;
    double worst = 0;
    for (size_t i = 0; i < sizeof ro_cases / sizeof ro_cases[0]; i++) {
        const ro_case *c = &ro_cases[i];
        if (strcmp(c->fn, "multivariate_normal") != 0)
            continue;
        mlx_array out = mlx_array_new(), tmp = mlx_array_new();
        assert_int_equal(call(c, &out), 0);
        assert_true(tu_shape_is(out, c->out_ndim, c->out_shape));
        const float *got = bytes_of(out, &tmp);
        const float *want = (const float *)(const void *)(ro_bytes + c->off);
        for (size_t j = 0; j < c->nbytes / 4; j++) {
            float w;
            memcpy(&w, (const unsigned char *)want + 4 * j, 4);
            double err = fabs((double)got[j] - w) / (fabs(w) > 1 ? fabs(w) : 1);
            worst = err > worst ? err : worst;
            if (err > 1e-5)
                fail_msg("%s: element %zu is %.9g, MLX %.9g", c->name, j, got[j], w);
        }
        mlx_array_free(out), mlx_array_free(tmp);
        seen++;
    }
    assert_int_equal(seen, 2);
    print_message("multivariate_normal: largest relative difference from MLX %.3g\n", worst);
}

static void test_global_sequence_after_seed_equals_mlx(void **state)
{
    (void)state;
    run_cases("global_");
}

static void test_bits_equal_mlx_for_every_width(void **state)
{
    (void)state;
    size_t seen = 0;
    for (size_t i = 0; i < sizeof rf_cases / sizeof rf_cases[0]; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "bits") != 0)
            continue;
        int width = (int)c->p[0], shape = (int)c->n, two = 2;
        mlx_array key = mlx_array_new_data(c->key, &two, 1, MLX_UINT32), out = mlx_array_new();
        assert_int_equal(mlx_random_bits(&out, &shape, 1, width, key, tu_stream()), 0);
        for (size_t j = 0; j < c->n; j++)
            assert_int_equal((uint64_t)tu_get(out, j), rf_vals[c->off + j]);
        mlx_array_free(key), mlx_array_free(out);
        seen++;
    }
    assert_true(seen >= 48);
}

/* One large draw with 1 and with 2 threads: the same bytes. */
static void test_large_draws_do_not_depend_on_the_thread_count(void **state)
{
    (void)state;
    int threads = mlx_cpu_get_num_threads();
    const int shape = 300001;
    mlx_array key = mlx_array_new();
    assert_int_equal(mlx_random_key(&key, 77), 0);
    for (int kind = 0; kind < 3; kind++) {
        mlx_array a[2] = {mlx_array_new(), mlx_array_new()}, t[2] = {mlx_array_new(), mlx_array_new()};
        const void *bytes[2];
        for (int k = 0; k < 2; k++) {
            assert_int_equal(mlx_cpu_set_num_threads(k + 1), 0);
            if (kind == 0)
                assert_int_equal(mlx_random_normal(&a[k], &shape, 1, MLX_FLOAT32, 0, 1, key, tu_stream()), 0);
            else if (kind == 1)
                assert_int_equal(mlx_random_bits(&a[k], &shape, 1, 1, key, tu_stream()), 0);
            else
                assert_int_equal(mlx_random_gumbel(&a[k], &shape, 1, MLX_FLOAT16, key, tu_stream()), 0);
            bytes[k] = bytes_of(a[k], &t[k]);
        }
        assert_memory_equal(bytes[0], bytes[1], mlx_array_nbytes(t[0]));
        for (int k = 0; k < 2; k++)
            mlx_array_free(a[k]), mlx_array_free(t[k]);
    }
    assert_int_equal(mlx_cpu_set_num_threads(threads), 0);
    mlx_array_free(key);
}

/* Mean and variance of 1M draws within 5 standard errors. */
static void test_moments_of_a_million_draws(void **state)
{
    (void)state;
    const int n = 1 << 20;
    mlx_array key = mlx_array_new(), a = mlx_array_new(), t = mlx_array_new();
    assert_int_equal(mlx_random_key(&key, 5), 0);
    struct {
        int which;
        double mean, var;
    } want[] = {{0, 0.5, 1.0 / 12}, {1, 0.0, 1.0}, {2, 0.5772156649, 1.6449340668}, {3, 0.0, 2.0}};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        mlx_array lo = mlx_array_new_float(0), hi = mlx_array_new_float(1);
        int rc = want[w].which == 0   ? mlx_random_uniform(&a, lo, hi, &n, 1, MLX_FLOAT32, key, tu_stream())
                 : want[w].which == 1 ? mlx_random_normal(&a, &n, 1, MLX_FLOAT32, 0, 1, key, tu_stream())
                 : want[w].which == 2 ? mlx_random_gumbel(&a, &n, 1, MLX_FLOAT32, key, tu_stream())
                                      : mlx_random_laplace(&a, &n, 1, MLX_FLOAT32, 0, 1, key, tu_stream());
        assert_int_equal(rc, 0);
        const float *v = bytes_of(a, &t);
        double s = 0, s2 = 0;
        for (int i = 0; i < n; i++)
            s += v[i];
        double m = s / n;
        for (int i = 0; i < n; i++)
            s2 += (v[i] - m) * (v[i] - m);
        double var = s2 / (n - 1);
        if (fabs(m - want[w].mean) > 5 * sqrt(want[w].var / n) || fabs(var / want[w].var - 1) > 0.01)
            fail_msg("distribution %d: mean %g var %g, want %g %g", want[w].which, m, var, want[w].mean,
                     want[w].var);
        mlx_array_free(lo), mlx_array_free(hi);
    }
    mlx_array_free(key), mlx_array_free(a), mlx_array_free(t);
}

/* -- errors ----------------------------------------------------------------- */

static void test_bad_arguments_report_mlx_errors(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array out = mlx_array_new(), key = mlx_array_new(), f = mlx_array_new_float(0.5f);
    mlx_array lo = mlx_array_new_float(0), hi = mlx_array_new_float(1), i = mlx_array_new_int(3);
    int shape[2] = {2, 3}, neg = -1, two = 2;
    assert_int_equal(mlx_random_key(&key, 1), 0);
    float fk[2] = {1, 2};
    mlx_array fkey = mlx_array_new_data(fk, &two, 1, MLX_FLOAT32);
    int three = 3;
    uint32_t k3[3] = {1, 2, 3};
    mlx_array key3 = mlx_array_new_data(k3, &three, 1, MLX_UINT32);

    assert_int_not_equal(mlx_random_bits(&out, shape, 2, 3, key, s), 0);
    tu_expect_error("[bits] Bit width must be in {1, 2, 4} but got 3.");
    assert_int_not_equal(mlx_random_bits(&out, shape, 2, 4, fkey, s), 0);
    tu_expect_error("[bits] Expected key type uint32 but received float32.");
    assert_int_not_equal(mlx_random_uniform(&out, lo, hi, shape, 2, MLX_FLOAT32, key3, s), 0);
    tu_expect_error("[uniform] Expected key shape (2) but received (3).");
    assert_int_not_equal(mlx_random_bits(&out, &neg, 1, 4, key, s), 0);
    tu_expect_error("[bits] Negative dimensions");
    assert_int_not_equal(mlx_random_split_num(&out, key, -2, s), 0);
    tu_expect_error("[split]");
    assert_int_not_equal(mlx_random_uniform(&out, lo, hi, shape, 2, MLX_INT32, key, s), 0);
    tu_expect_error("[uniform] Can only generate uniform numbers with real floating point type");
    assert_int_not_equal(mlx_random_uniform(&out, lo, hi, shape, 2, MLX_FLOAT64, key, s), 0);
    tu_expect_error("[uniform] Unsupported type float64");
    mlx_array wide = mlx_array_new();
    int w4 = 4;
    float w[4] = {0, 1, 2, 3};
    wide = mlx_array_new_data(w, &w4, 1, MLX_FLOAT32);
    assert_int_not_equal(mlx_random_uniform(&out, lo, wide, shape, 2, MLX_FLOAT32, key, s), 0);
    assert_true(tu_last_error_has("[uniform]"));
    tu_reset_errors();
    int one = 1;
    assert_int_not_equal(mlx_random_uniform(&out, lo, wide, &one, 1, MLX_FLOAT32, key, s), 0);
    tu_expect_error("[uniform] Cannot generate random values of shape (1) from broadcasted shape (4).");
    assert_int_not_equal(mlx_random_normal(&out, shape, 2, MLX_INT32, 0, 1, key, s), 0);
    tu_expect_error("[normal] Can only generate");
    assert_int_not_equal(mlx_random_gumbel(&out, shape, 2, MLX_FLOAT64, key, s), 0);
    tu_expect_error("[gumbel] Unsupported type float64");
    assert_int_not_equal(mlx_random_laplace(&out, shape, 2, MLX_UINT8, 0, 1, key, s), 0);
    tu_expect_error("[laplace] Can only generate");
    assert_int_not_equal(mlx_random_truncated_normal(&out, lo, hi, shape, 2, MLX_INT32, key, s), 0);
    tu_expect_error("[truncated_normal] trunc_normal only accepts floating point dtypes");
    assert_int_not_equal(mlx_random_bernoulli(&out, i, shape, 2, key, s), 0);
    tu_expect_error("[bernoulli] bernoulli probability `p` must be a float type, not int32.");
    assert_int_not_equal(mlx_random_bernoulli(&out, wide, &one, 1, key, s), 0);
    assert_true(tu_error_count() == 1);
    tu_reset_errors();
    assert_int_not_equal(mlx_random_randint(&out, i, i, shape, 2, MLX_FLOAT32, key, s), 0);
    tu_expect_error("[randint] randint only accepts integer dtypes and bool, not float32.");
    assert_int_not_equal(mlx_random_categorical(&out, wide, 1, key, s), 0);
    tu_expect_error("[categorical] Invalid axis 1 for logits with 1 dimensions.");
    mlx_array sq = mlx_array_new();
    int two_two[2] = {2, 2};
    assert_int_equal(mlx_reshape(&sq, wide, two_two, 2, s), 0);
    assert_int_not_equal(mlx_random_categorical_shape(&out, sq, 0, shape, 2, key, s), 0);
    mlx_array_free(sq);
    tu_expect_error("[categorical] Requested shape (2,3) is not broadcast compatible with reduced logits shape");
    assert_int_not_equal(mlx_random_categorical_num_samples(&out, wide, 0, -1, key, s), 0);
    tu_expect_error("[categorical]");
    assert_int_not_equal(mlx_random_permutation_arange(&out, -3, key, s), 0);
    tu_expect_error("[permutation]");
    assert_int_not_equal(mlx_random_permutation(&out, wide, 2, key, s), 0);
    tu_expect_error("[permutation]");
    assert_int_not_equal(mlx_random_uniform(&out, mlx_array_new(), hi, shape, 2, MLX_FLOAT32, key, s), 0);
    tu_expect_error("[uniform]");
    float cv[6] = {1, 0, 0, 1, 0, 0};
    int c23[2] = {2, 3}, c22[2] = {2, 2};
    mlx_array cov23 = mlx_array_new_data(cv, c23, 2, MLX_FLOAT32),
              cov22 = mlx_array_new_data(cv, c22, 2, MLX_FLOAT32);
    assert_int_not_equal(mlx_random_multivariate_normal(&out, wide, cov22, shape, 2, MLX_FLOAT16, key, s), 0);
    tu_expect_error("[multivariate_normal] dtype must be float32, not float16.");
    assert_int_not_equal(mlx_random_multivariate_normal(&out, wide, wide, shape, 2, MLX_FLOAT32, key, s), 0);
    tu_expect_error("[multivariate_normal] cov must have at least two dimensions.");
    assert_int_not_equal(mlx_random_multivariate_normal(&out, wide, cov23, shape, 2, MLX_FLOAT32, key, s), 0);
    tu_expect_error("[multivariate_normal] last two dimensions of cov must be equal, not 2 and 3.");
    assert_int_not_equal(mlx_random_multivariate_normal(&out, wide, cov22, shape, 2, MLX_FLOAT32, key, s), 0);
    tu_expect_error("[multivariate_normal] mean (last dimension 4) and cov (2 x 2) must have compatible shapes.");
    mlx_array_free(cov23), mlx_array_free(cov22);
    assert_null(out.ctx); /* no failed call wrote a result */
    mlx_array_free(key), mlx_array_free(f), mlx_array_free(lo), mlx_array_free(hi), mlx_array_free(i);
    mlx_array_free(fkey), mlx_array_free(key3), mlx_array_free(wide);
}

/* -- the global key from several threads ------------------------------------ */

enum { THREADS = 4, DRAWS = 200 };

static void *draw_keys(void *arg)
{
    uint32_t *keys = arg;
    int two = 2;
    mlx_stream s = mlx_default_cpu_stream_new();
    for (int d = 0; d < DRAWS; d++) {
        mlx_array k = mlx_array_new();
        /* bits of one key's width: the two words of the drawn key's hash */
        if (mlx_random_bits(&k, &two, 1, 4, mlx_array_new(), s) || mlx_array_eval(k)) {
            mlx_stream_free(s);
            return NULL;
        }
        keys[2 * d] = mlx_array_data_uint32(k)[0];
        keys[2 * d + 1] = mlx_array_data_uint32(k)[1];
        mlx_array_free(k);
    }
    mlx_stream_free(s);
    return arg;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0;
}

static void test_global_key_from_threads_gives_each_draw_of_the_sequence_once(void **state)
{
    (void)state;
    static uint32_t got[THREADS][2 * DRAWS], want[THREADS][2 * DRAWS];
    /* the sequence drawn by one thread */
    mlx_random_seed(99);
    for (int t = 0; t < THREADS; t++)
        assert_non_null(draw_keys(want[t]));
    mlx_random_seed(99);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, draw_keys, got[t]), 0);
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        assert_non_null(r);
    }
    qsort(got, THREADS * DRAWS, 2 * sizeof(uint32_t), cmp_pair);
    qsort(want, THREADS * DRAWS, 2 * sizeof(uint32_t), cmp_pair);
    assert_memory_equal(got, want, sizeof got);
    const uint32_t *flat = &got[0][0];
    for (int d = 1; d < THREADS * DRAWS; d++)
        assert_true(cmp_pair(flat + 2 * d - 2, flat + 2 * d) < 0);
}

#ifdef MC_FAULT_INJECTION
/* Every random op, with the Nth allocation failing for each N: either the
 * call fails with exactly one message, or it succeeds with nothing
 * reported; either way no array data is left behind. */
typedef struct fault_in {
    mlx_array key, l, h, cov, mean;
} fault_in;

/* The calls, with inputs made before the hook is armed (so a failure is
 * one of the random ops' own). Returns the first failing call's status. */
static int fault_scenario(void *ctx)
{
    const fault_in *in = ctx;
    mlx_stream s = tu_stream();
    const int n3 = 3, sh[2] = {2, 3}, two = 2;
    mlx_array o = mlx_array_new(), o2 = mlx_array_new(), key = in->key, l = in->l, h = in->h;
    int rc = mlx_random_uniform(&o, l, h, sh, 2, MLX_FLOAT16, key, s) || mlx_array_eval(o) ||
             mlx_random_normal_broadcast(&o, &n3, 1, MLX_FLOAT32, l, h, key, s) || mlx_array_eval(o) ||
             mlx_random_truncated_normal(&o, l, h, sh, 2, MLX_FLOAT32, key, s) || mlx_array_eval(o) ||
             mlx_random_categorical_num_samples(&o, l, 0, 4, key, s) || mlx_array_eval(o) ||
             mlx_random_bernoulli(&o, h, sh, 2, key, s) || mlx_array_eval(o) ||
             mlx_random_randint(&o, h, h, sh, 2, MLX_INT32, key, s) || mlx_array_eval(o) ||
             mlx_random_permutation(&o, l, 0, key, s) || mlx_array_eval(o) ||
             mlx_random_multivariate_normal(&o, in->mean, in->cov, &two, 1, MLX_FLOAT32, key, s) ||
             mlx_array_eval(o) || mlx_random_split(&o, &o2, key, s) || mlx_array_eval(o2) ||
             mlx_random_gumbel(&o, sh, 2, MLX_BFLOAT16, mlx_array_new(), s) || mlx_array_eval(o);
    mlx_array_free(o), mlx_array_free(o2);
    return rc;
}

static void test_random_ops_fail_cleanly_at_every_allocation(void **state)
{
    (void)state;
    const float lo[3] = {0, 1, 2}, cv[4] = {2, 0.5f, 0.5f, 1}, z[2] = {0, 0};
    const int n3 = 3, c2[2] = {2, 2}, two = 2;
    fault_in in = {mlx_array_new(), tu_f32(lo, &n3, 1), mlx_array_new_float(5), tu_f32(cv, c2, 2),
                   tu_f32(z, &two, 1)};
    assert_int_equal(mlx_random_key(&in.key, 11), 0);
    long failed = tu_sweep("random ops", fault_scenario, &in);
    assert_true(failed > 10);
    mlx_array_free(in.key), mlx_array_free(in.l), mlx_array_free(in.h), mlx_array_free(in.cov);
    mlx_array_free(in.mean);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_keys_and_splits_equal_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_uniform_equals_mlx_in_every_dtype_shape_and_broadcast, tu_test_teardown),
        cmocka_unit_test_teardown(test_normal_equals_mlx_with_loc_scale_and_broadcast_arrays, tu_test_teardown),
        cmocka_unit_test_teardown(test_gumbel_laplace_truncated_normal_equal_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_bernoulli_and_randint_equal_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_categorical_three_forms_equal_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_permutations_equal_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_multivariate_normal_matches_mlx_closely, tu_test_teardown),
        cmocka_unit_test_teardown(test_global_sequence_after_seed_equals_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_bits_equal_mlx_for_every_width, tu_test_teardown),
        cmocka_unit_test_teardown(test_large_draws_do_not_depend_on_the_thread_count, tu_test_teardown),
        cmocka_unit_test_teardown(test_moments_of_a_million_draws, tu_test_teardown),
        cmocka_unit_test_teardown(test_bad_arguments_report_mlx_errors, tu_test_teardown),
        cmocka_unit_test_teardown(test_global_key_from_threads_gives_each_draw_of_the_sequence_once,
                                  tu_test_teardown),
#ifdef MC_FAULT_INJECTION
        cmocka_unit_test_teardown(test_random_ops_fail_cleanly_at_every_allocation, tu_test_teardown),
#endif
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
