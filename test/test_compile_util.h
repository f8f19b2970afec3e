/* Helpers for the compile suites (test_compile_*.c), each of which is a
 * single translation unit including this once: a thread-safe error
 * recorder, small float32 arrays, compiled-closure calls, bodies with a
 * payload that counts how often they are traced, and worker threads that
 * run jobs on request (so a test decides which thread calls what, when). */
#ifndef MC_TEST_COMPILE_UTIL_H
#define MC_TEST_COMPILE_UTIL_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compile/compile_internal.h"
#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

/* The default CPU stream, made by the first tc_setup (an empty handle is
 * refused by every op, as in mlx-c). */
static mlx_stream tc_s;

/* ---- errors: counted from any thread; the text is per thread ---- */

static atomic_int tc_errors;

static inline void tc_record(const char *msg, void *data)
{
    (void)msg;
    (void)data;
    atomic_fetch_add(&tc_errors, 1);
}

static inline int tc_setup(void **state)
{
    (void)state;
    mlx_set_error_handler(tc_record, NULL, NULL);
    atomic_store(&tc_errors, 0);
    if (!tc_s.ctx)
        tc_s = mlx_default_cpu_stream_new();
    mlx_enable_compile();
    return 0;
}

/* Per test: no error may be left unexpected, no mode left changed, and
 * no trace left in any cache. */
static inline int tc_teardown(void **state)
{
    (void)state;
    int n = atomic_exchange(&tc_errors, 0);
    mlx_enable_compile();
    mlx_detail_compile_clear_cache();
    if (n)
        fail_msg("%d unexpected error(s); last on this thread: %s", n, mlx_cpu_last_error());
    return 0;
}

/* Asserts that some error was reported (on this thread the last one
 * contains `part`) and forgets them. */
static inline void tc_expect_error(const char *part)
{
    assert_true(atomic_exchange(&tc_errors, 0) > 0);
    if (part && !strstr(mlx_cpu_last_error(), part))
        fail_msg("error \"%s\" does not contain \"%s\"", mlx_cpu_last_error(), part);
}

/* ---- arrays ---- */

static inline mlx_array tc_vec(const float *v, int n)
{
    mlx_array a = mlx_array_new_data(v, &n, 1, MLX_FLOAT32);
    assert_non_null(a.ctx);
    return a;
}

static inline mlx_array tc_scalar(float v)
{
    mlx_array a = mlx_array_new_float32(v);
    assert_non_null(a.ctx);
    return a;
}

/* Frees every array handle given. */
#define TC_FREE_ALL(...)                                                      \
    do {                                                                      \
        mlx_array tc_arr_[] = {__VA_ARGS__};                                  \
        for (size_t tc_i_ = 0; tc_i_ < sizeof tc_arr_ / sizeof tc_arr_[0]; tc_i_++) \
            mlx_array_free(tc_arr_[tc_i_]);                                   \
    } while (0)

/* Evaluates a float32 array and copies its n values out. */
static inline void tc_read(mlx_array a, float *out, size_t n)
{
    assert_int_equal(mlx_array_eval(a), 0);
    assert_int_equal(mlx_array_dtype(a), MLX_FLOAT32);
    assert_int_equal(mlx_array_size(a), n);
    const float *d = mlx_array_data_float32(a);
    assert_non_null(d);
    memcpy(out, d, n * sizeof(float));
}

/* ---- calling closures ---- */

/* Applies cls to n inputs; returns the call's status and writes output 0
 * (a handle the caller frees, or empty) to *out0 when out0 is not NULL. */
static inline int tc_apply(mlx_closure cls, const mlx_array *in, size_t n, mlx_array *out0, size_t *n_out)
{
    mlx_vector_array args = mlx_vector_array_new_data(in, n);
    mlx_vector_array res = mlx_vector_array_new();
    int rc = mlx_closure_apply(&res, cls, args);
    if (n_out)
        *n_out = rc ? 0 : mlx_vector_array_size(res);
    if (out0) {
        *out0 = mlx_array_new();
        if (!rc && mlx_vector_array_size(res) > 0)
            mlx_vector_array_get(out0, res, 0);
    }
    mlx_vector_array_free(args);
    mlx_vector_array_free(res);
    return rc;
}

/* Applies cls to one input and returns its first output (asserting the
 * call worked). */
static inline mlx_array tc_call1(mlx_closure cls, mlx_array x)
{
    mlx_array out;
    assert_int_equal(tc_apply(cls, &x, 1, &out, NULL), 0);
    assert_non_null(out.ctx);
    return out;
}

static inline mlx_closure tc_compile(mlx_closure f, bool shapeless)
{
    mlx_closure c = mlx_closure_new();
    assert_int_equal(mlx_compile(&c, f, shapeless), 0);
    assert_non_null(c.ctx);
    return c;
}

/* ---- bodies: out = x (op) k, counting their runs ---- */

enum tc_op { TC_ADD, TC_MUL };

typedef struct tc_body {
    enum tc_op op;
    mlx_array k;        /* captured; freed by the payload destructor */
    atomic_int runs;    /* times the body ran (traces, when compiled) */
    atomic_int fail;    /* non-zero: the body fails */
    /* optional: block inside the body until released (test 5) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int block;          /* the body waits while this is set */
    int inside;         /* set by the body when it has started */
} tc_body;

