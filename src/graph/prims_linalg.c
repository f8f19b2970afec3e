/* Owns the linear algebra primitives that run LAPACK: MLX's Inverse,
 * Cholesky, QRF, SVD, Eig, Eigh and LUF (prims_linalg.h for their params
 * and packed outputs). Evaluation splits a batch of matrices over the
 * worker pool, each worker running LAPACK single-threaded on one matrix
 * after another (linalg_kernels.c); a single matrix runs on the calling
 * thread. None has a derivative in MLX 0.31.1, so their vjp and jvp rules
 * report MLX's "not implemented". */
#include <pthread.h>
#include <string.h>

#include "graph/build.h"
#include "graph/linalg_kernels.h"
#include "graph/prims_linalg.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "runtime/pool.h"

static const char *kind_name(mc_la_kind k)
{
    static const char *const names[] = {"Inverse", "Cholesky", "QRF", "SVD", "Eig", "Eigh", "LUF"};
    return names[k];
}

static mc_la_job job_of(mc_la_kind kind, const mc_array *a, const mc_linalg_params *p)
{
    mc_la_job j = {.kind = kind,
                   .dtype = a->dtype,
                   .m = a->shape[a->ndim - 2],
                   .n = a->shape[a->ndim - 1],
                   .tri = p->tri != 0,
                   .upper = p->upper != 0,
                   .vectors = p->vectors != 0,
                   .uplo = (char)p->uplo};
    return j;
}

/* Checks the input (MLX's checks of the op that builds the node, for
 * replays on new shapes) and gives the packed output's meta. */
static int la_infer(mc_la_kind kind, mc_meta *out, mc_array *const *in, const void *params, const char *fn)
{
    const mc_array *a = in[0];
    bool cplx_ok = kind == MC_LA_SVD || kind == MC_LA_EIG || kind == MC_LA_EIGH;
    if (a->dtype != MLX_FLOAT32 && a->dtype != MLX_FLOAT64 && !(cplx_ok && a->dtype == MLX_COMPLEX64))
        return mc_error("[%s] %s needs float32 or float64%s, not %s.", fn, kind_name(kind),
                        cplx_ok ? " or complex64" : "", mc_dtype_name(a->dtype));
    if (a->ndim < 2)
        return mc_error("[%s] %s needs an array of at least 2 dimensions, not %d.", fn, kind_name(kind), a->ndim);
    mc_la_job j = job_of(kind, a, params);
    bool square = kind == MC_LA_INVERSE || kind == MC_LA_CHOLESKY || kind == MC_LA_EIG || kind == MC_LA_EIGH;
    if (square && j.m != j.n)
        return mc_error("[%s] %s is only defined for square matrices, not %d x %d.", fn, kind_name(kind), j.m,
                        j.n);
    /* LUF stores its integer outputs as values of the matrix's dtype */
    if (kind == MC_LA_LUF && a->dtype == MLX_FLOAT32 && j.m > (1 << 24))
        return mc_error("[%s] LUF of float32 matrices supports at most %d rows, not %d.", fn, 1 << 24, j.m);
    out->dtype = mc_la_out_dtype(&j);
    memcpy(out->shape, a->shape, sizeof(int) * (size_t)a->ndim);
    if (kind == MC_LA_INVERSE || kind == MC_LA_CHOLESKY) {
        out->ndim = a->ndim;
        return 0;
    }
    size_t per = mc_la_out_per(&j);
    if (per > (size_t)0x7fffffff)
        return mc_error("[%s] the outputs of %s of a %d x %d matrix are too large.", fn, kind_name(kind), j.m,
                        j.n);
    out->ndim = a->ndim - 1;
    out->shape[a->ndim - 2] = (int)per;
    return 0;
}

typedef struct la_batch {
    const mc_la_job *job;
    const void *in;
    void *out;
    pthread_mutex_t lock;
    bool failed;
    mc_la_fail fail; /* the failing matrix of lowest index */
} la_batch;

static void la_range(void *ctx, size_t begin, size_t end)
{
    la_batch *c = ctx;
    mc_la_fail f;
    if (!mc_la_run(c->job, c->in, c->out, begin, end, &f))
        return;
    pthread_mutex_lock(&c->lock);
    if (!c->failed || f.index < c->fail.index)
        c->fail = f;
    c->failed = true;
    pthread_mutex_unlock(&c->lock);
}

