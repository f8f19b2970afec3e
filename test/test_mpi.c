/* The mpi suite: distributed.h between real processes, run by meson under
 * `mpirun -np 2` and `-np 4` (test/meson.build). Every rank runs every
 * test, in the same order, so their collectives meet.
 *
 * - init, rank, size and split (colors, keys, nested groups);
 * - all_sum, all_max, all_min, all_gather and sum_scatter on every dtype,
 *   on contiguous and transposed inputs, against values each rank can
 *   compute alone;
 * - send/recv around a ring (small and large messages), recv_like;
 * - gradients: all_sum's cotangent passes through, all_gather's is this
 *   rank's block (MLX's rules);
 * - faults: ranks disagreeing on a shape or dtype all get an error and
 *   the group stays usable; a message of the wrong size or dtype is
 *   refused by its receiver; an out-of-range peer is refused when the op
 *   is made. (A rank that never joins: test_mpi_timeout.c.)
 * - two threads per process running collectives at once, each on its own
 *   group (the library asks MPI for MPI_THREAD_MULTIPLE). */
#include <math.h>
#include <pthread.h>
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

static void test_every_process_sees_its_rank_and_the_world_size(void **state)
{
    (void)state;
    const char *env = getenv("OMPI_COMM_WORLD_SIZE");
    assert_non_null(env);
    assert_int_equal(size, atoi(env));
    assert_int_equal(rank, atoi(getenv("OMPI_COMM_WORLD_RANK")));
    /* init again, any backend, strict or not: the same group */
    assert_ptr_equal(mlx_distributed_init(false, NULL).ctx, world.ctx);
    assert_ptr_equal(mlx_distributed_init(true, "any").ctx, world.ctx);
    assert_true(mlx_distributed_is_available("mpi"));
}

/* x on rank r: (i + 1) * (r + 1) for i < 6, shape (2, 3); sums, maxima
 * and minima are exact in every dtype for up to 4 ranks. */
static mlx_array rank_values(mlx_dtype d, int r)
{
    double v[6];
    for (int i = 0; i < 6; i++)
        v[i] = d == MLX_BOOL ? (double)((i + r) % 2) : (double)((i + 1) * (r + 1));
    int shape[2] = {2, 3};
    return tu_array_of(d, v, shape, 2);
}

static double sum_of_ranks(mlx_dtype d, int i)
{
    double s = 0;
    for (int r = 0; r < size; r++)
        s += d == MLX_BOOL ? (double)((i + r) % 2) : (double)((i + 1) * (r + 1));
    return d == MLX_BOOL ? (s > 0) : s;
}

/* reads element i of a (real part of a complex) as a double */
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

static void test_all_reductions_of_every_dtype_combine_every_rank(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof all_dtypes / sizeof all_dtypes[0]; k++) {
        mlx_dtype d = all_dtypes[k];
        mlx_array x = rank_values(d, rank), s = mlx_array_new(), mx = mlx_array_new(), mn = mlx_array_new();
        OK(mlx_distributed_all_sum(&s, x, world, S));
        OK(mlx_distributed_all_max(&mx, x, world, S));
        OK(mlx_distributed_all_min(&mn, x, world, S));
        assert_int_equal(mlx_array_dtype(s), d);
        for (int i = 0; i < 6; i++) {
            /* booleans: the ranks alternate parity, so "or" and "and" */
            double hi = d == MLX_BOOL ? 1.0 : (double)((i + 1) * size);
            double lo = d == MLX_BOOL ? 0.0 : (double)(i + 1);
            assert_true(get(s, (size_t)i) == sum_of_ranks(d, i));
            assert_true(get(mx, (size_t)i) == hi);
            assert_true(get(mn, (size_t)i) == lo);
        }
        mlx_array_free(x);
        mlx_array_free(s);
        mlx_array_free(mx);
        mlx_array_free(mn);
    }
}

static void test_a_transposed_input_reduces_in_its_logical_order(void **state)
{
    (void)state;
    mlx_array x = rank_values(MLX_FLOAT32, rank), t = mlx_array_new(), s = mlx_array_new();
    OK(mlx_transpose(&t, x, S));
    OK(mlx_array_eval(t)); /* a strided view by the time all_sum runs */
    OK(mlx_distributed_all_sum(&s, t, world, S));
    int shape[2] = {3, 2};
    assert_true(tu_shape_is(s, 2, shape));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            assert_true(get(s, (size_t)(i * 2 + j)) == sum_of_ranks(MLX_FLOAT32, j * 3 + i));
    /* and x itself is unchanged (no reduction in place into a shared buffer) */
    assert_true(get(x, 5) == 6.0 * (rank + 1));
    mlx_array_free(x);
    mlx_array_free(t);
    mlx_array_free(s);
}

