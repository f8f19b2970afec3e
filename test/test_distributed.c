/* The distributed suite outside an MPI launch (the `mpi` suite,
 * test/test_mpi.c, runs under mpirun): the singleton group MLX gives when
 * no backend starts, on which every collective returns its input; MLX's
 * messages for strict init, unknown backends, singleton send/recv and
 * split, empty and foreign group handles; and the agreement of ranks is
 * never asked of a group of one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#define S tu_stream()
#define OK(call) assert_int_equal((call), 0)

static void test_init_without_a_launch_gives_the_singleton_group(void **state)
{
    (void)state;
    mlx_distributed_group g = mlx_distributed_init(false, NULL);
    assert_non_null(g.ctx);
    assert_int_equal(mlx_distributed_group_rank(g), 0);
    assert_int_equal(mlx_distributed_group_size(g), 1);
    /* every non-strict init of a known backend gives a group of one */
    const char *bks[] = {"any", "mpi", "ring", "nccl", "jaccl"};
    for (size_t i = 0; i < sizeof bks / sizeof bks[0]; i++) {
        mlx_distributed_group h = mlx_distributed_init(false, bks[i]);
        assert_non_null(h.ctx);
        assert_int_equal(mlx_distributed_group_size(h), 1);
    }
    tu_expect_no_error();
}

static void test_strict_init_without_a_backend_reports_mlx_messages(void **state)
{
    (void)state;
    mlx_distributed_group g = mlx_distributed_init(true, NULL);
    assert_null(g.ctx);
    assert_true(tu_last_error_has("Couldn't initialize any backend"));
    tu_expect_error("[distributed_init]");
    g = mlx_distributed_init(true, "mpi");
    assert_null(g.ctx);
    assert_true(tu_last_error_has("Cannot initialize MPI"));
    tu_expect_error("[distributed_init]");
    g = mlx_distributed_init(true, "ring");
    assert_null(g.ctx);
    assert_true(tu_last_error_has("Cannot initialize ring distributed backend."));
    tu_expect_error("[distributed_init]");
    g = mlx_distributed_init(false, "carrier-pigeon");
    assert_null(g.ctx);
    assert_true(tu_last_error_has("but 'carrier-pigeon' was provided"));
    tu_expect_error("[distributed_init]");
}

static void test_availability_names_mpi_only_where_built(void **state)
{
    (void)state;
    assert_false(mlx_distributed_is_available("ring"));
    assert_false(mlx_distributed_is_available("nccl"));
    assert_false(mlx_distributed_is_available("jaccl"));
    assert_false(mlx_distributed_is_available("carrier-pigeon"));
    assert_true(mlx_distributed_is_available(NULL) == mlx_distributed_is_available("mpi"));
    assert_true(mlx_distributed_is_available("any") == mlx_distributed_is_available("mpi"));
#ifdef MC_TEST_HAVE_MPI
    assert_true(mlx_distributed_is_available("mpi"));
#else
    assert_false(mlx_distributed_is_available("mpi"));
#endif
    tu_expect_no_error();
}

/* On a group of one, MLX returns x itself from every collective. */
static void test_collectives_on_a_group_of_one_return_the_input(void **state)
{
    (void)state;
    float v[6] = {1, 2, 3, 4, 5, 6};
    int shape[2] = {2, 3};
    mlx_array x = tu_f32(v, shape, 2), r = mlx_array_new();
    mlx_distributed_group g = mlx_distributed_init(false, NULL), none = {NULL};
    int (*ops[])(mlx_array *, const mlx_array, const mlx_distributed_group,
                 const mlx_stream) = {mlx_distributed_all_sum, mlx_distributed_all_max, mlx_distributed_all_min,
                                      mlx_distributed_all_gather, mlx_distributed_sum_scatter};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        OK(ops[i](&r, x, g, S));
        assert_ptr_equal(r.ctx, x.ctx);
        OK(ops[i](&r, x, none, S));
        assert_ptr_equal(r.ctx, x.ctx);
    }
    mlx_array_free(r);
    mlx_array_free(x);
    tu_expect_no_error();
}

static void test_send_and_recv_on_a_group_of_one_report_mlx_messages(void **state)
{
    (void)state;
    float v = 1;
    mlx_array x = tu_f32(&v, NULL, 0), r = mlx_array_new();
    mlx_distributed_group g = mlx_distributed_init(false, NULL);
    assert_int_equal(mlx_distributed_send(&r, x, 0, g, S), 1);
    assert_true(tu_last_error_has("Cannot send to a singleton group"));
    tu_expect_error("[distributed_send]");
    int shape[1] = {3};
    assert_int_equal(mlx_distributed_recv(&r, shape, 1, MLX_FLOAT32, 0, g, S), 1);
    assert_true(tu_last_error_has("Cannot recv from a singleton group"));
    tu_expect_error("[distributed_recv]");
    assert_int_equal(mlx_distributed_recv_like(&r, x, 0, g, S), 1);
    tu_expect_error("[distributed_recv_like]");
    /* the result handle is untouched by a failed call */
    assert_null(r.ctx);
    mlx_array_free(x);
}

static void test_bad_group_handles_report_and_do_not_crash(void **state)
{
    (void)state;
    mlx_distributed_group empty = {NULL};
    assert_int_equal(mlx_distributed_group_rank(empty), 0);
    tu_expect_error("[distributed_group_rank]");
    assert_int_equal(mlx_distributed_group_size(empty), 0);
    tu_expect_error("[distributed_group_size]");
    assert_null(mlx_distributed_group_split(empty, 0, 0).ctx);
    tu_expect_error("[distributed_group_split]");
    int not_a_group = 7;
    mlx_distributed_group foreign = {&not_a_group};
    assert_int_equal(mlx_distributed_group_size(foreign), 0);
    assert_true(tu_last_error_has("not one made by mlx_distributed_init"));
    tu_expect_error("[distributed_group_size]");
    float v = 1;
    mlx_array x = tu_f32(&v, NULL, 0), r = mlx_array_new();
    assert_int_equal(mlx_distributed_all_sum(&r, x, foreign, S), 1);
    tu_expect_error("[distributed_all_sum]");
    mlx_array_free(x);
}

static void test_the_singleton_group_cannot_be_split(void **state)
{
    (void)state;
    mlx_distributed_group g = mlx_distributed_init(false, NULL);
    assert_null(mlx_distributed_group_split(g, 0, -1).ctx);
    assert_true(tu_last_error_has("Cannot split the distributed group further."));
    tu_expect_error("[distributed_group_split]");
}

int main(void)
{
    /* this suite is the path outside a launch, even if run under one */
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_SIZE");
    unsetenv("PMI_RANK");
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_init_without_a_launch_gives_the_singleton_group),
        T(test_strict_init_without_a_backend_reports_mlx_messages),
        T(test_availability_names_mpi_only_where_built),
        T(test_collectives_on_a_group_of_one_return_the_input),
        T(test_send_and_recv_on_a_group_of_one_report_mlx_messages),
        T(test_bad_group_handles_report_and_do_not_crash),
        T(test_the_singleton_group_cannot_be_split),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
