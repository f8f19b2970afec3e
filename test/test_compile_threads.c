/* compile's per-thread caches and their registry: freeing a compiled
 * closure, erase and clear reach every thread; a thread's exit releases its
 * traces; erasing during a trace is safe; a stress run of many threads;
 * fork. Each test names the invariant of docs/threading.md it proves. */
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_compile_util.h"

static const float xv[4] = {5, 6, 7, 8};

/* ---- a body that makes its constant itself ----
 * The managed array exists only inside the trace (and the outputs made
 * from it), so its destructor shows when the trace is released. */

static int fresh_body(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    tc_managed *m = payload;
    atomic_store(&m->released, 0);
    mlx_array k = tc_managed_array(m);
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_add(&y, x, k, tc_s);
    mlx_array_free(k);
    mlx_array_free(x);
    if (!rc)
        *res = mlx_vector_array_new_value(y);
    mlx_array_free(y);
    return rc;
}

static mlx_closure fresh_closure(tc_managed *m)
{
    mlx_closure f = mlx_closure_new_func_payload(fresh_body, m, NULL);
    assert_non_null(f.ctx);
    return f;
}

static void expect_values(const tc_call_job *j, float add, float mul)
{
    assert_int_equal(j->rc, 0);
    assert_int_equal(j->n_out, 4);
    for (int i = 0; i < 4; i++)
        assert_true(j->out[i] == xv[i] * mul + add);
}

/* Invariant 4: a compiled closure's record is erased from every thread's
 * cache when its last reference goes (here on another thread than the one
 * holding the trace), so the constant the trace captured is released
 * before that thread exits. */
static void test_freeing_compiled_closure_erases_every_threads_cache(void **state)
{
    (void)state;
    tc_managed *m = calloc(1, sizeof *m);
    assert_non_null(m);
    for (int i = 0; i < 4; i++)
        m->data[i] = (float)(i + 1);
    mlx_closure f = tc_body_closure(TC_ADD, tc_managed_array(m), NULL);
    mlx_closure cf = tc_compile(f, false);
    mlx_closure_free(f);
    mlx_array x = tc_vec(xv, 4);

    tc_worker w;
    tc_worker_start(&w);
    tc_call_job j = {.cls = cf, .x = x, .lazy_only = true};
    tc_worker_run(&w, tc_call_job_run, &j);
    assert_int_equal(j.rc, 0);
    assert_int_equal(mc_compile_cache_entries_all(), 1);
    assert_int_equal(atomic_load(&m->released), 0);

    mlx_closure_free(cf); /* the worker is alive and idle */
    assert_int_equal(atomic_load(&m->released), 1);
    assert_int_equal(mc_compile_cache_entries_all(), 0);

    tc_worker_stop(&w);
    mlx_array_free(x);
    free(m);
}

/* Invariant 4 again, as a use: the record of a freed closure A is often
 * reused for the next closure B (same size); B must never find A's trace
 * in the worker's cache. */
static void test_no_stale_trace_after_address_reuse(void **state)
{
    (void)state;
    tc_worker w;
    tc_worker_start(&w);
    mlx_array x = tc_vec(xv, 4);
    int reused = 0;
    for (int r = 0; r < 300; r++) {
        mlx_closure fa = tc_body_closure(TC_ADD, tc_scalar(2), NULL);
        mlx_closure ca = tc_compile(fa, false);
        mlx_closure_free(fa);
        tc_call_job ja = {.cls = ca, .x = x};
        tc_worker_run(&w, tc_call_job_run, &ja);
        expect_values(&ja, 2, 1);
        void *rec_a = ((mc_closure *)ca.ctx)->payload;
        mlx_closure_free(ca);

        tc_body *b;
        mlx_closure fb = tc_body_closure(TC_MUL, tc_scalar(3), &b);
        mlx_closure cb = tc_compile(fb, false);
        mlx_closure_free(fb);
        if (((mc_closure *)cb.ctx)->payload == rec_a)
            reused++;
        tc_call_job jb = {.cls = cb, .x = x};
        tc_worker_run(&w, tc_call_job_run, &jb);
        expect_values(&jb, 0, 3);
        assert_int_equal(atomic_load(&b->runs), 1); /* traced afresh */
        mlx_closure_free(cb);
    }
    print_message("record address reused in %d of 300 rounds\n", reused);
    tc_worker_stop(&w);
    mlx_array_free(x);
}

/* Invariants 1 and 7: a thread's cache is registered at its first compiled
 * call and, when the thread exits (without calling into the library
 * again), unregistered with its traces released, while the compiled
 * closure itself lives on. */
