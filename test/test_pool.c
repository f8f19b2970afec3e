/* The worker pool: mc_parallel_for covers each index exactly once, in chunks
 * of at least `grain`, really uses other threads, runs nested and concurrent
 * calls inline, honours the thread-count setter and MLX_CPU_THREADS, and
 * works in a forked child. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<cblas.h>)
#include <cblas.h>
#endif
#endif

#include "mlx/c/cpu.h"
#include "mlx/c/error.h"
#include "runtime/pool.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MC_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define MC_TSAN 1
#endif

#ifdef MC_TSAN
/* ThreadSanitizer kills a child of a multi-threaded process that starts
 * threads, since it cannot vouch for locks held at fork. Starting threads
 * in such a child is exactly what the fork tests check (the pool resets its
 * locks with pthread_atfork), so allow it in this program. */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void) { return "die_after_fork=0"; }
#endif

static char last_msg[512];
static int n_msgs;

static void record_error(const char *msg, void *data)
{
    (void)data;
    snprintf(last_msg, sizeof last_msg, "%s", msg);
    n_msgs++;
}

static int setup(void **state)
{
    (void)state;
    mlx_set_error_handler(record_error, NULL, NULL);
    n_msgs = 0;
    last_msg[0] = 0;
    return mlx_cpu_set_num_threads(4);
}

/* ---- coverage ---- */

typedef struct {
    atomic_int *hits;
    size_t grain, n;
    atomic_int calls;
    atomic_int short_chunks; /* chunks below grain when the range was split */
} cover_ctx;

static void cover(void *arg, size_t begin, size_t end)
{
    cover_ctx *c = arg;
    atomic_fetch_add(&c->calls, 1);
    if (begin >= end || end > c->n)
        atomic_fetch_add(&c->short_chunks, 1000);
    if (end - begin < c->grain && !(begin == 0 && end == c->n))
        atomic_fetch_add(&c->short_chunks, 1);
    for (size_t i = begin; i < end; i++)
        atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
}

/* Runs one coverage check; returns 0 if every index was hit exactly once. */
static int check_cover(size_t n, size_t grain)
{
    cover_ctx c = {.grain = grain, .n = n};
    c.hits = calloc(n ? n : 1, sizeof *c.hits);
    atomic_init(&c.calls, 0);
    atomic_init(&c.short_chunks, 0);
    mc_parallel_for(n, grain, cover, &c);
    int bad = atomic_load(&c.short_chunks) != 0;
    for (size_t i = 0; i < n; i++)
        bad |= atomic_load(&c.hits[i]) != 1;
    if (n == 0)
        bad |= atomic_load(&c.calls) != 0;
    if (n > 0 && n <= (grain ? grain : 1))
        bad |= atomic_load(&c.calls) != 1;
    free(c.hits);
    return bad;
}

static void test_parallel_for_covers_every_index_once(void **state)
{
    (void)state;
    static const size_t ns[] = {0, 1, 2, 3, 5, 7, 8, 15, 16, 17, 63, 64, 100, 999, 4096, 4097, 100003};
    static const size_t grains[] = {0, 1, 2, 3, 4, 7, 16, 64, 1000, 5000, 200000};
    static const int threads[] = {1, 2, 3, 4, 7};
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        assert_int_equal(mlx_cpu_set_num_threads(threads[t]), 0);
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            for (size_t g = 0; g < sizeof grains / sizeof *grains; g++) {
                if (check_cover(ns[i], grains[g]))
                    fail_msg("threads %d n %zu grain %zu", threads[t], ns[i], grains[g]);
            }
    }
}

/* ---- other threads really help ---- */

typedef struct {
    pthread_t caller;
    atomic_int foreign; /* chunks run by a thread other than the caller */
} spread_ctx;

