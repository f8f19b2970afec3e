/* The data allocator's buffer cache and mlx-c's memory.h functions: reuse,
 * accounting, limits, and argument checks. The allocator is process-wide, so
 * every test starts from an empty cache with generous limits and restores
 * the defaults afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "mlx/c/error.h"
#include "mlx/c/memory.h"
#include "runtime/alloc.h"
#include "runtime/buffer_cache.h"

#define MiB ((size_t)1 << 20)

static char last_msg[512];
static int n_msgs;

static void record_error(const char *msg, void *data)
{
    (void)data;
    snprintf(last_msg, sizeof last_msg, "%s", msg);
    n_msgs++;
}

static size_t default_memory_limit, default_cache_limit;

static int setup(void **state)
{
    (void)state;
    mlx_set_error_handler(record_error, NULL, NULL);
    last_msg[0] = 0;
    n_msgs = 0;
    mlx_clear_cache();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mc_mem_set_memory_limit(default_memory_limit);
    mc_mem_set_cache_limit(default_cache_limit);
    mlx_clear_cache();
    return 0;
}

static size_t get(int (*fn)(size_t *))
{
    size_t v = 0xdead;
    assert_int_equal(fn(&v), 0);
    return v;
}

static void touch(void *p, size_t n) { memset(p, 1, n); }

static void test_freed_block_is_reused_and_leaves_cache(void **state)
{
    (void)state;
    void *p = mc_data_alloc(MiB);
    assert_non_null(p);
    touch(p, MiB);
    assert_int_equal(get(mlx_get_cache_memory), 0);
    mc_data_free(p, MiB);
    assert_int_equal(get(mlx_get_cache_memory), MiB);

    void *q = mc_data_alloc(MiB);
    assert_ptr_equal(q, p);
    assert_int_equal(get(mlx_get_cache_memory), 0);
    mc_data_free(q, MiB);
}

static void test_request_of_same_class_reuses_block(void **state)
{
    (void)state;
    void *p = mc_data_alloc(1000);
    assert_non_null(p);
    mc_data_free(p, 1000);
    void *q = mc_data_alloc(1024); /* 1000 and 1024 share the 1024-byte class */
    assert_ptr_equal(q, p);
    void *r = mc_data_alloc(1000); /* the cache is empty now: fresh block */
    assert_ptr_not_equal(r, q);
    mc_data_free(q, 1024);
    mc_data_free(r, 1000);
}

static void test_reuse_takes_most_recently_freed_block(void **state)
{
    (void)state;
    void *a = mc_data_alloc(4096), *b = mc_data_alloc(4096);
    assert_non_null(a);
    assert_non_null(b);
    mc_data_free(a, 4096);
    mc_data_free(b, 4096);
    void *first = mc_data_alloc(4096), *second = mc_data_alloc(4096);
    assert_ptr_equal(first, b);
    assert_ptr_equal(second, a);
    mc_data_free(first, 4096);
    mc_data_free(second, 4096);
}

static void test_blocks_are_64_byte_aligned_and_zero_size_is_distinct(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 63, 65, 4097, 100000, 3 * MiB + 5};
    void *p[7];
    for (int i = 0; i < 7; i++) {
        p[i] = mc_data_alloc(sizes[i]);
        assert_non_null(p[i]);
        assert_int_equal((uintptr_t)p[i] % 64, 0);
        touch(p[i], sizes[i]);
    }
    void *z = mc_data_alloc(0);
    assert_non_null(z);
    assert_ptr_not_equal(z, p[0]);
    mc_data_free(z, 0);
    for (int i = 0; i < 7; i++)
        mc_data_free(p[i], sizes[i]);
}

/* A block of a page or more starts on a page boundary, so two large arrays
 * share their offset modulo 4 KiB (a kernel's stores then never sit a few
 * cache lines ahead of its loads in the low address bits the CPU compares). */
static void test_blocks_of_a_page_or_more_are_page_aligned(void **state)
{
    (void)state;
    size_t sizes[] = {4096, 4097, 100000, 3 * MiB + 5};
    void *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = mc_data_alloc(sizes[i]);
        assert_non_null(p[i]);
        assert_int_equal((uintptr_t)p[i] % 4096, 0);
        touch(p[i], sizes[i]);
    }
    for (int i = 0; i < 4; i++)
        mc_data_free(p[i], sizes[i]);
}