static void test_thread_exit_releases_its_traces(void **state)
{
    (void)state;
    tc_managed m = {.data = {1, 2, 3, 4}};
    mlx_closure f = fresh_closure(&m);
    mlx_closure cf = tc_compile(f, false);
    mlx_closure_free(f);
    mlx_array x = tc_vec(xv, 4);
    size_t caches = mc_compile_cache_count();

    tc_worker w;
    tc_worker_start(&w);
    tc_call_job j = {.cls = cf, .x = x, .lazy_only = true};
    tc_worker_run(&w, tc_call_job_run, &j);
    assert_int_equal(j.rc, 0);
    assert_int_equal(mc_compile_cache_count(), caches + 1);
    assert_int_equal(mc_compile_cache_entries_all(), 1);
    assert_int_equal(atomic_load(&m.released), 0);

    tc_worker_stop(&w);
    assert_int_equal(atomic_load(&m.released), 1);
    assert_int_equal(mc_compile_cache_count(), caches);
    assert_int_equal(mc_compile_cache_entries_all(), 0);

    /* the closure still works, here */
    mlx_array y = tc_call1(cf, x);
    float out[4];
    tc_read(y, out, 4);
    for (int i = 0; i < 4; i++)
        assert_true(out[i] == xv[i] + m.data[i]);
    mlx_array_free(y);
    mlx_closure_free(cf);
    mlx_array_free(x);
    assert_int_equal(atomic_load(&m.released), 1);
}

/* ---- destructors that call back into compile ---- */

static float reenter_data[4] = {1, 2, 3, 4};
static atomic_int reenter_runs;

/* A managed-data destructor that takes the registry lock and every cache
 * lock itself: run under one of them it would deadlock. */
static void reenter_dtor(void *payload)
{
    (void)payload;
    mlx_detail_compile_erase(0x1);
    mlx_detail_compile_clear_cache();
    (void)mc_compile_cache_entries_all();
    atomic_fetch_add(&reenter_runs, 1);
}

static int reenter_body(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    (void)payload;
    int n = 4;
    mlx_array k = mlx_array_new_data_managed_payload(reenter_data, &n, 1, MLX_FLOAT32, NULL, reenter_dtor);
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    int rc = !k.ctx || mlx_vector_array_get(&x, in, 0) || mlx_add(&y, x, k, tc_s);
    mlx_array_free(k);
    mlx_array_free(x);
    if (!rc)
        *res = mlx_vector_array_new_value(y);
    mlx_array_free(y);
    return rc;
}

/* Invariant 3: the traces that erase, clear, thread exit and freeing a
 * compiled closure remove are released after the locks are dropped: here
 * releasing them runs a destructor that calls erase and clear itself, which
 * would deadlock (alarm: the test fails instead of hanging) otherwise. */
static void test_destructors_run_outside_library_locks(void **state)
{
    (void)state;
    const uintptr_t id = 0xD7;
    alarm(120);
    atomic_store(&reenter_runs, 0);
    mlx_closure f = mlx_closure_new_func_payload(reenter_body, NULL, NULL);
    mlx_closure cd = mlx_closure_new();
    assert_int_equal(mlx_detail_compile(&cd, f, id, false, NULL, 0), 0);
    mlx_closure cf = tc_compile(f, false);
    mlx_array x = tc_vec(xv, 4);
    tc_worker w;
    tc_worker_start(&w);
    tc_call_job j = {.cls = cd, .x = x, .lazy_only = true};

    tc_worker_run(&w, tc_call_job_run, &j); /* released by erase */
    assert_int_equal(j.rc, 0);
    mlx_detail_compile_erase(id);
    assert_int_equal(atomic_load(&reenter_runs), 1);

    tc_worker_run(&w, tc_call_job_run, &j); /* released by clear */
    mlx_detail_compile_clear_cache();
    assert_int_equal(atomic_load(&reenter_runs), 2);

    j.cls = cf;
    tc_worker_run(&w, tc_call_job_run, &j); /* released by freeing cf */
    mlx_closure_free(cf);
    assert_int_equal(atomic_load(&reenter_runs), 3);

    j.cls = cd;
    tc_worker_run(&w, tc_call_job_run, &j); /* released at thread exit */
    tc_worker_stop(&w);
    assert_int_equal(atomic_load(&reenter_runs), 4);
    alarm(0);
    mlx_closure_free(cd);
    mlx_closure_free(f);
    mlx_array_free(x);
}

enum { N_WORKERS = 4 };