/* MLX's message for a failed matrix. */
static int la_report(const mc_la_job *j, const mc_la_fail *f)
{
    const char *name = kind_name(j->kind);
    if (f->stage == MC_LA_NO_MEMORY)
        return mc_error("[%s::eval_cpu] out of memory for the workspace of a %d x %d matrix.", name, j->m, j->n);
    switch (j->kind) {
    case MC_LA_INVERSE:
        if (j->tri)
            return mc_error("[Inverse::eval_cpu] triangular inversion failed with error code %d", f->info);
        if (f->stage == MC_LA_STEP_FACTOR)
            return mc_error("[Inverse::eval_cpu] LU factorization failed with error code %d", f->info);
        return mc_error("[Inverse::eval_cpu] inversion failed with error code %d", f->info);
    case MC_LA_CHOLESKY:
        return mc_error("[Cholesky::eval_cpu] Cholesky decomposition failed with error code %d", f->info);
    case MC_LA_SVD: return mc_error("[SVD::eval_cpu] svd_impl: gesdd failed with code %d", f->info);
    case MC_LA_EIG:
    case MC_LA_EIGH:
        return mc_error("[%s::eval_cpu] Eigenvalue decomposition failed with error code %d", name, f->info);
    case MC_LA_LUF:
        return mc_error("[LUF::eval_cpu] sgetrf_ failed with code %d%s", f->info,
                        f->info > 0 ? " because matrix is singular" : " because argument had an illegal value");
    default: return mc_error("[%s::eval_cpu] LAPACK failed with code %d", name, f->info);
    }
}

/* Matrices per pool chunk: enough that a chunk does about 2^15 multiply-adds
 * (one 32 x 32 factorization), so small matrices go in batches. */
static size_t la_grain(const mc_la_job *j)
{
    size_t k = (size_t)(j->m < j->n ? j->m : j->n);
    size_t work = (size_t)j->m * (size_t)j->n * (k ? k : 1);
    return work >= 32768 ? 1 : 32768 / (work ? work : 1);
}

static int la_eval(mc_la_kind kind, mc_array *out, mc_array *const *in, const void *params)
{
    const mc_array *a = in[0];
    mc_la_job j = job_of(kind, a, params);
    if (!(a->flags & MC_FLAG_ROW_CONTIG))
        return mc_error("[%s::eval_cpu] the input is not row-contiguous.", kind_name(kind));
    if (mc_array_alloc_data(out, kind_name(kind)))
        return 1;
    size_t count = 1;
    for (int i = 0; i < a->ndim - 2; i++)
        count *= (size_t)a->shape[i];
    if (out->size == 0)
        return 0;
    la_batch c = {.job = &j, .in = a->data, .out = out->data, .failed = false};
    pthread_mutex_init(&c.lock, NULL);
    (void)mc_pool_threads(); /* OpenBLAS set to one thread before LAPACK runs */
    mc_parallel_for(count, la_grain(&j), la_range, &c);
    pthread_mutex_destroy(&c.lock);
    return c.failed ? la_report(&j, &c.fail) : 0;
}

/* Each factorization's infer and eval select its kind from the shared
 * rules; none has a derivative (as in MLX 0.31.1); vmap moves the batch to
 * the leading axes, except where MLX has no vmap (QRF, LUF). */
#define LA_PRIM(lower, KIND, NAME, VMAP)                                                                   \
    static int lower##_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn) \
    {                                                                                                      \
        (void)n;                                                                                           \
        return la_infer(KIND, out, in, params, fn);                                                        \
    }                                                                                                      \
    static int lower##_eval(mc_array *out, mc_array *const *in, int n, const void *params)                 \
    {                                                                                                      \
        (void)n;                                                                                           \
        return la_eval(KIND, out, in, params);                                                             \
    }                                                                                                      \
    const mc_prim_info mc_prim_##lower = {.name = NAME,                                                    \
                                          .arity = 1,                                                      \
                                          .infer = lower##_infer,                                          \
                                          .eval = lower##_eval,                                            \
                                          .vjp = mc_vjp_none,                                              \
                                          .jvp = mc_jvp_none,                                              \
                                          .vmap = VMAP};

LA_PRIM(inverse, MC_LA_INVERSE, "Inverse", mc_vmap_leading)
LA_PRIM(cholesky, MC_LA_CHOLESKY, "Cholesky", mc_vmap_leading)
LA_PRIM(qrf, MC_LA_QRF, "QRF", mc_vmap_unsupported)
LA_PRIM(svd, MC_LA_SVD, "SVD", mc_vmap_leading)
LA_PRIM(eig, MC_LA_EIG, "Eig", mc_vmap_leading)
LA_PRIM(eigh, MC_LA_EIGH, "Eigh", mc_vmap_leading)
LA_PRIM(luf, MC_LA_LUF, "LUF", mc_vmap_unsupported)
#undef LA_PRIM

/* -- Solve ------------------------------------------------------------------
 * a (..., n, n) and b (..., n, k) of one float dtype and the same batch
 * (linalg::solve broadcasts them first): x = a^-1 b by one LAPACK gesv
 * per matrix. MLX composes solve from LUF, Inverse and matmul; this is the
 * same solution in one pass (backward stable, where MLX multiplies by
 * triangular inverses). Its derivatives are those of MLX's composition:
 * in b, solves with a^T and a; in a, MLX stops at Inverse's missing rule. */