static void test_size_classes_waste_little(void **state)
{
    (void)state;
    assert_int_equal(mc_data_capacity(0), 64);
    assert_int_equal(mc_data_capacity(1), 64);
    assert_int_equal(mc_data_capacity(65), 128);
    assert_int_equal(mc_data_capacity(4096), 4096);
    assert_int_equal(mc_data_capacity(4097), 8192);
    assert_int_equal(mc_data_capacity(65536), 65536);
    assert_int_equal(mc_data_capacity(65537), 73728);
    assert_int_equal(mc_data_capacity(64 * MiB), 64 * MiB);
    assert_int_equal(mc_data_capacity(3 * MiB), 3 * MiB);
    for (size_t n = 1; n < ((size_t)1 << 34); n = n * 3 + 7) {
        size_t c = mc_data_capacity(n);
        assert_true(c >= n);
        assert_int_equal(c % 64, 0);
        assert_true(n <= 65536 ? c - n < 4096 : c - n <= n / 8);
    }
    assert_int_equal(mc_data_capacity(SIZE_MAX), 0);
    assert_null(mc_data_alloc(SIZE_MAX));
}

static void test_active_and_peak_count_live_blocks(void **state)
{
    (void)state;
    size_t base = get(mlx_get_active_memory);
    mlx_reset_peak_memory();
    void *a = mc_data_alloc(2 * MiB), *b = mc_data_alloc(1000);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(get(mlx_get_active_memory), base + 2 * MiB + 1024);
    assert_int_equal(get(mlx_get_peak_memory), base + 2 * MiB + 1024);

    mc_data_free(a, 2 * MiB);
    assert_int_equal(get(mlx_get_active_memory), base + 1024);
    assert_int_equal(get(mlx_get_peak_memory), base + 2 * MiB + 1024);

    /* A cached block going live again counts as active again. */
    a = mc_data_alloc(2 * MiB);
    assert_int_equal(get(mlx_get_active_memory), base + 2 * MiB + 1024);
    mc_data_free(a, 2 * MiB);
    mc_data_free(b, 1000);
    assert_int_equal(get(mlx_get_active_memory), base);
}

static void test_reset_peak_sets_peak_to_zero(void **state)
{
    (void)state;
    void *a = mc_data_alloc(MiB);
    assert_non_null(a);
    mc_data_free(a, MiB);
    assert_true(get(mlx_get_peak_memory) >= MiB);
    assert_int_equal(mlx_reset_peak_memory(), 0);
    assert_int_equal(get(mlx_get_peak_memory), 0);
    a = mc_data_alloc(MiB);
    assert_int_equal(get(mlx_get_peak_memory), get(mlx_get_active_memory));
    mc_data_free(a, MiB);
}

static void test_managed_data_counts_as_active(void **state)
{
    (void)state;
    size_t base = get(mlx_get_active_memory);
    mlx_reset_peak_memory();
    mc_data_account(12345);
    assert_int_equal(get(mlx_get_active_memory), base + 12345);
    assert_int_equal(get(mlx_get_peak_memory), base + 12345);
    mc_data_account(-12345);
    assert_int_equal(get(mlx_get_active_memory), base);
    assert_int_equal(get(mlx_get_cache_memory), 0);
}

static void test_cache_limit_zero_disables_caching(void **state)
{
    (void)state;
    size_t prev = 0;
    assert_int_equal(mlx_set_cache_limit(&prev, 0), 0);
    void *a = mc_data_alloc(MiB);
    assert_non_null(a);
    mc_data_free(a, MiB);
    assert_int_equal(get(mlx_get_cache_memory), 0);
}

static void test_lowering_cache_limit_releases_oldest_first(void **state)
{
    (void)state;
    void *a = mc_data_alloc(MiB), *b = mc_data_alloc(2 * MiB), *c = mc_data_alloc(3 * MiB);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    mc_data_free(a, MiB); /* oldest */
    mc_data_free(b, 2 * MiB);
    mc_data_free(c, 3 * MiB);
    assert_int_equal(get(mlx_get_cache_memory), 6 * MiB);

    size_t prev = 0;
    assert_int_equal(mlx_set_cache_limit(&prev, 5 * MiB), 0);
    assert_int_equal(get(mlx_get_cache_memory), 5 * MiB); /* a went */
    assert_ptr_equal(mc_data_alloc(2 * MiB), b);
    assert_ptr_equal(mc_data_alloc(3 * MiB), c);
    mc_data_free(b, 2 * MiB);
    mc_data_free(c, 3 * MiB);
}