static void call_on_all(tc_worker *w, mlx_closure c, mlx_array x, float add, float mul)
{
    tc_call_job j[N_WORKERS];
    for (int i = 0; i < N_WORKERS; i++) {
        j[i] = (tc_call_job){.cls = c, .x = x};
        tc_worker_post(&w[i], tc_call_job_run, &j[i]);
    }
    for (int i = 0; i < N_WORKERS; i++) {
        tc_worker_wait(&w[i]);
        expect_values(&j[i], add, mul);
    }
}

/* Invariant 2: erase(fun_id) and clear() reach the cache of every live
 * thread, counted by the traces each holds and by the retraces after. */
static void test_clear_and_erase_reach_every_worker(void **state)
{
    (void)state;
    const uintptr_t id_a = 0xA11CE, id_b = 0xB0B;
    tc_body *pa, *pb;
    mlx_closure fa = tc_body_closure(TC_ADD, tc_scalar(2), &pa);
    mlx_closure fb = tc_body_closure(TC_MUL, tc_scalar(3), &pb);
    mlx_closure ca = mlx_closure_new(), cb = mlx_closure_new();
    assert_int_equal(mlx_detail_compile(&ca, fa, id_a, false, NULL, 0), 0);
    assert_int_equal(mlx_detail_compile(&cb, fb, id_b, false, NULL, 0), 0);
    mlx_array x = tc_vec(xv, 4);
    tc_worker w[N_WORKERS];
    for (int i = 0; i < N_WORKERS; i++)
        tc_worker_start(&w[i]);

    call_on_all(w, ca, x, 2, 1);
    call_on_all(w, cb, x, 0, 3);
    assert_int_equal(atomic_load(&pa->runs), N_WORKERS);
    assert_int_equal(atomic_load(&pb->runs), N_WORKERS);
    assert_int_equal(mc_compile_cache_entries_all(), 2 * N_WORKERS);

    assert_int_equal(mlx_detail_compile_erase(id_a), 0);
    assert_int_equal(mc_compile_cache_entries_all(), N_WORKERS);
    call_on_all(w, ca, x, 2, 1);
    call_on_all(w, cb, x, 0, 3);
    assert_int_equal(atomic_load(&pa->runs), 2 * N_WORKERS); /* every worker retraced A */
    assert_int_equal(atomic_load(&pb->runs), N_WORKERS);     /* and none retraced B */
    assert_int_equal(mc_compile_cache_entries_all(), 2 * N_WORKERS);

    assert_int_equal(mlx_detail_compile_clear_cache(), 0);
    assert_int_equal(mc_compile_cache_entries_all(), 0);
    call_on_all(w, ca, x, 2, 1);
    call_on_all(w, cb, x, 0, 3);
    assert_int_equal(atomic_load(&pa->runs), 3 * N_WORKERS);
    assert_int_equal(atomic_load(&pb->runs), 2 * N_WORKERS);

    for (int i = 0; i < N_WORKERS; i++)
        tc_worker_stop(&w[i]);
    assert_int_equal(mc_compile_cache_entries_all(), 0);
    mlx_closure_free(ca);
    mlx_closure_free(cb);
    mlx_closure_free(fa);
    mlx_closure_free(fb);
    mlx_array_free(x);
}

static void wait_inside(tc_body *b)
{
    pthread_mutex_lock(&b->mu);
    while (!b->inside)
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
}

