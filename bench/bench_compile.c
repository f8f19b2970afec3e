/* bench_compile: what compile costs and saves on the paths that matter to
 * a caller. (1) A cache hit: a compiled 10-op elementwise function called
 * on 4-element inputs, per call, next to the same closure called
 * uncompiled; both figures are printed. (2) erase(fun_id) while 64 live
 * threads each hold a trace of that function: time per erase, next to an
 * erase of an id that no cache holds (the cost of visiting the caches).
 * Output lines as in bench_util.h. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

/* Possibly not exported yet: see bench_ops.c. */
#pragma weak mlx_add
#pragma weak mlx_multiply
#pragma weak mlx_subtract
#pragma weak mlx_maximum
#pragma weak mlx_abs
#pragma weak mlx_negative
#pragma weak mlx_exp
#pragma weak mlx_detail_compile
#pragma weak mlx_detail_compile_erase

#define ERASE_THREADS 64
#define CALLS_PER_REP 200

/* f(x, y): ten elementwise ops, one output. */
static int ten_ops(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_array x = mlx_array_new(), y = mlx_array_new(), t = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1) ||
             mlx_add(&t, x, y, s) ||      /* 1 */
             mlx_multiply(&t, t, x, s) || /* 2 */
             mlx_subtract(&t, t, y, s) || /* 3 */
             mlx_maximum(&t, t, x, s) ||  /* 4 */
             mlx_multiply(&t, t, t, s) || /* 5 */
             mlx_add(&t, t, y, s) ||      /* 6 */
             mlx_abs(&t, t, s) ||         /* 7 */
             mlx_negative(&t, t, s) ||    /* 8 */
             mlx_exp(&t, t, s) ||         /* 9 */
             mlx_multiply(&t, t, x, s) || /* 10 */
             mlx_vector_array_set_value(res, t);
    mlx_array_free(x);
    mlx_array_free(y);
    mlx_array_free(t);
    mlx_stream_free(s);
    return rc;
}

static bool have_ops(void)
{
    return mlx_add && mlx_multiply && mlx_subtract && mlx_maximum && mlx_abs && mlx_negative &&
           mlx_exp;
}

static mlx_vector_array make_args(void)
{
    float xd[4] = {0.5f, -1.0f, 2.0f, 0.25f}, yd[4] = {1.5f, 0.5f, -0.75f, 1.0f};
    int shape[1] = {4};
    mlx_array xy[2] = {mlx_array_new_data(xd, shape, 1, MLX_FLOAT32),
                       mlx_array_new_data(yd, shape, 1, MLX_FLOAT32)};
    mlx_vector_array args = mlx_vector_array_new_data(xy, 2);
    mlx_array_free(xy[0]);
    mlx_array_free(xy[1]);
    return args;
}

/* One call as a program makes it: apply, evaluate the output, drop it. */
static int call_once(mlx_closure f, mlx_vector_array args)
{
    mlx_vector_array out = mlx_vector_array_new();
    int rc = mlx_closure_apply(&out, f, args) || mlx_eval(out);
    mlx_vector_array_free(out);
    return rc;
}

typedef struct {
    mlx_closure f;
    mlx_vector_array args;
} call_ctx;

static int run_calls(void *arg)
{
    call_ctx *c = arg;
    for (int i = 0; i < CALLS_PER_REP; i++)
        if (call_once(c->f, c->args))
            return 1;
    return 0;
}

static void report_per_call(const char *name, bu_stat st)
{
    st.median_ns /= CALLS_PER_REP;
    st.min_ns /= CALLS_PER_REP;
    bu_report("mlx", name, 1, st);
}

/* ---- erase with many live threads ---- */

typedef struct {
    pthread_barrier_t start, done;
    mlx_closure f;
    bool quit;
    int failures;
    pthread_mutex_t lock;
} erase_team;

/* Each round: call the compiled function once (a miss after the previous
 * erase, so a new trace lands in this thread's cache), then wait. The
 * thread stays alive, so its cache stays registered. */
static void *erase_worker(void *arg)
{
    erase_team *t = arg;
    mlx_vector_array args = make_args();
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->quit)
            break;
        if (call_once(t->f, args)) {
            pthread_mutex_lock(&t->lock);
            t->failures++;
            pthread_mutex_unlock(&t->lock);
        }
        pthread_barrier_wait(&t->done);
    }
    mlx_vector_array_free(args);
    return NULL;
}

