/* The per-thread caches behind a small op: the object cache of descriptors
 * and buffer headers (runtime/obj_cache.c) and the data allocator's
 * magazines of small blocks (runtime/buffer_cache.c). Reuse gives correct
 * values, a block may be freed on another thread than its own, both caches
 * are bounded, and a thread's exit hands its blocks back. Both caches are
 * off under ASan and Valgrind: their reuse tests skip there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "mlx/c/mlx.h"
#include "runtime/alloc.h"
#include "runtime/buffer_cache.h"
#include "runtime/obj_cache.h"
#include "test_util.h"

#define KiB ((size_t)1024)

static size_t cache_memory(void)
{
    size_t n = 0;
    assert_int_equal(mlx_get_cache_memory(&n), 0);
    return n;
}

static int setup(void **state)
{
    (void)state;
    mlx_clear_cache();
    return 0;
}

/* -x of a fresh 256-float array holding base, base + 1, ...; checked. */
static void negate_and_check(float base)
{
    float v[256];
    for (int i = 0; i < 256; i++)
        v[i] = base + (float)i;
    int shape[1] = {256};
    mlx_array x = tu_f32(v, shape, 1), r = mlx_array_new();
    assert_int_equal(mlx_negative(&r, x, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(r), 0);
    const float *d = mlx_array_data_float32(r);
    assert_non_null(d);
    for (int i = 0; i < 256; i++)
        assert_true(d[i] == -(base + (float)i));
    mlx_array_free(r);
    mlx_array_free(x);
}

static void test_object_block_freed_is_reused_by_the_next_request(void **state)
{
    (void)state;
    if (!mc_obj_cache_enabled())
        skip();
    void *a = mc_obj_alloc(200);
    assert_non_null(a);
    memset(a, 0xab, 200);
    size_t before = mc_obj_cached();
    mc_obj_free(a, 200);
    assert_int_equal(mc_obj_cached(), before + 256); /* its class: 4 x 64 bytes */
    void *b = mc_obj_alloc(250);                     /* same class */
    assert_ptr_equal(b, a);
    assert_int_equal(mc_obj_cached(), before);
    mc_obj_free(b, 250);
}

static void test_reused_nodes_and_buffers_give_correct_values(void **state)
{
    (void)state;
    size_t base = tu_active_memory();
    for (int k = 0; k < 100; k++)
        negate_and_check((float)k * 1000.0f);
    assert_int_equal(tu_active_memory(), base);
}

static void test_small_data_block_is_reused_from_the_magazine(void **state)
{
    (void)state;
    if (!mc_obj_cache_enabled())
        skip();
    void *a = mc_data_alloc(1000);
    assert_non_null(a);
    mc_data_free(a, 1000);
    assert_int_equal(mc_mem_thread_cached(), 1024);
    assert_int_equal(cache_memory(), 1024);
    void *b = mc_data_alloc(1024); /* same class: the block just freed */
    assert_ptr_equal(b, a);
    assert_int_equal(cache_memory(), 0);
    mc_data_free(b, 1024);
    assert_int_equal(mlx_clear_cache(), 0);
    assert_int_equal(mc_mem_thread_cached(), 0);
    assert_int_equal(cache_memory(), 0);
}

static void test_zero_cache_limit_keeps_no_small_block(void **state)
{
    (void)state;
    size_t prev = 0;
    assert_int_equal(mlx_set_cache_limit(&prev, 0), 0);
    void *a = mc_data_alloc(100);
    assert_non_null(a);
    mc_data_free(a, 100);
    assert_int_equal(cache_memory(), 0);
    assert_int_equal(mc_mem_thread_cached(), 0);
    assert_int_equal(mlx_set_cache_limit(&prev, prev), 0);
}

static void test_caches_are_bounded(void **state)
{
    (void)state;
    enum { N = 200 };
    void *obj[N], *data[N];
    for (int i = 0; i < N; i++) {
        obj[i] = mc_obj_alloc(MC_OBJ_MAX);
        data[i] = mc_data_alloc(KiB);
        assert_non_null(obj[i]);
        assert_non_null(data[i]);
    }
    for (int i = 0; i < N; i++) {
        mc_obj_free(obj[i], MC_OBJ_MAX);
        mc_data_free(data[i], KiB);
    }
    assert_true(mc_obj_cached() <= MC_OBJ_CACHE_BYTES);
    assert_true(mc_mem_thread_cached() <= 64 * KiB);
    /* what the magazine could not keep went to the shared lists */
    assert_int_equal(cache_memory(), N * KiB);
    mlx_clear_cache();
    assert_int_equal(cache_memory(), 0);
}

/* An array made on one thread, dropped on another. */
typedef struct {
    mlx_array r;
    void *block;
} made;

static void *make_negative(void *arg)
{
    made *m = arg;
    float v[256];
    for (int i = 0; i < 256; i++)
        v[i] = (float)i;
    int shape[1] = {256};
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_array x = mlx_array_new_data(v, shape, 1, MLX_FLOAT32);
    m->r = mlx_array_new();
    if (mlx_negative(&m->r, x, s) || mlx_array_eval(m->r))
        m->r = (mlx_array){NULL};
    else
        m->block = (void *)mlx_array_data_float32(m->r);
    mlx_array_free(x);
    mlx_stream_free(s);
    return NULL;
}

static void test_array_from_another_thread_is_freed_and_reused_here(void **state)
{
    (void)state;
    if (!mc_obj_cache_enabled())
        skip();
    size_t base = tu_active_memory();
    made m = {{NULL}, NULL};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, make_negative, &m), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_non_null(m.r.ctx);
    /* the maker's magazine went to the shared lists at its exit: its input's
     * block is cached, not lost */
    assert_int_equal(cache_memory(), KiB);
    const float *d = mlx_array_data_float32(m.r);
    assert_true(d[3] == -3.0f);
    mlx_array_free(m.r);
    /* this thread's magazine now holds the other thread's block, and gives it
     * to the next small op here */
    assert_int_equal(mc_mem_thread_cached(), KiB);
    float v[256];
    for (int i = 0; i < 256; i++)
        v[i] = 7.0f;
    int shape[1] = {256};
    mlx_array x = tu_f32(v, shape, 1);
    assert_ptr_equal(mlx_array_data_float32(x), m.block);
    for (int i = 0; i < 256; i++)
        assert_true(mlx_array_data_float32(x)[i] == 7.0f);
    mlx_array_free(x);
    negate_and_check(5.0f);
    mlx_clear_cache();
    assert_int_equal(tu_active_memory(), base);
    assert_int_equal(cache_memory(), 0);
}

static void *churn_ops(void *arg)
{
    (void)arg;
    for (int k = 0; k < 2000; k++)
        negate_and_check((float)k);
    return NULL;
}

static void test_threads_making_small_ops_keep_counts(void **state)
{
    (void)state;
    size_t base = tu_active_memory();
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn_ops, NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(tu_active_memory(), base);
    mlx_clear_cache(); /* the exited threads' magazines are in the shared lists */
    assert_int_equal(cache_memory(), 0);
}

#define T(fn) cmocka_unit_test_setup(fn, setup)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_object_block_freed_is_reused_by_the_next_request),
        T(test_reused_nodes_and_buffers_give_correct_values),
        T(test_small_data_block_is_reused_from_the_magazine),
        T(test_zero_cache_limit_keeps_no_small_block),
        T(test_caches_are_bounded),
        T(test_array_from_another_thread_is_freed_and_reused_here),
        T(test_threads_making_small_ops_keep_counts),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