static void set_block(tc_body *b, int block)
{
    pthread_mutex_lock(&b->mu);
    b->block = block;
    b->inside = 0;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

/* Invariants 3 and 5: erase and clear while a worker is inside the body
 * neither wait for it (no lock is held while user code runs) nor break
 * it: the call finishes with the detached list and the right values, and
 * the next call traces again. */
static void test_erase_and_clear_during_a_trace_are_safe(void **state)
{
    (void)state;
    const uintptr_t id = 0x7ACE;
    tc_body *b;
    mlx_closure f = tc_body_closure(TC_ADD, tc_scalar(2), &b);
    mlx_closure cf = mlx_closure_new();
    assert_int_equal(mlx_detail_compile(&cf, f, id, false, NULL, 0), 0);
    mlx_array x = tc_vec(xv, 4);
    tc_worker w;
    tc_worker_start(&w);

    /* erase, then clear, during the first trace */
    set_block(b, 1);
    tc_call_job j = {.cls = cf, .x = x};
    tc_worker_post(&w, tc_call_job_run, &j);
    wait_inside(b);
    assert_int_equal(mlx_detail_compile_erase(id), 0);
    assert_int_equal(mlx_detail_compile_clear_cache(), 0);
    set_block(b, 0);
    tc_worker_wait(&w);
    expect_values(&j, 2, 1);
    assert_int_equal(mc_compile_cache_entries_all(), 0); /* kept nowhere */

    tc_worker_run(&w, tc_call_job_run, &j);
    expect_values(&j, 2, 1);
    assert_int_equal(atomic_load(&b->runs), 2); /* traced again */
    assert_int_equal(mc_compile_cache_entries_all(), 1);

    /* clear while a second trace (another shape) of a cached function runs */
    mlx_array x2 = tc_vec(xv, 3);
    set_block(b, 1);
    tc_call_job j2 = {.cls = cf, .x = x2};
    tc_worker_post(&w, tc_call_job_run, &j2);
    wait_inside(b);
    assert_int_equal(mlx_detail_compile_clear_cache(), 0);
    assert_int_equal(mc_compile_cache_entries_all(), 0);
    set_block(b, 0);
    tc_worker_wait(&w);
    assert_int_equal(j2.rc, 0);
    assert_int_equal(j2.n_out, 3);
    for (int i = 0; i < 3; i++)
        assert_true(j2.out[i] == xv[i] + 2);
    assert_int_equal(mc_compile_cache_entries_all(), 0);
    tc_worker_run(&w, tc_call_job_run, &j);
    expect_values(&j, 2, 1);
    assert_int_equal(atomic_load(&b->runs), 4);

    tc_worker_stop(&w);
    mlx_closure_free(cf);
    mlx_closure_free(f);
    mlx_array_free(x);
    mlx_array_free(x2);
}

/* ---- stress ---- */

enum { STRESS_THREADS = 8, STRESS_ROUNDS = 40 };

typedef struct stress {
    mlx_closure shared;
    atomic_int failures;
    atomic_int running;
    int id;
} stress;

typedef struct stress_arg {
    stress *s;
    int id;
} stress_arg;

static int check_call(mlx_closure c, mlx_array x, float add, float mul)
{
    tc_call_job j = {.cls = c, .x = x};
    tc_call_job_run(&j);
    if (j.rc || j.n_out != 4)
        return 1;
    for (int i = 0; i < 4; i++)
        if (j.out[i] != xv[i] * mul + add)
            return 1;
    return 0;
}

static void *stress_main(void *p)
{
    stress_arg *a = p;
    stress *s = a->s;
    int bad = 0;
    mlx_array x = mlx_array_new_data(xv, (const int[]){4}, 1, MLX_FLOAT32);
    for (int r = 0; r < STRESS_ROUNDS && x.ctx; r++) {
        float k = (float)(a->id * 1000 + r);
        mlx_array kk = mlx_array_new_float32(k);
        tc_body *b = calloc(1, sizeof *b);
        if (!b)
            break;
        b->op = TC_ADD;
        b->k = kk;
        pthread_mutex_init(&b->mu, NULL);
        pthread_cond_init(&b->cv, NULL);
        mlx_closure f = mlx_closure_new_func_payload(tc_body_fun, b, tc_body_free);
        mlx_closure cf = mlx_closure_new();
        if (mlx_compile(&cf, f, r % 2 == 0)) {
            bad++;
        } else {
            bad += check_call(cf, x, k, 1);
            bad += check_call(s->shared, x, 0, 2);
            bad += check_call(cf, x, k, 1);
        }
        mlx_closure_free(cf);
        mlx_closure_free(f);
    }
    if (!x.ctx)
        bad++;
    mlx_array_free(x);
    atomic_fetch_add(&s->failures, bad);
    atomic_fetch_sub(&s->running, 1);
    return NULL;
}

static void *clearer_main(void *p)
{
    stress *s = p;
    unsigned n = 0;
    while (atomic_load(&s->running) > 0) {
        if (n++ % 3 == 0)
            mlx_detail_compile_erase((uintptr_t)n);
        else
            mlx_detail_compile_clear_cache();
        sched_yield();
    }
    return NULL;
}

/* Invariants 1-5 and 7 together: 8 threads compile, call and free their
 * own closures and call one shared compiled closure while another thread
 * keeps clearing; every result must be right (and TSAN/ASan quiet). */
static void test_stress_threads_compile_call_free_while_clearing(void **state)
{
    (void)state;
    stress s = {0};
    mlx_closure f = tc_body_closure(TC_MUL, tc_scalar(2), NULL);
    s.shared = tc_compile(f, false);
    mlx_closure_free(f);
    atomic_store(&s.running, STRESS_THREADS);
    pthread_t th[STRESS_THREADS], clearer;
    stress_arg args[STRESS_THREADS];
    assert_int_equal(pthread_create(&clearer, NULL, clearer_main, &s), 0);
    for (int i = 0; i < STRESS_THREADS; i++) {
        args[i] = (stress_arg){&s, i};
        assert_int_equal(pthread_create(&th[i], NULL, stress_main, &args[i]), 0);
    }
    for (int i = 0; i < STRESS_THREADS; i++)
        pthread_join(th[i], NULL);
    pthread_join(clearer, NULL);
    assert_int_equal(atomic_load(&s.failures), 0);
    assert_int_equal(mc_compile_cache_entries_all(), 0); /* every stress thread exited */
    mlx_closure_free(s.shared);
}

/* ---- fork ---- */

static int child_checks(void)
{
    /* only the forking thread's cache survives */
    if (mc_compile_cache_count() != 1)
        return 10;
    if (mc_compile_cache_entries_all() != 1)
        return 11;
    mlx_array x = mlx_array_new_data(xv, (const int[]){4}, 1, MLX_FLOAT32);
    tc_body *b = calloc(1, sizeof *b);
    if (!b || !x.ctx)
        return 12;
    b->op = TC_ADD;
    b->k = mlx_array_new_float32(10);
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    mlx_closure f = mlx_closure_new_func_payload(tc_body_fun, b, tc_body_free);
    mlx_closure cf = mlx_closure_new();
    if (mlx_detail_compile(&cf, f, 0xF0, false, NULL, 0))
        return 13;
    if (check_call(cf, x, 10, 1) || atomic_load(&b->runs) != 1)
        return 14;
    if (check_call(cf, x, 10, 1) || atomic_load(&b->runs) != 1)
        return 15;
    if (mc_compile_cache_entries_all() != 2)
        return 16;
    mlx_detail_compile_erase(0xF0);
    if (mc_compile_cache_entries_all() != 1)
        return 17;
    if (check_call(cf, x, 10, 1) || atomic_load(&b->runs) != 2)
        return 18;
    mlx_detail_compile_clear_cache();
    if (mc_compile_cache_entries_all() != 0)
        return 19;
    if (check_call(cf, x, 10, 1) || atomic_load(&b->runs) != 3)
        return 20;
    mlx_closure_free(cf);
    mlx_closure_free(f);
    mlx_array_free(x);
    return 0;
}

/* Invariant 8: after fork() (here while a worker thread holds a cache),
 * the child has a usable registry holding only its own thread's cache:
 * it compiles, calls, erases and clears. The parent goes on as before. */
static void test_fork_child_compiles_calls_erases_and_clears(void **state)
{
    (void)state;
    tc_body *b;
    mlx_closure f = tc_body_closure(TC_MUL, tc_scalar(2), &b);
    mlx_closure cf = tc_compile(f, false);
    mlx_closure_free(f);
    mlx_array x = tc_vec(xv, 4);
    mlx_array y = tc_call1(cf, x); /* main's cache: one trace */
    mlx_array_free(y);
    tc_worker w;
    tc_worker_start(&w);
    tc_call_job j = {.cls = cf, .x = x};
    tc_worker_run(&w, tc_call_job_run, &j); /* the worker's: one more */
    expect_values(&j, 0, 2);
    assert_int_equal(mc_compile_cache_entries_all(), 2);

    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(child_checks());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    /* the parent's registry and locks are unchanged and usable */
    assert_int_equal(mc_compile_cache_entries_all(), 2);
    tc_worker_run(&w, tc_call_job_run, &j);
    expect_values(&j, 0, 2);
    assert_int_equal(atomic_load(&b->runs), 2);
    mlx_detail_compile_clear_cache();
    assert_int_equal(mc_compile_cache_entries_all(), 0);
    tc_worker_stop(&w);
    mlx_closure_free(cf);
    mlx_array_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_freeing_compiled_closure_erases_every_threads_cache, tc_teardown),
        cmocka_unit_test_teardown(test_no_stale_trace_after_address_reuse, tc_teardown),
        cmocka_unit_test_teardown(test_thread_exit_releases_its_traces, tc_teardown),
        cmocka_unit_test_teardown(test_destructors_run_outside_library_locks, tc_teardown),
        cmocka_unit_test_teardown(test_clear_and_erase_reach_every_worker, tc_teardown),
        cmocka_unit_test_teardown(test_erase_and_clear_during_a_trace_are_safe, tc_teardown),
        cmocka_unit_test_teardown(test_stress_threads_compile_call_free_while_clearing, tc_teardown),
        cmocka_unit_test_teardown(test_fork_child_compiles_calls_erases_and_clears, tc_teardown),
    };
    return cmocka_run_group_tests(tests, tc_setup, NULL);
}
