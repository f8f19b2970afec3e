/* Suite 'matmul_ext': gather_mm, block_masked_mm, segmented_mm and
 * depends (src/ops/matmul_ext.c, src/graph/prims_mm_ext.c, mm_ext_eval.c,
 * prims_depends.c).
 *
 * References: a naive product in double written here (gathering,
 * masking and segmenting by its own loops), MLX 0.31.1's results and
 * gradients (test/fixtures/mm_ext_cases.h, scripts/make_mm_fixtures.py),
 * and MLX's python/tests/test_blas.py and test_ops.py cases ported with
 * their reference functions. Inputs are multiples of 1/4 in [-1.25, 1.5],
 * so products are exact in float32 up to the sums' rounding. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "graph/blas.h"
#include "mlx/c/mlx.h"
#include "test_util.h"

#include "fixtures/mm_ext_cases.h"

static const mlx_array none = {NULL};

/* ---- inputs and reading ---- */

/* Operand k of the fixtures' formula in dtype d. */
static mlx_array operand(int k, mlx_dtype d, const int *shape, int nd)
{
    size_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= (size_t)shape[i];
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)((int)((7 * i + 3 * (size_t)k) % 11) - 5) / 4.0;
    mlx_array a = tu_array_of(d, v, shape, nd);
    free(v);
    return a;
}

static mlx_array float_mask(const int *shape, int nd)
{
    double v[256];
    size_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= (size_t)shape[i];
    assert_true(n <= 256);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)((3 * i + 1) % 5) / 2.0;
    return tu_array_of(MLX_FLOAT32, v, shape, nd);
}

static mlx_array bool_mask(const int *shape, int nd)
{
    double v[256];
    size_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= (size_t)shape[i];
    assert_true(n <= 256);
    for (size_t i = 0; i < n; i++)
        v[i] = i % 3 != 1;
    return tu_array_of(MLX_BOOL, v, shape, nd);
}

static mlx_array cotangent(mlx_array like)
{
    size_t n = mlx_array_size(like);
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (double)((int)((5 * i) % 7) - 3) / 2.0;
    mlx_array c = tu_array_of(mlx_array_dtype(like), v, mlx_array_shape(like), (int)mlx_array_ndim(like));
    free(v);
    return c;
}

/* The logical (row-major) values of a, in a new buffer of doubles. */
static double *values(mlx_array a)
{
    mlx_array f = mlx_array_new();
    assert_int_equal(mlx_astype(&f, a, MLX_FLOAT64, tu_stream()), 0);
    assert_int_equal(mlx_contiguous(&f, f, false, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(f), 0);
    size_t n = mlx_array_size(f);
    double *v = malloc((n ? n : 1) * sizeof *v);
    const double *p = mlx_array_data_float64(f);
    for (size_t i = 0; i < n; i++)
        v[i] = p[i];
    mlx_array_free(f);
    return v;
}

static void expect_near(mlx_array got, const double *want, size_t n, double tol, const char *what)
{
    assert_int_equal(mlx_array_eval(got), 0);
    assert_int_equal(mlx_array_size(got), n);
    double *g = values(got);
    for (size_t i = 0; i < n; i++)
        if (!(fabs(g[i] - want[i]) <= tol * fmax(1.0, fabs(want[i]))))
            fail_msg("%s [%zu]: got %.9g, want %.9g", what, i, g[i], want[i]);
    free(g);
}

static void expect_floats(mlx_array got, const float *want, size_t n, double tol, const char *what)
{
    double *w = malloc(n * sizeof *w);
    for (size_t i = 0; i < n; i++)
        w[i] = want[i];
    expect_near(got, w, n, tol, what);
    free(w);
}

static void expect_shape(mlx_array a, int nd, const int *shape)
{
    if (!tu_shape_is(a, nd, shape))
        fail_msg("unexpected shape (ndim %zu)", mlx_array_ndim(a));
}

/* ---- a naive gather_mm ---- */

static size_t batches(mlx_array x)
{
    size_t n = 1;
    for (size_t d = 0; d + 2 < mlx_array_ndim(x); d++)
        n *= (size_t)mlx_array_shape(x)[d];
    return n;
}

/* The products of a's matrices li[j] with b's rhs[j] (j < n), clamped to
 * the last matrix as the library defines it; want gets n * M * N. */
static double *naive_gather(mlx_array a, mlx_array b, const int64_t *li, const int64_t *ri, size_t n)
{
    int na = (int)mlx_array_ndim(a), nb = (int)mlx_array_ndim(b);
    int M = mlx_array_shape(a)[na - 2], K = mlx_array_shape(a)[na - 1], N = mlx_array_shape(b)[nb - 1];
    double *av = values(a), *bv = values(b);
    size_t ca = batches(a), cb = batches(b);
    double *out = calloc(n * (size_t)M * (size_t)N + 1, sizeof *out);
    for (size_t j = 0; j < n; j++) {
        size_t ia = (size_t)li[j] >= ca ? ca - 1 : (size_t)li[j],
               ib = (size_t)ri[j] >= cb ? cb - 1 : (size_t)ri[j];
        const double *am = av + ia * (size_t)M * (size_t)K, *bm = bv + ib * (size_t)K * (size_t)N;
        for (int m = 0; m < M; m++)
            for (int c = 0; c < N; c++) {
                double s = 0;
                for (int k = 0; k < K; k++)
                    s += am[m * K + k] * bm[k * N + c];
                out[(j * (size_t)M + (size_t)m) * (size_t)N + (size_t)c] = s;
            }
    }
    free(av);
    free(bv);
    return out;
}

static mlx_array index_array(const int32_t *v, int nd, const int *shape) { return tu_i32(v, shape, nd); }

/* ---- gather_mm ---- */

static void test_gather_mm_matches_mlx_fixtures(void **state)
{
    (void)state;
    mlx_array a = operand(0, MLX_FLOAT32, (int[]){3, 4, 5}, 3), b = operand(1, MLX_FLOAT32, (int[]){2, 5, 6}, 3);
    mlx_array li = index_array((int32_t[]){2, 0, 1, 1, 0, 2}, 2, (int[]){3, 2});
    mlx_array ri = index_array((int32_t[]){1, 0, 1}, 2, (int[]){3, 1});
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_gather_mm(&out, a, b, li, ri, false, tu_stream()), 0);
    expect_shape(out, 4, (int[]){3, 2, 4, 6});
    expect_floats(out, mmf_gather_out, 144, 1e-6, "gather_mm");
    mlx_array_free(out);
    TU_FREE(a, b, li, ri);

    a = operand(2, MLX_FLOAT32, (int[]){6, 1, 1, 8}, 4);
    b = operand(3, MLX_FLOAT32, (int[]){4, 8, 3}, 3);
    ri = index_array((int32_t[]){3, 1, 0, 3, 2, 2, 1, 0, 3, 2, 0, 1}, 2, (int[]){6, 2});
    out = mlx_array_new();
    assert_int_equal(mlx_gather_mm(&out, a, b, none, ri, false, tu_stream()), 0);
    expect_shape(out, 4, (int[]){6, 2, 1, 3});
    expect_floats(out, mmf_moe_out, 36, 1e-6, "gather_mm moe");
    TU_FREE(a, b, ri, out);
}

/* One of MLX's test_gather_matmul inputs: batches of a and b, indices
 * (NULL: absent) with their shapes. */
typedef struct gather_input {
    int na, batch_a[2], nb, batch_b[2];
    int nli, li_shape[2], nri, ri_shape[2];
    const int32_t *li, *ri;
} gather_input;