static void test_all_gather_stacks_the_ranks_along_axis_0(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof all_dtypes / sizeof all_dtypes[0]; k++) {
        mlx_dtype d = all_dtypes[k];
        mlx_array x = rank_values(d, rank), g = mlx_array_new();
        OK(mlx_distributed_all_gather(&g, x, world, S));
        int shape[2] = {2 * size, 3};
        assert_true(tu_shape_is(g, 2, shape));
        for (int r = 0; r < size; r++) {
            mlx_array want = rank_values(d, r);
            for (int i = 0; i < 6; i++)
                assert_true(get(g, (size_t)(r * 6 + i)) == get(want, (size_t)i));
            mlx_array_free(want);
        }
        mlx_array_free(x);
        mlx_array_free(g);
    }
    /* a scalar gathers into a vector of the group's size */
    int32_t v = rank * 10;
    mlx_array x = tu_i32(&v, NULL, 0), g = mlx_array_new();
    OK(mlx_distributed_all_gather(&g, x, world, S));
    int shape[1] = {size};
    assert_true(tu_shape_is(g, 1, shape));
    for (int r = 0; r < size; r++)
        assert_true(get(g, (size_t)r) == r * 10);
    mlx_array_free(x);
    mlx_array_free(g);
}

static void test_sum_scatter_gives_each_rank_its_block_of_the_sum(void **state)
{
    (void)state;
    int n = 2 * size;
    float *v = malloc(sizeof(float) * (size_t)n * 3);
    for (int i = 0; i < n * 3; i++)
        v[i] = (float)(i * (rank + 1));
    int shape[2] = {n, 3};
    mlx_array x = tu_f32(v, shape, 2), r = mlx_array_new();
    OK(mlx_distributed_sum_scatter(&r, x, world, S));
    int out[2] = {2, 3};
    assert_true(tu_shape_is(r, 2, out));
    double ranks = size * (size + 1) / 2.0;
    for (int i = 0; i < 6; i++)
        assert_true(get(r, (size_t)i) == (rank * 6 + i) * ranks);
    /* axis 0 not divisible by the size: MLX's message */
    int bad_shape[2] = {n + 1, 1};
    mlx_array y = tu_f32(v, bad_shape, 2);
    assert_int_equal(mlx_distributed_sum_scatter(&r, y, world, S), 1);
    assert_true(tu_last_error_has("must be divisible by the group size"));
    tu_expect_error("[distributed_sum_scatter]");
    free(v);
    mlx_array_free(x);
    mlx_array_free(y);
    mlx_array_free(r);
}

/* Even ranks send then receive, odd ranks the other way round, so that a
 * message too large to go eagerly still meets its receive. */
static void ring_exchange(int n, mlx_dtype d)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++)
        v[i] = (double)((rank * 7 + i) % 100);
    int shape[1] = {n};
    mlx_array x = tu_array_of(d, v, shape, 1), sent = mlx_array_new(), got = mlx_array_new();
    OK(mlx_distributed_send(&sent, x, next, world, S));
    OK(mlx_distributed_recv(&got, shape, 1, d, prev, world, S));
    if (rank % 2 == 0) {
        OK(mlx_array_eval(sent));
        OK(mlx_array_eval(got));
    } else {
        OK(mlx_array_eval(got));
        OK(mlx_array_eval(sent));
    }
    /* send's result is what was sent */
    assert_true(get(sent, (size_t)(n - 1)) == v[n - 1]);
    for (int i = 0; i < n; i += n / 16 + 1)
        assert_true(get(got, (size_t)i) == (double)((prev * 7 + i) % 100));
    free(v);
    mlx_array_free(x);
    mlx_array_free(sent);
    mlx_array_free(got);
}

static void test_messages_go_around_a_ring(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof all_dtypes / sizeof all_dtypes[0]; k++)
        if (all_dtypes[k] != MLX_BOOL)
            ring_exchange(5, all_dtypes[k]);
    ring_exchange(1 << 18, MLX_FLOAT32); /* 1 MiB: not an eager message */
}