static void test_free_beyond_cache_limit_releases_oldest(void **state)
{
    (void)state;
    size_t prev = 0;
    mlx_set_cache_limit(&prev, 4 * MiB);
    void *a = mc_data_alloc(2 * MiB), *b = mc_data_alloc(2 * MiB), *c = mc_data_alloc(2 * MiB);
    mc_data_free(a, 2 * MiB);
    mc_data_free(b, 2 * MiB);
    mc_data_free(c, 2 * MiB); /* pushes a out */
    assert_int_equal(get(mlx_get_cache_memory), 4 * MiB);
    void *x = mc_data_alloc(2 * MiB), *y = mc_data_alloc(2 * MiB);
    assert_ptr_equal(x, c);
    assert_ptr_equal(y, b);
    assert_int_equal(get(mlx_get_cache_memory), 0);
    mc_data_free(x, 2 * MiB);
    mc_data_free(y, 2 * MiB);
}

static void test_memory_limit_makes_allocation_fail(void **state)
{
    (void)state;
    void *cached = mc_data_alloc(MiB);
    mc_data_free(cached, MiB);
    assert_int_equal(get(mlx_get_cache_memory), MiB);

    size_t active = get(mlx_get_active_memory), prev = 0;
    assert_int_equal(mlx_set_memory_limit(&prev, active + 2 * MiB), 0);
    void *big = mc_data_alloc(3 * MiB);
    assert_null(big);
    /* A failed allocation also gives the cache back. */
    assert_int_equal(get(mlx_get_cache_memory), 0);
    assert_int_equal(get(mlx_get_active_memory), active);

    void *fits = mc_data_alloc(2 * MiB);
    assert_non_null(fits);
    assert_null(mc_data_alloc(64));
    mc_data_free(fits, 2 * MiB);
}

static void test_fresh_block_evicts_cache_to_stay_under_memory_limit(void **state)
{
    (void)state;
    void *a = mc_data_alloc(4 * MiB);
    mc_data_free(a, 4 * MiB);
    size_t active = get(mlx_get_active_memory), prev = 0;
    mlx_set_memory_limit(&prev, active + 6 * MiB);
    void *b = mc_data_alloc(3 * MiB); /* 4 cached + 3 new > 6 */
    assert_non_null(b);
    assert_int_equal(get(mlx_get_cache_memory), 0);
    mc_data_free(b, 3 * MiB);
}

static void test_clear_cache_empties_cache(void **state)
{
    (void)state;
    void *a = mc_data_alloc(MiB), *b = mc_data_alloc(100);
    mc_data_free(a, MiB);
    mc_data_free(b, 100);
    assert_int_equal(get(mlx_get_cache_memory), MiB + 128);
    assert_int_equal(mlx_clear_cache(), 0);
    assert_int_equal(get(mlx_get_cache_memory), 0);
}

static void test_setters_return_previous_values(void **state)
{
    (void)state;
    size_t prev = 0;
    assert_int_equal(mlx_set_cache_limit(&prev, 123 * MiB), 0);
    assert_int_equal(prev, default_cache_limit);
    assert_int_equal(mlx_set_cache_limit(&prev, 7 * MiB), 0);
    assert_int_equal(prev, 123 * MiB);

    assert_int_equal(mlx_set_memory_limit(&prev, 1000 * MiB), 0);
    assert_int_equal(prev, default_memory_limit);
    assert_int_equal(get(mlx_get_memory_limit), 1000 * MiB);
    assert_int_equal(mlx_set_memory_limit(&prev, 2000 * MiB), 0);
    assert_int_equal(prev, 1000 * MiB);

    assert_int_equal(mlx_set_wired_limit(&prev, 5 * MiB), 0);
    assert_int_equal(prev, 0);
    assert_int_equal(mlx_set_wired_limit(&prev, 0), 0);
    assert_int_equal(prev, 5 * MiB);
    assert_int_equal(n_msgs, 0);
}

static void test_defaults_follow_mlx(void **state)
{
    (void)state;
    /* 80% of RAM (or 8 GiB unknown); the cache may use as much. */
    assert_true(default_memory_limit > 0);
    assert_int_equal(default_cache_limit, default_memory_limit);
}