static void wait_until(atomic_int *flag, int value)
{
    /* Generous: a loaded machine may take a while to schedule a worker. */
    for (int i = 0; i < 10000 && atomic_load(flag) < value; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

static void spread(void *arg, size_t begin, size_t end)
{
    (void)end;
    spread_ctx *c = arg;
    if (!pthread_equal(pthread_self(), c->caller))
        atomic_fetch_add(&c->foreign, 1);
    else if (begin == 0)
        wait_until(&c->foreign, 1); /* hold the first chunk until a worker shows up */
}

/* True if a parallel_for of this thread had a chunk run by another thread. */
static bool another_thread_helped(void)
{
    spread_ctx c = {.caller = pthread_self()};
    atomic_init(&c.foreign, 0);
    mc_parallel_for(64, 1, spread, &c);
    return atomic_load(&c.foreign) > 0;
}

static void test_workers_take_part(void **state)
{
    (void)state;
    assert_true(another_thread_helped());
    assert_true(another_thread_helped()); /* the same workers again */
}

static void test_one_thread_runs_everything_on_caller(void **state)
{
    (void)state;
    assert_int_equal(mlx_cpu_set_num_threads(1), 0);
    spread_ctx c = {.caller = pthread_self()};
    atomic_init(&c.foreign, 1); /* nothing to wait for */
    mc_parallel_for(1000, 1, spread, &c);
    assert_int_equal(atomic_load(&c.foreign), 1);
}

/* ---- inline cases ---- */

typedef struct {
    pthread_t thread;
    size_t begin, end;
    atomic_int calls;
} record_ctx;

static void record(void *arg, size_t begin, size_t end)
{
    record_ctx *r = arg;
    r->thread = pthread_self();
    r->begin = begin;
    r->end = end;
    atomic_fetch_add(&r->calls, 1);
}

typedef struct {
    atomic_int bad;
    atomic_int outer_calls;
} nest_ctx;

static void nest(void *arg, size_t begin, size_t end)
{
    (void)begin;
    (void)end;
    nest_ctx *c = arg;
    record_ctx r = {0};
    atomic_init(&r.calls, 0);
    mc_parallel_for(1000, 1, record, &r);
    if (atomic_load(&r.calls) != 1 || r.begin != 0 || r.end != 1000
        || !pthread_equal(r.thread, pthread_self()))
        atomic_fetch_add(&c->bad, 1);
    atomic_fetch_add(&c->outer_calls, 1);
}

static void test_nested_call_runs_inline(void **state)
{
    (void)state;
    nest_ctx c;
    atomic_init(&c.bad, 0);
    atomic_init(&c.outer_calls, 0);
    mc_parallel_for(16, 1, nest, &c);
    assert_int_equal(atomic_load(&c.bad), 0);
    assert_true(atomic_load(&c.outer_calls) >= 2);
}

typedef struct {
    atomic_int started;
    atomic_int release;
} hold_ctx;

static void hold(void *arg, size_t begin, size_t end)
{
    (void)begin;
    (void)end;
    hold_ctx *h = arg;
    atomic_fetch_add(&h->started, 1);
    wait_until(&h->release, 1);
}

static void *hold_pool(void *arg)
{
    mc_parallel_for(8, 1, hold, arg);
    return NULL;
}

static void test_call_while_pool_busy_runs_inline(void **state)
{
    (void)state;
    hold_ctx h;
    atomic_init(&h.started, 0);
    atomic_init(&h.release, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_pool, &h), 0);
    wait_until(&h.started, 1);

    record_ctx r = {0};
    atomic_init(&r.calls, 0);
    mc_parallel_for(1000, 1, record, &r);
    atomic_store(&h.release, 1);
    pthread_join(t, NULL);

    assert_int_equal(atomic_load(&r.calls), 1);
    assert_int_equal(r.begin, 0);
    assert_int_equal(r.end, 1000);
    assert_true(pthread_equal(r.thread, pthread_self()));
}

static void *racing_caller(void *arg)
{
    (void)arg;
    for (int i = 0; i < 200; i++)
        if (check_cover(5000, 7))
            return (void *)1;
    return NULL;
}

static void test_concurrent_callers_all_complete(void **state)
{
    (void)state;
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, racing_caller, NULL), 0);
    for (int i = 0; i < 3; i++) {
        void *r = (void *)2;
        pthread_join(t[i], &r);
        assert_null(r);
    }
}

/* ---- thread count ---- */

static void test_set_num_threads_rejects_out_of_range(void **state)
{
    (void)state;
    static const int bad[] = {0, -1, -1000, 1025, 1 << 30};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        n_msgs = 0;
        assert_int_equal(mlx_cpu_set_num_threads(bad[i]), 1);
        assert_int_equal(n_msgs, 1);
        assert_memory_equal(last_msg, "[mlx_cpu_set_num_threads] ", 26);
        assert_int_equal(mlx_cpu_get_num_threads(), 4);
    }
    assert_non_null(strstr(last_msg, "1073741824"));
}

/* OpenBLAS stays on one thread (the pool splits products), even when the
 * program changed it in between. */
static void test_set_num_threads_changes_pool_and_keeps_blas_at_one(void **state)
{
    (void)state;
    assert_int_equal(mlx_cpu_set_num_threads(3), 0);
    assert_int_equal(mlx_cpu_get_num_threads(), 3);
    assert_int_equal(mc_pool_threads(), 3);
#ifdef OPENBLAS_VERSION
    assert_int_equal(openblas_get_num_threads(), 1);
    openblas_set_num_threads(2);
#endif
    assert_int_equal(mlx_cpu_set_num_threads(2), 0);
    assert_int_equal(mc_pool_threads(), 2);
#ifdef OPENBLAS_VERSION
    assert_int_equal(openblas_get_num_threads(), 1);
#endif
    assert_int_equal(n_msgs, 0);
}

