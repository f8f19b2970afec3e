/* The mpi suite's faults of time: a process that never joins a collective
 * or never sends. Run under mpirun like test_mpi.c; MLX_CPU_MPI_TIMEOUT is
 * set low around the waits that cannot succeed, so that the waiting rank gets its error within seconds
 * instead of hanging; the group the collective was on is refused from
 * then on, and the other groups keep working. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "test_util.h"

#define S tu_stream()
#define OK(call) assert_int_equal((call), 0)

static mlx_distributed_group world;
static int rank, size;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* every rank waits here for the others (a collective on the world) */
static void meet(void)
{
    float v = 1;
    mlx_array x = tu_f32(&v, NULL, 0), s = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, world, S));
    OK(mlx_array_eval(s));
    assert_true(tu_get(s, 0) == size);
    mlx_array_free(x);
    mlx_array_free(s);
}

static void test_a_collective_no_other_rank_joins_times_out_and_breaks_its_group(void **state)
{
    (void)state;
    mlx_distributed_group lonely = mlx_distributed_group_split(world, 0, -1);
    assert_non_null(lonely.ctx);
    if (rank == 0) {
        float v = 1;
        mlx_array x = tu_f32(&v, NULL, 0), s = mlx_array_new(), t = mlx_array_new();
        OK(mlx_distributed_all_sum(&s, x, lonely, S));
        setenv("MLX_CPU_MPI_TIMEOUT", "2", 1);
        double t0 = now();
        assert_int_equal(mlx_array_eval(s), 1);
        double waited = now() - t0;
        assert_true(tu_last_error_has("Timed out after 2 s"));
        tu_expect_error("[all_sum]");
        assert_true(waited >= 2.0 && waited < 30.0);
        /* the group is refused from now on, at once */
        OK(mlx_distributed_all_sum(&t, x, lonely, S));
        assert_int_equal(mlx_array_eval(t), 1);
        assert_true(tu_last_error_has("cannot be used any more"));
        tu_expect_error("[all_sum]");
        unsetenv("MLX_CPU_MPI_TIMEOUT");
        mlx_array_free(x);
        mlx_array_free(s);
        mlx_array_free(t);
    }
    meet(); /* the world group still works */
}

static void test_a_receive_nobody_sends_times_out(void **state)
{
    (void)state;
    if (rank == 1) {
        int n = 4;
        mlx_array r = mlx_array_new();
        OK(mlx_distributed_recv(&r, &n, 1, MLX_FLOAT32, 0, world, S));
        setenv("MLX_CPU_MPI_TIMEOUT", "2", 1);
        assert_int_equal(mlx_array_eval(r), 1);
        unsetenv("MLX_CPU_MPI_TIMEOUT");
        assert_true(tu_last_error_has("waiting for a message from rank 0"));
        tu_expect_error("[recv]");
        mlx_array_free(r);
    }
    meet(); /* a receive that timed out leaves the group usable */
}

int main(void)
{
    world = mlx_distributed_init(true, "mpi");
    if (!world.ctx) {
        fprintf(stderr, "test_mpi_timeout: run it under mpirun\n");
        return 1;
    }
    rank = mlx_distributed_group_rank(world);
    size = mlx_distributed_group_size(world);
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_a_collective_no_other_rank_joins_times_out_and_breaks_its_group),
        T(test_a_receive_nobody_sends_times_out),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