static void check_gather(const gather_input *g, int M, int N, int K)
{
    int sa[4], sb[4];
    memcpy(sa, g->batch_a, sizeof(int) * (size_t)g->na);
    sa[g->na] = M;
    sa[g->na + 1] = K;
    memcpy(sb, g->batch_b, sizeof(int) * (size_t)g->nb);
    sb[g->nb] = K;
    sb[g->nb + 1] = N;
    mlx_array a = operand(1, MLX_FLOAT32, sa, g->na + 2), b = operand(2, MLX_FLOAT32, sb, g->nb + 2);
    mlx_array li = g->li ? index_array(g->li, g->nli, g->li_shape) : none;
    mlx_array ri = g->ri ? index_array(g->ri, g->nri, g->ri_shape) : none;
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_gather_mm(&out, a, b, li, ri, false, tu_stream()), 0);
    /* the reference indices: given or arange over the batch, broadcast */
    size_t n = mlx_array_size(out) / ((size_t)M * (size_t)N);
    mlx_stream s = tu_stream();
    mlx_array dl = mlx_array_new(), dr = mlx_array_new();
    assert_int_equal(mlx_arange(&dl, 0, (double)batches(a), 1, MLX_INT32, s), 0);
    assert_int_equal(mlx_reshape(&dl, dl, g->batch_a, (size_t)g->na, s), 0);
    assert_int_equal(mlx_arange(&dr, 0, (double)batches(b), 1, MLX_INT32, s), 0);
    assert_int_equal(mlx_reshape(&dr, dr, g->batch_b, (size_t)g->nb, s), 0);
    mlx_vector_array in = mlx_vector_array_new(), bc = mlx_vector_array_new();
    mlx_vector_array_append_value(in, g->li ? li : dl);
    mlx_vector_array_append_value(in, g->ri ? ri : dr);
    assert_int_equal(mlx_broadcast_arrays(&bc, in, s), 0);
    mlx_array lb = mlx_array_new(), rb = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&lb, bc, 0), 0);
    assert_int_equal(mlx_vector_array_get(&rb, bc, 1), 0);
    assert_int_equal(mlx_array_size(lb), n);
    double *lv = values(lb), *rv = values(rb);
    int64_t *l = malloc(n * sizeof *l), *r = malloc(n * sizeof *r);
    for (size_t j = 0; j < n; j++) {
        l[j] = (int64_t)lv[j];
        r[j] = (int64_t)rv[j];
    }
    free(lv);
    free(rv);
    mlx_vector_array_free(in);
    mlx_vector_array_free(bc);
    TU_FREE(dl, dr, lb, rb);
    double *want = naive_gather(a, b, l, r, n);
    expect_near(out, want, mlx_array_size(out), 1e-5, "gather_mm");
    free(want);
    free(l);
    free(r);
    TU_FREE(a, b, li, ri, out);
}

/* MLX's test_gather_matmul, each input at (32, 32, 32) and (16, 1, 16). */
static void test_gather_mm_mlx_cases(void **state)
{
    (void)state;
    static const int32_t l0[1] = {0}, r21[2] = {2, 1}, l02[2] = {0, 2}, r0[1] = {0};
    static const int32_t l4[6] = {7, 6, 5, 4, 1, 2}, r4[3] = {2, 0, 1};
    const gather_input inputs[] = {
        {1, {1}, 1, {3}, 1, {1}, 1, {2}, l0, r21},   {1, {1}, 1, {3}, 0, {0}, 1, {2}, NULL, r21},
        {1, {2}, 1, {3}, 0, {0}, 1, {2}, NULL, r21}, {1, {3}, 1, {1}, 1, {2}, 1, {1}, l02, r0},
        {1, {5}, 1, {3}, 1, {2}, 1, {2}, l02, r21},  {2, {4, 2}, 2, {4, 1}, 2, {3, 2}, 2, {3, 1}, l4, r4},
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        check_gather(&inputs[i], 32, 32, 32);
        check_gather(&inputs[i], 16, 1, 16);
    }
}

/* MLX's broadcasting case: a and b broadcast views, b with swapped axes;
 * and its gemv case through a transposed b. */
static void test_gather_mm_reads_broadcast_and_transposed_views(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array a = operand(3, MLX_FLOAT32, (int[]){5, 1, 32, 32}, 4),
              b = operand(4, MLX_FLOAT32, (int[]){1, 3, 32, 32}, 4);
    assert_int_equal(mlx_broadcast_to(&a, a, (int[]){5, 4, 32, 32}, 4, s), 0);
    assert_int_equal(mlx_broadcast_to(&b, b, (int[]){2, 3, 32, 32}, 4, s), 0);
    assert_int_equal(mlx_swapaxes(&b, b, 1, 0, s), 0);
    mlx_array li = index_array((int32_t[]){0, 13, 12}, 1, (int[]){3});
    mlx_array ri = index_array((int32_t[]){0, 3, 5}, 1, (int[]){3});
    mlx_array out = mlx_array_new();
    unsigned long copies = (unsigned long)mc_blas_stats_get().copies;
    assert_int_equal(mlx_gather_mm(&out, a, b, li, ri, false, s), 0);
    assert_int_equal(mlx_array_eval(out), 0);
    /* broadcast and swapped batch dims are strides: nothing copied */
    assert_int_equal((unsigned long)mc_blas_stats_get().copies, copies);
    double *want = naive_gather(a, b, (int64_t[]){0, 13, 12}, (int64_t[]){0, 3, 5}, 3);
    expect_near(out, want, 3 * 32 * 32, 1e-5, "broadcast views");
    free(want);
    TU_FREE(a, b, li, ri, out);

    a = operand(5, MLX_FLOAT32, (int[]){5, 1, 32}, 3);
    b = operand(6, MLX_FLOAT32, (int[]){3, 16, 32}, 3);
    assert_int_equal(mlx_swapaxes(&b, b, -1, -2, s), 0);
    li = index_array((int32_t[]){3, 1}, 1, (int[]){2});
    ri = index_array((int32_t[]){0, 2}, 1, (int[]){2});
    out = mlx_array_new();
    assert_int_equal(mlx_gather_mm(&out, a, b, li, ri, false, s), 0);
    want = naive_gather(a, b, (int64_t[]){3, 1}, (int64_t[]){0, 2}, 2);
    expect_shape(out, 3, (int[]){2, 1, 16});
    expect_near(out, want, 2 * 16, 1e-5, "gemv through a transposed b");
    free(want);
    TU_FREE(a, b, li, ri, out);
}

/* Tokens (T, 1, M, K) each against two of E experts (E, K, N): the
 * products sharing an expert run together, with the tokens' rows read in
 * place or packed; every dtype, sorted or not, b plain or transposed, a
 * contiguous or strided. */
static void check_moe(mlx_dtype d, int T, int P, int M, int K, int N, bool sorted, bool b_transposed,
                      bool a_strided)
{
    mlx_stream s = tu_stream();
    const int E = 8;
    mlx_array a = operand(7, d, (int[]){T, 1, M, a_strided ? 2 * K : K}, 4);
    if (a_strided)
        assert_int_equal(
            mlx_slice(&a, a, (int[]){0, 0, 0, 0}, 4, (int[]){T, 1, M, 2 * K}, 4, (int[]){1, 1, 1, 2}, 4, s), 0);
    mlx_array b = b_transposed ? operand(8, d, (int[]){E, N, K}, 3) : operand(8, d, (int[]){E, K, N}, 3);
    if (b_transposed)
        assert_int_equal(mlx_swapaxes(&b, b, -1, -2, s), 0);
    int32_t *iv = malloc(sizeof *iv * (size_t)T * (size_t)P);
    int64_t *l = malloc(sizeof *l * (size_t)T * (size_t)P), *r = malloc(sizeof *r * (size_t)T * (size_t)P);
    for (int t = 0; t < T * P; t++) {
        iv[t] = sorted ? (t * E) / (P * T) : (int32_t)((t * 5 + t / 3) % E);
        l[t] = t / P;
        r[t] = iv[t];
    }
    mlx_array ri = index_array(iv, 2, (int[]){T, P});
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_gather_mm(&out, a, b, none, ri, sorted, s), 0);
    expect_shape(out, 4, (int[]){T, P, M, N});
    double *want = naive_gather(a, b, l, r, (size_t)T * (size_t)P);
    double tol = d == MLX_FLOAT64 ? 1e-12 : d == MLX_FLOAT32 ? 1e-5 : d == MLX_FLOAT16 ? 2e-3 : 1.6e-2;
    expect_near(out, want, (size_t)T * (size_t)P * (size_t)M * (size_t)N, tol, "moe");
    free(want);
    free(iv);
    free(l);
    free(r);
    TU_FREE(a, b, ri, out);
}