static void test_shrinking_and_growing_keeps_working(void **state)
{
    (void)state;
    static const int counts[] = {6, 2, 1, 3, 8, 2};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        assert_int_equal(mlx_cpu_set_num_threads(counts[i]), 0);
        assert_int_equal(check_cover(10000, 3), 0);
        if (counts[i] > 1)
            assert_true(another_thread_helped());
    }
}

/* Runs this test program again with MLX_CPU_THREADS=value and returns the
 * thread count the child reports as its exit status. */
static const char *self_path;

static int threads_with_env(const char *value)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        setenv("MLX_CPU_THREADS", value, 1);
        /* cross builds run under an emulator (meson's exe_wrapper, e.g.
         * qemu-aarch64), which the kernel does not start by itself */
        const char *wrapper = getenv("MESON_EXE_WRAPPER");
        if (wrapper && *wrapper)
            execl(wrapper, wrapper, self_path, "--print-threads", (char *)NULL);
        else
            execl(self_path, self_path, "--print-threads", (char *)NULL);
        _exit(255);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_env_variable_sets_default_count(void **state)
{
    (void)state;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int expect_default = cores < 1 ? 1 : cores > 200 ? 200 : (int)cores;
    assert_int_equal(threads_with_env("3"), 3);
    assert_int_equal(threads_with_env("1"), 1);
    if (cores <= 200) {
        assert_int_equal(threads_with_env("0"), expect_default);
        assert_int_equal(threads_with_env("-2"), expect_default);
        assert_int_equal(threads_with_env("4x"), expect_default);
        assert_int_equal(threads_with_env(""), expect_default);
    }
}

/* ---- fork ---- */

/* Forks; in the child, checks that the pool covers a range and that a worker
 * of the child helps. Returns the child's verdict (0: good). The verdict
 * travels through a pipe, not the exit status, which tools such as valgrind
 * may rewrite for reasons of their own (the parent's threads' memory that a
 * child inherits). Asserts nothing, so callers can clean up first. */
static int run_in_child(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    fflush(NULL); /* or the child's exit() prints the parent's pending output */
    pid_t pid = fork();
    if (pid < 0)
        return -2;
    if (pid == 0) {
        close(fds[0]);
        char verdict = (char)(check_cover(100003, 5) | !another_thread_helped() << 1);
        ssize_t w = write(fds[1], &verdict, 1);
        (void)w;
        exit(0); /* runs the destructors: the child's workers are joined */
    }
    close(fds[1]);
    char verdict = 4;
    if (read(fds[0], &verdict, 1) != 1)
        verdict = 8;
    close(fds[0]);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return -3;
    return verdict;
}

/* qemu-user (the aarch64 stage) fails an assertion of its own when the
 * forked child of this multi-threaded process starts threads (since
 * OpenBLAS runs one thread: see pool.c); native runs, valgrind and the
 * sanitizers cover these two tests. */
static bool emulated(void) { return getenv("MC_TEST_EMULATED") != NULL; }

static void test_pool_works_in_forked_child(void **state)
{
    (void)state;
    if (emulated())
        skip();
    assert_true(another_thread_helped()); /* the parent's workers exist */
    assert_int_equal(run_in_child(), 0);
    assert_int_equal(check_cover(100003, 5), 0); /* and the parent's still work */
}

static void test_pool_works_in_child_forked_while_busy(void **state)
{
    (void)state;
    if (emulated())
        skip();
    hold_ctx h;
    atomic_init(&h.started, 0);
    atomic_init(&h.release, 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, hold_pool, &h), 0);
    wait_until(&h.started, 1);
    int verdict = run_in_child();
    atomic_store(&h.release, 1);
    pthread_join(t, NULL);
    assert_int_equal(verdict, 0);
}

#define T(fn) cmocka_unit_test_setup(fn, setup)

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc > 1 && strcmp(argv[1], "--print-threads") == 0) {
        int n = mlx_cpu_get_num_threads();
        return n > 200 ? 200 : n;
    }
    const struct CMUnitTest tests[] = {
        T(test_parallel_for_covers_every_index_once),
        T(test_workers_take_part),
        T(test_one_thread_runs_everything_on_caller),
        T(test_nested_call_runs_inline),
        T(test_call_while_pool_busy_runs_inline),
        T(test_concurrent_callers_all_complete),
        T(test_set_num_threads_rejects_out_of_range),
        T(test_set_num_threads_changes_pool_and_keeps_blas_at_one),
        T(test_shrinking_and_growing_keeps_working),
        T(test_env_variable_sets_default_count),
        T(test_pool_works_in_forked_child),
        T(test_pool_works_in_child_forked_while_busy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
