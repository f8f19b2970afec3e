/* Suite 'vmap': mlx_detail_vmap_trace and mlx_detail_vmap_replace.
 *   - A generated table: for each row, a function built on one primitive
 *     (the table checks that every primitive of src/graph/prim_list.h
 *     that a function can reach has a row), vmapped over several in_axes
 *     and out_axes mixes, equals f applied to each batch element and the
 *     results stacked; where MLX cannot vmap the primitive, the row
 *     expects MLX's message.
 *   - MLX's python/tests/test_vmap.py cases, with their expected values.
 *   - Errors (one message each, nothing leaked), nested vmap, vmap of a
 *     vjp and a vjp through a vmap. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "graph/primitive.h"
#include "mlx/c/mlx.h"
#include "test_util.h"

enum { MAX_IN = 3, BATCH = 3 };

/* ---- vmap as a binding builds it from the two halves ---- */

/* outs (a fresh vector) = vmap(fun, in_axes, out_axes)(inputs). */
static int vmap_apply(mlx_vector_array *outs, mlx_closure fun, mlx_vector_array inputs, const int *in_axes,
                      size_t nin, const int *out_axes, size_t nout)
{
    mlx_vector_array s_in = mlx_vector_array_new(), s_out = mlx_vector_array_new();
    int rc = mlx_detail_vmap_trace(&s_in, &s_out, fun, inputs, in_axes, nin);
    if (!rc)
        rc = mlx_detail_vmap_replace(outs, inputs, s_in, s_out, in_axes, nin, out_axes, nout);
    mlx_vector_array_free(s_in);
    mlx_vector_array_free(s_out);
    return rc;
}

static mlx_vector_array vec_of(const mlx_array *a, size_t n)
{
    mlx_vector_array v = mlx_vector_array_new_data(a, n);
    assert_non_null(v.ctx);
    return v;
}

static mlx_array vec_get(mlx_vector_array v, size_t i)
{
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&a, v, i), 0);
    return a;
}

/* vmap of a one-output function of n arrays; the output (caller frees). */
static mlx_array vmap1(mlx_closure f, const mlx_array *in, size_t n, const int *in_axes, int out_axis)
{
    mlx_vector_array args = vec_of(in, n), outs = mlx_vector_array_new();
    assert_int_equal(vmap_apply(&outs, f, args, in_axes, n, &out_axis, 1), 0);
    tu_expect_no_error();
    mlx_array r = vec_get(outs, 0);
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    return r;
}

/* ---- comparing ---- */

static bool close_to(double got, double want, double tol)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= tol * (1 + fabs(want));
}

static void expect_same(mlx_array got, mlx_array want, double tol, const char *what)
{
    int nd = (int)mlx_array_ndim(want);
    if (!tu_shape_is(got, nd, mlx_array_shape(want)))
        fail_msg("%s: shape differs (ndim %d vs %d)", what, (int)mlx_array_ndim(got), nd);
    if (mlx_array_dtype(got) != mlx_array_dtype(want))
        fail_msg("%s: dtype %d, expected %d", what, mlx_array_dtype(got), mlx_array_dtype(want));
    size_t n = mlx_array_size(want);
    for (size_t i = 0; i < n; i++) {
        double g = tu_get(got, i), w = tu_get(want, i);
        if (!close_to(g, w, tol))
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, g, w);
    }
}

static void expect_values(mlx_array got, const double *want, const int *shape, int ndim, const char *what)
{
    if (!tu_shape_is(got, ndim, shape))
        fail_msg("%s: wrong shape (ndim %d)", what, (int)mlx_array_ndim(got));
    for (size_t i = 0; i < mlx_array_size(got); i++)
        if (!close_to(tu_get(got, i), want[i], 1e-5))
            fail_msg("%s: element %zu is %.9g, expected %.9g", what, i, tu_get(got, i), want[i]);
}

static void expect_shape(mlx_array a, const int *shape, int ndim, const char *what)
{
    if (!tu_shape_is(a, ndim, shape))
        fail_msg("%s: wrong shape (ndim %d)", what, (int)mlx_array_ndim(a));
}

/* ---- the generated table ---- */

typedef int (*case_fn)(mlx_array *out, const mlx_array *x, mlx_stream s);

/* How a row's inputs are drawn. */
typedef enum { IN_F, IN_I, IN_B, IN_KEY } in_kind;

typedef struct vcase {
    const char *name;
    case_fn f;
    int nin;
    int ndim[MAX_IN];
    int shape[MAX_IN][4];
    in_kind kind[MAX_IN]; /* IN_F: float32 in [lo, hi]; IN_I: int32 in [0, ilim) */
    double lo, hi;
    int ilim;
    int prim;              /* the primitive the row is for */
    const char *mlx_error; /* where MLX cannot vmap it: its message */
    unsigned no_batch;     /* inputs never batched (bit i), e.g. an index list f fixes */
} vcase;

static mlx_stream S(void) { return tu_stream(); }

#define UNARY(name, call) \
    static int f_##name(mlx_array *o, const mlx_array *x, mlx_stream s) { return call; }

UNARY(exp, mlx_exp(o, x[0], s))
UNARY(add, mlx_add(o, x[0], x[1], s))
UNARY(where, mlx_where(o, x[0], x[1], x[2], s))
UNARY(astype, mlx_astype(o, x[0], MLX_FLOAT64, s))
UNARY(copy, mlx_copy(o, x[0], s))
UNARY(stop_gradient, mlx_stop_gradient(o, x[0], s))
UNARY(reshape, mlx_reshape(o, x[0], (const int[]){4, 2}, 2, s))
UNARY(transpose, mlx_transpose(o, x[0], s))
UNARY(broadcast, mlx_broadcast_to(o, x[0], (const int[]){5, 2, 4}, 3, s))
UNARY(expand_dims, mlx_expand_dims(o, x[0], 1, s))
UNARY(squeeze, mlx_squeeze(o, x[0], s))
UNARY(flatten, mlx_flatten(o, x[0], 0, 1, s))
UNARY(unflatten, mlx_unflatten(o, x[0], 1, (const int[]){2, 2}, 2, s))
UNARY(slice, mlx_slice(o, x[0], (const int[]){0, 1}, 2, (const int[]){2, 4}, 2, (const int[]){1, 2}, 2, s))
UNARY(as_strided, mlx_as_strided(o, x[0], (const int[]){2, 2}, 2, (const int64_t[]){1, 1}, 2, 0, s))
UNARY(diagonal, mlx_diagonal(o, x[0], 1, 0, 1, s))
UNARY(contiguous, mlx_contiguous(o, x[0], false, s))
UNARY(sum, mlx_sum_axes(o, x[0], (const int[]){1}, 1, false, s))
UNARY(argmax, mlx_argmax_axis(o, x[0], 1, false, s))
UNARY(cumsum, mlx_cumsum(o, x[0], 0, false, true, s))
UNARY(softmax, mlx_softmax_axis(o, x[0], 1, false, s))
UNARY(logsumexp, mlx_logsumexp_axis(o, x[0], 0, false, s))
UNARY(sort, mlx_sort_axis(o, x[0], 0, s))
UNARY(argsort, mlx_argsort_axis(o, x[0], 1, s))
UNARY(partition, mlx_partition_axis(o, x[0], 1, 1, s))
UNARY(argpartition, mlx_argpartition_axis(o, x[0], 1, 0, s))
UNARY(take, mlx_take_axis(o, x[0], x[1], 1, s))
UNARY(take_along, mlx_take_along_axis(o, x[0], x[1], 0, s))
UNARY(put_along, mlx_put_along_axis(o, x[0], x[1], x[2], 1, s))
UNARY(slice_update,
      mlx_slice_update(o, x[0], x[1], (const int[]){1, 0}, 2, (const int[]){3, 4}, 2, (const int[]){1, 1}, 2, s))
UNARY(pad, mlx_pad(o, x[0], (const int[]){0}, 1, (const int[]){1}, 1, (const int[]){1}, 1, x[1], "constant", s))
UNARY(numel, mlx_number_of_elements(o, x[0], (const int[]){0, 1}, 2, false, MLX_FLOAT32, s))
UNARY(matmul, mlx_matmul(o, x[0], x[1], s))
UNARY(matvec, mlx_matmul(o, x[0], x[1], s))
UNARY(addmm, mlx_addmm(o, x[0], x[1], x[2], 0.5f, 2.0f, s))
UNARY(view, mlx_view(o, x[0], MLX_INT32, s))
UNARY(to_fp8, mlx_to_fp8(o, x[0], s))
UNARY(hadamard, mlx_hadamard_transform(o, x[0], (mlx_optional_float){0.5f, true}, s))
UNARY(conv1d, mlx_conv1d(o, x[0], x[1], 1, 1, 1, 1, s))
UNARY(conv1d_groups, mlx_conv1d(o, x[0], x[1], 1, 0, 1, 2, s))
UNARY(random_bits, mlx_random_bits(o, (const int[]){2, 2}, 2, 4, x[0], s))
UNARY(random_normal, mlx_random_normal(o, (const int[]){4}, 1, MLX_FLOAT32, 0.0f, 1.0f, x[0], s))
UNARY(random_permutation, mlx_random_permutation(o, x[0], 0, x[1], s))
UNARY(rms_norm, mlx_fast_rms_norm(o, x[0], x[1], 1e-5f, s))
UNARY(layer_norm, mlx_fast_layer_norm(o, x[0], x[1], x[2], 1e-5f, s))
UNARY(rope, mlx_fast_rope(o, x[0], 4, false, (mlx_optional_float){10000.0f, true}, 1.0f, 1, (mlx_array){0}, s))
UNARY(sdpa,
      mlx_fast_scaled_dot_product_attention(o, x[0], x[1], x[2], 0.5f, "", (mlx_array){0}, (mlx_array){0}, s))

/* Attention with a mask that can be batched (v is k). */
UNARY(sdpa_mask, mlx_fast_scaled_dot_product_attention(o, x[0], x[1], x[1], 0.5f, "array", x[2], (mlx_array){0}, s))
/* RoPE at an offset that can be batched: one position, or one per entry. */
UNARY(rope_offset,
      mlx_fast_rope_dynamic(o, x[0], 4, true, (mlx_optional_float){10000.0f, true}, 1.0f, x[1], (mlx_array){0}, s))

static int f_gather(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array idx = vec_of(&x[1], 1);
    int rc = mlx_gather(o, x[0], idx, (const int[]){0}, 1, (const int[]){1, 4}, 2, s);
    mlx_vector_array_free(idx);
    return rc;
}

/* Two index arrays, so one can be batched and the other not. */
static int f_gather2(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array idx = vec_of(&x[1], 2);
    int rc = mlx_gather(o, x[0], idx, (const int[]){0, 2}, 2, (const int[]){1, 2, 1}, 3, s);
    mlx_vector_array_free(idx);
    return rc;
}

/* An embedding lookup: rows of a table at a matrix of token ids. */
UNARY(take_rows, mlx_take_axis(o, x[0], x[1], 0, s))
/* take at one index (0-d): the axis goes away. */
UNARY(take_scalar, mlx_take_axis(o, x[0], x[1], 1, s))

static int f_scatter_max2(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array idx = vec_of(&x[1], 1);
    int rc = mlx_scatter_max(o, x[0], idx, x[2], (const int[]){1}, 1, s);
    mlx_vector_array_free(idx);
    return rc;
}

static int f_scatter_add(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array idx = vec_of(&x[1], 1);
    int rc = mlx_scatter_add(o, x[0], idx, x[2], (const int[]){0}, 1, s);
    mlx_vector_array_free(idx);
    return rc;
}

static int f_concat(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array v = vec_of(x, 2);
    int rc = mlx_concatenate_axis(o, v, 1, s);
    mlx_vector_array_free(v);
    return rc;
}

/* Well-posed matrices for the factorizations: a @ a^T + 4 I. */
static int spd(mlx_array *o, mlx_array a, mlx_stream s)
{
    mlx_array t = mlx_array_new(), m = mlx_array_new(), eye = mlx_array_new(), four = mlx_array_new_float32(4.0f);
    int rc = mlx_transpose(&t, a, s) || mlx_matmul(&m, a, t, s) || mlx_eye(&eye, 4, 4, 0, MLX_FLOAT32, s) ||
             mlx_multiply(&t, eye, four, s) || mlx_add(o, m, t, s);
    TU_FREE(t, m, eye, four);
    return rc;
}

#define LINALG(name, call)                                              \
    static int f_##name(mlx_array *o, const mlx_array *x, mlx_stream s) \
    {                                                                   \
        mlx_array a = mlx_array_new();                                  \
        int rc = spd(&a, x[0], s) || (call);                            \
        mlx_array_free(a);                                              \
        return rc;                                                      \
    }

LINALG(inv, mlx_linalg_inv(o, a, s))
LINALG(cholesky, mlx_linalg_cholesky(o, a, false, s))
LINALG(eigvalsh, mlx_linalg_eigvalsh(o, a, "L", s))
LINALG(solve, mlx_linalg_solve(o, a, x[1], s))