static void test_gather_mm_groups_products_by_matrix(void **state)
{
    (void)state;
    const mlx_dtype dts[4] = {MLX_FLOAT32, MLX_FLOAT64, MLX_FLOAT16, MLX_BFLOAT16};
    for (int i = 0; i < 4; i++)
        check_moe(dts[i], 64, 2, 1, 48, 40, false, false, false);
    check_moe(MLX_FLOAT32, 64, 2, 1, 48, 40, true, false, false);
    check_moe(MLX_FLOAT32, 64, 2, 1, 48, 40, true, true, false);
    check_moe(MLX_FLOAT32, 64, 2, 1, 48, 40, false, true, true);
    /* one expert per token, sorted: each group's rows follow each other */
    check_moe(MLX_FLOAT32, 100, 1, 1, 30, 20, true, false, false);
    check_moe(MLX_FLOAT32, 100, 1, 1, 30, 20, true, true, true);
    check_moe(MLX_FLOAT32, 40, 1, 3, 17, 9, true, false, false);
    check_moe(MLX_FLOAT32, 40, 2, 3, 17, 9, true, false, true);
    check_moe(MLX_FLOAT32, 40, 2, 3, 17, 9, false, true, false);
    /* past the grouping threshold: one product per pair */
    check_moe(MLX_FLOAT32, 4, 2, 64, 16, 8, false, false, false);
}

static void test_gather_mm_index_past_the_end_reads_the_last_matrix(void **state)
{
    (void)state;
    mlx_array a = operand(1, MLX_FLOAT32, (int[]){2, 2, 3}, 3), b = operand(2, MLX_FLOAT32, (int[]){3, 3, 2}, 3);
    /* 5 is past a's 2 matrices; -1 becomes 2^32 - 1 as MLX converts it */
    mlx_array li = index_array((int32_t[]){5, 0}, 1, (int[]){2}),
              ri = index_array((int32_t[]){-1, 7}, 1, (int[]){2});
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_gather_mm(&out, a, b, li, ri, false, tu_stream()), 0);
    double *want = naive_gather(a, b, (int64_t[]){1, 0}, (int64_t[]){2, 2}, 2);
    expect_near(out, want, 8, 1e-6, "clamped");
    free(want);
    TU_FREE(a, b, li, ri, out);
}

static void test_gather_mm_reports_bad_arguments(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array a = operand(1, MLX_FLOAT32, (int[]){2, 2, 3}, 3), b = operand(2, MLX_FLOAT32, (int[]){3, 3, 2}, 3);
    mlx_array c = operand(3, MLX_FLOAT32, (int[]){3, 4, 2}, 3), z = mlx_array_new_float(1.0f);
    mlx_array ai = mlx_array_new(), fi = operand(0, MLX_FLOAT32, (int[]){2}, 1);
    mlx_array li = index_array((int32_t[]){1, 0}, 1, (int[]){2}),
              l3 = index_array((int32_t[]){1, 0, 1}, 1, (int[]){3});
    mlx_array out = mlx_array_new();
    assert_int_not_equal(mlx_gather_mm(&out, z, b, li, none, false, s), 0);
    assert_string_equal(tu_last_error(),
                        "[gather_mm] Got 0 dimension input. Inputs must have at least one dimension.");
    tu_reset_errors();
    assert_int_not_equal(mlx_gather_mm(&out, a, c, li, none, false, s), 0);
    assert_string_equal(tu_last_error(), "[gather_mm] Last dimension of first input with shape (2,2,3) must match "
                                         "second to last dimension of second input with shape (3,4,2).");
    tu_reset_errors();
    assert_int_equal(mlx_astype(&ai, a, MLX_INT32, s), 0);
    assert_int_not_equal(mlx_gather_mm(&out, ai, li, li, none, false, s), 0);
    tu_expect_error("[gather_mm]");
    mlx_array bi = mlx_array_new();
    assert_int_equal(mlx_astype(&bi, b, MLX_INT32, s), 0);
    assert_int_not_equal(mlx_gather_mm(&out, ai, bi, li, none, false, s), 0);
    assert_string_equal(tu_last_error(),
                        "[gather_mm] Only real floating point types are supported but int32 and "
                        "int32 were provided which results in int32, which is not a real floating "
                        "point type.");
    tu_reset_errors();
    assert_int_not_equal(mlx_gather_mm(&out, a, b, fi, none, false, s), 0);
    assert_string_equal(tu_last_error(),
                        "[gather_mm] Got lhs_indices with invalid dtype. Indices must be integral.");
    tu_reset_errors();
    assert_int_not_equal(mlx_gather_mm(&out, a, b, li, fi, false, s), 0);
    assert_string_equal(tu_last_error(),
                        "[gather_mm] Got rhs_indices with invalid dtype. Indices must be integral.");
    tu_reset_errors();
    assert_int_not_equal(mlx_gather_mm(&out, a, b, li, l3, false, s), 0);
    tu_expect_error("[gather_mm]");
    assert_null(out.ctx);
    TU_FREE(a, b, c, z, ai, bi, fi, li, l3);
}

/* ---- closures for the transforms ---- */

typedef struct fn_payload {
    int kind; /* 0 gather_mm, 1 take + matmul, 2 block_masked_mm (args a, b, lhs, rhs), 3 depends */
    mlx_array li, ri, mo;
    bool sorted;
    int bs; /* block_masked_mm's block size (0: 32) */
} fn_payload;

static int apply_fn(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    const fn_payload *p = payload;
    mlx_stream s = tu_stream();
    mlx_array x[4] = {mlx_array_new(), mlx_array_new(), mlx_array_new(), mlx_array_new()};
    size_t n = mlx_vector_array_size(args);
    for (size_t i = 0; i < n && i < 4; i++)
        if (mlx_vector_array_get(&x[i], args, i))
            return 1;
    mlx_array out = mlx_array_new(), t1 = mlx_array_new(), t2 = mlx_array_new();
    int rc;
    if (p->kind == 0) {
        rc = mlx_gather_mm(&out, x[0], x[1], p->li, p->ri, p->sorted, s);
    } else if (p->kind == 1) {
        /* MLX's f_ref: the matrices taken, then one batched matmul */
        int na = (int)mlx_array_ndim(x[0]), nb = (int)mlx_array_ndim(x[1]);
        int sa[3] = {-1, mlx_array_shape(x[0])[na - 2], mlx_array_shape(x[0])[na - 1]};
        int sb[3] = {-1, mlx_array_shape(x[1])[nb - 2], mlx_array_shape(x[1])[nb - 1]};
        mlx_vector_array bc = mlx_vector_array_new(), in = mlx_vector_array_new();
        mlx_array l = mlx_array_new(), r = mlx_array_new();
        rc = mlx_vector_array_append_value(in, p->li) || mlx_vector_array_append_value(in, p->ri) ||
             mlx_broadcast_arrays(&bc, in, s) || mlx_vector_array_get(&l, bc, 0) ||
             mlx_vector_array_get(&r, bc, 1) || mlx_reshape(&t1, x[0], sa, 3, s) ||
             mlx_reshape(&t2, x[1], sb, 3, s) || mlx_take_axis(&t1, t1, l, 0, s) ||
             mlx_take_axis(&t2, t2, r, 0, s) || mlx_matmul(&out, t1, t2, s);
        mlx_vector_array_free(bc);
        mlx_vector_array_free(in);
        TU_FREE(l, r);
    } else if (p->kind == 2) {
        rc = mlx_block_masked_mm(&out, x[0], x[1], p->bs ? p->bs : 32, p->mo, x[2], x[3], s);
    } else {
        /* depends([x * 2], [x * 3])[0] */
        mlx_array two = mlx_array_new_float(2.0f), three = mlx_array_new_float(3.0f);
        mlx_vector_array vi = mlx_vector_array_new(), vd = mlx_vector_array_new(), vo = mlx_vector_array_new();
        rc = mlx_multiply(&t1, x[0], two, s) || mlx_multiply(&t2, x[0], three, s) ||
             mlx_vector_array_append_value(vi, t1) || mlx_vector_array_append_value(vd, t2) ||
             mlx_depends(&vo, vi, vd) || mlx_vector_array_get(&out, vo, 0);
        mlx_vector_array_free(vi);
        mlx_vector_array_free(vd);
        mlx_vector_array_free(vo);
        TU_FREE(two, three);
    }
    if (!rc)
        rc = mlx_vector_array_set_value(res, out);
    TU_FREE(out, t1, t2);
    tu_free_n(x, 4);
    return rc;
}

/* vjp of the payload's function at primals with the fixtures' cotangent:
 * grads[i] new handles, *out the output. */