static int solve_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n, (void)params;
    const mc_array *a = in[0], *b = in[1];
    bool same_batch = a->ndim == b->ndim && a->ndim >= 2;
    for (int i = 0; same_batch && i < a->ndim - 2; i++)
        same_batch = a->shape[i] == b->shape[i];
    if ((a->dtype != MLX_FLOAT32 && a->dtype != MLX_FLOAT64) || b->dtype != a->dtype || !same_batch ||
        a->shape[a->ndim - 1] != a->shape[a->ndim - 2] || b->shape[b->ndim - 2] != a->shape[a->ndim - 1])
        return mc_error("[%s] Solve needs a (..., n, n) and b (..., n, k) of one batch and one float dtype.", fn);
    out->dtype = b->dtype;
    out->ndim = b->ndim;
    memcpy(out->shape, b->shape, sizeof(int) * (size_t)b->ndim);
    return 0;
}

typedef struct solve_batch {
    mlx_dtype dtype;
    int n, k;
    const void *a, *b;
    void *x;
    pthread_mutex_t lock;
    bool failed;
    mc_la_fail fail;
} solve_batch;

static void solve_range(void *ctx, size_t begin, size_t end)
{
    solve_batch *c = ctx;
    mc_la_fail f;
    if (!mc_la_solve(c->dtype, c->n, c->k, c->a, c->b, c->x, begin, end, &f))
        return;
    pthread_mutex_lock(&c->lock);
    if (!c->failed || f.index < c->fail.index)
        c->fail = f;
    c->failed = true;
    pthread_mutex_unlock(&c->lock);
}

static int solve_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n, (void)params;
    const mc_array *a = in[0], *b = in[1];
    if (!(a->flags & MC_FLAG_ROW_CONTIG) || !(b->flags & MC_FLAG_ROW_CONTIG))
        return mc_error("[Solve::eval_cpu] the inputs are not row-contiguous.");
    if (mc_array_alloc_data(out, "Solve"))
        return 1;
    if (out->size == 0)
        return 0;
    solve_batch c = {.dtype = a->dtype,
                     .n = a->shape[a->ndim - 1],
                     .k = b->shape[b->ndim - 1],
                     .a = a->data,
                     .b = b->data,
                     .x = out->data};
    size_t count = 1;
    for (int i = 0; i < a->ndim - 2; i++)
        count *= (size_t)a->shape[i];
    mc_la_job j = {.m = c.n, .n = c.n};
    pthread_mutex_init(&c.lock, NULL);
    (void)mc_pool_threads();
    mc_parallel_for(count, la_grain(&j), solve_range, &c);
    pthread_mutex_destroy(&c.lock);
    if (!c.failed)
        return 0;
    if (c.fail.stage == MC_LA_NO_MEMORY)
        return mc_error("[Solve::eval_cpu] out of memory for the workspace of a %d x %d matrix.", c.n, c.n);
    /* MLX's solve fails in its LU factorization */
    return mc_error("[LUF::eval_cpu] sgetrf_ failed with code %d because matrix is singular", c.fail.info);
}

/* solve(a^T, t), a^T made row-contiguous for LAPACK. */
static mc_array *solve_with(mc_gb *s, mc_array *a, mc_array *t, bool transpose)
{
    if (!t)
        return NULL;
    if (transpose) {
        int perm[MC_MAX_NDIM];
        for (int i = 0; i < a->ndim; i++)
            perm[i] = i;
        perm[a->ndim - 2] = a->ndim - 1, perm[a->ndim - 1] = a->ndim - 2;
        a = mc_gb_contiguous(s, mc_gb_transpose(s, a, perm));
    }
    t = mc_gb_contiguous(s, t);
    if (!a || !t || s->failed)
        return NULL;
    mc_array *in[2] = {a, t};
    return mc_gb_hold(s, mc_node_new(s->fn, MC_PRIM_SOLVE, in, 2, NULL, 0));
}

static int solve_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    if (argnums[0] == 0)
        return mc_error("[%s] Not implemented for Inverse: MLX has no vjp for it.", fn);
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_vjp_store(vjps, 0, &s, solve_with(&s, node->inputs[0], cot, true));
}

static mc_array *solve_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    if (argnums[0] == 0) {
        mc_error("[%s] Not implemented for Inverse: MLX has no jvp for it.", fn);
        return NULL;
    }
    (void)nargs;
    mc_gb s;
    mc_gb_begin(&s, fn);
    return mc_gb_finish_ref(&s, solve_with(&s, node->inputs[0], tans[0], false));
}

/* MLX's solve is built on LUF, which it cannot vmap: vmap of a solve
 * reports what MLX reports. */
static int solve_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                      const char *fn)
{
    (void)out, (void)out_axis, (void)node, (void)in, (void)axes, (void)fn;
    return mc_error("[Primitive::vmap] Not implemented for LUF.");
}

const mc_prim_info mc_prim_solve = {.name = "Solve",
                                    .arity = 2,
                                    .infer = solve_infer,
                                    .eval = solve_eval,
                                    .vjp = solve_vjp,
                                    .jvp = solve_jvp,
                                    .vmap = solve_vmap};