static inline int tc_body_fun(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    tc_body *b = payload;
    atomic_fetch_add(&b->runs, 1);
    pthread_mutex_lock(&b->mu);
    b->inside = 1;
    pthread_cond_broadcast(&b->cv);
    while (b->block)
        pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
    if (atomic_load(&b->fail))
        return 1;
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    if (mlx_vector_array_get(&x, in, 0))
        return 1;
    int rc = b->op == TC_ADD ? mlx_add(&y, x, b->k, tc_s) : mlx_multiply(&y, x, b->k, tc_s);
    mlx_array_free(x);
    if (rc)
        return rc;
    *res = mlx_vector_array_new_value(y);
    mlx_array_free(y);
    return 0;
}

static inline void tc_body_free(void *payload)
{
    tc_body *b = payload;
    mlx_array_free(b->k);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b);
}

/* A closure computing x (op) k that owns k (taken over). *body, if not
 * NULL, receives its payload, valid while the closure lives. */
static inline mlx_closure tc_body_closure(enum tc_op op, mlx_array k, tc_body **body)
{
    tc_body *b = calloc(1, sizeof *b);
    assert_non_null(b);
    b->op = op;
    b->k = k;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    if (body)
        *body = b;
    mlx_closure c = mlx_closure_new_func_payload(tc_body_fun, b, tc_body_free);
    assert_non_null(c.ctx);
    return c;
}

/* ---- managed data whose destructor is observable ---- */

typedef struct tc_managed {
    float data[4];
    atomic_int released;
} tc_managed;

static inline void tc_managed_dtor(void *payload)
{
    atomic_store(&((tc_managed *)payload)->released, 1);
}

/* An array over m->data (4 floats) whose release sets m->released. */
static inline mlx_array tc_managed_array(tc_managed *m)
{
    int n = 4;
    mlx_array a = mlx_array_new_data_managed_payload(m->data, &n, 1, MLX_FLOAT32, m, tc_managed_dtor);
    assert_non_null(a.ctx);
    return a;
}

/* ---- workers: a thread that runs one job at a time on request ---- */

typedef void (*tc_job_fn)(void *arg);

typedef struct tc_worker {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tc_job_fn job;
    void *arg;
    int busy; /* a job was posted and has not finished */
    int quit;
} tc_worker;

static inline void *tc_worker_main(void *p)
{
    tc_worker *w = p;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->busy && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->busy) {
            tc_job_fn fn = w->job;
            void *arg = w->arg;
            pthread_mutex_unlock(&w->mu);
            fn(arg);
            pthread_mutex_lock(&w->mu);
            w->busy = 0;
            pthread_cond_broadcast(&w->cv);
            continue;
        }
        break; /* quit, nothing pending */
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static inline void tc_worker_start(tc_worker *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    assert_int_equal(pthread_create(&w->th, NULL, tc_worker_main, w), 0);
}

/* Posts a job (the previous one must have finished). */
static inline void tc_worker_post(tc_worker *w, tc_job_fn fn, void *arg)
{
    pthread_mutex_lock(&w->mu);
    while (w->busy)
        pthread_cond_wait(&w->cv, &w->mu);
    w->job = fn;
    w->arg = arg;
    w->busy = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static inline void tc_worker_wait(tc_worker *w)
{
    pthread_mutex_lock(&w->mu);
    while (w->busy)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

static inline void tc_worker_run(tc_worker *w, tc_job_fn fn, void *arg)
{
    tc_worker_post(w, fn, arg);
    tc_worker_wait(w);
}

/* Lets the thread exit (after its current job) and joins it. */
static inline void tc_worker_stop(tc_worker *w)
{
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}

/* A job: call cls on x, evaluate (unless lazy_only) and keep output 0's
 * values; rc is the call's status. Safe to run on any thread: it uses no
 * cmocka assertion. */
typedef struct tc_call_job {
    mlx_closure cls;
    mlx_array x;
    bool lazy_only; /* drop the output without evaluating it */
    int rc;
    float out[4];
    size_t n_out;
} tc_call_job;

static inline void tc_call_job_run(void *p)
{
    tc_call_job *j = p;
    mlx_array out = mlx_array_new();
    mlx_vector_array args = mlx_vector_array_new_data(&j->x, 1);
    mlx_vector_array res = mlx_vector_array_new();
    j->rc = mlx_closure_apply(&res, j->cls, args);
    j->n_out = 0;
    if (!j->rc && mlx_vector_array_size(res) == 1 && !mlx_vector_array_get(&out, res, 0)) {
        if (!j->lazy_only && !mlx_array_eval(out)) {
            size_t n = mlx_array_size(out);
            const float *d = mlx_array_data_float32(out);
            if (d && n <= 4) {
                memcpy(j->out, d, n * sizeof(float));
                j->n_out = n;
            } else {
                j->rc = -1;
            }
        }
    } else if (!j->rc) {
        j->rc = -2;
    }
    mlx_array_free(out);
    mlx_vector_array_free(args);
    mlx_vector_array_free(res);
}

#endif