static void vjp_of(fn_payload *p, const mlx_array *primals, int n, mlx_array *out, mlx_array *grads)
{
    mlx_closure f = mlx_closure_new_func_payload(apply_fn, p, NULL);
    mlx_vector_array pv = mlx_vector_array_new_data(primals, (size_t)n);
    mlx_vector_array outs = mlx_vector_array_new();
    /* the output first, for the cotangent's shape */
    assert_int_equal(mlx_closure_apply(&outs, f, pv), 0);
    *out = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(out, outs, 0), 0);
    mlx_array cot = cotangent(*out);
    mlx_vector_array cv = mlx_vector_array_new_data(&cot, 1), res = mlx_vector_array_new(),
                     g = mlx_vector_array_new();
    if (mlx_vjp(&res, &g, f, pv, cv))
        fail_msg("vjp failed: %s", tu_last_error());
    for (int i = 0; i < n; i++) {
        grads[i] = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(&grads[i], g, (size_t)i), 0);
        assert_int_equal(mlx_array_eval(grads[i]), 0);
    }
    mlx_array_free(cot);
    mlx_vector_array_free(cv);
    mlx_vector_array_free(res);
    mlx_vector_array_free(g);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(pv);
    mlx_closure_free(f);
}

static void test_gather_mm_vjp_matches_mlx(void **state)
{
    (void)state;
    mlx_array p[2] = {operand(0, MLX_FLOAT32, (int[]){3, 4, 5}, 3), operand(1, MLX_FLOAT32, (int[]){2, 5, 6}, 3)};
    fn_payload fp = {0,
                     index_array((int32_t[]){2, 0, 1, 1, 0, 2}, 2, (int[]){3, 2}),
                     index_array((int32_t[]){1, 0, 1}, 2, (int[]){3, 1}),
                     none,
                     false,
                     0};
    mlx_array out, g[2];
    vjp_of(&fp, p, 2, &out, g);
    expect_floats(g[0], mmf_gather_da, 60, 1e-5, "da");
    expect_floats(g[1], mmf_gather_db, 60, 1e-5, "db");
    TU_FREE(out, g[0], g[1], p[0], p[1], fp.li, fp.ri);

    p[0] = operand(2, MLX_FLOAT32, (int[]){6, 1, 1, 8}, 4);
    p[1] = operand(3, MLX_FLOAT32, (int[]){4, 8, 3}, 3);
    fp.li = none;
    fp.ri = index_array((int32_t[]){3, 1, 0, 3, 2, 2, 1, 0, 3, 2, 0, 1}, 2, (int[]){6, 2});
    vjp_of(&fp, p, 2, &out, g);
    expect_floats(g[0], mmf_moe_da, 48, 1e-5, "moe da");
    expect_floats(g[1], mmf_moe_db, 96, 1e-5, "moe db");
    TU_FREE(out, g[0], g[1], p[0], p[1], fp.ri);
}

/* MLX's test_gather_matmul_grad and test_gather_mm_sorted_vjp: the same
 * gradients as taking the matrices and multiplying them. */
static void test_gather_mm_vjp_matches_take_and_matmul(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array li = index_array((int32_t[]){7, 6, 4, 1, 0, 2}, 2, (int[]){3, 2});
    mlx_array ri = index_array((int32_t[]){2, 0, 1}, 2, (int[]){3, 1});
    assert_int_equal(mlx_astype(&li, li, MLX_UINT32, s), 0);
    assert_int_equal(mlx_astype(&ri, ri, MLX_UINT32, s), 0);
    mlx_array p[2] = {operand(0, MLX_FLOAT32, (int[]){4, 2, 8, 8}, 4),
                      operand(1, MLX_FLOAT32, (int[]){4, 1, 8, 8}, 4)};
    for (int sorted = 0; sorted < 2; sorted++) {
        fn_payload ft = {0, li, ri, none, false, 0}, fr = {1, li, ri, none, false, 0};
        if (sorted) {
            /* rhs sorted, no lhs: MLX's sorted path */
            TU_FREE(p[0], p[1]);
            p[0] = operand(2, MLX_FLOAT32, (int[]){20, 1, 6}, 3);
            p[1] = operand(3, MLX_FLOAT32, (int[]){8, 6, 5}, 3);
            int32_t v[20];
            for (int i = 0; i < 20; i++)
                v[i] = (i * 8) / 20;
            ft.ri = fr.ri = index_array(v, 1, (int[]){20});
            int32_t w[20];
            for (int i = 0; i < 20; i++)
                w[i] = i;
            fr.li = index_array(w, 1, (int[]){20});
            ft.li = none;
            ft.sorted = true;
        }
        mlx_array ot, orf, gt[2], gr[2];
        vjp_of(&ft, p, 2, &ot, gt);
        vjp_of(&fr, p, 2, &orf, gr);
        double *w = values(orf);
        expect_near(ot, w, mlx_array_size(orf), 1e-5, "value");
        free(w);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(mlx_array_ndim(gt[i]), mlx_array_ndim(p[i]));
            w = values(gr[i]);
            expect_near(gt[i], w, mlx_array_size(gr[i]), 1e-5, "gradient");
            free(w);
        }
        TU_FREE(ot, orf, gt[0], gt[1], gr[0], gr[1]);
        if (sorted)
            TU_FREE(ft.ri, fr.li);
    }
    TU_FREE(p[0], p[1], li, ri);
}

/* An index past the end reads the last matrix: its cotangent goes there. */
static void test_gather_mm_vjp_of_clamped_index_goes_to_the_last_matrix(void **state)
{
    (void)state;
    mlx_array p[2] = {operand(1, MLX_FLOAT32, (int[]){2, 2, 3}, 3), operand(2, MLX_FLOAT32, (int[]){2, 3, 2}, 3)};
    fn_payload fp = {
        0, index_array((int32_t[]){9}, 1, (int[]){1}), index_array((int32_t[]){0}, 1, (int[]){1}), none, false, 0};
    mlx_array out, g[2];
    vjp_of(&fp, p, 2, &out, g);
    double *dv = values(g[0]);
    for (int i = 0; i < 6; i++)
        assert_true(dv[i] == 0.0);
    bool any = false;
    for (int i = 6; i < 12; i++)
        any = any || dv[i] != 0.0;
    assert_true(any);
    free(dv);
    TU_FREE(out, g[0], g[1], p[0], p[1], fp.li, fp.ri);
}

static void test_gather_mm_has_no_jvp_as_in_mlx(void **state)
{
    (void)state;
    mlx_array p[2] = {operand(1, MLX_FLOAT32, (int[]){2, 2, 3}, 3), operand(2, MLX_FLOAT32, (int[]){2, 3, 2}, 3)};
    fn_payload fp = {0, index_array((int32_t[]){1}, 1, (int[]){1}), none, none, false, 0};
    mlx_closure f = mlx_closure_new_func_payload(apply_fn, &fp, NULL);
    mlx_vector_array pv = mlx_vector_array_new_data(p, 2), r0 = mlx_vector_array_new(),
                     r1 = mlx_vector_array_new();
    assert_int_not_equal(mlx_jvp(&r0, &r1, f, pv, pv), 0);
    assert_true(tu_last_error_has("Not implemented for GatherMM"));
    tu_reset_errors();
    mlx_vector_array_free(pv);
    mlx_vector_array_free(r0);
    mlx_vector_array_free(r1);
    mlx_closure_free(f);
    TU_FREE(p[0], p[1], fp.li);
}

/* ---- block_masked_mm ---- */

/* The masks' value for element (y, x) of block size bs: mask (.., ty, tx)
 * given as logical values of a (ty x tx) matrix, or 1 without a mask. */
static double mask_of(const double *m, int tx, int bs, int y, int x)
{
    return m ? m[(y / bs) * tx + x / bs] : 1.0;
}

/* Naive masked product of one (M, K) @ (K, N) pair. */
static void naive_masked(const double *a, const double *b, int M, int K, int N, int bs, const double *mo,
                         const double *ml, const double *mr, double *out)
{
    int tn = (N + bs - 1) / bs, tk = (K + bs - 1) / bs;
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            double acc = 0;
            for (int k = 0; k < K; k++)
                acc += a[m * K + k] * mask_of(ml, tk, bs, m, k) * b[k * N + n] * mask_of(mr, tn, bs, k, n);
            out[m * N + n] = acc * mask_of(mo, tn, bs, m, n);
        }
}

