/* bench_ops: the library's op speed next to references measured by this
 * same program in the same run: a STREAM add/triad loop (1 and 2 threads,
 * pthreads) as the memory-bandwidth ceiling, a copy loop as the floor of
 * a unary op, and direct cblas_sgemm calls (one call, and one call per
 * matrix of a batch). bench/numpy_ref.py times numpy on the same inputs.
 * Every figure is one "BENCH ..." line (see bench_util.h); bench/report.py
 * turns the lines into docs/benchmarks.md.
 *
 * Only the public mlx-c API is used: arrays are built with
 * mlx_array_new_data, thread counts set with mlx_cpu_set_num_threads. */
#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

#include "bench_util.h"

/* Ops that may not be exported yet while the library grows: weak, so a
 * missing one turns its rows into "not available yet" instead of a link
 * failure. */
#pragma weak mlx_add
#pragma weak mlx_multiply
#pragma weak mlx_exp
#pragma weak mlx_log
#pragma weak mlx_tanh
#pragma weak mlx_sin
#pragma weak mlx_sigmoid
#pragma weak mlx_sum
#pragma weak mlx_softmax_axis
#pragma weak mlx_matmul
#pragma weak mlx_sort_axis
#pragma weak mlx_topk_axis

#define N16M (16 * 1024 * 1024)
#define N1M (1024 * 1024)

typedef int (*unary_fn)(mlx_array *, const mlx_array, const mlx_stream);
typedef int (*binary_fn)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);

/* ---- inputs ---- */

/* The same formula in numpy_ref.py: lo + (hi - lo) * frac(i * golden +
 * phase), computed in double, stored as float32. Spread over the range
 * without a random generator shared between C and Python. */
static void fill(float *p, size_t n, double lo, double hi, double phase)
{
    const double g = 0.6180339887498949;
    for (size_t i = 0; i < n; i++) {
        double f = (double)i * g + phase;
        f -= (double)(long long)f;
        p[i] = (float)(lo + (hi - lo) * f);
    }
}

static float *new_floats(size_t n)
{
    float *p = NULL;
    if (posix_memalign((void **)&p, 64, n * sizeof(float)))
        return NULL;
    return p;
}

static mlx_array make_input(const int *shape, int ndim, double lo, double hi, double phase)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    float *buf = new_floats(n);
    if (!buf)
        return mlx_array_new();
    fill(buf, n, lo, hi, phase);
    mlx_array a = mlx_array_new_data(buf, shape, ndim, MLX_FLOAT32);
    free(buf);
    return a;
}

/* ---- a two-thread team for the reference loops ---- */

typedef void (*part_fn)(void *ctx, size_t lo, size_t hi);

/* The worker polls for work and the caller for its end, as the library's
 * pool does between jobs that follow closely: a pthread barrier puts the
 * worker to sleep, and waking it (tens of microseconds here) would count
 * against the reference, not the loop. The worker spins only while a
 * measurement runs; team_stop ends it. */
typedef struct {
    pthread_t tid;
    part_fn fn;
    void *ctx;
    size_t split, n;
    atomic_uint go;   /* bumped by the caller for each job */
    atomic_uint done; /* set to go's value by the worker when finished */
    atomic_bool quit;
} team;

static void *team_worker(void *arg)
{
    team *t = arg;
    unsigned seen = 0;
    for (;;) {
        unsigned g;
        while ((g = atomic_load(&t->go)) == seen && !atomic_load(&t->quit))
            ;
        if (atomic_load(&t->quit))
            return NULL;
        seen = g;
        t->fn(t->ctx, t->split, t->n);
        atomic_store(&t->done, g);
    }
}

static int team_start(team *t)
{
    memset(t, 0, sizeof *t);
    atomic_init(&t->go, 0);
    atomic_init(&t->done, 0);
    atomic_init(&t->quit, false);
    return pthread_create(&t->tid, NULL, team_worker, t);
}