static int f_eigvals(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array a = mlx_array_new(), e = mlx_array_new();
    int rc = spd(&a, x[0], s) || mlx_linalg_eigvals(&e, a, s) || mlx_abs(&a, e, s) || mlx_sort_axis(o, a, 0, s);
    TU_FREE(a, e);
    return rc;
}

static int f_svd(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array r = mlx_vector_array_new();
    int rc = mlx_linalg_svd(&r, x[0], false, s) || mlx_vector_array_get(o, r, 0);
    mlx_vector_array_free(r);
    return rc;
}

static int f_qr(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array r = mlx_array_new();
    int rc = mlx_linalg_qr(o, &r, x[0], s);
    mlx_array_free(r);
    return rc;
}

static int f_lu_factor(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array p = mlx_array_new();
    int rc = mlx_linalg_lu_factor(o, &p, x[0], s);
    mlx_array_free(p);
    return rc;
}

static int f_fft(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array c = mlx_array_new();
    int rc = mlx_fft_fft(&c, x[0], 4, 1, s) || mlx_abs(o, c, s);
    mlx_array_free(c);
    return rc;
}

static int f_quantize(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array q = mlx_vector_array_new();
    mlx_optional_int g = {32, true}, b = {4, true};
    mlx_array w = mlx_array_new(), sc = mlx_array_new(), bi = mlx_array_new();
    int rc = mlx_quantize(&q, x[0], g, b, "affine", (mlx_array){0}, s) || mlx_vector_array_get(&w, q, 0) ||
             mlx_vector_array_get(&sc, q, 1) || mlx_vector_array_get(&bi, q, 2) ||
             mlx_dequantize(o, w, sc, bi, g, b, "affine", (mlx_array){0}, (mlx_optional_dtype){0}, s);
    mlx_vector_array_free(q);
    TU_FREE(w, sc, bi);
    return rc;
}

static int f_quantized_matmul(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array q = mlx_vector_array_new();
    mlx_optional_int g = {32, true}, b = {4, true};
    mlx_array w = mlx_array_new(), sc = mlx_array_new(), bi = mlx_array_new();
    int rc = mlx_quantize(&q, x[1], g, b, "affine", (mlx_array){0}, s) || mlx_vector_array_get(&w, q, 0) ||
             mlx_vector_array_get(&sc, q, 1) || mlx_vector_array_get(&bi, q, 2) ||
             mlx_quantized_matmul(o, x[0], w, sc, bi, true, g, b, "affine", s);
    mlx_vector_array_free(q);
    TU_FREE(w, sc, bi);
    return rc;
}

/* custom_vjp of exp (its rule is never called here): the node's value. */
static int custom_exp(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = vec_get(in, 0), y = mlx_array_new();
    int rc = mlx_exp(&y, x, S()) || mlx_vector_array_set_value(res, y);
    TU_FREE(x, y);
    return rc;
}

static int custom_exp_vjp(mlx_vector_array *res, const mlx_vector_array p, const mlx_vector_array c,
                          const mlx_vector_array o)
{
    (void)p, (void)o;
    return mlx_vector_array_set(res, c);
}

static int f_custom(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    (void)s;
    mlx_closure fun = mlx_closure_new_func(custom_exp), cf = mlx_closure_new();
    mlx_closure_custom vjp = mlx_closure_custom_new_func(custom_exp_vjp);
    mlx_vector_array in = vec_of(x, 1), out = mlx_vector_array_new();
    int rc = mlx_custom_vjp(&cf, fun, vjp) || mlx_closure_apply(&out, cf, in) || mlx_vector_array_get(o, out, 0);
    mlx_closure_free(fun);
    mlx_closure_free(cf);
    mlx_closure_custom_free(vjp);
    mlx_vector_array_free(in);
    mlx_vector_array_free(out);
    return rc;
}

/* A compiled elementwise chain: compile fuses it into one node. */
static int chain(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = vec_get(in, 0), y = vec_get(in, 1), t = mlx_array_new(), u = mlx_array_new();
    int rc = mlx_multiply(&t, x, y, S()) || mlx_sin(&u, t, S()) || mlx_add(&t, u, x, S()) || mlx_exp(&u, t, S()) ||
             mlx_vector_array_set_value(res, u);
    TU_FREE(x, y, t, u);
    return rc;
}

static int f_fused(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    (void)s;
    mlx_closure c = mlx_closure_new_func(chain), cc = mlx_closure_new();
    mlx_vector_array in = vec_of(x, 2), out = mlx_vector_array_new();
    int rc = mlx_compile(&cc, c, false) || mlx_closure_apply(&out, cc, in) || mlx_vector_array_get(o, out, 0);
    mlx_closure_free(c);
    mlx_closure_free(cc);
    mlx_vector_array_free(in);
    mlx_vector_array_free(out);
    return rc;
}

/* The products and Depends, which MLX 0.31.1 does not vmap. */
static int f_gather_mm(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t zero[1] = {0};
    mlx_array li = tu_i32(zero, (const int[]){1}, 1), ri = tu_i32(zero, (const int[]){1}, 1);
    int rc = mlx_gather_mm(o, x[0], x[1], li, ri, false, s);
    TU_FREE(li, ri);
    return rc;
}

static int f_block_masked_mm(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const double one[1] = {1};
    mlx_array m = tu_array_of(MLX_BOOL, one, (const int[]){1, 1}, 2);
    int rc = mlx_block_masked_mm(o, x[0], x[1], 32, m, (mlx_array){0}, (mlx_array){0}, s);
    mlx_array_free(m);
    return rc;
}

static int f_segmented_mm(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t seg[4] = {0, 4, 4, 8};
    mlx_array g = tu_i32(seg, (const int[]){2, 2}, 2);
    int rc = mlx_segmented_mm(o, x[0], x[1], g, s);
    mlx_array_free(g);
    return rc;
}

static int f_depends(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    (void)s;
    mlx_vector_array in = mlx_vector_array_new_data(&x[0], 1), dep = mlx_vector_array_new_data(&x[1], 1),
                     r = mlx_vector_array_new();
    int rc = mlx_depends(&r, in, dep) || mlx_vector_array_get(o, r, 0);
    mlx_vector_array_free(in);
    mlx_vector_array_free(dep);
    mlx_vector_array_free(r);
    return rc;
}

static int f_qqmm(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_optional_int g = {32, true}, b = {8, true};
    return mlx_qqmm(o, x[0], x[1], (mlx_array){0}, g, b, "mxfp8", (mlx_array){0}, (mlx_array){0}, s);
}

#define R1(nd, ...)     \
    1, {nd},            \
    {                   \
        {               \
            __VA_ARGS__ \
        }               \
    }
#define NYI_VMAP "[Primitive::vmap] Not implemented for "