static void test_block_masked_mm_matches_mlx_fixtures(void **state)
{
    (void)state;
    mlx_array p[4] = {operand(4, MLX_FLOAT32, (int[]){34, 33}, 2), operand(5, MLX_FLOAT32, (int[]){33, 3}, 2),
                      float_mask((int[]){2, 2}, 2), float_mask((int[]){2, 1}, 2)};
    fn_payload fp = {2, none, none, float_mask((int[]){2, 1}, 2), false, 0};
    mlx_array out, g[4];
    vjp_of(&fp, p, 4, &out, g);
    expect_floats(out, mmf_block_out, 102, 1e-5, "block out");
    expect_floats(g[0], mmf_block_da, 1122, 1e-5, "block da");
    expect_floats(g[1], mmf_block_db, 99, 1e-5, "block db");
    expect_floats(g[2], mmf_block_dlhs, 4, 1e-5, "block dlhs");
    expect_floats(g[3], mmf_block_drhs, 2, 1e-5, "block drhs");
    TU_FREE(out, g[0], g[1], g[2], g[3], p[0], p[1], p[2], p[3], fp.mo);

    mlx_array a = operand(6, MLX_FLOAT32, (int[]){2, 3, 70}, 3), b = operand(7, MLX_FLOAT32, (int[]){1, 70, 4}, 3);
    mlx_array mo = bool_mask((int[]){2, 1, 1}, 3), ml = bool_mask((int[]){2, 1, 2}, 3),
              mr = bool_mask((int[]){1, 2, 1}, 3);
    out = mlx_array_new();
    assert_int_equal(mlx_block_masked_mm(&out, a, b, 64, mo, ml, mr, tu_stream()), 0);
    expect_shape(out, 3, (int[]){2, 3, 4});
    expect_floats(out, mmf_block_bool_out, 24, 1e-5, "block bool");
    TU_FREE(out, a, b, mo, ml, mr);
}

/* MLX's test_block_masked_matmul shapes, each with bool and float masks,
 * all three masks or some, against the naive product; the gradients of a
 * and b against the naive formulas (dA = (cot * Mo) @ (B * Mr)^T * Ml). */
static void check_masked(int M, int N, int K, int bs, bool use_float, int which)
{
    mlx_stream s = tu_stream();
    int tm = (M + bs - 1) / bs, tn = (N + bs - 1) / bs, tk = (K + bs - 1) / bs;
    mlx_array a = operand(1, MLX_FLOAT32, (int[]){M, K}, 2), b = operand(2, MLX_FLOAT32, (int[]){K, N}, 2);
    mlx_array mo = none, ml = none, mr = none;
    if (which & 1)
        mo = use_float ? float_mask((int[]){tm, tn}, 2) : bool_mask((int[]){tm, tn}, 2);
    if (which & 2) {
        ml = use_float ? float_mask((int[]){tm, tk}, 2) : bool_mask((int[]){tm, tk}, 2);
        mr = use_float ? float_mask((int[]){tk, tn}, 2) : bool_mask((int[]){tk, tn}, 2);
    }
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_block_masked_mm(&out, a, b, bs, mo, ml, mr, s), 0);
    double *av = values(a), *bv = values(b);
    double *mov = mo.ctx ? values(mo) : NULL, *mlv = ml.ctx ? values(ml) : NULL, *mrv = mr.ctx ? values(mr) : NULL;
    double *want = malloc(sizeof *want * (size_t)M * (size_t)N);
    naive_masked(av, bv, M, K, N, bs, mov, mlv, mrv, want);
    expect_near(out, want, (size_t)M * (size_t)N, 1e-5, "block_masked_mm");

    /* gradients of a and b through mlx_vjp of the op with fixed masks */
    if (use_float && which == 3) {
        mlx_array p[4] = {a, b, ml, mr}, o2, g[4];
        fn_payload fp = {2, none, none, mo, false, bs};
        vjp_of(&fp, p, 4, &o2, g);
        mlx_array cv = cotangent(o2);
        double *cot = values(cv);
        double *da = calloc((size_t)M * (size_t)K, sizeof *da), *db = calloc((size_t)K * (size_t)N, sizeof *db);
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double c = cot[m * N + n] * mask_of(mov, tn, bs, m, n);
                for (int k = 0; k < K; k++) {
                    double ma = mask_of(mlv, tk, bs, m, k), mb = mask_of(mrv, tn, bs, k, n);
                    da[m * K + k] += c * bv[k * N + n] * mb * ma;
                    db[k * N + n] += c * av[m * K + k] * ma * mb;
                }
            }
        expect_near(g[0], da, (size_t)M * (size_t)K, 1e-4, "da");
        expect_near(g[1], db, (size_t)K * (size_t)N, 1e-4, "db");
        free(da);
        free(db);
        free(cot);
        TU_FREE(o2, cv, g[0], g[1], g[2], g[3]);
    }
    free(want);
    free(av);
    free(bv);
    free(mov);
    free(mlv);
    free(mrv);
    TU_FREE(a, b, mo, ml, mr, out);
}

static void test_block_masked_mm_mlx_cases(void **state)
{
    (void)state;
    static const int shapes[][4] = {{16, 16, 16, 32},    {64, 64, 16, 32},  {128, 128, 128, 32},
                                    {256, 256, 128, 64}, {1, 128, 128, 32}, {256, 1, 128, 64}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int f = 0; f < 2; f++)
            for (int which = 1; which <= 3; which++)
                check_masked(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], f, which);
}

/* Batches that broadcast (a (1, 2, M, K) against b (2, 2, K, N)), masks
 * with their own batch dims; and MLX's transposed-operand case. */
static void test_block_masked_mm_broadcasts_batches(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    const int M = 40, N = 33, K = 70, bs = 32, tm = 2, tn = 2, tk = 3;
    mlx_array a = operand(3, MLX_FLOAT32, (int[]){1, 2, M, K}, 4),
              b = operand(4, MLX_FLOAT32, (int[]){2, 2, K, N}, 4);
    mlx_array mo = float_mask((int[]){2, 2, tm, tn}, 4), ml = bool_mask((int[]){1, 2, tm, tk}, 4);
    mlx_array mr = float_mask((int[]){tk, tn}, 2);
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_block_masked_mm(&out, a, b, bs, mo, ml, mr, s), 0);
    expect_shape(out, 4, (int[]){2, 2, M, N});
    double *av = values(a), *bv = values(b), *mov = values(mo), *mlv = values(ml), *mrv = values(mr);
    double *want = malloc(sizeof *want * 4 * M * N);
    for (int i = 0; i < 4; i++)
        naive_masked(av + (i % 2) * M * K, bv + i * K * N, M, K, N, bs, mov + i * tm * tn, mlv + (i % 2) * tm * tk,
                     mrv, want + i * M * N);
    expect_near(out, want, 4 * M * N, 1e-5, "broadcast batches");
    free(av);
    free(bv);
    free(mov);
    free(mlv);
    free(mrv);
    free(want);
    TU_FREE(a, b, mo, ml, mr, out);

    /* c = a^T @ b with a's mask transposed, as MLX's test does */
    a = operand(5, MLX_FLOAT32, (int[]){128, 256}, 2);
    b = operand(6, MLX_FLOAT32, (int[]){128, 1}, 2);
    mlx_array am = float_mask((int[]){4, 8}, 2), bm = bool_mask((int[]){4, 1}, 2),
              cm = float_mask((int[]){8, 1}, 2);
    mlx_array at = mlx_array_new(), amt = mlx_array_new();
    assert_int_equal(mlx_transpose(&at, a, s), 0);
    assert_int_equal(mlx_transpose(&amt, am, s), 0);
    out = mlx_array_new();
    assert_int_equal(mlx_block_masked_mm(&out, at, b, 32, cm, amt, bm, s), 0);
    double *atv = values(at), *bv2 = values(b), *amv = values(amt), *bmv = values(bm), *cmv = values(cm);
    want = malloc(sizeof *want * 256);
    naive_masked(atv, bv2, 256, 128, 1, 32, cmv, amv, bmv, want);
    expect_near(out, want, 256, 1e-5, "transposed operand");
    free(atv);
    free(bv2);
    free(amv);
    free(bmv);
    free(cmv);
    free(want);
    TU_FREE(a, b, am, bm, cm, at, amt, out);
}