static void team_stop(team *t)
{
    atomic_store(&t->quit, true);
    pthread_join(t->tid, NULL);
}

/* Runs fn over [0, n): the caller alone, or the caller and the worker on
 * halves split at a cache line. The worker thread stays alive between
 * calls, as the library's pool does. */
static void team_run(team *t, int threads, part_fn fn, void *ctx, size_t n)
{
    if (threads < 2) {
        fn(ctx, 0, n);
        return;
    }
    t->fn = fn;
    t->ctx = ctx;
    t->n = n;
    t->split = (n / 2) & ~(size_t)15;
    unsigned g = atomic_load(&t->go) + 1;
    atomic_store(&t->go, g); /* publishes fn, ctx, n and split */
    fn(ctx, 0, t->split);
    while (atomic_load(&t->done) != g)
        ;
}

/* ---- STREAM add and triad (float32) ---- */

typedef struct {
    float *a, *b, *c;
    float q;
    team *tm;
    int threads;
    size_t n;
} stream_ctx;

/* Cloned for AVX2 so the ceiling is not held back by SSE2 code on x86. */
#if defined(__x86_64__) && defined(__GNUC__)
#define BENCH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define BENCH_CLONES
#endif

BENCH_CLONES static void stream_add_part(void *ctx, size_t lo, size_t hi)
{
    stream_ctx *s = ctx;
    const float *restrict a = s->a, *restrict b = s->b;
    float *restrict c = s->c;
    for (size_t i = lo; i < hi; i++)
        c[i] = a[i] + b[i];
}

BENCH_CLONES static void stream_triad_part(void *ctx, size_t lo, size_t hi)
{
    stream_ctx *s = ctx;
    const float *restrict b = s->b, *restrict c = s->c;
    float *restrict a = s->a;
    const float q = s->q;
    for (size_t i = lo; i < hi; i++)
        a[i] = b[i] + q * c[i];
}

/* A unary op's floor: read one array, write another. */
BENCH_CLONES static void copy_part(void *ctx, size_t lo, size_t hi)
{
    stream_ctx *s = ctx;
    const float *restrict a = s->a;
    float *restrict c = s->c;
    for (size_t i = lo; i < hi; i++)
        c[i] = a[i];
}

static int run_copy(void *arg)
{
    stream_ctx *s = arg;
    team_run(s->tm, s->threads, copy_part, s, s->n);
    return 0;
}

static int run_stream_add(void *arg)
{
    stream_ctx *s = arg;
    team_run(s->tm, s->threads, stream_add_part, s, s->n);
    return 0;
}

static int run_stream_triad(void *arg)
{
    stream_ctx *s = arg;
    team_run(s->tm, s->threads, stream_triad_part, s, s->n);
    return 0;
}

/* ---- the library's ops ---- */

typedef enum { OP_UNARY, OP_BINARY, OP_SUM, OP_SOFTMAX, OP_SORT, OP_TOPK } op_kind;

typedef struct {
    op_kind kind;
    unary_fn un;
    binary_fn bin;
    mlx_array x, y;
    mlx_stream s;
} op_ctx;

/* One repetition: build the lazy op, evaluate it, drop the result. From the
 * second repetition on, the output buffer comes back from the library's
 * buffer cache, as it would in a loop of a real program. */
static int run_op(void *arg)
{
    op_ctx *o = arg;
    mlx_array r = mlx_array_new();
    int rc = 1;
    switch (o->kind) {
    case OP_UNARY:
        rc = o->un(&r, o->x, o->s);
        break;
    case OP_BINARY:
        rc = o->bin(&r, o->x, o->y, o->s);
        break;
    case OP_SUM:
        rc = mlx_sum(&r, o->x, false, o->s);
        break;
    case OP_SOFTMAX:
        rc = mlx_softmax_axis(&r, o->x, -1, false, o->s);
        break;
    case OP_SORT:
        rc = mlx_sort_axis(&r, o->x, -1, o->s);
        break;
    case OP_TOPK:
        rc = mlx_topk_axis(&r, o->x, 50, -1, o->s);
        break;
    }
    if (rc == 0)
        rc = mlx_array_eval(r);
    mlx_array_free(r);
    return rc;
}