static const vcase cases[] = {
    {"exp", f_exp, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_UNARY, NULL, 0},
    {"gather_mm", f_gather_mm, 2, {3, 3}, {{1, 2, 3}, {1, 3, 2}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_GATHER_MM,
     NYI_VMAP "GatherMM.", 0},
    {"block_masked_mm", f_block_masked_mm, 2, {2, 2}, {{32, 16}, {16, 32}}, {IN_F, IN_F}, -1, 1, 0,
     MC_PRIM_BLOCK_MASKED_MM, NYI_VMAP "BlockMaskedMM.", 0},
    {"segmented_mm", f_segmented_mm, 2, {2, 2}, {{2, 8}, {8, 2}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_SEGMENTED_MM,
     NYI_VMAP "SegmentedMM.", 0},
    {"depends", f_depends, 2, {1, 1}, {{4}, {4}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_DEPENDS, NYI_VMAP "Depends.", 0},
    {"qqmm", f_qqmm, 2, {2, 2}, {{2, 32}, {4, 32}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_QQMATMUL, NYI_VMAP "QQMatmul.",
     0},
    {"add", f_add, 2, {2, 1}, {{2, 4}, {4}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_BINARY, NULL, 0},
    {"where", f_where, 3, {2, 2, 1}, {{2, 4}, {2, 4}, {4}}, {IN_B, IN_F, IN_F}, -1, 1, 0, MC_PRIM_WHERE, NULL, 0},
    {"astype", f_astype, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_ASTYPE, NULL, 0},
    {"copy", f_copy, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_COPY, NULL, 0},
    {"stop_gradient", f_stop_gradient, R1(1, 4), {IN_F}, -1, 1, 0, MC_PRIM_STOP_GRADIENT, NULL, 0},
    {"reshape", f_reshape, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_RESHAPE, NULL, 0},
    {"transpose", f_transpose, R1(3, 2, 4, 5), {IN_F}, -1, 1, 0, MC_PRIM_TRANSPOSE, NULL, 0},
    {"broadcast_to", f_broadcast, R1(2, 1, 4), {IN_F}, -1, 1, 0, MC_PRIM_BROADCAST, NULL, 0},
    {"expand_dims", f_expand_dims, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_EXPAND_DIMS, NULL, 0},
    {"squeeze", f_squeeze, R1(3, 2, 1, 4), {IN_F}, -1, 1, 0, MC_PRIM_SQUEEZE, NULL, 0},
    {"flatten", f_flatten, R1(3, 2, 4, 5), {IN_F}, -1, 1, 0, MC_PRIM_FLATTEN, NULL, 0},
    {"unflatten", f_unflatten, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_UNFLATTEN, NULL, 0},
    {"slice", f_slice, R1(2, 2, 5), {IN_F}, -1, 1, 0, MC_PRIM_SLICE, NULL, 0},
    {"as_strided", f_as_strided, R1(1, 4), {IN_F}, -1, 1, 0, MC_PRIM_AS_STRIDED, NYI_VMAP "AsStrided.", 0},
    {"diagonal", f_diagonal, R1(2, 4, 5), {IN_F}, -1, 1, 0, MC_PRIM_DIAGONAL, NULL, 0},
    {"contiguous", f_contiguous, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_CONTIGUOUS, NULL, 0},
    {"sum", f_sum, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_REDUCE, NULL, 0},
    {"argmax", f_argmax, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_ARGREDUCE, NULL, 0},
    {"cumsum", f_cumsum, R1(2, 4, 2), {IN_F}, -1, 1, 0, MC_PRIM_SCAN, NULL, 0},
    {"softmax", f_softmax, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_SOFTMAX, NULL, 0},
    {"logsumexp", f_logsumexp, R1(2, 4, 2), {IN_F}, -1, 1, 0, MC_PRIM_LOGSUMEXP, NULL, 0},
    {"sort", f_sort, R1(2, 4, 2), {IN_F}, -1, 1, 0, MC_PRIM_SORT, NULL, 0},
    {"argsort", f_argsort, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_ARGSORT, NULL, 0},
    {"partition", f_partition, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_PARTITION, NULL, 0},
    {"argpartition", f_argpartition, R1(2, 4, 2), {IN_F}, -1, 1, 0, MC_PRIM_ARGPARTITION, NULL, 0},
    {"concatenate", f_concat, 2, {2, 2}, {{2, 4}, {2, 1}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_CONCATENATE, NULL, 0},
    {"take", f_take, 2, {2, 2}, {{2, 4}, {2, 2}}, {IN_F, IN_I}, -1, 1, 4, MC_PRIM_GATHER_AXIS, NULL, 0},
    {"take_along_axis",
     f_take_along,
     2,
     {2, 2},
     {{4, 2}, {2, 2}},
     {IN_F, IN_I},
     -1,
     1,
     4,
     MC_PRIM_GATHER_AXIS,
     NULL,
     0},
    {"put_along_axis",
     f_put_along,
     3,
     {2, 2, 2},
     {{2, 4}, {2, 2}, {2, 2}},
     {IN_F, IN_I, IN_F},
     -1,
     1,
     4,
     MC_PRIM_SCATTER_AXIS,
     NULL,
     0},
    {"gather", f_gather, 2, {2, 1}, {{4, 4}, {2}}, {IN_F, IN_I}, -1, 1, 4, MC_PRIM_GATHER, NULL, 0},
    {"gather_two_indices", f_gather2, 3, {3, 2, 2}, {{4, 3, 5}, {2, 3}, {2, 3}}, {IN_F, IN_I, IN_I}, -1, 1, 5,
     MC_PRIM_GATHER, NULL, 0},
    {"take_rows", f_take_rows, 2, {2, 2}, {{6, 3}, {2, 4}}, {IN_F, IN_I}, -1, 1, 6, MC_PRIM_GATHER_AXIS, NULL, 0},
    {"take_scalar", f_take_scalar, 2, {3, 0}, {{2, 4, 3}, {0}}, {IN_F, IN_I}, -1, 1, 4, MC_PRIM_GATHER_AXIS, NULL,
     0},
    {"scatter_max",
     f_scatter_max2,
     3,
     {2, 2, 4},
     {{4, 3}, {2, 2}, {2, 2, 4, 1}},
     {IN_F, IN_I, IN_F},
     -1,
     1,
     3,
     MC_PRIM_SCATTER,
     NULL,
     0},
    {"scatter_add",
     f_scatter_add,
     3,
     {2, 1, 3},
     {{4, 2}, {5}, {5, 1, 2}},
     {IN_F, IN_I, IN_F},
     -1,
     1,
     4,
     MC_PRIM_SCATTER,
     NULL,
     0},
    {"slice_update",
     f_slice_update,
     2,
     {2, 2},
     {{4, 4}, {2, 4}},
     {IN_F, IN_F},
     -1,
     1,
     0,
     MC_PRIM_SLICE_UPDATE,
     NULL,
     0},
    {"pad", f_pad, 2, {1, 0}, {{4}, {0}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_PAD, NULL, 2},
    {"number_of_elements", f_numel, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_NUMBER_OF_ELEMENTS, NULL, 0},
    {"matmul", f_matmul, 2, {3, 2}, {{2, 2, 4}, {4, 5}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_MATMUL, NULL, 0},
    {"matmul_vector", f_matvec, 2, {1, 3}, {{4}, {2, 4, 5}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_MATMUL, NULL, 0},
    {"addmm", f_addmm, 3, {1, 2, 2}, {{5}, {2, 4}, {4, 5}}, {IN_F, IN_F, IN_F}, -1, 1, 0, MC_PRIM_ADDMM, NULL, 0},
    {"inv", f_inv, R1(2, 4, 4), {IN_F}, -1, 1, 0, MC_PRIM_INVERSE, NULL, 0},
    {"cholesky", f_cholesky, R1(2, 4, 4), {IN_F}, -1, 1, 0, MC_PRIM_CHOLESKY, NULL, 0},
    {"qr", f_qr, R1(2, 4, 4), {IN_F}, -1, 1, 0, MC_PRIM_QRF, NYI_VMAP "QRF.", 0},
    {"svd", f_svd, R1(2, 4, 2), {IN_F}, -1, 1, 0, MC_PRIM_SVD, NULL, 0},
    {"eigvals", f_eigvals, R1(2, 4, 4), {IN_F}, -1, 1, 0, MC_PRIM_EIG, NULL, 0},
    {"eigvalsh", f_eigvalsh, R1(2, 4, 4), {IN_F}, -1, 1, 0, MC_PRIM_EIGH, NULL, 0},
    {"lu_factor", f_lu_factor, R1(2, 4, 4), {IN_F}, -1, 1, 0, MC_PRIM_LUF, NYI_VMAP "LUF.", 0},
    {"solve", f_solve, 2, {2, 2}, {{4, 4}, {4, 2}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_SOLVE, NYI_VMAP "LUF.", 0},
    {"conv1d", f_conv1d, 2, {3, 3}, {{2, 5, 4}, {2, 3, 4}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_CONVOLUTION, NULL, 0},
    {"conv1d_groups",
     f_conv1d_groups,
     2,
     {3, 3},
     {{1, 5, 4}, {4, 3, 2}},
     {IN_F, IN_F},
     -1,
     1,
     0,
     MC_PRIM_CONVOLUTION,
     NULL,
     0},
    {"view", f_view, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_VIEW, NULL, 0},
    {"to_fp8", f_to_fp8, R1(1, 4), {IN_F}, -1, 1, 0, MC_PRIM_CONVERT_FP8, NYI_VMAP "ToFP8.", 0},
    {"hadamard", f_hadamard, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_HADAMARD, NULL, 0},
    {"quantize", f_quantize, R1(2, 2, 32), {IN_F}, -1, 1, 0, MC_PRIM_QUANTIZE, NULL, 0},
    {"dequantize", f_quantize, R1(2, 2, 32), {IN_F}, -1, 1, 0, MC_PRIM_DEQUANTIZE, NULL, 0},
    {"quantized_matmul",
     f_quantized_matmul,
     2,
     {2, 2},
     {{2, 32}, {4, 32}},
     {IN_F, IN_F},
     -1,
     1,
     0,
     MC_PRIM_QUANTIZED_MATMUL,
     "[QuantizedMatmul::vmap] NYI",
     2},
    {"random_bits", f_random_bits, R1(1, 2), {IN_KEY}, 0, 0, 0, MC_PRIM_RANDOM_BITS, NULL, 0},
    {"random_normal", f_random_normal, R1(1, 2), {IN_KEY}, 0, 0, 0, MC_PRIM_RANDOM_DIST, NULL, 0},
    {"random_permutation",
     f_random_permutation,
     2,
     {1, 1},
     {{5}, {2}},
     {IN_F, IN_KEY},
     -1,
     1,
     0,
     MC_PRIM_RANDOM_PERMUTATION,
     NULL,
     0},
    {"fft", f_fft, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_FFT, NULL, 0},
    {"rms_norm", f_rms_norm, 2, {2, 1}, {{2, 4}, {4}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_RMS_NORM, NULL, 0},
    {"layer_norm",
     f_layer_norm,
     3,
     {2, 1, 1},
     {{2, 4}, {4}, {4}},
     {IN_F, IN_F, IN_F},
     -1,
     1,
     0,
     MC_PRIM_LAYER_NORM,
     NULL,
     0},
    {"rope", f_rope, R1(3, 2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_ROPE, NULL, 0},
    {"sdpa",
     f_sdpa,
     3,
     {4, 4, 4},
     {{1, 2, 2, 4}, {1, 2, 4, 4}, {1, 2, 4, 4}},
     {IN_F, IN_F, IN_F},
     -1,
     1,
     0,
     MC_PRIM_SDPA,
     NULL,
     0},
    {"sdpa_mask",
     f_sdpa_mask,
     3,
     {4, 4, 4},
     {{1, 2, 2, 4}, {1, 2, 3, 4}, {1, 2, 2, 3}},
     {IN_F, IN_F, IN_F},
     -1,
     1,
     0,
     MC_PRIM_SDPA,
     NULL,
     0},
    {"rope_offset", f_rope_offset, 2, {3, 0}, {{2, 3, 4}, {0}}, {IN_F, IN_I}, -1, 1, 5, MC_PRIM_ROPE, NULL, 0},
    {"rope_offsets", f_rope_offset, 2, {3, 1}, {{2, 3, 4}, {2}}, {IN_F, IN_I}, -1, 1, 5, MC_PRIM_ROPE, NULL, 0},
    {"custom_vjp", f_custom, R1(2, 2, 4), {IN_F}, -1, 1, 0, MC_PRIM_CUSTOM, NULL, 0},
    {"compiled_chain", f_fused, 2, {2, 1}, {{2, 4}, {4}}, {IN_F, IN_F}, -1, 1, 0, MC_PRIM_FUSED, NULL, 0},
};

/* Primitives no function reaches through vmap: no inputs (traced inputs,
 * arange, recv), or communication between processes (the mpi suite runs
 * those; a single process has none to talk to). */
static bool unreachable(int id) { return mc_prims[id]->arity == 0 || mc_prims[id]->communicates; }

/* A deterministic generator, so a failure reproduces. */
static uint64_t rng_state;
static double next_unit(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Input i of row c, batched on axis ax (-1: not batched). */
static mlx_array make_input(const vcase *c, int i, int ax)
{
    int shape[5], nd = c->ndim[i], k = 0;
    for (int d = 0; d <= nd; d++) {
        if (d == ax)
            shape[d] = BATCH;
        else if (k < nd)
            shape[d] = c->shape[i][k++];
    }
    if (ax >= 0)
        nd++;
    size_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= (size_t)shape[d];
    double vals[2048];
    assert_true(n <= 2048);
    for (size_t j = 0; j < n; j++) {
        double u = next_unit();
        switch (c->kind[i]) {
        case IN_F: vals[j] = c->lo + (c->hi - c->lo) * u; break;
        case IN_I: vals[j] = floor(u * c->ilim); break;
        case IN_B: vals[j] = u < 0.5; break;
        case IN_KEY: vals[j] = floor(u * 4294967295.0); break;
        }
    }
    mlx_dtype dt = c->kind[i] == IN_F   ? MLX_FLOAT32
                   : c->kind[i] == IN_I ? MLX_INT32
                   : c->kind[i] == IN_B ? MLX_BOOL
                                        : MLX_UINT32;
    return tu_array_of(dt, vals, shape, nd);
}

static int run_case(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    const vcase *c = payload;
    mlx_array x[MAX_IN] = {{0}}, o = mlx_array_new();
    for (int i = 0; i < c->nin; i++)
        x[i] = vec_get(in, (size_t)i);
    int rc = c->f(&o, x, S()) || mlx_vector_array_set_value(res, o);
    for (int i = 0; i < c->nin; i++)
        mlx_array_free(x[i]);
    mlx_array_free(o);
    return rc;
}

/* Marks in seen[] every primitive of the graph below a (iteratively). */
static void mark_prims(mlx_array a, bool *seen)
{
    mc_array *stack[4096];
    int top = 0;
    stack[top++] = a.ctx;
    while (top) {
        mc_array *n = stack[--top];
        if (n->prim > MC_PRIM_NONE && n->prim < MC_PRIM_COUNT)
            seen[n->prim] = true;
        for (int i = 0; i < n->n_inputs && top < 4096; i++)
            stack[top++] = n->inputs[i];
    }
}

/* The number of distinct nodes of primitive prim in the graph below a. */
static int count_prim(mlx_array a, int prim)
{
    enum { CAP = 4096 };
    static mc_array *stack[CAP], *seen[CAP];
    int top = 0, nseen = 0, count = 0;
    stack[top++] = a.ctx;
    while (top) {
        mc_array *n = stack[--top];
        bool dup = false;
        for (int i = 0; i < nseen && !dup; i++)
            dup = seen[i] == n;
        if (dup)
            continue;
        assert_true(nseen < CAP);
        seen[nseen++] = n;
        count += n->prim == prim;
        for (int i = 0; i < n->n_inputs && top < CAP; i++)
            stack[top++] = n->inputs[i];
    }
    return count;
}

/* The primitives whose batched form once ran the primitive per batch
 * element and now has a rule of its own: the batched graph of their rows
 * holds as many nodes of the primitive as the traced one, whatever the
 * batch (other rows' rules may build more, e.g. Transpose moving the
 * batch). */
static bool one_node(int prim)
{
    static const int ids[] = {
        MC_PRIM_GATHER,
        MC_PRIM_GATHER_AXIS,
        MC_PRIM_SCATTER,
        MC_PRIM_SCATTER_AXIS, MC_PRIM_ADDMM, MC_PRIM_RMS_NORM, MC_PRIM_LAYER_NORM, MC_PRIM_ROPE,
        MC_PRIM_SDPA, MC_PRIM_QUANTIZE, MC_PRIM_DEQUANTIZE, MC_PRIM_CONVOLUTION,
        MC_PRIM_FUSED,
        MC_PRIM_RANDOM_BITS, MC_PRIM_RANDOM_DIST, MC_PRIM_RANDOM_PERMUTATION,
    };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i] == prim)
            return true;
    return false;
}

/* vmap(f) with these axes against f on each element, stacked on out_axis. */
static void check_axes(const vcase *c, mlx_closure f, const int *axes, int out_axis, bool *seen)
{
    mlx_array in[MAX_IN];
    for (int i = 0; i < c->nin; i++)
        in[i] = make_input(c, i, axes[i]);
    mlx_vector_array args = vec_of(in, (size_t)c->nin), outs = mlx_vector_array_new();
    mlx_vector_array s_in = mlx_vector_array_new(), s_out = mlx_vector_array_new();
    assert_int_equal(mlx_detail_vmap_trace(&s_in, &s_out, f, args, axes, (size_t)c->nin), 0);
    mlx_array traced = vec_get(s_out, 0);
    mark_prims(traced, seen);
    int traced_nodes = count_prim(traced, c->prim);
    mlx_array_free(traced);
    int rc = mlx_detail_vmap_replace(&outs, args, s_in, s_out, axes, (size_t)c->nin, &out_axis, 1);
    if (c->mlx_error) {
        if (rc == 0)
            fail_msg("%s: vmap succeeded where MLX reports \"%s\"", c->name, c->mlx_error);
        if (strcmp(tu_last_error(), c->mlx_error) != 0)
            fail_msg("%s: reported \"%s\", MLX reports \"%s\"", c->name, tu_last_error(), c->mlx_error);
        tu_expect_error(c->mlx_error);
    } else {
        if (rc)
            fail_msg("%s: vmap failed: %s", c->name, tu_last_error());
        mlx_array got = vec_get(outs, 0);
        int nodes = count_prim(got, c->prim);
        if (one_node(c->prim) && nodes > traced_nodes)
            fail_msg("%s: the batched graph holds %d %s nodes, the traced one %d", c->name, nodes,
                     mc_prims[c->prim]->name, traced_nodes);
        /* the expected value: f on each element, stacked */
        mlx_vector_array parts = mlx_vector_array_new();
        for (int b = 0; b < BATCH; b++) {
            mlx_array el[MAX_IN], y = mlx_array_new(), idx = mlx_array_new_int(b);
            for (int i = 0; i < c->nin; i++) {
                el[i] = mlx_array_new();
                if (axes[i] < 0)
                    assert_int_equal(mlx_array_set(&el[i], in[i]), 0);
                else
                    assert_int_equal(mlx_take_axis(&el[i], in[i], idx, axes[i], S()), 0);
            }
            assert_int_equal(c->f(&y, el, S()), 0);
            assert_int_equal(mlx_vector_array_append_value(parts, y), 0);
            tu_free_n(el, (size_t)c->nin);
            TU_FREE(y, idx);
        }
        int nd = (int)mlx_array_ndim(got);
        mlx_array want = mlx_array_new();
        assert_int_equal(mlx_stack_axis(&want, parts, out_axis < 0 ? out_axis + nd : out_axis, S()), 0);
        char what[128];
        snprintf(what, sizeof what, "%s, in_axes (%d, %d, %d), out_axis %d", c->name, axes[0],
                 c->nin > 1 ? axes[1] : 9, c->nin > 2 ? axes[2] : 9, out_axis);
        expect_same(got, want, 1e-4, what);
        tu_expect_no_error();
        mlx_vector_array_free(parts);
        TU_FREE(got, want);
    }
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(s_in);
    mlx_vector_array_free(s_out);
    tu_free_n(in, (size_t)c->nin);
}

/* A batched pad value (the table's pad row never batches it): the
 * elements stacked, from two Pad nodes (the input's and the border mask's)
 * whatever the batch, where the per-element rule built one per element. */
static void test_pad_with_a_batched_value_equals_its_elements_in_two_pad_nodes(void **state)
{
    (void)state;
    vcase c;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (strcmp(cases[k].name, "pad") == 0)
            c = cases[k];
    c.no_batch = 0;
    bool seen[MC_PRIM_COUNT] = {0};
    mlx_closure f = mlx_closure_new_func_payload(run_case, &c, NULL);
    static const int mixes[][2] = {{0, 0}, {-1, 0}, {1, 0}};
    for (int m = 0; m < 3; m++)
        check_axes(&c, f, mixes[m], m == 2 ? 1 : 0, seen);
    mlx_array in[2] = {make_input(&c, 0, 0), make_input(&c, 1, 0)};
    mlx_array y = vmap1(f, in, 2, (const int[]){0, 0}, 0);
    assert_int_equal(count_prim(y, MC_PRIM_PAD), 2);
    tu_free_n(in, 2);
    mlx_array_free(y);
    mlx_closure_free(f);
}

static void test_every_primitive_vmaps_as_its_elements_stacked(void **state)
{
    (void)state;
    bool seen[MC_PRIM_COUNT] = {0}, has_row[MC_PRIM_COUNT] = {0};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const vcase *c = &cases[k];
        rng_state = 0x9e3779b97f4a7c15ULL + k;
        has_row[c->prim] = true;
        mlx_closure f = mlx_closure_new_func_payload(run_case, (void *)c, NULL);
        int axes[MAX_IN];
        /* every input batched on its first axis, then on its last */
        for (int i = 0; i < c->nin; i++)
            axes[i] = c->no_batch >> i & 1 ? -1 : 0;
        check_axes(c, f, axes, 0, seen);
        if (c->mlx_error) {
            mlx_closure_free(f);
            continue;
        }
        for (int i = 0; i < c->nin; i++)
            axes[i] = c->no_batch >> i & 1 ? -1 : c->ndim[i];
        check_axes(c, f, axes, -1, seen);
        /* mixes: only the first input batched (on axis 1 where it has
         * one), then every input but the first */
        if (c->nin > 1) {
            for (int i = 0; i < c->nin; i++)
                axes[i] = i == 0 ? (c->ndim[0] > 0 ? 1 : 0) : -1;
            check_axes(c, f, axes, 0, seen);
            bool any = false;
            for (int i = 0; i < c->nin; i++) {
                axes[i] = i == 0 || (c->no_batch >> i & 1) ? -1 : 0;
                any |= axes[i] == 0;
            }
            if (any)
                check_axes(c, f, axes, 1, seen);
        }
        mlx_closure_free(f);
    }
    for (int id = MC_PRIM_NONE + 1; id < MC_PRIM_COUNT; id++) {
        if (unreachable(id))
            continue;
        if (!has_row[id])
            fail_msg("%s has no row in the vmap table", mc_prims[id]->name);
        if (!seen[id])
            fail_msg("the vmap table's row for %s does not build a %s node", mc_prims[id]->name,
                     mc_prims[id]->name);
    }
}

/* in_axes the table's mixes do not reach: each operand of the gathers and
 * scatters batched alone, or some index arrays batched and others not;
 * batched weights, biases, masks and offsets alone or with their input. */
static void test_batched_indices_and_operands_each_alone(void **state)
{
    (void)state;
    static const struct {
        const char *row;
        int axes[MAX_IN];
        int out_axis;
    } mixes[] = {
        {"gather_two_indices", {-1, 0, -1}, 0},  {"gather_two_indices", {2, -1, 1}, 1},
        {"gather_two_indices", {-1, 1, 0}, -1},  {"take_rows", {-1, 1}, 0},
        {"take_rows", {2, 1}, 2},                {"take_scalar", {-1, 0}, 0},
        {"take_scalar", {3, 0}, 1},              {"take_along_axis", {-1, 1}, 0},
        {"put_along_axis", {-1, 0, -1}, 0},      {"put_along_axis", {-1, -1, 1}, 2},
        {"scatter_max", {-1, 0, -1}, 0},         {"scatter_max", {-1, -1, 2}, 1},
        {"scatter_max", {1, -1, -1}, 0},         {"scatter_max", {2, 1, 4}, -1},
        {"scatter_add", {-1, 0, -1}, 0},         {"gather", {1, -1}, 1},
        {"addmm", {-1, -1, 0}, 0},               {"addmm", {-1, 2, 0}, 1},
        {"addmm", {1, -1, -1}, -1},              {"rms_norm", {-1, 1}, 0},
        {"rms_norm", {1, 0}, 1},                 {"layer_norm", {-1, -1, 0}, 0},
        {"layer_norm", {2, 1, -1}, -1},          {"layer_norm", {0, -1, 0}, 1},
        {"sdpa_mask", {-1, -1, 0}, 0},           {"sdpa_mask", {2, -1, 4}, 1},
        {"sdpa_mask", {-1, 3, -1}, 0},           {"rope_offset", {-1, 0}, 0},
        {"rope_offset", {3, 0}, 2},              {"rope_offsets", {-1, 1}, 0},
        {"rope_offsets", {2, 0}, 1},             {"rope", {3}, -1},
        {"quantize", {2}, 0},                    {"dequantize", {1}, 1},
        {"conv1d", {2, -1}, 1},                  {"conv1d", {-1, 3}, -1},
        {"conv1d", {1, 2}, 0},                   {"conv1d_groups", {-1, 3}, 0},
        {"conv1d_groups", {3, 1}, 2},            {"compiled_chain", {-1, 0}, 0},
        {"compiled_chain", {2, 1}, 1},
    };
    bool seen[MC_PRIM_COUNT] = {0};
    for (size_t m = 0; m < sizeof mixes / sizeof mixes[0]; m++) {
        const vcase *c = NULL;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0] && !c; k++)
            if (strcmp(cases[k].name, mixes[m].row) == 0)
                c = &cases[k];
        assert_non_null(c);
        rng_state = 0x2545f4914f6cdd1dULL + m;
        mlx_closure f = mlx_closure_new_func_payload(run_case, (void *)c, NULL);
        check_axes(c, f, mixes[m].axes, mixes[m].out_axis, seen);
        mlx_closure_free(f);
    }
}

/* ---- MLX's test_vmap.py ---- */

static mlx_array arange_f(int n, const int *shape, int ndim, mlx_dtype dt)
{
    mlx_array a = mlx_array_new(), r = mlx_array_new();
    assert_int_equal(mlx_arange(&a, 0, n, 1, dt, S()), 0);
    assert_int_equal(mlx_reshape(&r, a, shape, (size_t)ndim, S()), 0);
    mlx_array_free(a);
    return r;
}

typedef int (*op1)(mlx_array *, const mlx_array, const mlx_stream);
typedef int (*op2)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);

static int apply_op1(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_array x = vec_get(in, 0), y = mlx_array_new();
    int rc = ((op1)payload)(&y, x, S()) || mlx_vector_array_set_value(res, y);
    TU_FREE(x, y);
    return rc;
}

static int apply_op2(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mlx_array x = vec_get(in, 0), y = vec_get(in, 1), z = mlx_array_new();
    int rc = ((op2)payload)(&z, x, y, S()) || mlx_vector_array_set_value(res, z);
    TU_FREE(x, y, z);
    return rc;
}

static void test_mlx_basics_errors(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func_payload(apply_op1, (void *)mlx_exp, NULL);
    mlx_array one = mlx_array_new_float32(1.0f), x = arange_f(2, (const int[]){2}, 1, MLX_FLOAT32);
    mlx_vector_array a = vec_of(&one, 1), b = vec_of(&x, 1), outs = mlx_vector_array_new();
    int zero = 0, two = 2;
    assert_int_not_equal(vmap_apply(&outs, f, a, &zero, 1, &zero, 1), 0);
    tu_expect_error("[vmap] Cannot vmap an input with zero dimensions.");
    assert_int_not_equal(vmap_apply(&outs, f, b, &two, 1, &zero, 1), 0);
    tu_expect_error("[vmap] Axis 2 invalid for input with 1 dimensions.");
    assert_int_not_equal(vmap_apply(&outs, f, b, &zero, 1, &two, 1), 0);
    tu_expect_error("[vmap] Axis 2 invalid for output with 1 dimensions.");
    assert_int_equal(mlx_vector_array_size(outs), 0);
    mlx_closure_free(f);
    mlx_vector_array_free(a);
    mlx_vector_array_free(b);
    mlx_vector_array_free(outs);
    TU_FREE(one, x);
}

static void test_mlx_unary_ops(void **state)
{
    (void)state;
    static const op1 ops[] = {mlx_abs,      mlx_cos,        mlx_erf,    mlx_erfinv,  mlx_exp,
                              mlx_log,      mlx_log1p,      mlx_log2,   mlx_log10,   mlx_logical_not,
                              mlx_negative, mlx_reciprocal, mlx_rsqrt,  mlx_sigmoid, mlx_sign,
                              mlx_sin,      mlx_sqrt,       mlx_square, mlx_degrees, mlx_radians};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        mlx_closure f = mlx_closure_new_func_payload(apply_op1, (void *)ops[k], NULL);
        mlx_array x1 = arange_f(5, (const int[]){5}, 1, MLX_INT32),
                  x2 = arange_f(8, (const int[]){2, 4}, 2, MLX_INT32);
        mlx_array w1 = mlx_array_new(), w2 = mlx_array_new();
        assert_int_equal(ops[k](&w1, x1, S()), 0);
        assert_int_equal(ops[k](&w2, x2, S()), 0);
        int zero = 0, one = 1;
        mlx_array y = vmap1(f, &x1, 1, &zero, 0);
        expect_same(y, w1, 0, "unary over (5,)");
        mlx_array_free(y);
        y = vmap1(f, &x2, 1, &zero, 0);
        expect_same(y, w2, 0, "unary over (2, 4)");
        mlx_array_free(y);
        y = vmap1(f, &x2, 1, &one, 1);
        expect_same(y, w2, 0, "unary, in_axes 1, out_axes 1");
        TU_FREE(y, x1, x2, w1, w2);
        mlx_closure_free(f);
    }
}

static mlx_array uniform(const int *shape, int ndim, uint64_t seed)
{
    mlx_array k = mlx_array_new(), r = mlx_array_new();
    mlx_array lo = mlx_array_new_float32(0), hi = mlx_array_new_float32(1);
    assert_int_equal(mlx_random_key(&k, seed), 0);
    assert_int_equal(mlx_random_uniform(&r, lo, hi, shape, (size_t)ndim, MLX_FLOAT32, k, S()), 0);
    TU_FREE(k, lo, hi);
    return r;
}

static void test_mlx_binary_ops(void **state)
{
    (void)state;
    static const op2 ops[] = {mlx_add,      mlx_divide,     mlx_equal,     mlx_greater,    mlx_greater_equal,
                              mlx_less,     mlx_less_equal, mlx_logaddexp, mlx_maximum,    mlx_minimum,
                              mlx_multiply, mlx_power,      mlx_subtract,  mlx_logical_or, mlx_logical_and};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        mlx_closure f = mlx_closure_new_func_payload(apply_op2, (void *)ops[k], NULL);
        mlx_array x = uniform((const int[]){2, 4}, 2, 1), y = uniform((const int[]){2, 4}, 2, 2);
        mlx_array yt = uniform((const int[]){4, 2}, 2, 3), t = mlx_array_new(), w = mlx_array_new();
        mlx_array xy[2] = {x, y}, xyt[2] = {x, yt};
        assert_int_equal(ops[k](&w, x, y, S()), 0);
        mlx_array o = vmap1(f, xy, 2, (const int[]){0, 0}, 0);
        expect_same(o, w, 0, "binary (0, 0)");
        mlx_array_free(o);
        assert_int_equal(mlx_transpose(&t, yt, S()), 0);
        assert_int_equal(ops[k](&w, x, t, S()), 0);
        o = vmap1(f, xyt, 2, (const int[]){0, 1}, 0);
        expect_same(o, w, 0, "binary (0, 1)");
        mlx_array_free(o);
        assert_int_equal(mlx_transpose(&t, w, S()), 0);
        o = vmap1(f, xyt, 2, (const int[]){0, 1}, 1);
        expect_same(o, t, 0, "binary (0, 1), out_axes 1");
        TU_FREE(o, x, y, yt, t, w);
        mlx_closure_free(f);
    }
}

/* (a + b0) * b1: MLX's tree case, flattened to three inputs. */
static int tree_fun(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array a = vec_get(in, 0), b0 = vec_get(in, 1), b1 = vec_get(in, 2), t = mlx_array_new();
    int rc = mlx_add(&t, a, b0, S()) || mlx_multiply(&t, t, b1, S()) || mlx_vector_array_set_value(res, t);
    TU_FREE(a, b0, b1, t);
    return rc;
}

/* {"a": x + y, "b": x * y} */
static int two_outputs(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = vec_get(in, 0), y = vec_get(in, 1), s = mlx_array_new(), p = mlx_array_new();
    mlx_array both[2] = {s, p};
    int rc = mlx_add(&both[0], x, y, S()) || mlx_multiply(&both[1], x, y, S());
    mlx_vector_array v = mlx_vector_array_new_data(both, 2);
    rc = rc || mlx_vector_array_set(res, v);
    mlx_vector_array_free(v);
    tu_free_n(both, 2);
    TU_FREE(x, y);
    return rc;
}

static void test_mlx_tree(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(tree_fun);
    mlx_array in[3] = {uniform((const int[]){2, 4}, 2, 4), uniform((const int[]){4, 2}, 2, 5),
                       uniform((const int[]){4, 2}, 2, 6)};
    mlx_array t0 = mlx_array_new(), t1 = mlx_array_new(), w = mlx_array_new();
    assert_int_equal(mlx_transpose(&t0, in[1], S()) || mlx_transpose(&t1, in[2], S()), 0);
    assert_int_equal(mlx_add(&w, in[0], t0, S()) || mlx_multiply(&w, w, t1, S()), 0);
    mlx_array o = vmap1(f, in, 3, (const int[]){0, 1, 1}, 0);
    expect_same(o, w, 0, "(a + b0.T) * b1.T");
    TU_FREE(o, t0, t1, w);
    w = mlx_array_new();
    tu_free_n(in, 3);
    mlx_closure_free(f);

    /* two outputs, with out_axes (1, 0) */
    f = mlx_closure_new_func(two_outputs);
    mlx_array xy[2] = {uniform((const int[]){2, 4}, 2, 7), uniform((const int[]){2, 4}, 2, 8)};
    mlx_vector_array args = vec_of(xy, 2), outs = mlx_vector_array_new();
    assert_int_not_equal(vmap_apply(&outs, f, args, (const int[]){0, 0}, 2, (const int[]){0}, 1), 0);
    tu_expect_error("[vmap] The number of out axes (1) must match the number of outputs (2).");
    assert_int_equal(vmap_apply(&outs, f, args, (const int[]){0, 0}, 2, (const int[]){1, 0}, 2), 0);
    mlx_array a = vec_get(outs, 0), b = vec_get(outs, 1), s = mlx_array_new(), p = mlx_array_new();
    assert_int_equal(mlx_add(&s, xy[0], xy[1], S()) || mlx_multiply(&p, xy[0], xy[1], S()), 0);
    assert_int_equal(mlx_transpose(&w, s, S()), 0);
    expect_same(a, w, 0, "out a, out axis 1");
    expect_same(b, p, 0, "out b, out axis 0");
    TU_FREE(a, b, s, p, w);
    tu_free_n(xy, 2);
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    mlx_closure_free(f);
}

/* x[y]: take along axis 0. */
static int index1(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_take_axis(o, x[0], x[1], 0, s); }

/* x[y, z]: a gather on axes 0 and 1, the two indexed axes dropped. */
static int index2(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array idx[2] = {x[1], x[2]}, g = mlx_array_new();
    mlx_vector_array v = vec_of(idx, 2);
    int nd = (int)mlx_array_ndim(x[0]), sizes[8], shape[8], k = 0;
    for (int d = 0; d < nd; d++)
        sizes[d] = d < 2 ? 1 : mlx_array_shape(x[0])[d];
    for (int d = 0; d < (int)mlx_array_ndim(x[1]); d++)
        shape[k++] = mlx_array_shape(x[1])[d];
    for (int d = 2; d < nd; d++)
        shape[k++] = sizes[d];
    int rc = mlx_gather(&g, x[0], v, (const int[]){0, 1}, 2, sizes, (size_t)nd, s) ||
             mlx_reshape(o, g, shape, (size_t)k, s);
    mlx_vector_array_free(v);
    mlx_array_free(g);
    return rc;
}

static int run_fn(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    case_fn f = (case_fn)payload;
    mlx_array x[MAX_IN] = {{0}}, o = mlx_array_new();
    size_t n = mlx_vector_array_size(in);
    for (size_t i = 0; i < n; i++)
        x[i] = vec_get(in, i);
    int rc = f(&o, x, S()) || mlx_vector_array_set_value(res, o);
    tu_free_n(x, n);
    mlx_array_free(o);
    return rc;
}

static void test_mlx_indexing(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func_payload(run_fn, (void *)index1, NULL);
    mlx_array x = arange_f(16, (const int[]){2, 2, 2, 2}, 4, MLX_INT32);
    mlx_array inds = tu_i32((const int32_t[]){0, 1, 0, 1, 1, 0}, (const int[]){2, 3}, 2);
    mlx_array in[3] = {x, inds};
    mlx_array o = vmap1(f, in, 2, (const int[]){0, 0}, 0);
    expect_values(
        o, (const double[]){0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 12, 13, 14, 15, 8, 9, 10, 11},
        (const int[]){2, 3, 2, 2}, 4, "x[y], (0, 0)");
    mlx_array_free(o);
    o = vmap1(f, in, 2, (const int[]){0, -1}, 0);
    expect_values(o, (const double[]){0, 1, 2,  3,  4,  5,  6,  7,  0,  1,  2,  3,  4,  5,  6,  7,
                                      4, 5, 6,  7,  0,  1,  2,  3,  8,  9,  10, 11, 12, 13, 14, 15,
                                      8, 9, 10, 11, 12, 13, 14, 15, 12, 13, 14, 15, 8,  9,  10, 11},
                  (const int[]){2, 2, 3, 2, 2}, 5, "x[y], (0, None)");
    mlx_array_free(o);
    o = vmap1(f, in, 2, (const int[]){-1, 0}, 0);
    expect_values(o, (const double[]){0, 1, 2,  3,  4,  5,  6,  7,  8, 9, 10, 11, 12, 13, 14, 15,
                                      0, 1, 2,  3,  4,  5,  6,  7,  8, 9, 10, 11, 12, 13, 14, 15,
                                      8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2,  3,  4,  5,  6,  7},
                  (const int[]){2, 3, 2, 2, 2}, 5, "x[y], (None, 0)");
    mlx_array_free(o);
    mlx_closure_free(f);

    f = mlx_closure_new_func_payload(run_fn, (void *)index2, NULL);
    in[2] = tu_i32((const int32_t[]){0, 1, 0, 0, 1, 0}, (const int[]){2, 3}, 2);
    o = vmap1(f, in, 3, (const int[]){-1, 0, 0}, 0);
    expect_values(
        o, (const double[]){0, 1, 2, 3, 12, 13, 14, 15, 0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3},
        (const int[]){2, 3, 2, 2}, 4, "x[y, z], (None, 0, 0)");
    TU_FREE(o, x, inds, in[2]);
    mlx_closure_free(f);
}

static int sum_all(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_sum(o, x[0], false, s); }
static int sum_keep(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_sum(o, x[0], true, s); }
static int sum_0(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_sum_axis(o, x[0], 0, false, s); }
static int sum_01(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_sum_axes(o, x[0], (const int[]){0, 1}, 2, false, s);
}
static int argmin_all(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_argmin(o, x[0], false, s); }
static int argmax_all(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_argmax(o, x[0], false, s); }
static int mean_all(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_mean(o, x[0], false, s); }

static mlx_array vmap_fn(case_fn fn, const mlx_array *in, size_t n, const int *in_axes, int out_axis)
{
    mlx_closure f = mlx_closure_new_func_payload(run_fn, (void *)fn, NULL);
    mlx_array r = vmap1(f, in, n, in_axes, out_axis);
    mlx_closure_free(f);
    return r;
}

static mlx_array ones(const int *shape, int ndim, mlx_dtype dt)
{
    mlx_array r = mlx_array_new();
    assert_int_equal(mlx_ones(&r, shape, (size_t)ndim, dt, S()), 0);
    return r;
}

static void test_mlx_reduce_argreduce_mean(void **state)
{
    (void)state;
    mlx_array a = ones((const int[]){5, 5}, 2, MLX_INT32), o;
    const double fives[5] = {5, 5, 5, 5, 5};
    o = vmap_fn(sum_all, &a, 1, (const int[]){0}, 0);
    expect_values(o, fives, (const int[]){5}, 1, "sum");
    mlx_array_free(o);
    o = vmap_fn(sum_keep, &a, 1, (const int[]){0}, 0);
    expect_values(o, fives, (const int[]){5, 1}, 2, "sum keepdims");
    mlx_array_free(o);
    o = vmap_fn(sum_0, &a, 1, (const int[]){0}, 0);
    expect_values(o, fives, (const int[]){5}, 1, "sum axis 0");
    TU_FREE(o, a);
    a = ones((const int[]){5, 3, 2}, 3, MLX_INT32);
    o = vmap_fn(sum_01, &a, 1, (const int[]){0}, 0);
    expect_values(o, (const double[]){6, 6, 6, 6, 6}, (const int[]){5}, 1, "sum (0, 1)");
    mlx_array_free(o);
    o = vmap_fn(sum_01, &a, 1, (const int[]){1}, 0);
    expect_values(o, (const double[]){10, 10, 10}, (const int[]){3}, 1, "sum (0, 1), in_axes 1");
    mlx_array_free(o);
    o = vmap_fn(sum_01, &a, 1, (const int[]){2}, 0);
    expect_values(o, (const double[]){15, 15}, (const int[]){2}, 1, "sum (0, 1), in_axes 2");
    TU_FREE(o, a);

    a = tu_i32((const int32_t[]){1, 2, 3, 2, 3, 1}, (const int[]){2, 3}, 2);
    o = vmap_fn(argmin_all, &a, 1, (const int[]){0}, 0);
    expect_values(o, (const double[]){0, 2}, (const int[]){2}, 1, "argmin");
    mlx_array_free(o);
    o = vmap_fn(argmax_all, &a, 1, (const int[]){0}, 0);
    expect_values(o, (const double[]){2, 1}, (const int[]){2}, 1, "argmax");
    TU_FREE(o, a);

    a = arange_f(8, (const int[]){2, 4}, 2, MLX_INT32);
    o = vmap_fn(mean_all, &a, 1, (const int[]){0}, 0);
    expect_values(o, (const double[]){1.5, 5.5}, (const int[]){2}, 1, "mean");
    TU_FREE(o, a);
}

/* vmap(vmap(mean)): the inner vmap runs inside the outer's trace. */
static int inner_vmap_mean(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_closure f = mlx_closure_new_func_payload(run_fn, (void *)mean_all, NULL);
    int zero = 0;
    int rc = vmap_apply(res, f, in, &zero, 1, &zero, 1);
    mlx_closure_free(f);
    return rc;
}

static void test_nested_vmap(void **state)
{
    (void)state;
    mlx_array a = arange_f(16, (const int[]){2, 2, 4}, 3, MLX_INT32);
    mlx_closure f = mlx_closure_new_func(inner_vmap_mean);
    mlx_array o = vmap1(f, &a, 1, (const int[]){0}, 0);
    expect_values(o, (const double[]){1.5, 5.5, 9.5, 13.5}, (const int[]){2, 2}, 2, "vmap(vmap(mean))");
    /* the inner batch on the outer's axis 1 */
    mlx_array_free(o);
    o = vmap1(f, &a, 1, (const int[]){1}, 1);
    expect_values(o, (const double[]){1.5, 5.5, 9.5, 13.5}, (const int[]){2, 2}, 2, "vmap(vmap(mean)), axis 1");
    TU_FREE(o, a);
    mlx_closure_free(f);
}

static int add2(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_add(o, x[0], x[1], s); }
static int const2(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    (void)x, (void)s;
    mlx_array two = mlx_array_new_int(2);
    int rc = mlx_array_set(o, two);
    mlx_array_free(two);
    return rc;
}

static void test_mlx_mismatch_and_const(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func_payload(run_fn, (void *)add2, NULL);
    mlx_array ab[2] = {ones((const int[]){10, 1}, 2, MLX_FLOAT32),
                       ones((const int[]){1, 1, 1, 5}, 4, MLX_FLOAT32)};
    mlx_vector_array args = vec_of(ab, 2), outs = mlx_vector_array_new();
    int zero = 0;
    assert_int_not_equal(vmap_apply(&outs, f, args, (const int[]){0, 0}, 2, &zero, 1), 0);
    tu_expect_error("[vmap] Inconsistent axis sizes: 10 and 1.");
    mlx_vector_array_free(args);
    mlx_array_free(ab[1]);
    ab[1] = ones((const int[]){10, 5}, 2, MLX_FLOAT32);
    args = vec_of(ab, 2);
    assert_int_not_equal(vmap_apply(&outs, f, args, (const int[]){0, 1}, 2, &zero, 1), 0);
    tu_expect_error("[vmap] Inconsistent axis sizes: 10 and 5.");
    mlx_vector_array_free(args);
    tu_free_n(ab, 2);
    mlx_closure_free(f);

    /* a function of no batched input: repeated along the batch */
    f = mlx_closure_new_func_payload(run_fn, (void *)const2, NULL);
    mlx_array in[2] = {uniform((const int[]){2, 3, 4}, 3, 9), uniform((const int[]){4, 3}, 2, 10)};
    mlx_array o = vmap1(f, in, 2, (const int[]){0, -1}, 0);
    expect_values(o, (const double[]){2, 2}, (const int[]){2}, 1, "const (0, None)");
    mlx_array_free(o);
    o = vmap1(f, in, 2, (const int[]){-1, 0}, 0);
    expect_values(o, (const double[]){2, 2, 2, 2}, (const int[]){4}, 1, "const (None, 0)");
    mlx_array_free(o);
    o = vmap1(f, in, 2, (const int[]){1, 1}, 0);
    expect_values(o, (const double[]){2, 2, 2}, (const int[]){3}, 1, "const (1, 1)");
    mlx_array_free(o);
    args = vec_of(in, 2);
    assert_int_not_equal(vmap_apply(&outs, f, args, (const int[]){-1, -1}, 2, &zero, 1), 0);
    tu_expect_error("[vmap] At least one of in_axes must be non-None.");
    assert_int_not_equal(vmap_apply(&outs, f, args, (const int[]){0, 0}, 2, &zero, 1), 0);
    tu_expect_error("[vmap] Inconsistent axis sizes: 2 and 4.");
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    tu_free_n(in, 2);
    mlx_closure_free(f);
}

static int matmul2(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_matmul(o, x[0], x[1], s); }
static int addmm3(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_addmm(o, x[0], x[1], x[2], 1.0f, 1.0f, s);
}

static void test_mlx_matmul(void **state)
{
    (void)state;
    mlx_array a = uniform((const int[]){2, 3, 4}, 3, 11), b = uniform((const int[]){4, 3}, 2, 12);
    mlx_array c = uniform((const int[]){3}, 1, 13), w = mlx_array_new(), m = mlx_array_new();
    mlx_array ab[2] = {a, b}, cab[3] = {c, a, b};
    mlx_array o = vmap_fn(matmul2, ab, 2, (const int[]){0, -1}, 0);
    assert_int_equal(mlx_matmul(&w, a, b, S()), 0);
    expect_same(o, w, 1e-5, "matmul (0, None)");
    mlx_array_free(o);
    o = vmap_fn(addmm3, cab, 3, (const int[]){-1, 0, -1}, 0);
    assert_int_equal(mlx_addmm(&w, c, a, b, 1.0f, 1.0f, S()), 0);
    expect_same(o, w, 1e-5, "addmm (None, 0, None)");
    TU_FREE(o, b, c);

    b = uniform((const int[]){4, 2}, 2, 14);
    ab[1] = b;
    o = vmap_fn(matmul2, ab, 2, (const int[]){1, -1}, 1);
    assert_int_equal(mlx_moveaxis(&m, a, 1, 0, S()) || mlx_matmul(&w, m, b, S()) || mlx_moveaxis(&w, w, 0, 1, S()),
                     0);
    expect_same(o, w, 1e-5, "matmul (1, None), out_axes 1");
    mlx_array_free(o);
    c = uniform((const int[]){2}, 1, 15);
    cab[0] = c, cab[2] = b;
    o = vmap_fn(addmm3, cab, 3, (const int[]){-1, 1, -1}, 0);
    assert_int_equal(mlx_addmm(&w, c, m, b, 1.0f, 1.0f, S()), 0);
    expect_same(o, w, 1e-5, "addmm (None, 1, None)");
    TU_FREE(o, a, b, c);

    a = uniform((const int[]){2, 3, 4}, 3, 16);
    b = uniform((const int[]){4, 2, 3}, 3, 17);
    ab[0] = a, ab[1] = b;
    o = vmap_fn(matmul2, ab, 2, (const int[]){0, 1}, 0);
    assert_int_equal(mlx_moveaxis(&m, b, 1, 0, S()) || mlx_matmul(&w, a, m, S()), 0);
    expect_same(o, w, 1e-5, "matmul (0, 1)");
    mlx_array_free(o);
    c = uniform((const int[]){3, 3, 2}, 3, 18);
    mlx_array mc = mlx_array_new();
    cab[0] = c, cab[1] = a, cab[2] = b;
    o = vmap_fn(addmm3, cab, 3, (const int[]){2, 0, 1}, 0);
    assert_int_equal(mlx_moveaxis(&mc, c, 2, 0, S()) || mlx_addmm(&w, mc, a, m, 1.0f, 1.0f, S()), 0);
    expect_same(o, w, 1e-5, "addmm (2, 0, 1)");
    TU_FREE(o, a, b, c, w, m, mc);
}

static int svd_full(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = vec_get(in, 0);
    int rc = mlx_linalg_svd(res, x, true, S());
    mlx_array_free(x);
    return rc;
}

static int inv1(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_linalg_inv(o, x[0], s); }

static void test_mlx_svd_and_inverse(void **state)
{
    (void)state;
    mlx_array a = uniform((const int[]){3, 4, 2}, 3, 19);
    mlx_closure f = mlx_closure_new_func(svd_full);
    mlx_vector_array args = vec_of(&a, 1), outs = mlx_vector_array_new();
    for (int ax = 0; ax < 2; ax++) {
        int zeros[3] = {0, 0, 0};
        assert_int_equal(vmap_apply(&outs, f, args, &ax, 1, zeros, 3), 0);
        mlx_array u = vec_get(outs, 0), sv = vec_get(outs, 1), vt = vec_get(outs, 2);
        int n = ax == 0 ? 3 : 4, m = ax == 0 ? 4 : 3;
        expect_shape(u, (const int[]){n, m, m}, 3, "U");
        expect_shape(sv, (const int[]){n, 2}, 2, "S");
        expect_shape(vt, (const int[]){n, 2, 2}, 3, "Vt");
        /* U[:, :2] diag(S) Vt rebuilds each matrix */
        mlx_array us = mlx_array_new(), d = mlx_array_new(), r = mlx_array_new(), want = mlx_array_new();
        assert_int_equal(mlx_slice(&us, u, (const int[]){0, 0, 0}, 3, (const int[]){n, m, 2}, 3,
                                   (const int[]){1, 1, 1}, 3, S()) ||
                             mlx_expand_dims(&d, sv, 1, S()) || mlx_multiply(&us, us, d, S()) ||
                             mlx_matmul(&r, us, vt, S()) || mlx_moveaxis(&want, a, ax, 0, S()),
                         0);
        expect_same(r, want, 1e-5, "U S Vt");
        TU_FREE(u, sv, vt, us, d, r, want);
    }
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    mlx_closure_free(f);
    mlx_array_free(a);

    /* inverse over axis 1 of matrices that are not square unbatched */
    a = uniform((const int[]){4, 3, 4}, 3, 20);
    mlx_array o = vmap_fn(inv1, &a, 1, (const int[]){1}, 0), m = mlx_array_new(), p = mlx_array_new();
    assert_int_equal(mlx_moveaxis(&m, a, 1, 0, S()) || mlx_matmul(&p, m, o, S()), 0);
    mlx_array eye = mlx_array_new(), e3 = mlx_array_new();
    assert_int_equal(
        mlx_eye(&eye, 4, 4, 0, MLX_FLOAT32, S()) || mlx_broadcast_to(&e3, eye, (const int[]){3, 4, 4}, 3, S()), 0);
    expect_same(p, e3, 1e-3, "a[:, i, :] @ inv[i]");
    TU_FREE(a, o, m, p, eye, e3);
}

/* a[idx] for a 1-D row a: take at idx (a 0-d index drops the axis). */
static int take0(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_take_axis(o, x[0], x[1], 0, s); }

static void test_mlx_gather(void **state)
{
    (void)state;
    mlx_array a = tu_i32((const int32_t[]){1, 2, 3, 4}, (const int[]){2, 2}, 2), idx = mlx_array_new_int(0);
    mlx_array in[2] = {a, idx};
    mlx_array o = vmap_fn(take0, in, 2, (const int[]){0, -1}, 0);
    expect_values(o, (const double[]){1, 3}, (const int[]){2}, 1, "(0, None)");
    mlx_array_free(o);
    o = vmap_fn(take0, in, 2, (const int[]){1, -1}, 0);
    expect_values(o, (const double[]){1, 2}, (const int[]){2}, 1, "(1, None)");
    mlx_array_free(o);
    mlx_array_free(idx);
    in[1] = idx = tu_i32((const int32_t[]){0, 1}, (const int[]){2}, 1);
    o = vmap_fn(take0, in, 2, (const int[]){0, 0}, 0);
    expect_values(o, (const double[]){1, 4}, (const int[]){2}, 1, "(0, 0)");
    TU_FREE(o, a, idx);

    in[0] = a = ones((const int[]){2, 3, 4}, 3, MLX_FLOAT32);
    in[1] = idx = tu_i32((const int32_t[]){0, 0, 0, 0}, (const int[]){4}, 1);
    o = vmap_fn(take0, in, 2, (const int[]){2, 0}, 0);
    expect_shape(o, (const int[]){4, 3}, 2, "(2, 0)");
    TU_FREE(o, idx);
    in[1] = idx = tu_i32((const int32_t[]){0, 0}, (const int[]){2}, 1);
    o = vmap_fn(take0, in, 2, (const int[]){0, 0}, 0);
    expect_shape(o, (const int[]){2, 4}, 2, "(0, 0) of ones");
    TU_FREE(o, idx, a);
}

/* a[0] = 0 (or += 1) on a 1-D row: a scatter at index 0. */
static int scatter_row(mlx_array *o, const mlx_array *x, mlx_stream s, bool add)
{
    mlx_array i = tu_i32((const int32_t[]){0}, (const int[]){1}, 1);
    mlx_array u = mlx_array_new(), v = add ? mlx_array_new_float32(1.0f) : mlx_array_new_float32(0.0f);
    mlx_vector_array iv = vec_of(&i, 1);
    int rc = mlx_reshape(&u, v, (const int[]){1, 1}, 2, s) ||
             (add ? mlx_scatter_add(o, x[0], iv, u, (const int[]){0}, 1, s)
                  : mlx_scatter(o, x[0], iv, u, (const int[]){0}, 1, s));
    mlx_vector_array_free(iv);
    TU_FREE(i, u, v);
    return rc;
}
static int scatter_set(mlx_array *o, const mlx_array *x, mlx_stream s) { return scatter_row(o, x, s, false); }
static int scatter_add1(mlx_array *o, const mlx_array *x, mlx_stream s) { return scatter_row(o, x, s, true); }

/* a[idx] = updates: idx one index, updates one value (broadcast over the
 * indexed row when a is 2-D). */
static int scatter_at(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    int shape[3] = {1, 1, 0}, nd = (int)mlx_array_ndim(x[0]) + 1;
    if (nd == 3)
        shape[2] = mlx_array_shape(x[0])[1];
    mlx_array i = mlx_array_new(), u = mlx_array_new(), uf = mlx_array_new();
    int rc = mlx_reshape(&i, x[1], (const int[]){1}, 1, s) || mlx_astype(&uf, x[2], MLX_FLOAT32, s) ||
             mlx_broadcast_to(&u, uf, shape, (size_t)nd, s);
    mlx_vector_array iv = vec_of(&i, 1);
    rc = rc || mlx_scatter(o, x[0], iv, u, (const int[]){0}, 1, s);
    mlx_vector_array_free(iv);
    TU_FREE(i, u, uf);
    return rc;
}

static void test_mlx_scatter(void **state)
{
    (void)state;
    mlx_array a = tu_f32((const float[]){1, 2, 3, 2, 3, 4}, (const int[]){2, 3}, 2);
    mlx_array o = vmap_fn(scatter_set, &a, 1, (const int[]){0}, 0);
    expect_values(o, (const double[]){0, 2, 3, 0, 3, 4}, (const int[]){2, 3}, 2, "a[0] = 0");
    mlx_array_free(o);
    o = vmap_fn(scatter_set, &a, 1, (const int[]){1}, 1);
    expect_values(o, (const double[]){0, 0, 0, 2, 3, 4}, (const int[]){2, 3}, 2, "a[0] = 0, axis 1");
    mlx_array_free(o);
    o = vmap_fn(scatter_add1, &a, 1, (const int[]){0}, 0);
    expect_values(o, (const double[]){2, 2, 3, 3, 3, 4}, (const int[]){2, 3}, 2, "a[0] += 1");
    mlx_array_free(o);
    o = vmap_fn(scatter_add1, &a, 1, (const int[]){1}, 1);
    expect_values(o, (const double[]){2, 3, 4, 2, 3, 4}, (const int[]){2, 3}, 2, "a[0] += 1, axis 1");
    TU_FREE(o, a);

    /* vmap over source, indices and updates */
    mlx_array in[3] = {mlx_array_new(), tu_i32((const int32_t[]){0, 1, 2}, (const int[]){3}, 1),
                       tu_i32((const int32_t[]){1, 2, 3}, (const int[]){3}, 1)};
    assert_int_equal(mlx_zeros(&in[0], (const int[]){3, 4}, 2, MLX_FLOAT32, S()), 0);
    o = vmap_fn(scatter_at, in, 3, (const int[]){0, 0, 0}, 0);
    expect_values(o, (const double[]){1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0}, (const int[]){3, 4}, 2, "(0, 0, 0)");
    mlx_array_free(o);
    /* only the updates */
    mlx_array_free(in[1]);
    in[1] = mlx_array_new_int(0);
    o = vmap_fn(scatter_at, in, 3, (const int[]){-1, -1, 0}, 0);
    double want[36] = {0};
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 4; j++)
            want[b * 12 + j] = b + 1;
    expect_values(o, want, (const int[]){3, 3, 4}, 3, "(None, None, 0)");
    TU_FREE(o);
    tu_free_n(in, 3);
}

static int cat_fun(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    (void)s;
    return f_concat(o, x, S());
}

static int split_swap(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array parts = mlx_vector_array_new(), sw = mlx_vector_array_new();
    mlx_array p0 = mlx_array_new(), p1 = mlx_array_new();
    int rc = mlx_split(&parts, x[0], 2, 1, s) || mlx_vector_array_get(&p0, parts, 0) ||
             mlx_vector_array_get(&p1, parts, 1) || mlx_vector_array_append_value(sw, p1) ||
             mlx_vector_array_append_value(sw, p0) || mlx_concatenate_axis(o, sw, 1, s);
    mlx_vector_array_free(parts);
    mlx_vector_array_free(sw);
    TU_FREE(p0, p1);
    return rc;
}

static int flatten01(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_flatten(o, x[0], 0, 1, s); }
static int take_along0(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_take_along_axis(o, x[0], x[1], 0, s);
}
static int put_along0(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_put_along_axis(o, x[0], x[1], x[2], 0, s);
}

static void test_mlx_shapes(void **state)
{
    (void)state;
    /* concatenate: a batched input on axis 2 beside one on axis 0 */
    mlx_array x = uniform((const int[]){2, 2, 2}, 3, 21), xx[2] = {x, x};
    mlx_array o = vmap_fn(cat_fun, xx, 2, (const int[]){0, 2}, 0);
    mlx_vector_array parts = mlx_vector_array_new();
    for (int i = 0; i < 2; i++) {
        mlx_array a = mlx_array_new(), b = mlx_array_new(), c = mlx_array_new(), idx = mlx_array_new_int(i);
        assert_int_equal(mlx_take_axis(&a, x, idx, 0, S()) || mlx_take_axis(&b, x, idx, 2, S()), 0);
        mlx_array ab[2] = {a, b};
        assert_int_equal(f_concat(&c, ab, S()) || mlx_vector_array_append_value(parts, c), 0);
        TU_FREE(a, b, c, idx);
    }
    mlx_array want = mlx_array_new();
    assert_int_equal(mlx_stack(&want, parts, S()), 0);
    expect_same(o, want, 0, "concatenate (0, 2)");
    mlx_vector_array_free(parts);
    TU_FREE(o, want, x);

    /* split and swap halves, batched on axis 1 */
    x = ones((const int[]){5, 4, 6, 7}, 4, MLX_FLOAT32);
    o = vmap_fn(split_swap, &x, 1, (const int[]){1}, 0);
    expect_shape(o, (const int[]){4, 5, 6, 7}, 4, "split");
    TU_FREE(o, x);

    x = ones((const int[]){2, 3, 4}, 3, MLX_FLOAT32);
    for (int ax = 0; ax < 3; ax++) {
        static const int want_shape[3][2] = {{2, 12}, {3, 8}, {4, 6}};
        o = vmap_fn(flatten01, &x, 1, &ax, 0);
        expect_shape(o, want_shape[ax], 2, "flatten");
        mlx_array_free(o);
    }
    mlx_array_free(x);

    /* take_along_axis and put_along_axis */
    mlx_array in[3] = {ones((const int[]){4, 5, 1}, 3, MLX_FLOAT32), mlx_array_new(), mlx_array_new()};
    assert_int_equal(mlx_zeros(&in[1], (const int[]){2, 4, 1}, 3, MLX_INT32, S()), 0);
    o = vmap_fn(take_along0, in, 2, (const int[]){0, 1}, 0);
    expect_shape(o, (const int[]){4, 2, 1}, 3, "take_along_axis (0, 1)");
    mlx_array_free(o);
    mlx_array_free(in[1]);
    in[1] = mlx_array_new();
    assert_int_equal(mlx_zeros(&in[1], (const int[]){2, 1}, 2, MLX_INT32, S()), 0);
    o = vmap_fn(take_along0, in, 2, (const int[]){0, -1}, 0);
    expect_shape(o, (const int[]){4, 2, 1}, 3, "take_along_axis (0, None)");
    mlx_array_free(o);
    mlx_array_free(in[1]);
    in[1] = mlx_array_new();
    assert_int_equal(mlx_ones(&in[1], (const int[]){2, 4, 1}, 3, MLX_INT32, S()), 0);
    in[2] = ones((const int[]){2, 4, 1}, 3, MLX_FLOAT32);
    o = vmap_fn(put_along0, in, 3, (const int[]){0, 1, 1}, 0);
    expect_shape(o, (const int[]){4, 5, 1}, 3, "put_along_axis (0, 1, 1)");
    TU_FREE(o);
    tu_free_n(in, 3);
}

static int conv1(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv1d(o, x[0], x[1], 1, 0, 1, 1, s);
}
static int gconv(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv1d(o, x[0], x[1], 1, 0, 1, 2, s);
}

/* vmap(fn)(in) against fn on each element (take along the axes) stacked. */
static void expect_stacked(case_fn fn, const mlx_array *in, size_t n, const int *axes, int size, const char *what)
{
    mlx_array o = vmap_fn(fn, in, n, axes, 0), want = mlx_array_new();
    mlx_vector_array parts = mlx_vector_array_new();
    for (int b = 0; b < size; b++) {
        mlx_array el[MAX_IN], y = mlx_array_new(), idx = mlx_array_new_int(b);
        for (size_t i = 0; i < n; i++) {
            el[i] = mlx_array_new();
            assert_int_equal(
                axes[i] < 0 ? mlx_array_set(&el[i], in[i]) : mlx_take_axis(&el[i], in[i], idx, axes[i], S()), 0);
        }
        assert_int_equal(fn(&y, el, S()) || mlx_vector_array_append_value(parts, y), 0);
        tu_free_n(el, n);
        TU_FREE(y, idx);
    }
    assert_int_equal(mlx_stack(&want, parts, S()), 0);
    expect_same(o, want, 1e-5, what);
    mlx_vector_array_free(parts);
    TU_FREE(o, want);
}

static void test_mlx_conv(void **state)
{
    (void)state;
    mlx_array xw[2] = {uniform((const int[]){2, 2, 5, 4}, 4, 22), uniform((const int[]){8, 3, 4}, 3, 23)};
    expect_stacked(conv1, xw, 2, (const int[]){0, -1}, 2, "input only");
    mlx_array m = mlx_array_new();
    assert_int_equal(mlx_moveaxis(&m, xw[0], 0, 2, S()), 0);
    mlx_array mw[2] = {m, xw[1]};
    expect_stacked(conv1, mw, 2, (const int[]){2, -1}, 2, "input only, axis 2");
    tu_free_n(xw, 2);
    mlx_array_free(m);

    mlx_array xw2[2] = {uniform((const int[]){2, 5, 4}, 3, 24), uniform((const int[]){3, 8, 3, 4}, 4, 25)};
    expect_stacked(conv1, xw2, 2, (const int[]){-1, 0}, 3, "weights only");
    tu_free_n(xw2, 2);

    mlx_array xw3[2] = {uniform((const int[]){3, 2, 5, 4}, 4, 26), uniform((const int[]){3, 8, 3, 4}, 4, 27)};
    expect_stacked(conv1, xw3, 2, (const int[]){0, 0}, 3, "both");
    tu_free_n(xw3, 2);

    mlx_array xw4[2] = {uniform((const int[]){2, 3, 5, 4}, 4, 28), uniform((const int[]){8, 3, 4, 3}, 4, 29)};
    expect_stacked(conv1, xw4, 2, (const int[]){1, 3}, 3, "both, axes (1, 3)");
    tu_free_n(xw4, 2);

    mlx_array xw5[2] = {uniform((const int[]){3, 2, 5, 8}, 4, 30), uniform((const int[]){3, 2, 3, 4}, 4, 31)};
    expect_stacked(gconv, xw5, 2, (const int[]){0, 0}, 3, "groups");
    tu_free_n(xw5, 2);
}

/* (t0 + 10, t1 * 10) of int32 rows: MLX's tuple case. */
static int tuple_fun(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array a = vec_get(in, 0), b = vec_get(in, 1), ten = mlx_array_new_int(10);
    mlx_array p = mlx_array_new(), q = mlx_array_new();
    int rc = mlx_add(&p, a, ten, S()) || mlx_multiply(&q, b, ten, S());
    mlx_array both[2] = {p, q};
    mlx_vector_array v = mlx_vector_array_new_data(both, 2);
    rc = rc || mlx_vector_array_set(res, v);
    mlx_vector_array_free(v);
    TU_FREE(a, b, ten, p, q);
    return rc;
}

static void test_mlx_tuple_outputs(void **state)
{
    (void)state;
    mlx_closure f = mlx_closure_new_func(tuple_fun);
    mlx_array in[2] = {tu_i32((const int32_t[]){1, 2, 3}, (const int[]){3}, 1),
                       tu_i32((const int32_t[]){4, 5, 6}, (const int[]){3}, 1)};
    mlx_vector_array args = vec_of(in, 2), outs = mlx_vector_array_new();
    assert_int_equal(vmap_apply(&outs, f, args, (const int[]){0, 0}, 2, (const int[]){0, 0}, 2), 0);
    mlx_array p = vec_get(outs, 0), q = vec_get(outs, 1);
    expect_values(p, (const double[]){11, 12, 13}, (const int[]){3}, 1, "t0 + 10");
    expect_values(q, (const double[]){40, 50, 60}, (const int[]){3}, 1, "t1 * 10");
    TU_FREE(p, q);
    tu_free_n(in, 2);
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    mlx_closure_free(f);
}

static int masked(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_masked_scatter(o, x[0], x[1], x[2], s);
}

static void test_mlx_masked_scatter(void **state)
{
    (void)state;
    mlx_array in[3] = {tu_i32((const int32_t[]){10, 20, 30, 40, 50, 60, 70, 80}, (const int[]){2, 4}, 2),
                       tu_array_of(MLX_BOOL, (const double[]){0, 1, 1, 1, 1, 0, 1, 1}, (const int[]){2, 4}, 2),
                       tu_i32((const int32_t[]){1, 2, 3, 4, 5, 6}, (const int[]){2, 3}, 2)};
    mlx_array o = vmap_fn(masked, in, 3, (const int[]){0, 0, 0}, 0);
    expect_values(o, (const double[]){10, 1, 2, 3, 4, 60, 5, 6}, (const int[]){2, 4}, 2, "batched sources");
    mlx_array_free(o);
    tu_free_n(in, 3);

    mlx_array in2[3] = {tu_i32((const int32_t[]){0, 0, 0, 5, 5, 5}, (const int[]){2, 3}, 2),
                        tu_array_of(MLX_BOOL, (const double[]){1, 0, 1, 0, 1, 1}, (const int[]){2, 3}, 2),
                        tu_i32((const int32_t[]){9, 8}, (const int[]){2}, 1)};
    o = vmap_fn(masked, in2, 3, (const int[]){0, 0, -1}, 0);
    expect_values(o, (const double[]){9, 0, 8, 5, 9, 8}, (const int[]){2, 3}, 2, "shared source");
    mlx_array_free(o);
    tu_free_n(in2, 3);

    mlx_array in3[3] = {tu_i32((const int32_t[]){10, 20, 30, 40}, (const int[]){4}, 1),
                        tu_array_of(MLX_BOOL, (const double[]){1, 0, 0, 1, 0, 1, 1, 0}, (const int[]){2, 4}, 2),
                        tu_i32((const int32_t[]){1, 2, 3, 4}, (const int[]){2, 2}, 2)};
    o = vmap_fn(masked, in3, 3, (const int[]){-1, 0, 0}, 0);
    expect_values(o, (const double[]){1, 20, 30, 2, 10, 3, 4, 40}, (const int[]){2, 4}, 2, "shared destination");
    mlx_array_free(o);
    tu_free_n(in3, 3);
}

/* A vmap rule for exp that returns 2 x instead, so the test sees it ran;
 * its out axis is the input's. */
static int double_rule(mlx_vector_array *res, mlx_vector_int *axes_out, const mlx_vector_array in, const int *axes,
                       size_t n)
{
    assert_int_equal(n, 1);
    mlx_array x = vec_get(in, 0), y = mlx_array_new(), two = mlx_array_new_float32(2.0f);
    int rc = mlx_multiply(&y, x, two, S()) || mlx_vector_array_set_value(res, y) ||
             mlx_vector_int_set_value(axes_out, axes[0]);
    TU_FREE(x, y, two);
    return rc;
}

static void test_custom_function_vmap_rule(void **state)
{
    (void)state;
    mlx_closure fun = mlx_closure_new_func(custom_exp), cf = mlx_closure_new();
    mlx_closure_custom_vmap rule = mlx_closure_custom_vmap_new_func(double_rule);
    assert_int_equal(mlx_custom_function(&cf, fun, (mlx_closure_custom){0}, (mlx_closure_custom_jvp){0}, rule), 0);
    mlx_array x = uniform((const int[]){3, 2}, 2, 33), w = mlx_array_new(), two = mlx_array_new_float32(2.0f);
    mlx_array o = vmap1(cf, &x, 1, (const int[]){1}, 1);
    assert_int_equal(mlx_multiply(&w, x, two, S()), 0);
    expect_same(o, w, 0, "the custom vmap rule's output");
    mlx_array_free(o);
    /* without a rule: vmap of the function itself */
    o = vmap_fn(f_custom, &x, 1, (const int[]){1}, 1);
    assert_int_equal(mlx_exp(&w, x, S()), 0);
    expect_same(o, w, 0, "vmap of the custom function's own function");
    TU_FREE(o, x, w, two);
    mlx_closure_free(fun);
    mlx_closure_free(cf);
    mlx_closure_custom_vmap_free(rule);
}

/* ---- errors ---- */

static int failing(mlx_vector_array *res, const mlx_vector_array in)
{
    (void)res, (void)in;
    return 1;
}

/* Evaluates its (placeholder) input: an error inside the function. */
static int evaluates(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = vec_get(in, 0);
    int rc = mlx_array_eval(x) || mlx_vector_array_set_value(res, x);
    mlx_array_free(x);
    return rc;
}

static void test_errors_report_once(void **state)
{
    (void)state;
    mlx_array x = ones((const int[]){3, 2}, 2, MLX_FLOAT32);
    mlx_vector_array args = vec_of(&x, 1), outs = mlx_vector_array_new(), s_in = mlx_vector_array_new(),
                     s_out = mlx_vector_array_new();
    mlx_closure f = mlx_closure_new_func(failing), g = mlx_closure_new_func(evaluates);
    int zero = 0, axes2[2] = {0, 0};
    assert_int_not_equal(mlx_detail_vmap_trace(&s_in, &s_out, f, args, &zero, 1), 0);
    tu_expect_error("[mlx_closure_apply]");
    assert_int_not_equal(mlx_detail_vmap_trace(&s_in, &s_out, g, args, &zero, 1), 0);
    tu_expect_error("[mlx_array_eval] Cannot evaluate a placeholder of a compile or vmap trace");
    assert_int_not_equal(mlx_detail_vmap_trace(&s_in, &s_out, g, args, axes2, 2), 0);
    tu_expect_error("[vmap] The number of in axes (2) must match the number of inputs (1).");
    assert_int_not_equal(mlx_detail_vmap_trace(&s_in, &s_out, g, args, (const int[]){-2}, 1), 0);
    tu_expect_error("[vmap] Axis -2 invalid for input with 2 dimensions.");
    assert_int_not_equal(mlx_detail_vmap_trace(&s_in, &s_out, g, args, NULL, 1), 0);
    tu_expect_error("[vmap] in_axes is NULL");
    assert_int_not_equal(mlx_detail_vmap_trace(&s_in, &s_out, (mlx_closure){0}, args, &zero, 1), 0);
    tu_expect_error("[vmap]");
    assert_int_equal(mlx_vector_array_size(s_in), 0);

    /* replace: lists that do not agree with the trace */
    mlx_closure id = mlx_closure_new_func_payload(apply_op1, (void *)mlx_exp, NULL);
    assert_int_equal(mlx_detail_vmap_trace(&s_in, &s_out, id, args, &zero, 1), 0);
    assert_int_not_equal(mlx_detail_vmap_replace(&outs, args, s_in, s_out, axes2, 2, &zero, 1), 0);
    tu_expect_error("[vmap] The number of in axes (2) must match the number of inputs (1).");
    assert_int_not_equal(mlx_detail_vmap_replace(&outs, args, s_in, s_out, &zero, 1, axes2, 2), 0);
    tu_expect_error("[vmap] The number of out axes (2) must match the number of outputs (1).");
    assert_int_not_equal(mlx_detail_vmap_replace(&outs, args, s_in, s_out, (const int[]){1}, 1, &zero, 1), 0);
    tu_expect_error("[vmap] Input 0 of shape (3,2) is not its traced input of shape (2) with axis 1 added.");
    assert_int_not_equal(mlx_detail_vmap_replace(&outs, args, args, s_out, &zero, 1, &zero, 1), 0);
    tu_expect_error("[vmap] Input 0 of shape");
    assert_int_not_equal(mlx_detail_vmap_replace(&outs, args, s_in, s_out, &zero, 1, (const int[]){-3}, 1), 0);
    tu_expect_error("[vmap] Axis -3 invalid for output with 2 dimensions.");
    /* a placeholder left in the graph cannot be evaluated */
    mlx_array p = vec_get(s_out, 0);
    assert_int_not_equal(mlx_array_eval(p), 0);
    tu_expect_error("[mlx_array_eval] Cannot evaluate a placeholder");
    /* and the right call still works; a negative out axis counts from the end */
    assert_int_equal(mlx_detail_vmap_replace(&outs, args, s_in, s_out, &zero, 1, (const int[]){-1}, 1), 0);
    mlx_array o = vec_get(outs, 0), w = mlx_array_new(), t = mlx_array_new();
    assert_int_equal(mlx_exp(&w, x, S()) || mlx_transpose(&t, w, S()), 0);
    expect_same(o, t, 0, "out axis -1");
    TU_FREE(x, p, o, w, t);
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(s_in);
    mlx_vector_array_free(s_out);
    mlx_closure_free(f);
    mlx_closure_free(g);
    mlx_closure_free(id);
}

/* ---- with autodiff ---- */

static int sin_times_x(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = vec_get(in, 0), s = mlx_array_new(), y = mlx_array_new(), t = mlx_array_new();
    int rc = mlx_sin(&s, x, S()) || mlx_multiply(&y, s, x, S()) || mlx_sum(&t, y, false, S()) ||
             mlx_vector_array_set_value(res, t);
    TU_FREE(x, s, y, t);
    return rc;
}

/* The gradient of sum(sin(x) * x) at one row. */
static int grad_row(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_closure f = mlx_closure_new_func(sin_times_x);
    mlx_array one = mlx_array_new_float32(1.0f);
    mlx_vector_array c = vec_of(&one, 1), outs = mlx_vector_array_new();
    int rc = mlx_vjp(&outs, res, f, in, c);
    mlx_vector_array_free(c);
    mlx_vector_array_free(outs);
    mlx_array_free(one);
    mlx_closure_free(f);
    return rc;
}

/* sum(vmap(sum(sin(x) * x) over rows)(x)). */
static int sum_of_vmap(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_closure f = mlx_closure_new_func(sin_times_x);
    mlx_vector_array outs = mlx_vector_array_new();
    int zero = 0;
    mlx_array o = mlx_array_new(), t = mlx_array_new();
    int rc = vmap_apply(&outs, f, in, &zero, 1, &zero, 1) || mlx_vector_array_get(&o, outs, 0) ||
             mlx_sum(&t, o, false, S()) || mlx_vector_array_set_value(res, t);
    mlx_vector_array_free(outs);
    TU_FREE(o, t);
    mlx_closure_free(f);
    return rc;
}

static void test_vmap_of_vjp_and_vjp_of_vmap(void **state)
{
    (void)state;
    mlx_array x = uniform((const int[]){3, 4}, 2, 32), want = mlx_array_new(), c = mlx_array_new(),
              s = mlx_array_new();
    /* d/dx sum(sin(x) x) = cos(x) x + sin(x) */
    assert_int_equal(
        mlx_cos(&c, x, S()) || mlx_multiply(&c, c, x, S()) || mlx_sin(&s, x, S()) || mlx_add(&want, c, s, S()), 0);
    mlx_closure g = mlx_closure_new_func(grad_row);
    mlx_array o = vmap1(g, &x, 1, (const int[]){0}, 0);
    expect_same(o, want, 1e-5, "vmap(grad) over rows");
    mlx_array_free(o);
    mlx_array xt = mlx_array_new(), wt = mlx_array_new();
    assert_int_equal(mlx_transpose(&xt, x, S()) || mlx_transpose(&wt, want, S()), 0);
    o = vmap1(g, &xt, 1, (const int[]){1}, 1);
    expect_same(o, wt, 1e-5, "vmap(grad) over columns");
    mlx_array_free(o);

    mlx_closure h = mlx_closure_new_func(sum_of_vmap);
    mlx_array one = mlx_array_new_float32(1.0f);
    mlx_vector_array p = vec_of(&x, 1), cv = vec_of(&one, 1), outs = mlx_vector_array_new(),
                     grads = mlx_vector_array_new();
    assert_int_equal(mlx_vjp(&outs, &grads, h, p, cv), 0);
    o = vec_get(grads, 0);
    expect_same(o, want, 1e-5, "grad(sum(vmap(f)))");
    TU_FREE(o, x, want, c, s, xt, wt, one);
    mlx_vector_array_free(p);
    mlx_vector_array_free(cv);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(grads);
    mlx_closure_free(g);
    mlx_closure_free(h);
}

/* A chain of 100,000 nodes replays without recursion. */
static int long_chain(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = vec_get(in, 0), y = mlx_array_new(), one = mlx_array_new_float32(1e-6f);
    int rc = mlx_array_set(&y, x);
    for (int i = 0; i < 100000 && !rc; i++)
        rc = mlx_add(&y, y, one, S());
    rc = rc || mlx_vector_array_set_value(res, y);
    TU_FREE(x, y, one);
    return rc;
}

static void test_deep_graph_replays_iteratively(void **state)
{
    (void)state;
    mlx_array x = ones((const int[]){2, 3}, 2, MLX_FLOAT32);
    mlx_closure f = mlx_closure_new_func(long_chain);
    mlx_array o = vmap1(f, &x, 1, (const int[]){1}, 0);
    expect_shape(o, (const int[]){3, 2}, 2, "deep chain");
    assert_true(fabs(tu_get(o, 0) - 1.1) < 1e-2);
    TU_FREE(o, x);
    mlx_closure_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_every_primitive_vmaps_as_its_elements_stacked, tu_test_teardown),
        cmocka_unit_test_teardown(test_pad_with_a_batched_value_equals_its_elements_in_two_pad_nodes,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(test_batched_indices_and_operands_each_alone, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_basics_errors, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_unary_ops, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_binary_ops, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_tree, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_indexing, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_reduce_argreduce_mean, tu_test_teardown),
        cmocka_unit_test_teardown(test_nested_vmap, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_mismatch_and_const, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_matmul, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_svd_and_inverse, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_gather, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_scatter, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_shapes, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_conv, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_tuple_outputs, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_masked_scatter, tu_test_teardown),
        cmocka_unit_test_teardown(test_custom_function_vmap_rule, tu_test_teardown),
        cmocka_unit_test_teardown(test_errors_report_once, tu_test_teardown),
        cmocka_unit_test_teardown(test_vmap_of_vjp_and_vjp_of_vmap, tu_test_teardown),
        cmocka_unit_test_teardown(test_deep_graph_replays_iteratively, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
