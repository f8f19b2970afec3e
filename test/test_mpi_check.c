/* The mpi suite's tests of the agreement check's two forms
 * (src/distributed/mpi_backend.c), under mpirun like test_mpi.c:
 *
 * - in groups of a few, an exchange of blocks that carries a small
 *   reduction's data: every dtype through it, sizes on both sides of the
 *   limit of what it carries (MC_MPI_SMALL, 2 KiB), the same bits on every
 *   rank, a mismatch between a small and a large all_sum, and the check of
 *   a small all_sum staying on under MLX_CPU_MPI_CHECK=0;
 * - in larger groups (here forced by MLX_CPU_MPI_FANOUT_MAX=1 when the
 *   group is made), one MPI_Iallreduce of the header before MPI_Allreduce:
 *   every dtype, and a mismatch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#define S tu_stream()
#define OK(call) assert_int_equal((call), 0)

static mlx_distributed_group world;
static int rank, size;

static const mlx_dtype all_dtypes[] = {MLX_BOOL,    MLX_UINT8,   MLX_UINT16,   MLX_UINT32,   MLX_UINT64,
                                       MLX_INT8,    MLX_INT16,   MLX_INT32,    MLX_INT64,    MLX_FLOAT16,
                                       MLX_FLOAT32, MLX_FLOAT64, MLX_BFLOAT16, MLX_COMPLEX64};

/* element i on rank r: exact sums, maxima and minima in every dtype for
 * up to 4 ranks (booleans alternate with the rank) */
static double value(mlx_dtype d, int r, int i)
{
    return d == MLX_BOOL ? (double)((i + r) % 2) : (double)((i % 11 + 1) * (r + 1));
}

static mlx_array rank_values(mlx_dtype d, int r, int n)
{
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = value(d, r, i);
    mlx_array a = tu_array_of(d, v, &n, 1);
    free(v);
    return a;
}

/* element i of a (the real part of a complex) as a double */
static double get(mlx_array a, size_t i)
{
    if (mlx_array_dtype(a) == MLX_COMPLEX64) {
        mlx_array re = mlx_array_new();
        OK(mlx_real(&re, a, S));
        double v = tu_get(re, i);
        mlx_array_free(re);
        return v;
    }
    return tu_get(a, i);
}

/* all_sum, all_max and all_min of n elements of d over g (of the world's
 * size), checked at a few elements against what each rank computes alone */
static void reduce_and_check(mlx_distributed_group g, mlx_dtype d, int n)
{
    mlx_array x = rank_values(d, rank, n), s = mlx_array_new(), mx = mlx_array_new(), mn = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, g, S));
    OK(mlx_distributed_all_max(&mx, x, g, S));
    OK(mlx_distributed_all_min(&mn, x, g, S));
    for (int i = 0; i < n; i += n / 7 + 1) {
        double sum = 0, hi = value(d, 0, i), lo = hi;
        for (int r = 0; r < size; r++) {
            double v = value(d, r, i);
            sum += v;
            hi = v > hi ? v : hi;
            lo = v < lo ? v : lo;
        }
        if (d == MLX_BOOL)
            sum = sum > 0;
        assert_true(get(s, (size_t)i) == sum);
        assert_true(get(mx, (size_t)i) == hi);
        assert_true(get(mn, (size_t)i) == lo);
    }
    mlx_array_free(x);
    mlx_array_free(s);
    mlx_array_free(mx);
    mlx_array_free(mn);
}

static void test_small_reductions_of_every_dtype_travel_with_the_check(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof all_dtypes / sizeof all_dtypes[0]; k++)
        reduce_and_check(world, all_dtypes[k], 37);
}

static void test_sizes_on_both_sides_of_the_carried_limit_reduce_exactly(void **state)
{
    (void)state;
    /* 2 KiB is carried; one element more goes to MPI_Allreduce */
    const int f32[] = {1, 511, 512, 513, 1 << 18};
    for (size_t k = 0; k < sizeof f32 / sizeof f32[0]; k++)
        reduce_and_check(world, MLX_FLOAT32, f32[k]);
    reduce_and_check(world, MLX_INT8, 2048);
    reduce_and_check(world, MLX_INT8, 2049);
    reduce_and_check(world, MLX_COMPLEX64, 256);
    reduce_and_check(world, MLX_COMPLEX64, 257);
    reduce_and_check(world, MLX_FLOAT16, 1025);
}