static void bench_op(const char *name, const char *symbol, bool have, op_ctx *o, int threads,
                     int warm, int reps)
{
    if (!have) {
        bu_unavailable("mlx", name, threads, symbol);
        return;
    }
    if (mlx_cpu_set_num_threads(threads)) {
        bu_report("mlx", name, threads, (bu_stat){0, 0, 0});
        return;
    }
    bu_report("mlx", name, threads, bu_measure(run_op, o, warm, bu_reps(reps)));
}

/* ---- cblas references ---- */

typedef struct {
    const float *a, *b;
    float *c;
    int n, batch;
} gemm_ctx;

static int run_cblas(void *arg)
{
    gemm_ctx *g = arg;
    size_t mat = (size_t)g->n * (size_t)g->n;
    for (int i = 0; i < g->batch; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->n, g->n, g->n, 1.0f,
                    g->a + i * mat, g->n, g->b + i * mat, g->n, 0.0f, g->c + i * mat, g->n);
    return 0;
}

/* ---- sections ---- */

static int bench_stream(void)
{
    stream_ctx s = {.q = 3.0f, .n = N16M};
    team tm;
    s.a = new_floats(N16M);
    s.b = new_floats(N16M);
    s.c = new_floats(N16M);
    if (!s.a || !s.b || !s.c || team_start(&tm)) {
        free(s.a), free(s.b), free(s.c);
        return 1;
    }
    fill(s.a, N16M, -1, 1, 0.0);
    fill(s.b, N16M, -1, 1, 0.5);
    fill(s.c, N16M, -1, 1, 0.25);
    s.tm = &tm;
    for (int t = 1; t <= 2; t++) {
        s.threads = t;
        bu_report("ref", "stream_add_16M", t, bu_measure(run_stream_add, &s, 3, bu_reps(21)));
        bu_report("ref", "stream_triad_16M", t, bu_measure(run_stream_triad, &s, 3, bu_reps(21)));
    }
    team_stop(&tm);
    free(s.a), free(s.b), free(s.c);
    return 0;
}

/* The copy loop over n floats on 1 and 2 threads: what a unary op of that
 * size would take if its math were free. */
static void bench_copy(const char *name, size_t n, int warm, int reps)
{
    stream_ctx s = {.n = n};
    team tm;
    s.a = new_floats(n);
    s.c = new_floats(n);
    if (!s.a || !s.c || team_start(&tm)) {
        bu_report("ref", name, 1, (bu_stat){0, 0, 0});
        free(s.a), free(s.c);
        return;
    }
    fill(s.a, n, -1, 1, 0.0);
    fill(s.c, n, -1, 1, 0.5);
    s.tm = &tm;
    for (int t = 1; t <= 2; t++) {
        s.threads = t;
        bu_report("ref", name, t, bu_measure(run_copy, &s, warm, bu_reps(reps)));
    }
    team_stop(&tm);
    free(s.a), free(s.c);
}

static void bench_elementwise(mlx_stream st)
{
    int shape[1] = {N16M};
    op_ctx o = {.kind = OP_BINARY, .s = st};
    o.x = make_input(shape, 1, -1, 1, 0.0);
    o.y = make_input(shape, 1, -1, 1, 0.5);
    for (int t = 1; t <= 2; t++) {
        o.bin = mlx_add;
        bench_op("add_16M", "mlx_add", mlx_add != NULL, &o, t, 3, 21);
        o.bin = mlx_multiply;
        bench_op("multiply_16M", "mlx_multiply", mlx_multiply != NULL, &o, t, 3, 21);
    }
    mlx_array_free(o.x);
    mlx_array_free(o.y);
}