static void test_recv_like_takes_the_shape_and_dtype_of_its_argument(void **state)
{
    (void)state;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int32_t v[4] = {rank, rank + 1, rank + 2, rank + 3};
    int shape[2] = {2, 2};
    mlx_array x = tu_i32(v, shape, 2), sent = mlx_array_new(), got = mlx_array_new();
    OK(mlx_distributed_send(&sent, x, next, world, S));
    OK(mlx_distributed_recv_like(&got, x, prev, world, S));
    mlx_vector_array both = mlx_vector_array_new();
    OK(mlx_vector_array_append_value(both, sent));
    OK(mlx_vector_array_append_value(both, got));
    OK(mlx_eval(both)); /* small: eager, so one order suits every rank */
    assert_true(tu_shape_is(got, 2, shape));
    assert_int_equal(mlx_array_dtype(got), MLX_INT32);
    assert_true(get(got, 3) == prev + 3);
    mlx_vector_array_free(both);
    mlx_array_free(x);
    mlx_array_free(sent);
    mlx_array_free(got);
}

static void test_split_groups_reduce_among_their_own_members(void **state)
{
    (void)state;
    mlx_distributed_group half = mlx_distributed_group_split(world, rank % 2, -1);
    assert_non_null(half.ctx);
    int members = (size + 1 - rank % 2) / 2;
    assert_int_equal(mlx_distributed_group_size(half), members);
    assert_int_equal(mlx_distributed_group_rank(half), rank / 2);
    float v = (float)rank;
    mlx_array x = tu_f32(&v, NULL, 0), s = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, half, S));
    double want = 0;
    for (int r = rank % 2; r < size; r += 2)
        want += r;
    assert_true(get(s, 0) == want);
    /* a key ranks the members: reversed order */
    mlx_distributed_group rev = mlx_distributed_group_split(world, 0, size - rank);
    assert_int_equal(mlx_distributed_group_rank(rev), size - 1 - rank);
    /* a group split from a split */
    mlx_distributed_group solo = mlx_distributed_group_split(half, mlx_distributed_group_rank(half), -1);
    assert_int_equal(mlx_distributed_group_size(solo), 1);
    mlx_array t = mlx_array_new();
    OK(mlx_distributed_all_sum(&t, x, solo, S));
    assert_ptr_equal(t.ctx, x.ctx); /* a group of one: x itself */
    mlx_array_free(x);
    mlx_array_free(s);
    mlx_array_free(t);
}

static void test_out_of_range_peers_are_refused_when_the_op_is_made(void **state)
{
    (void)state;
    float v = 1;
    mlx_array x = tu_f32(&v, NULL, 0), r = mlx_array_new();
    assert_int_equal(mlx_distributed_send(&r, x, size, world, S), 1);
    assert_true(tu_last_error_has("Invalid destination"));
    tu_expect_error("[distributed_send]");
    assert_int_equal(mlx_distributed_recv_like(&r, x, -1, world, S), 1);
    assert_true(tu_last_error_has("Invalid source"));
    tu_expect_error("[distributed_recv_like]");
    mlx_array_free(x);
}

static void test_ranks_that_disagree_on_a_collective_all_get_an_error(void **state)
{
    (void)state;
    float v[4] = {1, 2, 3, 4};
    int n = rank == 0 ? 3 : 4; /* rank 0 brings fewer elements */
    mlx_array x = tu_f32(v, &n, 1), s = mlx_array_new();
    OK(mlx_distributed_all_sum(&s, x, world, S));
    assert_int_equal(mlx_array_eval(s), 1);
    assert_true(tu_last_error_has("disagree"));
    tu_expect_error("[all_sum]");
    /* a dtype mismatch, and a different collective */
    mlx_array y = rank_values(rank == 0 ? MLX_INT32 : MLX_FLOAT32, 0), t = mlx_array_new();
    if (rank == size - 1)
        OK(mlx_distributed_all_max(&t, y, world, S));
    else
        OK(mlx_distributed_all_sum(&t, y, world, S));
    assert_int_equal(mlx_array_eval(t), 1);
    assert_true(tu_last_error_has("disagree"));
    tu_reset_errors();
    /* the group is still usable */
    mlx_array z = rank_values(MLX_FLOAT32, rank), u = mlx_array_new();
    OK(mlx_distributed_all_sum(&u, z, world, S));
    assert_true(get(u, 0) == sum_of_ranks(MLX_FLOAT32, 0));
    mlx_array_free(x);
    mlx_array_free(s);
    mlx_array_free(y);
    mlx_array_free(t);
    mlx_array_free(z);
    mlx_array_free(u);
}