/* float32 sums that depend on their order: each rank's bits of the result,
 * gathered, are the same on every rank */
static void test_every_rank_gets_the_same_bits(void **state)
{
    (void)state;
    int n = 64;
    float *v = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = rank % 2 ? 1e8f / (float)(i + 1) : 0.3f * (float)(rank + i);
    mlx_array x = tu_f32(v, &n, 1), s = mlx_array_new(), g = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, world, S));
    OK(mlx_distributed_all_gather(&g, s, world, S));
    OK(mlx_array_eval(g));
    const float *all = mlx_array_data_float32(g);
    for (int r = 1; r < size; r++)
        assert_memory_equal(all, all + (size_t)r * (size_t)n, sizeof(float) * (size_t)n);
    free(v);
    mlx_array_free(x);
    mlx_array_free(s);
    mlx_array_free(g);
}

/* rank 0's all_sum is carried (4 elements), the others' is not (100000):
 * every rank sees the disagreement, and the group stays usable */
static void test_a_small_and_a_large_all_sum_disagree(void **state)
{
    (void)state;
    mlx_array x = rank_values(MLX_FLOAT32, rank, rank == 0 ? 4 : 100000), s = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, world, S));
    assert_int_equal(mlx_array_eval(s), 1);
    assert_true(tu_last_error_has("disagree"));
    assert_true(tu_last_error_has(rank == 0
                                      ? "all_sum on 4 elements of float32, another runs all_sum on 100000"
                                      : "all_sum on 100000 elements of float32, another runs all_sum on 4 "));
    tu_expect_error("[all_sum]");
    reduce_and_check(world, MLX_FLOAT32, 5);
    mlx_array_free(x);
    mlx_array_free(s);
}

static void test_the_check_of_a_small_all_sum_stays_on_without_mlx_cpu_mpi_check(void **state)
{
    (void)state;
    setenv("MLX_CPU_MPI_CHECK", "0", 1);
    mlx_array x = rank_values(rank == 0 ? MLX_INT32 : MLX_FLOAT32, rank, 6), s = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, world, S));
    assert_int_equal(mlx_array_eval(s), 1);
    assert_true(tu_last_error_has("disagree"));
    tu_expect_error("[all_sum]");
    reduce_and_check(world, MLX_FLOAT32, 6);
    unsetenv("MLX_CPU_MPI_CHECK");
    mlx_array_free(x);
    mlx_array_free(s);
}

static void test_a_larger_group_checks_with_one_reduction(void **state)
{
    (void)state;
    /* read when a group is made: this one is "larger" than the fan-out */
    setenv("MLX_CPU_MPI_FANOUT_MAX", "1", 1);
    mlx_distributed_group big = mlx_distributed_group_split(world, 0, -1);
    unsetenv("MLX_CPU_MPI_FANOUT_MAX");
    assert_non_null(big.ctx);
    for (size_t k = 0; k < sizeof all_dtypes / sizeof all_dtypes[0]; k++)
        reduce_and_check(big, all_dtypes[k], 37);
    reduce_and_check(big, MLX_FLOAT32, 100000);
    mlx_array x = rank_values(MLX_FLOAT32, rank, rank == 0 ? 3 : 4), s = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, big, S));
    assert_int_equal(mlx_array_eval(s), 1);
    assert_true(tu_last_error_has("disagree"));
    tu_expect_error("[all_sum]");
    reduce_and_check(big, MLX_FLOAT32, 3);
    mlx_array_free(x);
    mlx_array_free(s);
}

int main(void)
{
    world = mlx_distributed_init(true, "mpi");
    if (!world.ctx) {
        fprintf(stderr, "test_mpi_check: run it under mpirun\n");
        return 1;
    }
    rank = mlx_distributed_group_rank(world);
    size = mlx_distributed_group_size(world);
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_small_reductions_of_every_dtype_travel_with_the_check),
        T(test_sizes_on_both_sides_of_the_carried_limit_reduce_exactly),
        T(test_every_rank_gets_the_same_bits),
        T(test_a_small_and_a_large_all_sum_disagree),
        T(test_the_check_of_a_small_all_sum_stays_on_without_mlx_cpu_mpi_check),
        T(test_a_larger_group_checks_with_one_reduction),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