static void bench_unary(mlx_stream st)
{
    static const struct {
        const char *name, *symbol;
        double lo, hi;
    } ops[] = {
        {"exp_1M", "mlx_exp", -10, 10},     {"log_1M", "mlx_log", 0.01, 100},
        {"tanh_1M", "mlx_tanh", -5, 5},     {"sin_1M", "mlx_sin", -10, 10},
        {"sigmoid_1M", "mlx_sigmoid", -10, 10},
    };
    unary_fn fns[] = {mlx_exp, mlx_log, mlx_tanh, mlx_sin, mlx_sigmoid};
    int shape[1] = {N1M};
    bench_copy("copy_1M", N1M, 5, 51);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        op_ctx o = {.kind = OP_UNARY, .un = fns[i], .s = st};
        o.x = make_input(shape, 1, ops[i].lo, ops[i].hi, 0.0);
        for (int t = 1; t <= 2; t++)
            bench_op(ops[i].name, ops[i].symbol, fns[i] != NULL, &o, t, 5, 51);
        mlx_array_free(o.x);
    }

    /* Scaling: the same exp over 16M elements on 1 and 2 threads. */
    int big[1] = {N16M};
    bench_copy("copy_16M", N16M, 2, 15);
    op_ctx o = {.kind = OP_UNARY, .un = mlx_exp, .s = st};
    o.x = make_input(big, 1, -10, 10, 0.0);
    for (int t = 1; t <= 2; t++)
        bench_op("exp_16M", "mlx_exp", mlx_exp != NULL, &o, t, 2, 15);
    mlx_array_free(o.x);
}

static void bench_reduce(mlx_stream st)
{
    int shape[1] = {N16M};
    op_ctx o = {.kind = OP_SUM, .s = st};
    o.x = make_input(shape, 1, -1, 1, 0.0);
    for (int t = 1; t <= 2; t++)
        bench_op("sum_16M", "mlx_sum", mlx_sum != NULL, &o, t, 3, 21);
    mlx_array_free(o.x);

    int sm[2] = {4096, 1024};
    op_ctx p = {.kind = OP_SOFTMAX, .s = st};
    p.x = make_input(sm, 2, -5, 5, 0.0);
    for (int t = 1; t <= 2; t++)
        bench_op("softmax_4096x1024", "mlx_softmax_axis", mlx_softmax_axis != NULL, &p, t, 3, 21);
    mlx_array_free(p.x);
}

/* sort of 1M float32 (np.sort) and row-wise top-50 of (512, 32000)
 * (np.argpartition + np.take_along_axis) */
static void bench_sort(mlx_stream st)
{
    int n[1] = {N1M};
    op_ctx o = {.kind = OP_SORT, .s = st};
    o.x = make_input(n, 1, -1, 1, 0.0);
    for (int t = 1; t <= 2; t++)
        bench_op("sort_1M", "mlx_sort_axis", mlx_sort_axis != NULL, &o, t, 3, 21);
    mlx_array_free(o.x);

    int rows[2] = {512, 32000};
    op_ctx k = {.kind = OP_TOPK, .s = st};
    k.x = make_input(rows, 2, -1, 1, 0.0);
    for (int t = 1; t <= 2; t++)
        bench_op("topk_512x32000", "mlx_topk_axis", mlx_topk_axis != NULL, &k, t, 2, 11);
    mlx_array_free(k.x);
}