static void test_a_message_of_the_wrong_size_or_dtype_is_refused(void **state)
{
    (void)state;
    if (size < 2)
        return;
    /* rank 0 sends 4 int32 to rank 1, which expects 5, then 4 float32 */
    int32_t v[4] = {1, 2, 3, 4};
    int four = 4, five = 5;
    if (rank == 0) {
        mlx_array x = tu_i32(v, &four, 1), a = mlx_array_new(), b = mlx_array_new();
        OK(mlx_distributed_send(&a, x, 1, world, S));
        OK(mlx_array_eval(a));
        OK(mlx_distributed_send(&b, x, 1, world, S));
        OK(mlx_array_eval(b));
        mlx_array_free(x);
        mlx_array_free(a);
        mlx_array_free(b);
    } else if (rank == 1) {
        mlx_array a = mlx_array_new(), b = mlx_array_new();
        OK(mlx_distributed_recv(&a, &five, 1, MLX_INT32, 0, world, S));
        assert_int_equal(mlx_array_eval(a), 1);
        assert_true(tu_last_error_has("expected 5 elements of int32"));
        tu_expect_error("[recv]");
        OK(mlx_distributed_recv(&b, &four, 1, MLX_FLOAT32, 0, world, S));
        assert_int_equal(mlx_array_eval(b), 1);
        assert_true(tu_last_error_has("bytes of int32"));
        tu_expect_error("[recv]");
        mlx_array_free(a);
        mlx_array_free(b);
    }
}

/* f(x) = sum(all_sum(x) * w): MLX passes the cotangent through all_sum,
 * so the gradient on each rank is w, not size * w. */
static int grad_fun(mlx_vector_array *out, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), s = mlx_array_new(), w = mlx_array_new(), p = mlx_array_new(),
              r = mlx_array_new();
    mlx_vector_array_get(&x, in, 0);
    float wv[3] = {1, 2, 3};
    int n = 3;
    mlx_array_free(w);
    w = tu_f32(wv, &n, 1);
    int rc = mlx_distributed_all_sum(&s, x, world, S) || mlx_multiply(&p, s, w, S) || mlx_sum(&r, p, false, S);
    if (!rc) {
        *out = mlx_vector_array_new();
        rc = mlx_vector_array_append_value(*out, r);
    }
    mlx_array_free(x);
    mlx_array_free(s);
    mlx_array_free(w);
    mlx_array_free(p);
    mlx_array_free(r);
    return rc;
}

static int gather_fun(mlx_vector_array *out, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), g = mlx_array_new();
    mlx_vector_array_get(&x, in, 0);
    int rc = mlx_distributed_all_gather(&g, x, world, S);
    if (!rc) {
        *out = mlx_vector_array_new();
        rc = mlx_vector_array_append_value(*out, g);
    }
    mlx_array_free(x);
    mlx_array_free(g);
    return rc;
}

static void test_gradients_follow_mlx_rules(void **state)
{
    (void)state;
    float xv[3] = {1, 1, 1};
    int n = 3;
    mlx_array x = tu_f32(xv, &n, 1);
    mlx_closure f = mlx_closure_new_func(grad_fun);
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    int arg = 0;
    OK(mlx_value_and_grad(&vg, f, &arg, 1));
    mlx_vector_array args = mlx_vector_array_new(), vals = mlx_vector_array_new(), grads = mlx_vector_array_new();
    OK(mlx_vector_array_append_value(args, x));
    OK(mlx_closure_value_and_grad_apply(&vals, &grads, vg, args));
    mlx_array g = mlx_array_new(), v = mlx_array_new();
    OK(mlx_vector_array_get(&g, grads, 0));
    OK(mlx_vector_array_get(&v, vals, 0));
    assert_true(get(v, 0) == 6.0 * size);
    for (int i = 0; i < 3; i++)
        assert_true(get(g, (size_t)i) == i + 1);
    /* all_gather: the cotangent of this rank's block */
    mlx_closure gf = mlx_closure_new_func(gather_fun);
    float cv[16];
    for (int i = 0; i < 2 * size; i++)
        cv[i] = (float)i;
    int cn = 2 * size, two = 2;
    mlx_array p = tu_f32(xv, &two, 1), c = tu_f32(cv, &cn, 1), d = mlx_array_new();
    mlx_vector_array primals = mlx_vector_array_new(), cots = mlx_vector_array_new(),
                     outs = mlx_vector_array_new(), vjps = mlx_vector_array_new();
    OK(mlx_vector_array_append_value(primals, p));
    OK(mlx_vector_array_append_value(cots, c));
    OK(mlx_vjp(&outs, &vjps, gf, primals, cots));
    OK(mlx_vector_array_get(&d, vjps, 0));
    assert_true(tu_shape_is(d, 1, &two));
    assert_true(get(d, 0) == 2 * rank && get(d, 1) == 2 * rank + 1);
    mlx_array_free(p);
    mlx_array_free(c);
    mlx_array_free(d);
    mlx_array_free(g);
    mlx_array_free(v);
    mlx_closure_free(gf);
    mlx_vector_array_free(primals);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(vjps);
    mlx_vector_array_free(args);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(grads);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(f);
    mlx_array_free(x);
}