/* A 1-d operand and its masks gain the axes matmul gives it, then lose
 * them in the result. */
static void test_block_masked_mm_takes_vectors(void **state)
{
    (void)state;
    mlx_array a = operand(1, MLX_FLOAT32, (int[]){40}, 1), b = operand(2, MLX_FLOAT32, (int[]){40, 36}, 2);
    mlx_array ml = float_mask((int[]){2}, 1), mr = float_mask((int[]){2, 2}, 2), mo = bool_mask((int[]){2}, 1);
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_block_masked_mm(&out, a, b, 32, mo, ml, mr, tu_stream()), 0);
    expect_shape(out, 1, (int[]){36});
    double *av = values(a), *bv = values(b), *mov = values(mo), *mlv = values(ml), *mrv = values(mr), want[36];
    naive_masked(av, bv, 1, 40, 36, 32, mov, mlv, mrv, want);
    expect_near(out, want, 36, 1e-5, "vector");
    free(av);
    free(bv);
    free(mov);
    free(mlv);
    free(mrv);
    TU_FREE(a, b, ml, mr, mo, out);
}

/* Half dtypes are computed in float32 and rounded once. */
static void test_block_masked_mm_half_dtypes(void **state)
{
    (void)state;
    const mlx_dtype dts[3] = {MLX_FLOAT16, MLX_BFLOAT16, MLX_FLOAT64};
    for (int i = 0; i < 3; i++) {
        mlx_array a = operand(1, dts[i], (int[]){40, 40}, 2), b = operand(2, dts[i], (int[]){40, 36}, 2);
        mlx_array mo = float_mask((int[]){2, 2}, 2), ml = bool_mask((int[]){2, 2}, 2),
                  mr = bool_mask((int[]){2, 2}, 2);
        mlx_array out = mlx_array_new();
        assert_int_equal(mlx_block_masked_mm(&out, a, b, 32, mo, ml, mr, tu_stream()), 0);
        assert_int_equal(mlx_array_dtype(out), dts[i]);
        double *av = values(a), *bv = values(b), *mov = values(mo), *mlv = values(ml), *mrv = values(mr);
        double *want = malloc(sizeof *want * 40 * 36);
        naive_masked(av, bv, 40, 40, 36, 32, mov, mlv, mrv, want);
        expect_near(out, want, 40 * 36,
                    dts[i] == MLX_FLOAT16    ? 1e-3
                    : dts[i] == MLX_BFLOAT16 ? 8e-3
                                             : 1e-12,
                    "half");
        free(av);
        free(bv);
        free(mov);
        free(mlv);
        free(mrv);
        free(want);
        TU_FREE(a, b, mo, ml, mr, out);
    }
}

/* An output whose out mask is zero everywhere is not computed at all. */
static void test_block_masked_mm_skips_masked_out_blocks(void **state)
{
    (void)state;
    mlx_array a = operand(1, MLX_FLOAT32, (int[]){128, 64}, 2), b = operand(2, MLX_FLOAT32, (int[]){64, 96}, 2);
    double zero[12] = {0};
    mlx_array mo = tu_array_of(MLX_BOOL, zero, (int[]){4, 3}, 2);
    assert_int_equal(mlx_array_eval(a), 0);
    assert_int_equal(mlx_array_eval(b), 0);
    mc_blas_stats before = mc_blas_stats_get();
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_block_masked_mm(&out, a, b, 32, mo, none, none, tu_stream()), 0);
    assert_int_equal(mlx_array_eval(out), 0);
    mc_blas_stats after = mc_blas_stats_get();
    assert_int_equal(after.gemm + after.gemv, before.gemm + before.gemv);
    double *w = calloc(128 * 96, sizeof *w);
    expect_near(out, w, 128 * 96, 0, "zeros");
    free(w);
    TU_FREE(a, b, mo, out);
}

static void test_block_masked_mm_reports_bad_arguments(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array a = operand(1, MLX_FLOAT32, (int[]){40, 40}, 2), b = operand(2, MLX_FLOAT32, (int[]){40, 36}, 2);
    mlx_array mo = bool_mask((int[]){2, 2}, 2), bad = bool_mask((int[]){3, 2}, 2), ai = mlx_array_new();
    mlx_array out = mlx_array_new();
    assert_int_not_equal(mlx_block_masked_mm(&out, a, b, 16, mo, none, none, s), 0);
    assert_string_equal(tu_last_error(),
                        "[block_masked_mm] Only block_sizes 32, 64 are supported.Got block size 16.");
    tu_reset_errors();
    assert_int_not_equal(mlx_block_masked_mm(&out, b, a, 32, mo, none, none, s), 0);
    assert_string_equal(tu_last_error(), "[block_masked_mm] Last dimension of first input with shape (40,36) must "
                                         "match second to last dimension of second input with shape (40,40).");
    tu_reset_errors();
    assert_int_equal(mlx_astype(&ai, a, MLX_INT32, s), 0);
    assert_int_not_equal(mlx_block_masked_mm(&out, ai, ai, 32, mo, none, none, s), 0);
    tu_expect_error("[block_masked_mm] Only real floating point types");
    assert_int_not_equal(mlx_block_masked_mm(&out, a, b, 32, bad, none, none, s), 0);
    tu_expect_error("[block_masked_mm]");
    assert_int_not_equal(mlx_block_masked_mm(&out, a, b, 32, none, bad, none, s), 0);
    tu_expect_error("[block_masked_mm]");
    /* gradients with respect to a bool mask: MLX's error */
    fn_payload fp = {2, none, none, none, false, 0};
    mlx_array p[4] = {a, b, mo, mo};
    mlx_closure f = mlx_closure_new_func_payload(apply_fn, &fp, NULL);
    mlx_vector_array pv = mlx_vector_array_new_data(p, 4), cv = mlx_vector_array_new(),
                     r0 = mlx_vector_array_new(), r1 = mlx_vector_array_new();
    mlx_array cot = operand(0, MLX_FLOAT32, (int[]){40, 36}, 2);
    mlx_vector_array_append_value(cv, cot);
    assert_int_not_equal(mlx_vjp(&r0, &r1, f, pv, cv), 0);
    assert_true(tu_last_error_has("Cannot calculate VJP with respect to boolean masks."));
    tu_reset_errors();
    mlx_array fm = float_mask((int[]){2, 2}, 2);
    mlx_array p2[4] = {a, b, fm, fm};
    mlx_vector_array pv2 = mlx_vector_array_new_data(p2, 4);
    assert_int_not_equal(mlx_jvp(&r0, &r1, f, pv2, pv2), 0);
    assert_true(tu_last_error_has("Not implemented for BlockMaskedMM"));
    tu_reset_errors();
    mlx_vector_array_free(pv2);
    mlx_array_free(fm);
    mlx_vector_array_free(pv);
    mlx_vector_array_free(cv);
    mlx_vector_array_free(r0);
    mlx_vector_array_free(r1);
    mlx_closure_free(f);
    assert_null(out.ctx);
    TU_FREE(a, b, mo, bad, ai, cot);
}

/* ---- segmented_mm ---- */

static void check_segmented(mlx_array a, mlx_array b, mlx_array seg)
{
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_segmented_mm(&out, a, b, seg, tu_stream()), 0);
    int M = mlx_array_shape(a)[0], K = mlx_array_shape(a)[1], N = mlx_array_shape(b)[1];
    double *av = values(a), *bv = values(b), *sv = values(seg);
    size_t ns = mlx_array_size(seg) / 2;
    double *want = calloc(ns * (size_t)M * (size_t)N + 1, sizeof *want);
    for (size_t j = 0; j < ns; j++) {
        int s0 = sv[2 * j] > K ? K : (int)sv[2 * j], s1 = sv[2 * j + 1] > K ? K : (int)sv[2 * j + 1];
        for (int m = 0; m < M; m++)
            for (int n = 0; n < N; n++) {
                double acc = 0;
                for (int k = s0; k < s1; k++)
                    acc += av[m * K + k] * bv[k * N + n];
                want[(j * (size_t)M + (size_t)m) * (size_t)N + (size_t)n] = acc;
            }
    }
    expect_near(out, want, ns * (size_t)M * (size_t)N, 1e-5, "segmented_mm");
    free(want);
    free(av);
    free(bv);
    free(sv);
    mlx_array_free(out);
}