static void test_null_result_pointers_fail_with_message(void **state)
{
    (void)state;
    static const struct {
        int (*get)(size_t *);
        const char *name;
    } getters[] = {
        {mlx_get_active_memory, "[mlx_get_active_memory] "},
        {mlx_get_cache_memory, "[mlx_get_cache_memory] "},
        {mlx_get_memory_limit, "[mlx_get_memory_limit] "},
        {mlx_get_peak_memory, "[mlx_get_peak_memory] "},
    };
    for (size_t i = 0; i < sizeof getters / sizeof getters[0]; i++) {
        n_msgs = 0;
        assert_int_equal(getters[i].get(NULL), 1);
        assert_int_equal(n_msgs, 1);
        assert_memory_equal(last_msg, getters[i].name, strlen(getters[i].name));
    }

    size_t before = get(mlx_get_cache_memory);
    n_msgs = 0;
    assert_int_equal(mlx_set_cache_limit(NULL, 0), 1);
    assert_int_equal(n_msgs, 1);
    assert_string_equal(last_msg, "[mlx_set_cache_limit] The result pointer must not be NULL.");
    assert_int_equal(get(mlx_get_cache_memory), before);
    assert_int_equal(mc_mem_cache_limit(), default_cache_limit); /* unchanged */
    assert_int_equal(mlx_set_memory_limit(NULL, 0), 1);
    assert_int_equal(mc_mem_memory_limit(), default_memory_limit);
    assert_int_equal(mlx_set_wired_limit(NULL, 0), 1);
    assert_int_equal(n_msgs, 3);
}

static void *churn(void *arg)
{
    size_t salt = (size_t)(uintptr_t)arg;
    for (size_t i = 0; i < 20000; i++) {
        size_t n = ((i * 2654435761u + salt) % 9) * 3000 + 1;
        void *p = mc_data_alloc(n);
        if (!p)
            return (void *)1;
        ((volatile char *)p)[n - 1] = 1;
        mc_data_free(p, n);
    }
    return NULL;
}

static void test_concurrent_alloc_free_keeps_counts(void **state)
{
    (void)state;
    size_t base = get(mlx_get_active_memory);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)i), 0);
    for (int i = 0; i < 4; i++) {
        void *r = (void *)2;
        pthread_join(t[i], &r);
        assert_null(r);
    }
    assert_int_equal(get(mlx_get_active_memory), base);
    assert_true(get(mlx_get_peak_memory) > base);
}

#ifdef MC_FAULT_INJECTION
static void test_fault_injection_fails_data_allocation(void **state)
{
    (void)state;
    size_t base = get(mlx_get_active_memory);
    mc_fault_fail_after(0);
    void *p = mc_data_alloc(100);
    mc_fault_fail_after(-1);
    assert_null(p);
    assert_int_equal(get(mlx_get_active_memory), base);
}
#endif

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    default_memory_limit = mc_mem_memory_limit();
    default_cache_limit = mc_mem_cache_limit();
    const struct CMUnitTest tests[] = {
        T(test_freed_block_is_reused_and_leaves_cache),
        T(test_request_of_same_class_reuses_block),
        T(test_reuse_takes_most_recently_freed_block),
        T(test_blocks_are_64_byte_aligned_and_zero_size_is_distinct),
        T(test_blocks_of_a_page_or_more_are_page_aligned),
        T(test_size_classes_waste_little),
        T(test_active_and_peak_count_live_blocks),
        T(test_reset_peak_sets_peak_to_zero),
        T(test_managed_data_counts_as_active),
        T(test_cache_limit_zero_disables_caching),
        T(test_lowering_cache_limit_releases_oldest_first),
        T(test_free_beyond_cache_limit_releases_oldest),
        T(test_memory_limit_makes_allocation_fail),
        T(test_fresh_block_evicts_cache_to_stay_under_memory_limit),
        T(test_clear_cache_empties_cache),
        T(test_setters_return_previous_values),
        T(test_defaults_follow_mlx),
        T(test_null_result_pointers_fail_with_message),
        T(test_concurrent_alloc_free_keeps_counts),
#ifdef MC_FAULT_INJECTION
        T(test_fault_injection_fails_data_allocation),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