static void bench_erase(mlx_closure f, uintptr_t fun_id)
{
    erase_team t = {.f = f};
    pthread_t tid[ERASE_THREADS];
    pthread_attr_t attr;
    int started = 0;
    pthread_mutex_init(&t.lock, NULL);
    pthread_barrier_init(&t.start, NULL, ERASE_THREADS + 1);
    pthread_barrier_init(&t.done, NULL, ERASE_THREADS + 1);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 1 << 20);
    for (; started < ERASE_THREADS; started++)
        if (pthread_create(&tid[started], &attr, erase_worker, &t))
            break;
    if (started < ERASE_THREADS) {
        /* The started threads wait on a barrier that can no longer fill:
         * leaving the process is the only way out. */
        fprintf(stderr, "bench_compile: started only %d threads\n", started);
        exit(1);
    }

    const int warm = 2, reps = bu_reps(31);
    int64_t *hit = calloc((size_t)reps, sizeof *hit), *miss = calloc((size_t)reps, sizeof *miss);
    for (int r = -warm; r < reps; r++) {
        pthread_barrier_wait(&t.start); /* every worker traces ... */
        pthread_barrier_wait(&t.done);  /* ... and holds its trace */
        int64_t t0 = bu_now_ns();
        mlx_detail_compile_erase(fun_id);
        int64_t t1 = bu_now_ns();
        /* Nothing holds this id: the walk over 64 caches alone. */
        mlx_detail_compile_erase(fun_id + 1);
        int64_t t2 = bu_now_ns();
        if (r >= 0 && hit && miss) {
            hit[r] = t1 - t0;
            miss[r] = t2 - t1;
        }
    }
    t.quit = true;
    pthread_barrier_wait(&t.start);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);

    if (t.failures == 0 && hit && miss) {
        for (int pass = 0; pass < 2; pass++) {
            bu_stat st = bu_summarize(pass == 0 ? hit : miss, reps);
            bu_report("mlx", pass == 0 ? "erase_64_threads_with_traces" : "erase_64_threads_no_trace",
                      ERASE_THREADS, st);
        }
    } else {
        bu_report("mlx", "erase_64_threads_with_traces", ERASE_THREADS, (bu_stat){0, 0, 0});
    }
    free(hit);
    free(miss);
    pthread_attr_destroy(&attr);
    pthread_barrier_destroy(&t.start);
    pthread_barrier_destroy(&t.done);
    pthread_mutex_destroy(&t.lock);
}

static void report_error(const char *msg, void *data)
{
    (void)data;
    fprintf(stderr, "bench_compile: library error: %s\n", msg);
}

int main(void)
{
    mlx_set_error_handler(report_error, NULL, NULL);
    bu_info("program", "bench_compile");
    bu_info("isa", mlx_cpu_isa());
    if (!have_ops() || !mlx_detail_compile || !mlx_detail_compile_erase) {
        bu_unavailable("mlx", "call_10ops_4elem_compiled", 1, "mlx_detail_compile or an op");
        bu_unavailable("mlx", "call_10ops_4elem_uncompiled", 1, "an op");
        bu_unavailable("mlx", "erase_64_threads_with_traces", ERASE_THREADS,
                       "mlx_detail_compile_erase");
        return 0;
    }

    /* Any value works as fun_id for mlx_detail_compile; an address of ours
     * cannot collide with another closure's. */
    static int id_anchor;
    uintptr_t fun_id = (uintptr_t)&id_anchor;
    mlx_closure raw = mlx_closure_new_func(ten_ops);
    mlx_closure compiled = mlx_closure_new();
    if (mlx_detail_compile(&compiled, raw, fun_id, false, NULL, 0)) {
        bu_report("mlx", "call_10ops_4elem_compiled", 1, (bu_stat){0, 0, 0});
        return 1;
    }

    call_ctx c = {compiled, make_args()};
    report_per_call("call_10ops_4elem_compiled", bu_measure(run_calls, &c, 3, bu_reps(21)));
    c.f = raw;
    report_per_call("call_10ops_4elem_uncompiled", bu_measure(run_calls, &c, 3, bu_reps(21)));
    mlx_vector_array_free(c.args);

    bench_erase(compiled, fun_id);

    mlx_closure_free(compiled);
    mlx_closure_free(raw);
    return 0;
}