static void test_segmented_mm_matches_mlx_fixture(void **state)
{
    (void)state;
    mlx_array a = operand(8, MLX_FLOAT32, (int[]){3, 10}, 2), b = operand(9, MLX_FLOAT32, (int[]){10, 4}, 2);
    mlx_array seg = index_array((int32_t[]){0, 3, 3, 3, 2, 10, 5, 1}, 2, (int[]){4, 2});
    mlx_array out = mlx_array_new();
    assert_int_equal(mlx_segmented_mm(&out, a, b, seg, tu_stream()), 0);
    expect_shape(out, 3, (int[]){4, 3, 4});
    expect_floats(out, mmf_segmented_out, 48, 1e-6, "segmented");
    TU_FREE(a, b, seg, out);
}

/* MLX's test_segmented_mm: three segmentations of K, operands plain or
 * transposed (1000 scaled down to 100 for time). */
static void test_segmented_mm_mlx_cases(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    static const int shapes[3][3] = {{10, 10, 10}, {10, 10, 1000}, {100, 100, 100}};
    for (int si = 0; si < 3; si++) {
        int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
        for (int sg = 0; sg < 3; sg++) {
            int32_t v[20];
            int n = 0;
            double cuts[10];
            int nc = sg == 0 ? 3 : sg == 1 ? 3 : 10;
            for (int i = 0; i < nc; i++)
                cuts[i] = sg == 0 ? (double[]){0, 0, 1}[i] : sg == 1 ? (double[]){0, 0.5, 1}[i] : i / 9.0;
            for (int i = 0; i + 1 < nc; i++) {
                int c0 = (int)(uint32_t)(K * cuts[i]), c1 = (int)(uint32_t)(K * cuts[i + 1]);
                v[n++] = c0 < K - 1 ? c0 : K - 1;
                v[n++] = c1 < K - 1 ? c1 : K - 1;
            }
            mlx_array seg = index_array(v, 2, (int[]){n / 2, 2});
            for (int t = 0; t < 4; t++) {
                mlx_array a = (t & 1) ? operand(1, MLX_FLOAT32, (int[]){K, M}, 2)
                                      : operand(1, MLX_FLOAT32, (int[]){M, K}, 2);
                mlx_array b = (t & 2) ? operand(2, MLX_FLOAT32, (int[]){N, K}, 2)
                                      : operand(2, MLX_FLOAT32, (int[]){K, N}, 2);
                if (t & 1)
                    assert_int_equal(mlx_transpose(&a, a, s), 0);
                if (t & 2)
                    assert_int_equal(mlx_transpose(&b, b, s), 0);
                check_segmented(a, b, seg);
                TU_FREE(a, b);
            }
            mlx_array_free(seg);
        }
    }
    /* segments from a strided view, shaped (2, 2, 4, 2) */
    mlx_array a = operand(3, MLX_FLOAT32, (int[]){10, 1000}, 2), at = mlx_array_new();
    int32_t cuts[17];
    for (int i = 0; i <= 16; i++)
        cuts[i] = (i * 1000) / 16;
    mlx_array c = index_array(cuts, 1, (int[]){17}), seg = mlx_array_new(), out = mlx_array_new();
    assert_int_equal(mlx_as_strided(&seg, c, (int[]){16, 2}, 2, (int64_t[]){1, 1}, 2, 0, s), 0);
    assert_int_equal(mlx_reshape(&seg, seg, (int[]){2, 2, 4, 2}, 4, s), 0);
    assert_int_equal(mlx_transpose(&at, a, s), 0);
    assert_int_equal(mlx_segmented_mm(&out, a, at, seg, s), 0);
    expect_shape(out, 5, (int[]){2, 2, 4, 10, 10});
    check_segmented(a, at, seg);
    TU_FREE(a, at, c, seg, out);
}

/* Bounds past K read as K; half and double dtypes. */
static void test_segmented_mm_clamps_bounds_and_keeps_dtypes(void **state)
{
    (void)state;
    mlx_array a = operand(1, MLX_FLOAT32, (int[]){3, 6}, 2), b = operand(2, MLX_FLOAT32, (int[]){6, 2}, 2);
    mlx_array seg = index_array((int32_t[]){4, 99, 0, 6}, 2, (int[]){2, 2}), out = mlx_array_new();
    assert_int_equal(mlx_segmented_mm(&out, a, b, seg, tu_stream()), 0);
    mlx_array want = mlx_array_new(), sl = mlx_array_new(), sr = mlx_array_new();
    mlx_stream s = tu_stream();
    assert_int_equal(mlx_slice(&sl, a, (int[]){0, 4}, 2, (int[]){3, 6}, 2, (int[]){1, 1}, 2, s), 0);
    assert_int_equal(mlx_slice(&sr, b, (int[]){4, 0}, 2, (int[]){6, 2}, 2, (int[]){1, 1}, 2, s), 0);
    assert_int_equal(mlx_matmul(&want, sl, sr, s), 0);
    double *w = values(want), *o = values(out);
    for (int i = 0; i < 6; i++)
        assert_true(fabs(o[i] - w[i]) < 1e-6);
    free(w);
    free(o);
    TU_FREE(a, b, seg, out, want, sl, sr);

    const mlx_dtype dts[3] = {MLX_FLOAT16, MLX_BFLOAT16, MLX_FLOAT64};
    for (int i = 0; i < 3; i++) {
        a = operand(1, dts[i], (int[]){4, 12}, 2);
        b = operand(2, dts[i], (int[]){12, 5}, 2);
        seg = index_array((int32_t[]){0, 5, 5, 12, 3, 9}, 2, (int[]){3, 2});
        out = mlx_array_new();
        assert_int_equal(mlx_segmented_mm(&out, a, b, seg, tu_stream()), 0);
        assert_int_equal(mlx_array_dtype(out), dts[i]);
        check_segmented(a, b, seg);
        TU_FREE(a, b, seg, out);
    }
}

static void test_segmented_mm_reports_bad_arguments(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array a3 = operand(1, MLX_FLOAT32, (int[]){2, 10, 10}, 3), a = operand(1, MLX_FLOAT32, (int[]){3, 4}, 2);
    mlx_array b = operand(2, MLX_FLOAT32, (int[]){5, 2}, 2), b4 = operand(2, MLX_FLOAT32, (int[]){4, 2}, 2);
    mlx_array seg = index_array((int32_t[]){0, 5, 5, 10}, 2, (int[]){2, 2});
    mlx_array seg3 = index_array((int32_t[]){0, 5, 5}, 1, (int[]){3}), fseg = mlx_array_new(),
              out = mlx_array_new();
    assert_int_not_equal(mlx_segmented_mm(&out, a3, a3, seg, s), 0);
    assert_string_equal(tu_last_error(), "[segmented_mm] Batched matmul not supported");
    tu_reset_errors();
    assert_int_not_equal(mlx_segmented_mm(&out, a, b4, seg3, s), 0);
    assert_string_equal(tu_last_error(),
                        "[segmented_mm] The segments should have shape (..., 2) but (3) was provided.");
    tu_reset_errors();
    assert_int_equal(mlx_astype(&fseg, seg, MLX_FLOAT32, s), 0);
    assert_int_not_equal(mlx_segmented_mm(&out, a, b4, fseg, s), 0);
    assert_string_equal(tu_last_error(),
                        "[segmented_mm] Got segments with invalid dtype. Segments must be integral.");
    tu_reset_errors();
    /* MLX does not check the inner dims: reading past a row is refused */
    assert_int_not_equal(mlx_segmented_mm(&out, a, b, seg, s), 0);
    tu_expect_error("[segmented_mm] Last dimension of first input with shape (3,4)");
    assert_null(out.ctx);
    TU_FREE(a3, a, b, b4, seg, seg3, fseg);
}

/* SegmentedMM has neither vjp nor jvp in MLX. */
static int seg_fn(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    (void)payload;
    mlx_array a = mlx_array_new(), b = mlx_array_new(), out = mlx_array_new();
    mlx_array seg = index_array((int32_t[]){0, 2}, 2, (int[]){1, 2});
    int rc = mlx_vector_array_get(&a, args, 0) || mlx_vector_array_get(&b, args, 1) ||
             mlx_segmented_mm(&out, a, b, seg, tu_stream()) || mlx_vector_array_set_value(res, out);
    TU_FREE(a, b, out, seg);
    return rc;
}