static void bench_gemm(const char *name, int batch, int n, int threads, mlx_stream st, int warm,
                       int reps)
{
    size_t total = (size_t)batch * (size_t)n * (size_t)n;
    float *a = new_floats(total), *b = new_floats(total), *c = new_floats(total);
    if (!a || !b || !c) {
        bu_report("ref", name, threads, (bu_stat){0, 0, 0});
        goto out;
    }
    fill(a, total, -1, 1, 0.0);
    fill(b, total, -1, 1, 0.5);

    /* The library keeps OpenBLAS on one thread and splits products across
     * its own pool; the direct calls below get OpenBLAS's own threading
     * with the same count, and the library's setting back afterwards. */
    mlx_cpu_set_num_threads(threads);
    int lib_blas_threads = openblas_get_num_threads();
    openblas_set_num_threads(threads);
    gemm_ctx g = {a, b, c, n, batch};
    bu_report("ref", name, threads, bu_measure(run_cblas, &g, warm, bu_reps(reps)));
    openblas_set_num_threads(lib_blas_threads);

    int shape3[3] = {batch, n, n};
    int ndim = batch > 1 ? 3 : 2;
    const int *shape = batch > 1 ? shape3 : shape3 + 1;
    op_ctx o = {.kind = OP_BINARY, .bin = mlx_matmul, .s = st};
    o.x = mlx_array_new_data(a, shape, ndim, MLX_FLOAT32);
    o.y = mlx_array_new_data(b, shape, ndim, MLX_FLOAT32);
    bench_op(name, "mlx_matmul", mlx_matmul != NULL, &o, threads, warm, reps);
    mlx_array_free(o.x);
    mlx_array_free(o.y);
out:
    free(a), free(b), free(c);
}

/* ---- main ---- */

static void report_error(const char *msg, void *data)
{
    (void)data;
    fprintf(stderr, "bench_ops: library error: %s\n", msg);
}

static void info_env(const char *var)
{
    const char *v = getenv(var);
    char key[64];
    snprintf(key, sizeof key, "env_%s", var);
    bu_info(key, v ? v : "(unset)");
}

static bool wanted(int argc, char **argv, const char *section)
{
    if (argc < 2)
        return true;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], section) == 0)
            return true;
    return false;
}

/* Usage: bench_ops [section...], sections ew, unary, reduce, matmul, sort (all
 * when none is named). run.sh runs one section at a time, next to the same
 * section of numpy_ref.py, so that the two are measured seconds apart. */
int main(int argc, char **argv)
{
    static const char *const sections[] = {"ew", "unary", "reduce", "matmul", "sort"};
    enum { NSECTIONS = sizeof sections / sizeof sections[0] };
    for (int i = 1; i < argc; i++) {
        size_t k = 0;
        while (k < NSECTIONS && strcmp(argv[i], sections[k]) != 0)
            k++;
        if (k == NSECTIONS) {
            fprintf(stderr, "bench_ops: unknown section %s\n", argv[i]);
            return 2;
        }
    }

    mlx_set_error_handler(report_error, NULL, NULL);
    bu_info("program", "bench_ops");
    bu_info("isa", mlx_cpu_isa());
    char buf[32];
    snprintf(buf, sizeof buf, "%d", mlx_cpu_get_num_threads());
    bu_info("default_threads", buf);
#ifdef OPENBLAS_VERSION
    bu_info("openblas_core", openblas_get_corename());
    bu_info("openblas_config", openblas_get_config());
#endif
    info_env("OPENBLAS_CORETYPE");
    info_env("OPENBLAS_L2_SIZE");
    info_env("MLX_CPU_ISA");
    info_env("MLX_CPU_THREADS");

    mlx_stream st = mlx_default_cpu_stream_new();
    int rc = 0;
    if (wanted(argc, argv, "ew")) {
        rc |= bench_stream();
        bench_elementwise(st);
    }
    if (wanted(argc, argv, "unary"))
        bench_unary(st);
    if (wanted(argc, argv, "reduce"))
        bench_reduce(st);
    if (wanted(argc, argv, "matmul")) {
        bench_gemm("matmul_1024", 1, 1024, 2, st, 2, 11);
        bench_gemm("matmul_batch64x128", 64, 128, 2, st, 3, 21);
    }
    if (wanted(argc, argv, "sort"))
        bench_sort(st);
    mlx_stream_free(st);
    return rc;
}