/* ---- several threads, each on its own group (issue 13) ---- */

/* One thread's share: iters rounds of an all_sum then an all_gather on g,
 * of values that name the member, the round and the element, so that a
 * result crossing over from the other thread's group (another member
 * order, another round) is seen. Counts wrong results; cmocka's asserts
 * stay on the main thread. */
typedef struct coll_loop {
    mlx_distributed_group g;
    int iters;
    int failed, wrong;
} coll_loop;

enum { LOOP_N = 4 };

static float loop_value(int member, int it, int i) { return (float)(member * 1000 + it * LOOP_N + i); }

static void *collective_loop(void *arg)
{
    coll_loop *c = arg;
    mlx_stream st = mlx_default_cpu_stream_new();
    int me = mlx_distributed_group_rank(c->g), n = mlx_distributed_group_size(c->g);
    for (int it = 0; it < c->iters; it++) {
        float v[LOOP_N];
        for (int i = 0; i < LOOP_N; i++)
            v[i] = loop_value(me, it, i);
        int shape[1] = {LOOP_N};
        mlx_array x = mlx_array_new_data(v, shape, 1, MLX_FLOAT32), s = mlx_array_new(), g = mlx_array_new();
        if (mlx_distributed_all_sum(&s, x, c->g, st) || mlx_array_eval(s) ||
            mlx_distributed_all_gather(&g, x, c->g, st) || mlx_array_eval(g)) {
            c->failed++;
        } else {
            const float *sd = mlx_array_data_float32(s), *gd = mlx_array_data_float32(g);
            for (int i = 0; i < LOOP_N; i++) {
                float want = 0;
                for (int m = 0; m < n; m++)
                    want += loop_value(m, it, i);
                c->wrong += sd[i] != want;
                for (int m = 0; m < n; m++)
                    c->wrong += gd[m * LOOP_N + i] != loop_value(m, it, i);
            }
        }
        mlx_array_free(x);
        mlx_array_free(s);
        mlx_array_free(g);
    }
    mlx_stream_free(st);
    return NULL;
}

static void run_two_threads(mlx_distributed_group a, mlx_distributed_group b, int iters)
{
    coll_loop c[2] = {{a, iters, 0, 0}, {b, iters, 0, 0}};
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        assert_int_equal(pthread_create(&th[t], NULL, collective_loop, &c[t]), 0);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < 2; t++) {
        assert_int_equal(c[t].failed, 0);
        assert_int_equal(c[t].wrong, 0);
    }
}

/* Two threads per process, each running collectives on its own group at
 * the same time: the world and a split by parity (different members), then
 * two splits with the same members in opposite orders (where a message of
 * one reaching the other would put the gathered blocks out of order). */
static void test_threads_run_collectives_on_different_groups_at_once(void **state)
{
    (void)state;
    mlx_distributed_group half = mlx_distributed_group_split(world, rank % 2, -1);
    mlx_distributed_group same = mlx_distributed_group_split(world, 0, rank);
    mlx_distributed_group reversed = mlx_distributed_group_split(world, 0, size - rank);
    assert_non_null(half.ctx);
    assert_non_null(same.ctx);
    assert_non_null(reversed.ctx);
    assert_int_equal(mlx_distributed_group_rank(reversed), size - 1 - rank);
    run_two_threads(world, half, 200);
    run_two_threads(same, reversed, 200);
}

int main(void)
{
    world = mlx_distributed_init(true, "mpi");
    if (!world.ctx) {
        fprintf(stderr, "test_mpi: run it under mpirun\n");
        return 1;
    }
    rank = mlx_distributed_group_rank(world);
    size = mlx_distributed_group_size(world);
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_every_process_sees_its_rank_and_the_world_size),
        T(test_all_reductions_of_every_dtype_combine_every_rank),
        T(test_a_transposed_input_reduces_in_its_logical_order),
        T(test_all_gather_stacks_the_ranks_along_axis_0),
        T(test_sum_scatter_gives_each_rank_its_block_of_the_sum),
        T(test_messages_go_around_a_ring),
        T(test_recv_like_takes_the_shape_and_dtype_of_its_argument),
        T(test_split_groups_reduce_among_their_own_members),
        T(test_out_of_range_peers_are_refused_when_the_op_is_made),
        T(test_ranks_that_disagree_on_a_collective_all_get_an_error),
        T(test_a_message_of_the_wrong_size_or_dtype_is_refused),
        T(test_gradients_follow_mlx_rules),
        T(test_threads_run_collectives_on_different_groups_at_once),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