static void test_segmented_mm_has_no_derivatives_as_in_mlx(void **state)
{
    (void)state;
    mlx_array p[2] = {operand(1, MLX_FLOAT32, (int[]){2, 3}, 2), operand(2, MLX_FLOAT32, (int[]){3, 2}, 2)};
    mlx_array cot = operand(3, MLX_FLOAT32, (int[]){1, 2, 2}, 3);
    mlx_closure f = mlx_closure_new_func_payload(seg_fn, NULL, NULL);
    mlx_vector_array pv = mlx_vector_array_new_data(p, 2), cv = mlx_vector_array_new_data(&cot, 1);
    mlx_vector_array r0 = mlx_vector_array_new(), r1 = mlx_vector_array_new();
    assert_int_not_equal(mlx_vjp(&r0, &r1, f, pv, cv), 0);
    assert_true(tu_last_error_has("Not implemented for SegmentedMM."));
    tu_reset_errors();
    assert_int_not_equal(mlx_jvp(&r0, &r1, f, pv, pv), 0);
    assert_true(tu_last_error_has("Not implemented for SegmentedMM."));
    tu_reset_errors();
    mlx_vector_array_free(pv);
    mlx_vector_array_free(cv);
    mlx_vector_array_free(r0);
    mlx_vector_array_free(r1);
    mlx_closure_free(f);
    TU_FREE(p[0], p[1], cot);
}

/* ---- depends ---- */

/* MLX's test_depends: the output equals the input; and, checked here,
 * the dependency is computed by the time the output is, the output is
 * the input's own data, and each input gets its own output. */
static void test_depends_evaluates_dependencies_first(void **state)
{
    (void)state;
    mlx_stream s = tu_stream();
    mlx_array a = tu_f32((float[]){1.0f, 2.0f, 3.0f}, (int[]){3}, 1);
    mlx_array b = mlx_array_new(), c = mlx_array_new(), d = mlx_array_new(), out = mlx_array_new(),
              o2 = mlx_array_new();
    assert_int_equal(mlx_exp(&b, a, s), 0);
    assert_int_equal(mlx_log(&c, a, s), 0);
    assert_int_equal(mlx_sqrt(&d, a, s), 0);
    mlx_vector_array in = mlx_vector_array_new(), deps = mlx_vector_array_new(), res = mlx_vector_array_new();
    mlx_vector_array_append_value(in, b);
    mlx_vector_array_append_value(in, a);
    mlx_vector_array_append_value(deps, c);
    mlx_vector_array_append_value(deps, d);
    assert_int_equal(mlx_depends(&res, in, deps), 0);
    assert_int_equal(mlx_vector_array_size(res), 2);
    assert_int_equal(mlx_vector_array_get(&out, res, 0), 0);
    assert_int_equal(mlx_vector_array_get(&o2, res, 1), 0);
    assert_false(mc_array_evaluated(mc_arr(c)));
    assert_int_equal(mlx_array_eval(out), 0);
    assert_true(mc_array_evaluated(mc_arr(c)));
    assert_true(mc_array_evaluated(mc_arr(d)));
    mlx_array eq = mlx_array_new();
    bool same = false;
    assert_int_equal(mlx_array_equal(&eq, out, b, false, s), 0);
    assert_int_equal(mlx_array_item_bool(&same, eq), 0);
    assert_true(same);
    assert_ptr_equal(mc_arr(out)->data, mc_arr(b)->data);
    expect_near(o2, (double[]){1, 2, 3}, 3, 0, "second output");
    assert_ptr_equal(mc_arr(o2)->data, mc_arr(a)->data);
    mlx_vector_array_free(in);
    mlx_vector_array_free(deps);
    mlx_vector_array_free(res);
    TU_FREE(a, b, c, d, out, o2, eq);
}

static void test_depends_gradients_as_in_mlx(void **state)
{
    (void)state;
    mlx_array x = tu_f32((float[]){1.0f, -2.0f}, (int[]){2}, 1), out, g[1];
    fn_payload fp = {3, none, none, none, false, 0};
    vjp_of(&fp, &x, 1, &out, g);
    /* d/dx of <x * 2, cot>: the dependency x * 3 contributes nothing */
    mlx_array cv = cotangent(out);
    double *c = values(cv), want[2] = {2 * c[0], 2 * c[1]};
    expect_near(g[0], want, 2, 0, "grad");
    free(c);
    mlx_closure f = mlx_closure_new_func_payload(apply_fn, &fp, NULL);
    mlx_vector_array pv = mlx_vector_array_new_data(&x, 1), r0 = mlx_vector_array_new(),
                     r1 = mlx_vector_array_new();
    assert_int_not_equal(mlx_jvp(&r0, &r1, f, pv, pv), 0);
    assert_true(tu_last_error_has("Not implemented for Depends"));
    tu_reset_errors();
    mlx_vector_array_free(pv);
    mlx_vector_array_free(r0);
    mlx_vector_array_free(r1);
    mlx_closure_free(f);
    TU_FREE(x, out, g[0], cv);
}

static void test_depends_needs_an_input(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(1.0f);
    mlx_vector_array empty = mlx_vector_array_new(), one = mlx_vector_array_new_data(&a, 1);
    mlx_vector_array res = mlx_vector_array_new();
    assert_int_not_equal(mlx_depends(&res, empty, one), 0);
    assert_string_equal(tu_last_error(), "[depends] At least one input is needed.");
    tu_reset_errors();
    assert_int_equal(mlx_vector_array_size(res), 0);
    /* no dependencies: the inputs themselves, as views */
    assert_int_equal(mlx_depends(&res, one, empty), 0);
    mlx_array o = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&o, res, 0), 0);
    float v = 0;
    assert_int_equal(mlx_array_item_float32(&v, o), 0);
    assert_true(v == 1.0f);
    mlx_vector_array_free(empty);
    mlx_vector_array_free(one);
    mlx_vector_array_free(res);
    TU_FREE(a, o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_gather_mm_matches_mlx_fixtures, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_mlx_cases, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_reads_broadcast_and_transposed_views, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_groups_products_by_matrix, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_index_past_the_end_reads_the_last_matrix, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_reports_bad_arguments, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_vjp_matches_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_vjp_matches_take_and_matmul, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_vjp_of_clamped_index_goes_to_the_last_matrix, tu_test_teardown),
        cmocka_unit_test_teardown(test_gather_mm_has_no_jvp_as_in_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_block_masked_mm_matches_mlx_fixtures, tu_test_teardown),
        cmocka_unit_test_teardown(test_block_masked_mm_mlx_cases, tu_test_teardown),
        cmocka_unit_test_teardown(test_block_masked_mm_broadcasts_batches, tu_test_teardown),
        cmocka_unit_test_teardown(test_block_masked_mm_takes_vectors, tu_test_teardown),
        cmocka_unit_test_teardown(test_block_masked_mm_half_dtypes, tu_test_teardown),
        cmocka_unit_test_teardown(test_block_masked_mm_skips_masked_out_blocks, tu_test_teardown),
        cmocka_unit_test_teardown(test_block_masked_mm_reports_bad_arguments, tu_test_teardown),
        cmocka_unit_test_teardown(test_segmented_mm_matches_mlx_fixture, tu_test_teardown),
        cmocka_unit_test_teardown(test_segmented_mm_mlx_cases, tu_test_teardown),
        cmocka_unit_test_teardown(test_segmented_mm_clamps_bounds_and_keeps_dtypes, tu_test_teardown),
        cmocka_unit_test_teardown(test_segmented_mm_reports_bad_arguments, tu_test_teardown),
        cmocka_unit_test_teardown(test_segmented_mm_has_no_derivatives_as_in_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_depends_evaluates_dependencies_first, tu_test_teardown),
        cmocka_unit_test_teardown(test_depends_gradients_as_in_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_depends_needs_an_input, tu_test_teardown),
    };
    printf("fixtures from mlx %s\n", MMF_MLX_VERSION);
    return cmocka_run_group_tests_name("matmul_ext", tests, tu_group_setup, tu_group_teardown);
}
