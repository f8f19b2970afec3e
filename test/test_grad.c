/* Suite 'grad': the gradient-check table. Every differentiable op of the
 * library appears here once with inputs in a range where it is smooth, and
 * three things are checked in float64 for each:
 *   - mlx_vjp against central finite differences of sum(f(x) * w), w a
 *     fixed pseudo-random cotangent of f's output shape;
 *   - mlx_jvp against the vjp: <jvp(t), w> == sum_i <t_i, vjp_i(w)>;
 *   - mlx_value_and_grad of sum(f(x) * w) gives that value and the vjp.
 * A primitive that gains an op joins the table; a missing rule fails here.
 * MLX's own semantics that a finite difference cannot show (ties, integer
 * inputs, stop_gradient, argnums, errors) are tested in test_grad_rules.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mlx/c/mlx.h"
#include "test_util.h"

enum { MAX_IN = 3, MAX_ELEMS = 64 };

typedef int (*case_fn)(mlx_array *out, const mlx_array *x, mlx_stream s);

typedef struct grad_case {
    const char *name;
    case_fn f;
    int nin;
    int ndim[MAX_IN];
    int shape[MAX_IN][4];
    double lo, hi; /* inputs drawn from [lo, hi] */
    double h;      /* the finite difference's step, if not the default */
} grad_case;

/* ---- the functions under test ---- */

#define UNARY(op)                                                                                                 \
    static int f_##op(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_##op(o, x[0], s); }
#define BINARY(op)                                                                                                \
    static int f_##op(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_##op(o, x[0], x[1], s); }

UNARY(abs)
UNARY(negative)
UNARY(square)
UNARY(sqrt)
UNARY(rsqrt)
UNARY(reciprocal)
UNARY(exp)
UNARY(expm1)
UNARY(log)
UNARY(log1p)
UNARY(log2)
UNARY(log10)
UNARY(sin)
UNARY(cos)
UNARY(tan)
UNARY(arcsin)
UNARY(arccos)
UNARY(arctan)
UNARY(sinh)
UNARY(cosh)
UNARY(tanh)
UNARY(arcsinh)
UNARY(arccosh)
UNARY(arctanh)
UNARY(sigmoid)
UNARY(erf)
UNARY(erfinv)
UNARY(degrees)
UNARY(radians)
UNARY(copy)
UNARY(squeeze)
UNARY(atleast_3d)
BINARY(add)
BINARY(subtract)
BINARY(multiply)
BINARY(divide)
BINARY(power)
BINARY(maximum)
BINARY(minimum)
BINARY(arctan2)
BINARY(logaddexp)
BINARY(remainder)
BINARY(matmul)
BINARY(inner)
BINARY(outer)
BINARY(kron)

/* Piecewise-constant functions: the gradient is zero (away from jumps). */
UNARY(sign)
UNARY(floor)
UNARY(ceil)

static int f_contiguous(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_contiguous(o, x[0], false, s);
}
static int f_round(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_round(o, x[0], 0, s); }
static int f_sum(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_sum(o, x[0], false, s); }
static int f_sum_axis1(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_sum_axis(o, x[0], 1, true, s);
}
static int f_mean_axis0(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_mean_axis(o, x[0], 0, false, s);
}
static int f_prod_axis1(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_prod_axis(o, x[0], 1, false, s);
}
static int f_max_axis1(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_max_axis(o, x[0], 1, false, s);
}
static int f_min(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_min(o, x[0], false, s); }
static int f_logsumexp_axis1(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_logsumexp_axis(o, x[0], 1, false, s);
}
static int f_var_axis1(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_var_axis(o, x[0], 1, false, 1, s);
}
static int f_std(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_std(o, x[0], false, 0, s); }
static int f_softmax_axis1(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_softmax_axis(o, x[0], 1, false, s);
}
static int f_softmax_axes(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int axes[2] = {0, 2};
    return mlx_softmax_axes(o, x[0], axes, 2, true, s);
}
static int f_logsumexp(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_logsumexp(o, x[0], true, s); }
static int f_logsumexp_axes(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int axes[2] = {0, 2};
    return mlx_logsumexp_axes(o, x[0], axes, 2, false, s);
}
static int f_cumsum(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cumsum(o, x[0], 1, false, true, s);
}
static int f_cumsum_rev_excl(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cumsum(o, x[0], 0, true, false, s);
}
static int f_cumprod(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cumprod(o, x[0], 1, false, true, s);
}
static int f_cummax(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cummax(o, x[0], 1, false, true, s);
}
static int f_logcumsumexp(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_logcumsumexp(o, x[0], 1, false, true, s);
}
/* x - c, c holding the test's own input values where bit i of `zeros` is
 * set: at the point the table checks, those elements are exactly zero
 * while x - c still moves with x. For a 3x4 input of [-1.5, 1.5]. */
static double input_value(int k, int i, int n, double lo, double hi);
static int with_zeros(mlx_array *o, const mlx_array x, uint64_t zeros, mlx_stream s)
{
    double c[12];
    for (int i = 0; i < 12; i++)
        c[i] = zeros >> i & 1 ? input_value(0, i, 12, -1.5, 1.5) : 0.0;
    const int shape[2] = {3, 4};
    mlx_array ca = tu_f64(c, shape, 2);
    int rc = mlx_subtract(o, x, ca, s);
    mlx_array_free(ca);
    return rc;
}
/* Row 0 has a zero at [1], row 1 two at [0] and [2], row 2 none. */
enum { ZEROS = 0x52 };
#define CUMPROD_ZEROS(name, axis, reverse, inclusive)                                                          \
    static int name(mlx_array *o, const mlx_array *x, mlx_stream s)                                           \
    {                                                                                                          \
        return with_zeros(o, x[0], ZEROS, s) || mlx_cumprod(o, *o, axis, reverse, inclusive, s);              \
    }
CUMPROD_ZEROS(f_cumprod_zeros, 1, false, true)
CUMPROD_ZEROS(f_cumprod_excl_zeros, 1, false, false)
CUMPROD_ZEROS(f_cumprod_rev_zeros, 1, true, true)
CUMPROD_ZEROS(f_cumprod_rev_excl_axis0_zeros, 0, true, false)
/* The exclusive scans' first output is -inf (the identity): clipped at
 * -1e3 so that the loss stays finite. */
static int clip_identity(mlx_array *o, mlx_stream s)
{
    mlx_array lo = mlx_array_new_float64(-1e3);
    int rc = mlx_maximum(o, *o, lo, s);
    mlx_array_free(lo);
    return rc;
}
static int f_cumprod_excl(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cumprod(o, x[0], 1, false, false, s);
}
static int f_cummax_excl(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cummax(o, x[0], 1, false, false, s) || clip_identity(o, s);
}
static int f_cummin_rev(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cummin(o, x[0], 1, true, true, s);
}
/* the identity of an exclusive cummin is +inf: negated and clipped */
static int f_cummin_rev_excl_axis0(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_cummin(o, x[0], 0, true, false, s) || mlx_negative(o, *o, s) || clip_identity(o, s);
}
static int f_logcumsumexp_rev(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_logcumsumexp(o, x[0], 1, true, true, s);
}
static int f_logcumsumexp_excl(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_logcumsumexp(o, x[0], 1, false, false, s) || clip_identity(o, s);
}
static int f_logcumsumexp_rev_excl_axis0(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_logcumsumexp(o, x[0], 0, true, false, s) || clip_identity(o, s);
}
static int f_reshape(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int shape[2] = {3, 2};
    return mlx_reshape(o, x[0], shape, 2, s);
}
static int f_transpose(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_transpose(o, x[0], s); }
static int f_moveaxis(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_moveaxis(o, x[0], 0, 2, s); }
static int f_broadcast_to(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int shape[3] = {2, 4, 3};
    return mlx_broadcast_to(o, x[0], shape, 3, s);
}
static int f_expand_dims(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_expand_dims(o, x[0], 1, s);
}
static int f_flatten(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_flatten(o, x[0], 0, -1, s); }
static int f_slice(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int start[2] = {1, 0}, stop[2] = {4, 3}, strides[2] = {2, 2};
    return mlx_slice(o, x[0], start, 2, stop, 2, strides, 2, s);
}
static int f_slice_update(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int start[2] = {0, 1}, stop[2] = {2, 3}, strides[2] = {1, 1};
    return mlx_slice_update(o, x[0], x[1], start, 2, stop, 2, strides, 2, s);
}
static int f_as_strided(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    /* overlapping windows: each element is read up to three times */
    const int shape[2] = {4, 3};
    const int64_t strides[2] = {1, 1};
    return mlx_as_strided(o, x[0], shape, 2, strides, 2, 0, s);
}
static int f_diagonal(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_diagonal(o, x[0], 1, 0, 1, s);
}
/* a negative offset on a 3-d input, the axes reversed: the diagonal's
 * cotangent goes back below the main diagonal of axes (2, 0) */
static int f_diagonal_3d(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_diagonal(o, x[0], -1, 2, 0, s);
}
static int f_tril(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_tril(o, x[0], 0, s); }
static int f_pad(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int axes[2] = {0, 1}, lo[2] = {1, 0}, hi[2] = {0, 2};
    mlx_array v = mlx_array_new_float64(0.5);
    int rc = mlx_pad(o, x[0], axes, 2, lo, 2, hi, 2, v, "constant", s);
    mlx_array_free(v);
    return rc;
}
static int f_tile(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int reps[2] = {2, 1};
    return mlx_tile(o, x[0], reps, 2, s);
}
static int f_repeat(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_repeat_axis(o, x[0], 2, 0, s); }
static int f_roll(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int shift[1] = {2};
    return mlx_roll_axis(o, x[0], shift, 1, 1, s);
}
static int vec2(mlx_vector_array *v, const mlx_array *x)
{
    *v = mlx_vector_array_new();
    return mlx_vector_array_append_value(*v, x[0]) || mlx_vector_array_append_value(*v, x[1]);
}
static int f_concatenate(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array v;
    int rc = vec2(&v, x) || mlx_concatenate_axis(o, v, 1, s);
    mlx_vector_array_free(v);
    return rc;
}
static int f_stack(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array v;
    int rc = vec2(&v, x) || mlx_stack_axis(o, v, 1, s);
    mlx_vector_array_free(v);
    return rc;
}
/* The second of three parts of a split, scaled so the parts differ. */
static int f_split(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_vector_array parts = mlx_vector_array_new();
    mlx_array p = mlx_array_new();
    int rc = mlx_split(&parts, x[0], 3, 1, s) || mlx_vector_array_get(&p, parts, 1) || mlx_square(o, p, s);
    mlx_array_free(p);
    mlx_vector_array_free(parts);
    return rc;
}
static int f_take(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    /* index 2 twice: its cotangents add up */
    const int32_t idx[4] = {2, 0, 2, 3};
    const int shape[1] = {4};
    mlx_array i = tu_i32(idx, shape, 1);
    int rc = mlx_take_axis(o, x[0], i, 1, s);
    mlx_array_free(i);
    return rc;
}
static int f_take_along_axis(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t idx[4] = {1, 1, 0, 2};
    const int shape[2] = {4, 1};
    mlx_array i = tu_i32(idx, shape, 2);
    int rc = mlx_take_along_axis(o, x[0], i, 1, s);
    mlx_array_free(i);
    return rc;
}
/* a (1, 3) broadcast against indices (4, 2) outside the axis. */
static int f_take_along_axis_bcast(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t idx[8] = {2, 0, 1, 1, 0, 2, -1, 1};
    const int shape[2] = {4, 2};
    mlx_array i = tu_i32(idx, shape, 2);
    int rc = mlx_take_along_axis(o, x[0], i, 1, s);
    mlx_array_free(i);
    return rc;
}
/* Gather of rows on two axes with a repeated, a negative and an
 * out-of-range index: the cotangents of repeats add up (Gather's vjp is a
 * scatter_add), the clamped index's goes to the element it read. */
static int f_gather(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t i0[4] = {2, 0, 2, -1}, i1[4] = {1, 9, 1, 0};
    mlx_array a0 = tu_i32(i0, (int[]){4}, 1), a1 = tu_i32(i1, (int[]){4}, 1);
    mlx_vector_array v = mlx_vector_array_new_data((mlx_array[]){a0, a1}, 2);
    int rc = mlx_gather(o, x[0], v, (int[]){0, 1}, 2, (int[]){1, 1, 2}, 3, s);
    mlx_vector_array_free(v);
    mlx_array_free(a0);
    mlx_array_free(a1);
    return rc;
}
/* Scatter of rows (x[1]: updates (3, 1, 4)) into x[0] (3, 4) by reduce
 * k: 0 none, 1 add, 3 max, 4 min (a repeated index: both compared). */
static int scatter_rows(mlx_array *o, const mlx_array *x, mlx_stream s, int k)
{
    /* distinct for none: MLX's vjp gives an overwritten update the
     * cotangent too, which finite differences would not */
    const int32_t iv[3] = {2, 0, k == 0 ? 1 : 2};
    mlx_array i = tu_i32(iv, (int[]){3}, 1);
    int rc = k == 0   ? mlx_scatter_single(o, x[0], i, x[1], 0, s)
             : k == 1 ? mlx_scatter_add_single(o, x[0], i, x[1], 0, s)
             : k == 3 ? mlx_scatter_max_single(o, x[0], i, x[1], 0, s)
                      : mlx_scatter_min_single(o, x[0], i, x[1], 0, s);
    mlx_array_free(i);
    return rc;
}
static int f_scatter(mlx_array *o, const mlx_array *x, mlx_stream s) { return scatter_rows(o, x, s, 0); }
static int f_scatter_add(mlx_array *o, const mlx_array *x, mlx_stream s) { return scatter_rows(o, x, s, 1); }
static int f_scatter_max(mlx_array *o, const mlx_array *x, mlx_stream s) { return scatter_rows(o, x, s, 3); }
static int f_scatter_min(mlx_array *o, const mlx_array *x, mlx_stream s) { return scatter_rows(o, x, s, 4); }
static int f_slice_dynamic(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t sv[2] = {1, 2};
    mlx_array st = tu_i32(sv, (int[]){2}, 1);
    int rc = mlx_slice_dynamic(o, x[0], st, (int[]){0, 1}, 2, (int[]){2, 2}, 2, s);
    mlx_array_free(st);
    return rc;
}
static int f_slice_update_dynamic(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t sv[1] = {1};
    mlx_array st = tu_i32(sv, (int[]){1}, 1);
    mlx_array sq = mlx_array_new();
    /* squared so the source's gradient is not all ones */
    int rc = mlx_square(&sq, x[0], s) || mlx_slice_update_dynamic(o, sq, x[1], st, (int[]){1}, 1, s);
    mlx_array_free(sq);
    mlx_array_free(st);
    return rc;
}
static int f_masked_scatter(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const double mv[3] = {1, 0, 1};
    mlx_array m = tu_array_of(MLX_BOOL, mv, (int[]){3}, 1);
    int rc = mlx_masked_scatter(o, x[0], m, x[1], s);
    mlx_array_free(m);
    return rc;
}
/* Indices outside the axis read the clamped element; its cotangent goes
 * back to that element (the scatter places indices as the gather does). */
static int f_take_out_of_range(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t idx[3] = {9, -7, 4};
    const int shape[1] = {3};
    mlx_array i = tu_i32(idx, shape, 1);
    int rc = mlx_take_axis(o, x[0], i, 1, s);
    mlx_array_free(i);
    return rc;
}
/* Distinct indices along the axis: with a repeat, only the last update is
 * kept, while MLX's vjp gives each its cotangent. */
static int f_put_along_axis(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t idx[6] = {0, 2, 3, 1, 1, -4};
    const int shape[2] = {3, 2};
    mlx_array i = tu_i32(idx, shape, 2);
    int rc = mlx_put_along_axis(o, x[0], i, x[1], 1, s);
    mlx_array_free(i);
    return rc;
}
/* Repeated indices, a (1, 4) and updates (3, 1) both broadcast. */
static int f_scatter_add_axis(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int32_t idx[6] = {1, 1, 0, 3, 2, -2};
    const int shape[2] = {3, 2};
    mlx_array i = tu_i32(idx, shape, 2);
    int rc = mlx_scatter_add_axis(o, x[0], i, x[1], 1, s);
    mlx_array_free(i);
    return rc;
}
static int f_where(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array c = mlx_array_new();
    int rc = mlx_greater(&c, x[0], x[1], s) || mlx_where(o, c, x[0], x[1], s);
    mlx_array_free(c);
    return rc;
}
/* linalg.h: the norms and cross are compositions of differentiable ops;
 * solve is differentiable in b (the factorizations of a have no rules, as
 * in MLX) */
static int f_norm_p3(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    int ax = 1;
    return mlx_linalg_norm(o, x[0], 3.0, &ax, 1, false, s);
}
static int f_norm_inf_matrix(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_linalg_norm(o, x[0], INFINITY, NULL, 0, true, s);
}
static int f_norm_fro(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_linalg_norm_matrix(o, x[0], "fro", NULL, 0, false, s);
}
static int f_norm_l2(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    int ax = 0;
    return mlx_linalg_norm_l2(o, x[0], &ax, 1, false, s);
}
static int f_cross(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_linalg_cross(o, x[0], x[1], -1, s); }
static int f_solve_b(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    static const double av[9] = {4, 1, 0.5, 1, 3, 0.25, 0.5, 0.25, 2};
    int shape[2] = {3, 3};
    mlx_array a = mlx_array_new_data(av, shape, 2, MLX_FLOAT64);
    int rc = mlx_astype(&a, a, mlx_array_dtype(x[0]), s) || mlx_linalg_solve(o, a, x[0], s);
    mlx_array_free(a);
    return rc;
}

static int f_clip(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array lo = mlx_array_new_float64(-0.3), hi = mlx_array_new_float64(0.4);
    int rc = mlx_clip(o, x[0], lo, hi, s);
    mlx_array_free(lo);
    mlx_array_free(hi);
    return rc;
}
/* float64 -> float32 -> float64: the cotangent passes both casts */
static int f_astype(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array h = mlx_array_new();
    int rc = mlx_astype(&h, x[0], MLX_FLOAT32, s) || mlx_astype(o, h, MLX_FLOAT64, s);
    mlx_array_free(h);
    return rc;
}
static int f_addmm(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_addmm(o, x[2], x[0], x[1], 0.5f, 2.0f, s);
}
/* unit alpha and beta (the rule then scales nothing), the bias broadcast */
static int f_addmm_unit(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_addmm(o, x[2], x[0], x[1], 1.0f, 1.0f, s);
}
/* convolutions: padding, stride, dilation, groups, flip, transposed */
static int f_conv1d(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv1d(o, x[0], x[1], 2, 1, 1, 1, s);
}
static int f_conv1d_grouped(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv1d(o, x[0], x[1], 1, 1, 2, 2, s);
}
static int f_conv2d(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv2d(o, x[0], x[1], 1, 2, 1, 0, 1, 1, 1, s);
}
static int f_conv2d_depthwise(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv2d(o, x[0], x[1], 1, 1, 1, 1, 1, 1, 2, s);
}
static int f_conv_general(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    int st = 1, lo = 1, hi = 2, kd = 2, id = 2;
    return mlx_conv_general(o, x[0], x[1], &st, 1, &lo, 1, &hi, 1, &kd, 1, &id, 1, 1, true, s);
}
/* unequal low and high padding without input dilation: MLX 0.31.1's own
 * vjp fails here with a shape error */
static int f_conv_general_asym(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    int lo = 0, hi = 2;
    return mlx_conv_general(o, x[0], x[1], NULL, 0, &lo, 1, &hi, 1, NULL, 0, NULL, 0, 1, false, s);
}
static int f_conv_transpose1d(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_conv_transpose1d(o, x[0], x[1], 2, 1, 1, 1, 1, s);
}
static int f_tensordot(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_tensordot_axis(o, x[0], x[1], 1, s);
}
/* einsum (src/ops/einsum.c): a batched contraction through matmul, and a
 * diagonal times an outer product through the naive multiply-and-sum */
static int f_einsum(mlx_array *o, const mlx_array *x, const char *subs, int n, mlx_stream s)
{
    mlx_vector_array v = mlx_vector_array_new_data(x, (size_t)n);
    int rc = mlx_einsum(o, subs, v, s);
    mlx_vector_array_free(v);
    return rc;
}
static int f_einsum_dot(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return f_einsum(o, x, "bij,bjk->bik", 2, s);
}
static int f_einsum_diag(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return f_einsum(o, x, "ii,j->ij", 2, s);
}
/* hadamard_transform: linear, its rules the transform again (as MLX's) */
static int f_hadamard(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array h = mlx_array_new();
    int rc = mlx_astype(&h, x[0], MLX_FLOAT32, s) ||
             mlx_hadamard_transform(&h, h, (mlx_optional_float){0.5f, true}, s) || mlx_astype(o, h, MLX_FLOAT64, s);
    mlx_array_free(h);
    return rc;
}
static int f_trace(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_trace(o, x[0], 0, 0, 1, MLX_FLOAT64, s);
}
static int f_sort(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_sort_axis(o, x[0], 1, s); }
static int f_partition(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_partition_axis(o, x[0], 2, 1, s);
}
static int f_topk(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_topk_axis(o, x[0], 2, 1, s); }
static int f_median(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int axes[1] = {1};
    return mlx_median(o, x[0], axes, 1, false, s);
}
/* Quantized products through a fixed packed W (2 rows of 32 codes, 4 bits,
 * one group each): x, scales and biases vary, in float32 (MLX has no
 * float64 kernel), converted back to float64. */
static const uint32_t qw_words[8] = {0x76543210u, 0xfedcba98u, 0x13579bdfu, 0x02468aceu,
                                     0x89abcdefu, 0x01234567u, 0xf0e1d2c3u, 0x3c2d1e0fu};
static int quant_fn(mlx_array *o, const mlx_array *x, mlx_stream s, int kind)
{
    int wshape[2] = {2, 4};
    mlx_array w = mlx_array_new_data(qw_words, wshape, 2, MLX_UINT32);
    mlx_array a[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()};
    mlx_optional_int gs = {32, true}, bits = {4, true};
    mlx_optional_dtype nodt = {MLX_FLOAT32, false};
    mlx_array none = {NULL};
    int n = kind == 2 ? 2 : 3, rc = 0;
    for (int i = 0; i < n && !rc; i++)
        rc = mlx_astype(&a[i], x[i], MLX_FLOAT32, s);
    if (!rc && kind == 2)
        rc = mlx_dequantize(o, w, a[0], a[1], gs, bits, "affine", none, nodt, s);
    else if (!rc)
        rc = mlx_quantized_matmul(o, a[0], w, a[1], a[2], kind == 0, gs, bits, "affine", s);
    rc = rc || mlx_astype(o, *o, MLX_FLOAT64, s);
    mlx_array_free(w);
    tu_free_n(a, 3);
    return rc;
}
static int f_qmm(mlx_array *o, const mlx_array *x, mlx_stream s) { return quant_fn(o, x, s, 0); }
static int f_qmm_untransposed(mlx_array *o, const mlx_array *x, mlx_stream s) { return quant_fn(o, x, s, 1); }
static int f_dequantize(mlx_array *o, const mlx_array *x, mlx_stream s) { return quant_fn(o, x, s, 2); }
/* The fp modes through the same codes (mxfp8 reads them as bytes, two
 * rows of 32) and fixed uint8 scales: only x varies (MLX has no gradient
 * for the scales there). */
static int fp_quant_fn(mlx_array *o, const mlx_array *x, mlx_stream s, int mode)
{
    static const char *const names[3] = {"mxfp4", "nvfp4", "mxfp8"};
    /* small scales (2^-3, 2^-2; e4m3 0.125 .. 0.5): outputs small enough
     * that float32's rounding stays under the finite difference's
     * tolerance in every kernel build */
    static const uint8_t scales[3][4] = {{124, 125}, {0x28, 0x20, 0x30, 0x28}, {120, 121}};
    uint32_t words[16];
    for (int i = 0; i < 16; i++)
        words[i] = qw_words[i % 8];
    int wshape[2] = {2, mode == 2 ? 8 : 4}, sshape[2] = {2, mode == 1 ? 2 : 1};
    mlx_array w = mlx_array_new_data(words, wshape, 2, MLX_UINT32);
    mlx_array sc = mlx_array_new_data(scales[mode], sshape, 2, MLX_UINT8), a = mlx_array_new(), none = {NULL};
    mlx_optional_int no = {0, false};
    int rc = mlx_astype(&a, x[0], MLX_FLOAT32, s) ||
             mlx_quantized_matmul(o, a, w, sc, none, true, no, no, names[mode], s) ||
             mlx_astype(o, *o, MLX_FLOAT64, s);
    tu_free_n((mlx_array[]){w, sc, a}, 3);
    return rc;
}
static int f_qmm_mxfp4(mlx_array *o, const mlx_array *x, mlx_stream s) { return fp_quant_fn(o, x, s, 0); }
static int f_qmm_nvfp4(mlx_array *o, const mlx_array *x, mlx_stream s) { return fp_quant_fn(o, x, s, 1); }
static int f_qmm_mxfp8(mlx_array *o, const mlx_array *x, mlx_stream s) { return fp_quant_fn(o, x, s, 2); }
/* A chain through several families at once, as a model's layer is. */
static int f_mlp(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array h = mlx_array_new(), a = mlx_array_new();
    int rc = mlx_matmul(&h, x[0], x[1], s) || mlx_add(&h, h, x[2], s) || mlx_tanh(&a, h, s) ||
             mlx_logsumexp_axis(o, a, 1, true, s);
    mlx_array_free(h);
    mlx_array_free(a);
    return rc;
}

/* Fourier transforms: complex results seen through real or imag (the
 * table is real), the gradient of the complex parts following MLX's
 * convention (d/d re + i d/d im). All are linear, computed in float32:
 * a large finite-difference step is exact up to float32 rounding. */
static int f_fft_real_padded(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array f = mlx_array_new();
    int rc = mlx_fft_fft(&f, x[0], 5, 1, s) || mlx_real(o, f, s);
    mlx_array_free(f);
    return rc;
}
static int f_ifft2_imag(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int n[2] = {3, 3}, axes[2] = {1, 0};
    mlx_array f = mlx_array_new();
    int rc = mlx_fft_ifft2(&f, x[0], n, 2, axes, 2, s) || mlx_imag(o, f, s);
    mlx_array_free(f);
    return rc;
}
#define RFFT_PART(name, nn, part)                                                                             \
    static int name(mlx_array *o, const mlx_array *x, mlx_stream s)                                        \
    {                                                                                                        \
        mlx_array f = mlx_array_new();                                                                       \
        int rc = mlx_fft_rfft(&f, x[0], nn, 1, s) || part(o, f, s);                                         \
        mlx_array_free(f);                                                                                   \
        return rc;                                                                                           \
    }
RFFT_PART(f_rfft_even_real, 4, mlx_real)
RFFT_PART(f_rfft_even_imag, 4, mlx_imag)
RFFT_PART(f_rfft_odd_real, 5, mlx_real)
static int f_rfftn_imag(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int n[2] = {4, 2}, axes[2] = {1, 0};
    mlx_array f = mlx_array_new();
    int rc = mlx_fft_rfftn(&f, x[0], n, 2, axes, 2, s) || mlx_imag(o, f, s);
    mlx_array_free(f);
    return rc;
}
/* irfft of a real input: its frequencies' real parts */
static int f_irfft_even(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_fft_irfft(o, x[0], 4, 1, s); }
static int f_irfft_odd(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_fft_irfft(o, x[0], 5, 1, s); }
static int f_irfft_of_rfft(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array f = mlx_array_new();
    int rc = mlx_fft_rfft(&f, x[0], 6, 1, s) || mlx_fft_irfft(o, f, 6, 1, s);
    mlx_array_free(f);
    return rc;
}
static int f_fftshift(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    const int axes[2] = {0, 1};
    return mlx_fft_fftshift(o, x[0], axes, 2, s);
}

/* fast.h (src/graph/prims_fast.c's rules) */
static int f_rms_norm(mlx_array *o, const mlx_array *x, mlx_stream s) { return mlx_fast_rms_norm(o, x[0], x[1], 1e-5f, s); }
static int f_layer_norm(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_layer_norm(o, x[0], x[1], x[2], 1e-5f, s);
}
static int f_layer_norm_plain(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_layer_norm(o, x[0], (mlx_array){0}, (mlx_array){0}, 1e-5f, s);
}
static int f_rope(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_rope(o, x[0], 4, false, (mlx_optional_float){10000.0f, true}, 1.0f, 3, (mlx_array){0}, s);
}
static int f_rope_traditional_partial(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_rope(o, x[0], 2, true, (mlx_optional_float){100.0f, true}, 0.5f, 1, (mlx_array){0}, s);
}
static int f_sdpa_gqa(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_scaled_dot_product_attention(o, x[0], x[1], x[2], 0.8f, "", (mlx_array){0}, (mlx_array){0}, s);
}
static int f_sdpa_causal(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_scaled_dot_product_attention(o, x[0], x[1], x[2], 0.5f, "causal", (mlx_array){0}, (mlx_array){0},
                                                 s);
}
/* self-attention of x[0] with an additive mask x[1] and sinks x[2] */
static int f_sdpa_mask_sinks(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_fast_scaled_dot_product_attention(o, x[0], x[0], x[0], 0.7f, "array", x[1], x[2], s);
}

/* matmul_ext.c's products and depends (no jvp in MLX: see missing_jvp) */
/* gather_mm of a (3, 2, 2) and b (2, 2, 3): a repeated lhs index (its
 * cotangents add up) and one past the end (read as the last matrix) */
static int f_gather_mm(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array li = tu_i32((int32_t[]){2, 0, 2, 7}, (int[]){4}, 1), ri = tu_i32((int32_t[]){1, 1, 0, 0}, (int[]){4}, 1);
    int rc = mlx_gather_mm(o, x[0], x[1], li, ri, false, s);
    mlx_array_free(li);
    mlx_array_free(ri);
    return rc;
}
/* block_masked_mm of a (1, 33) and b (33, 1) (two blocks of K) with the
 * lhs mask x[2] (1, 2) and a fixed rhs mask */
static int f_block_masked_mm_operand(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array mr = tu_f64((double[]){1.5, -0.5}, (int[]){2, 1}, 2);
    int rc = mlx_block_masked_mm(o, x[0], x[1], 32, (mlx_array){0}, x[2], mr, s);
    mlx_array_free(mr);
    return rc;
}
/* the out mask x[2] (1, 1) of a (2, 5) @ b (5, 3): the exact derivative
 * (MLX's scales it by the mask) */
static int f_block_masked_mm_out(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    return mlx_block_masked_mm(o, x[0], x[1], 32, x[2], (mlx_array){0}, (mlx_array){0}, s);
}
/* depends([x^2], [x * 3])[0] */
static int f_depends(mlx_array *o, const mlx_array *x, mlx_stream s)
{
    mlx_array sq = mlx_array_new(), d = mlx_array_new(), k = mlx_array_new_float64(3.0);
    mlx_vector_array vi = mlx_vector_array_new(), vd = mlx_vector_array_new(), vo = mlx_vector_array_new();
    int rc = mlx_square(&sq, x[0], s) || mlx_multiply(&d, x[0], k, s) || mlx_vector_array_append_value(vi, sq) ||
             mlx_vector_array_append_value(vd, d) || mlx_depends(&vo, vi, vd) || mlx_vector_array_get(o, vo, 0);
    mlx_vector_array_free(vi);
    mlx_vector_array_free(vd);
    mlx_vector_array_free(vo);
    tu_free_n((mlx_array[]){sq, d, k}, 3);
    return rc;
}

/* ---- the table ---- */

#define U1(name, f, lo, hi) {name, f, 1, {2}, {{2, 3}}, lo, hi, 0}

static const grad_case cases[] = {
    U1("abs", f_abs, 0.2, 1.0),
    U1("negative", f_negative, -1, 1),
    U1("square", f_square, -1, 1),
    U1("sqrt", f_sqrt, 0.5, 2),
    U1("rsqrt", f_rsqrt, 0.5, 2),
    U1("reciprocal", f_reciprocal, 0.5, 2),
    U1("exp", f_exp, -1, 1),
    U1("expm1", f_expm1, -1, 1),
    U1("log", f_log, 0.5, 2),
    U1("log1p", f_log1p, 0, 1),
    U1("log2", f_log2, 0.5, 2),
    U1("log10", f_log10, 0.5, 2),
    U1("sin", f_sin, -2, 2),
    U1("cos", f_cos, -2, 2),
    U1("tan", f_tan, -1, 1),
    U1("arcsin", f_arcsin, -0.8, 0.8),
    U1("arccos", f_arccos, -0.8, 0.8),
    U1("arctan", f_arctan, -2, 2),
    U1("sinh", f_sinh, -1, 1),
    U1("cosh", f_cosh, -1, 1),
    U1("tanh", f_tanh, -1, 1),
    U1("arcsinh", f_arcsinh, -2, 2),
    U1("arccosh", f_arccosh, 1.5, 3),
    U1("arctanh", f_arctanh, -0.8, 0.8),
    U1("sigmoid", f_sigmoid, -2, 2),
    U1("erf", f_erf, -1, 1),
    U1("erfinv", f_erfinv, -0.8, 0.8),
    U1("degrees", f_degrees, -1, 1),
    U1("radians", f_radians, -1, 1),
    U1("copy", f_copy, -1, 1),
    U1("contiguous", f_contiguous, -1, 1),
    U1("sign", f_sign, 0.1, 1),
    U1("floor", f_floor, 0.1, 0.9),
    U1("ceil", f_ceil, 0.1, 0.9),
    U1("round", f_round, 0.1, 0.4),
    {"squeeze", f_squeeze, 1, {3}, {{2, 1, 3}}, -1, 1, 0},
    {"atleast_3d", f_atleast_3d, 1, {1}, {{3}}, -1, 1, 0},
    /* binary ops, each with broadcasting on one side */
    {"add", f_add, 2, {2, 1}, {{2, 3}, {3}}, -1, 1, 0},
    {"subtract", f_subtract, 2, {1, 2}, {{3}, {2, 3}}, -1, 1, 0},
    {"multiply", f_multiply, 2, {2, 2}, {{2, 1}, {2, 3}}, -1, 1, 0},
    {"divide", f_divide, 2, {2, 2}, {{2, 3}, {1, 3}}, 0.5, 2, 0},
    {"power", f_power, 2, {2, 2}, {{2, 3}, {2, 3}}, 0.5, 2, 0},
    {"maximum", f_maximum, 2, {2, 2}, {{2, 3}, {2, 3}}, -1, 1, 0},
    {"minimum", f_minimum, 2, {2, 1}, {{2, 3}, {3}}, -1, 1, 0},
    {"arctan2", f_arctan2, 2, {2, 2}, {{2, 3}, {2, 3}}, 0.5, 2, 0},
    {"logaddexp", f_logaddexp, 2, {2, 2}, {{2, 3}, {2, 3}}, -1, 1, 0},
    {"remainder", f_remainder, 2, {2, 0}, {{2, 3}, {0}}, 2.1, 2.9, 0},
    {"where", f_where, 2, {2, 2}, {{2, 3}, {2, 3}}, -1, 1, 0},
    {"clip", f_clip, 1, {2}, {{3, 4}}, -1, 1, 0},
    /* through float32: a step large enough to dwarf float32's rounding */
    {"astype", f_astype, 1, {2}, {{2, 3}}, -1, 1, 1e-2},
    /* reductions */
    {"sum", f_sum, 1, {2}, {{2, 3}}, -1, 1, 0},
    {"sum_axis_keepdims", f_sum_axis1, 1, {3}, {{2, 3, 2}}, -1, 1, 0},
    {"mean_axis", f_mean_axis0, 1, {2}, {{3, 2}}, -1, 1, 0},
    {"prod_axis", f_prod_axis1, 1, {2}, {{2, 4}}, 0.5, 1.5, 0},
    {"max_axis", f_max_axis1, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"min", f_min, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"logsumexp_axis", f_logsumexp_axis1, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"var_axis_ddof1", f_var_axis1, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"std", f_std, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"softmax_axis", f_softmax_axis1, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"softmax_axes_precise", f_softmax_axes, 1, {3}, {{2, 3, 2}}, -1, 1, 0},
    {"logsumexp_keepdims", f_logsumexp, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"logsumexp_axes", f_logsumexp_axes, 1, {3}, {{2, 3, 2}}, -1, 1, 0},
    /* scans */
    {"cumsum", f_cumsum, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"cumsum_reverse_exclusive", f_cumsum_rev_excl, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"cumprod", f_cumprod, 1, {2}, {{2, 4}}, 0.5, 1.5, 0},
    {"cummax", f_cummax, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"logcumsumexp", f_logcumsumexp, 1, {2}, {{3, 4}}, -1, 1, 0},
    /* with zeros: the first zero's gradient is the product of the others,
     * every element after it gets none */
    {"cumprod_exclusive", f_cumprod_excl, 1, {2}, {{3, 4}}, 0.5, 1.5, 0},
    {"cumprod_zeros", f_cumprod_zeros, 1, {2}, {{3, 4}}, -1.5, 1.5, 0},
    {"cumprod_exclusive_zeros", f_cumprod_excl_zeros, 1, {2}, {{3, 4}}, -1.5, 1.5, 0},
    {"cumprod_reverse_zeros", f_cumprod_rev_zeros, 1, {2}, {{3, 4}}, -1.5, 1.5, 0},
    {"cumprod_reverse_exclusive_axis0_zeros", f_cumprod_rev_excl_axis0_zeros, 1, {2}, {{3, 4}}, -1.5, 1.5, 0},
    {"cummax_exclusive", f_cummax_excl, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"cummin_reverse", f_cummin_rev, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"cummin_reverse_exclusive_axis0", f_cummin_rev_excl_axis0, 1, {2}, {{4, 3}}, -1, 1, 0},
    {"logcumsumexp_reverse", f_logcumsumexp_rev, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"logcumsumexp_exclusive", f_logcumsumexp_excl, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"logcumsumexp_reverse_exclusive_axis0", f_logcumsumexp_rev_excl_axis0, 1, {2}, {{4, 3}}, -1, 1, 0},
    /* views and layout */
    {"reshape", f_reshape, 1, {2}, {{2, 3}}, -1, 1, 0},
    {"transpose", f_transpose, 1, {3}, {{2, 3, 4}}, -1, 1, 0},
    {"moveaxis", f_moveaxis, 1, {3}, {{2, 3, 4}}, -1, 1, 0},
    {"broadcast_to", f_broadcast_to, 1, {2}, {{1, 3}}, -1, 1, 0},
    {"expand_dims", f_expand_dims, 1, {2}, {{2, 3}}, -1, 1, 0},
    {"flatten", f_flatten, 1, {3}, {{2, 3, 2}}, -1, 1, 0},
    {"slice", f_slice, 1, {2}, {{5, 4}}, -1, 1, 0},
    {"slice_update", f_slice_update, 2, {2, 2}, {{3, 4}, {2, 2}}, -1, 1, 0},
    {"as_strided", f_as_strided, 1, {1}, {{6}}, -1, 1, 0},
    {"diagonal", f_diagonal, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"diagonal_3d_negative_offset", f_diagonal_3d, 1, {3}, {{3, 2, 4}}, -1, 1, 0},
    {"tril", f_tril, 1, {2}, {{3, 3}}, -1, 1, 0},
    {"pad", f_pad, 1, {2}, {{2, 3}}, -1, 1, 0},
    {"tile", f_tile, 1, {2}, {{2, 3}}, -1, 1, 0},
    {"repeat", f_repeat, 1, {2}, {{2, 3}}, -1, 1, 0},
    {"roll", f_roll, 1, {2}, {{2, 4}}, -1, 1, 0},
    {"concatenate", f_concatenate, 2, {2, 2}, {{2, 3}, {2, 2}}, -1, 1, 0},
    {"stack", f_stack, 2, {2, 2}, {{2, 3}, {2, 3}}, -1, 1, 0},
    {"split", f_split, 1, {2}, {{2, 6}}, -1, 1, 0},
    {"take", f_take, 1, {2}, {{2, 5}}, -1, 1, 0},
    {"take_along_axis", f_take_along_axis, 1, {2}, {{4, 3}}, -1, 1, 0},
    {"take_along_axis_broadcast", f_take_along_axis_bcast, 1, {2}, {{1, 3}}, -1, 1, 0},
    {"take_out_of_range", f_take_out_of_range, 1, {2}, {{2, 5}}, -1, 1, 0},
    {"gather_two_axes", f_gather, 1, {3}, {{3, 4, 2}}, -1, 1, 0},
    {"scatter_rows", f_scatter, 2, {2, 3}, {{3, 4}, {3, 1, 4}}, -1, 1, 0},
    {"scatter_add_rows", f_scatter_add, 2, {2, 3}, {{3, 4}, {3, 1, 4}}, -1, 1, 0},
    {"scatter_max_rows", f_scatter_max, 2, {2, 3}, {{3, 4}, {3, 1, 4}}, -1, 1, 0},
    {"scatter_min_rows", f_scatter_min, 2, {2, 3}, {{3, 4}, {3, 1, 4}}, -1, 1, 0},
    {"slice_dynamic", f_slice_dynamic, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"slice_update_dynamic", f_slice_update_dynamic, 2, {2, 2}, {{3, 4}, {3, 2}}, -1, 1, 0},
    {"masked_scatter_rows", f_masked_scatter, 2, {2, 2}, {{3, 4}, {2, 4}}, -1, 1, 0},
    {"put_along_axis", f_put_along_axis, 2, {2, 2}, {{3, 4}, {3, 2}}, -1, 1, 0},
    {"scatter_add_axis", f_scatter_add_axis, 2, {2, 2}, {{1, 4}, {3, 1}}, -1, 1, 0},
    {"trace", f_trace, 1, {2}, {{3, 3}}, -1, 1, 0},
    /* sorting and selection */
    {"sort", f_sort, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"partition", f_partition, 1, {2}, {{2, 5}}, -1, 1, 0},
    {"topk", f_topk, 1, {2}, {{2, 5}}, -1, 1, 0},
    {"median", f_median, 1, {2}, {{2, 5}}, -1, 1, 0},
    /* quantization: bilinear in x and (scales, biases), so a large step is
     * exact and dwarfs float32's rounding */
    {"quantized_matmul", f_qmm, 3, {2, 2, 2}, {{2, 32}, {2, 1}, {2, 1}}, -1, 1, 0.5},
    {"quantized_matmul_untransposed", f_qmm_untransposed, 3, {2, 2, 2}, {{3, 2}, {2, 1}, {2, 1}}, -1, 1, 0.5},
    {"quantized_matmul_mxfp4", f_qmm_mxfp4, 1, {2}, {{2, 32}}, -1, 1, 0.5},
    {"quantized_matmul_nvfp4", f_qmm_nvfp4, 1, {2}, {{2, 32}}, -1, 1, 0.5},
    {"quantized_matmul_mxfp8", f_qmm_mxfp8, 1, {2}, {{2, 32}}, -1, 1, 0.5},
    {"dequantize", f_dequantize, 2, {2, 2}, {{2, 1}, {2, 1}}, -1, 1, 0.5},
    /* linear algebra */
    {"matmul", f_matmul, 2, {2, 2}, {{2, 3}, {3, 4}}, -1, 1, 0},
    {"matmul_batched_broadcast", f_matmul, 2, {3, 2}, {{2, 2, 3}, {3, 2}}, -1, 1, 0},
    {"matmul_vector", f_matmul, 2, {1, 2}, {{3}, {3, 2}}, -1, 1, 0},
    {"addmm", f_addmm, 3, {2, 2, 2}, {{2, 3}, {3, 2}, {2, 2}}, -1, 1, 0},
    {"addmm_unit_broadcast_bias", f_addmm_unit, 3, {2, 2, 1}, {{2, 3}, {3, 2}, {2}}, -1, 1, 0},
    {"inner", f_inner, 2, {2, 1}, {{2, 3}, {3}}, -1, 1, 0},
    {"outer", f_outer, 2, {1, 1}, {{3}, {2}}, -1, 1, 0},
    {"kron", f_kron, 2, {2, 2}, {{2, 2}, {2, 3}}, -1, 1, 0},
    {"tensordot", f_tensordot, 2, {2, 2}, {{2, 3}, {3, 2}}, -1, 1, 0},
    {"conv1d_stride_padding", f_conv1d, 2, {3, 3}, {{1, 6, 2}, {2, 3, 2}}, -1, 1, 0},
    {"conv1d_grouped_dilated", f_conv1d_grouped, 2, {3, 3}, {{1, 6, 4}, {4, 2, 2}}, -1, 1, 0},
    {"conv2d", f_conv2d, 2, {4, 4}, {{1, 4, 3, 2}, {2, 2, 2, 2}}, -1, 1, 0},
    {"conv2d_depthwise", f_conv2d_depthwise, 2, {4, 4}, {{1, 3, 3, 2}, {4, 2, 2, 1}}, -1, 1, 0},
    {"conv_general_flip_dilations", f_conv_general, 2, {3, 3}, {{1, 4, 2}, {2, 3, 2}}, -1, 1, 0},
    {"conv_general_unequal_padding", f_conv_general_asym, 2, {3, 3}, {{1, 5, 2}, {2, 3, 2}}, -1, 1, 0},
    {"conv_transpose1d_output_padding", f_conv_transpose1d, 2, {3, 3}, {{1, 4, 2}, {3, 3, 2}}, -1, 1, 0},
    {"gather_mm", f_gather_mm, 2, {3, 3}, {{3, 2, 2}, {2, 2, 3}}, -1, 1, 0},
    {"block_masked_mm_operand_mask", f_block_masked_mm_operand, 3, {2, 2, 2}, {{1, 33}, {33, 1}, {1, 2}}, -1, 1, 0},
    {"block_masked_mm_out_mask", f_block_masked_mm_out, 3, {2, 2, 2}, {{2, 5}, {5, 3}, {1, 1}}, -1, 1, 0},
    {"depends", f_depends, 1, {2}, {{2, 3}}, -1, 1, 0},
    {"einsum_dot", f_einsum_dot, 2, {3, 3}, {{2, 2, 3}, {2, 3, 2}}, -1, 1, 0},
    {"einsum_diag", f_einsum_diag, 2, {2, 1}, {{3, 3}, {2}}, -1, 1, 0},
    /* through float32, as astype's row */
    {"hadamard_transform", f_hadamard, 1, {2}, {{2, 8}}, -1, 1, 1e-2},
    {"mlp", f_mlp, 3, {2, 2, 1}, {{2, 3}, {3, 4}, {4}}, -1, 1, 0},
    /* linalg.h */
    {"linalg_norm_p3_axis", f_norm_p3, 1, {2}, {{2, 4}}, 0.2, 1, 0},
    {"linalg_norm_inf_matrix_keepdims", f_norm_inf_matrix, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"linalg_norm_fro", f_norm_fro, 1, {2}, {{3, 4}}, -1, 1, 0},
    {"linalg_norm_l2_axis", f_norm_l2, 1, {2}, {{3, 2}}, -1, 1, 0},
    {"linalg_cross", f_cross, 2, {2, 2}, {{2, 3}, {2, 3}}, -1, 1, 0},
    {"linalg_cross_2d_broadcast", f_cross, 2, {2, 1}, {{2, 3}, {2}}, -1, 1, 0},
    {"linalg_solve_in_b", f_solve_b, 1, {2}, {{3, 2}}, -1, 1, 0},
    /* Fourier transforms */
    {"fft_real_padded", f_fft_real_padded, 1, {2}, {{2, 4}}, -1, 1, 0.5},
    {"ifft2_imag", f_ifft2_imag, 1, {2}, {{2, 4}}, -1, 1, 0.5},
    {"rfft_even_real", f_rfft_even_real, 1, {2}, {{2, 4}}, -1, 1, 0.5},
    {"rfft_even_imag", f_rfft_even_imag, 1, {2}, {{2, 4}}, -1, 1, 0.5},
    {"rfft_odd_real", f_rfft_odd_real, 1, {2}, {{2, 5}}, -1, 1, 0.5},
    {"rfftn_imag", f_rfftn_imag, 1, {2}, {{2, 4}}, -1, 1, 0.5},
    {"irfft_even", f_irfft_even, 1, {2}, {{2, 3}}, -1, 1, 0.5},
    {"irfft_odd", f_irfft_odd, 1, {2}, {{2, 3}}, -1, 1, 0.5},
    {"irfft_of_rfft", f_irfft_of_rfft, 1, {2}, {{2, 6}}, -1, 1, 0.5},
    {"fftshift", f_fftshift, 1, {2}, {{3, 4}}, -1, 1, 0},
    /* fast.h */
    {"fast_rms_norm", f_rms_norm, 2, {2, 1}, {{3, 4}, {4}}, -1, 1, 0},
    {"fast_layer_norm", f_layer_norm, 3, {2, 1, 1}, {{3, 4}, {4}, {4}}, -1, 1, 0},
    {"fast_layer_norm_plain", f_layer_norm_plain, 1, {3}, {{2, 2, 5}}, -1, 1, 0},
    {"fast_rope", f_rope, 1, {4}, {{1, 2, 3, 4}}, -1, 1, 0},
    {"fast_rope_traditional_partial", f_rope_traditional_partial, 1, {3}, {{2, 3, 4}}, -1, 1, 0},
    {"fast_sdpa_gqa", f_sdpa_gqa, 3, {4, 4, 4}, {{1, 2, 3, 4}, {1, 1, 5, 4}, {1, 1, 5, 3}}, -1, 1, 0},
    {"fast_sdpa_causal", f_sdpa_causal, 3, {4, 4, 4}, {{1, 2, 4, 3}, {1, 2, 3, 3}, {1, 2, 3, 2}}, -1, 1, 0},
    {"fast_sdpa_mask_sinks", f_sdpa_mask_sinks, 3, {4, 2, 1}, {{1, 2, 3, 4}, {3, 3}, {2}}, -1, 1, 0},
};
enum { N_CASES = sizeof cases / sizeof cases[0] };

/* ---- the checks ---- */

/* A reproducible value in [lo, hi] for element i of input k (no RNG state
 * shared between tests). Values are spaced so that no two elements of one
 * input tie, which keeps max/min/maximum differentiable. */
static double input_value(int k, int i, int n, double lo, double hi)
{
    uint32_t h = (uint32_t)(k * 7919 + i * 104729 + 17) * 2654435761u;
    double jitter = (double)(h >> 8) / (double)(1u << 24); /* [0, 1) */
    /* one value per slot of [lo, hi], the slots taken in a permuted order
     * (5 is prime to every size used) */
    int slot = (i * 5 + k * 3) % n;
    return lo + (hi - lo) * ((double)slot + 0.1 + 0.8 * jitter) / (double)n;
}

static double weight_value(int i) { return 0.3 + 0.7 * sin(1.7 * i + 0.4); }

typedef struct inputs {
    int n;
    double vals[MAX_IN][MAX_ELEMS];
    size_t size[MAX_IN];
} inputs;

static size_t shape_size(int ndim, const int *shape)
{
    size_t s = 1;
    for (int d = 0; d < ndim; d++)
        s *= (size_t)shape[d];
    return s;
}

static void make_inputs(const grad_case *c, inputs *in)
{
    in->n = c->nin;
    for (int k = 0; k < c->nin; k++) {
        in->size[k] = shape_size(c->ndim[k], c->shape[k]);
        assert_true(in->size[k] <= MAX_ELEMS);
        for (size_t i = 0; i < in->size[k]; i++)
            in->vals[k][i] = input_value(k, (int)i, (int)in->size[k], c->lo, c->hi);
    }
}

static void to_arrays(const grad_case *c, const inputs *in, mlx_array *x)
{
    for (int k = 0; k < c->nin; k++)
        x[k] = tu_f64(in->vals[k], c->shape[k], c->ndim[k]);
}

/* f(x) evaluated, in float64. */
static mlx_array forward(const grad_case *c, const mlx_array *x)
{
    mlx_array out = mlx_array_new();
    if (c->f(&out, x, tu_stream()))
        fail_msg("%s: the function failed: %s", c->name, tu_last_error());
    assert_int_equal(mlx_array_eval(out), 0);
    return out;
}

/* A cotangent of f's output shape (float64). */
static mlx_array weights_like(mlx_array out)
{
    size_t n = mlx_array_size(out);
    double w[MAX_ELEMS * 4];
    assert_true(n <= sizeof w / sizeof w[0]);
    for (size_t i = 0; i < n; i++)
        w[i] = weight_value((int)i);
    int shape[8];
    int nd = (int)mlx_array_ndim(out);
    for (int d = 0; d < nd; d++)
        shape[d] = mlx_array_shape(out)[d];
    return tu_f64(w, shape, nd);
}

static double dot_arrays(mlx_array a, mlx_array b)
{
    assert_int_equal(mlx_array_size(a), mlx_array_size(b));
    double s = 0;
    for (size_t i = 0; i < mlx_array_size(a); i++)
        s += tu_get(a, i) * tu_get(b, i);
    return s;
}

/* sum(f(x) * w) computed by the forward function alone. */
static double loss_at(const grad_case *c, const inputs *in, mlx_array w)
{
    mlx_array x[MAX_IN];
    to_arrays(c, in, x);
    mlx_array out = forward(c, x);
    double l = dot_arrays(out, w);
    mlx_array_free(out);
    tu_free_n(x, (size_t)c->nin);
    return l;
}

/* The closure the transforms see: payload is the case. */
static int apply_case(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    const grad_case *c = payload;
    mlx_array x[MAX_IN];
    for (int k = 0; k < c->nin; k++) {
        x[k] = mlx_array_new();
        if (mlx_vector_array_get(&x[k], args, (size_t)k))
            return 1;
    }
    mlx_array out = mlx_array_new();
    int rc = c->f(&out, x, tu_stream());
    if (!rc)
        rc = mlx_vector_array_set_value(res, out);
    mlx_array_free(out);
    tu_free_n(x, (size_t)c->nin);
    return rc;
}

/* sum(f(x) * w), the scalar value_and_grad differentiates; payload is a
 * {case, w} pair. */
typedef struct loss_payload {
    const grad_case *c;
    mlx_array w;
} loss_payload;

static int apply_loss(mlx_vector_array *res, const mlx_vector_array args, void *payload)
{
    loss_payload *p = payload;
    mlx_vector_array outs = mlx_vector_array_new();
    mlx_array out = mlx_array_new(), l = mlx_array_new();
    int rc = apply_case(&outs, args, (void *)p->c) || mlx_vector_array_get(&out, outs, 0) ||
             mlx_multiply(&l, out, p->w, tu_stream()) || mlx_sum(&l, l, false, tu_stream()) ||
             mlx_vector_array_set_value(res, l);
    mlx_array_free(l);
    mlx_array_free(out);
    mlx_vector_array_free(outs);
    return rc;
}

static mlx_vector_array vector_of(const mlx_array *x, int n)
{
    mlx_vector_array v = mlx_vector_array_new();
    for (int k = 0; k < n; k++)
        assert_int_equal(mlx_vector_array_append_value(v, x[k]), 0);
    return v;
}

static void expect_close(const char *what, const char *name, int k, size_t i, double got, double want,
                         double rtol, double atol)
{
    if (!(fabs(got - want) <= atol + rtol * fabs(want)))
        fail_msg("%s: %s of input %d [%zu]: got %.12g, want %.12g", name, what, k, i, got, want);
}

/* The cases through a primitive that has no jvp in MLX (Scatter, GatherMM,
 * BlockMaskedMM, Depends): what mlx_jvp reports for them, else NULL. */
static const char *missing_jvp(const grad_case *c)
{
    if (c->f == f_scatter || c->f == f_scatter_add || c->f == f_scatter_max || c->f == f_scatter_min)
        return "JVP not yet implemented";
    if (c->f == f_gather_mm || c->f == f_block_masked_mm_operand || c->f == f_block_masked_mm_out ||
        c->f == f_depends)
        return "Not implemented for";
    return NULL;
}

static void check_case(const grad_case *c)
{
    inputs in;
    make_inputs(c, &in);
    mlx_array x[MAX_IN];
    to_arrays(c, &in, x);
    mlx_array out0 = forward(c, x);
    mlx_array w = weights_like(out0);
    mlx_closure f = mlx_closure_new_func_payload(apply_case, (void *)c, NULL);

    /* vjp against central differences */
    mlx_vector_array primals = vector_of(x, c->nin), cots = vector_of(&w, 1);
    mlx_vector_array outs = mlx_vector_array_new(), grads = mlx_vector_array_new();
    if (mlx_vjp(&outs, &grads, f, primals, cots))
        fail_msg("%s: mlx_vjp failed: %s", c->name, tu_last_error());
    assert_int_equal(mlx_vector_array_size(grads), (size_t)c->nin);
    assert_int_equal(mlx_eval(grads), 0);
    mlx_array g[MAX_IN];
    for (int k = 0; k < c->nin; k++) {
        g[k] = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(&g[k], grads, (size_t)k), 0);
        assert_int_equal(mlx_array_eval(g[k]), 0);
        assert_int_equal(mlx_array_dtype(g[k]), MLX_FLOAT64);
        assert_int_equal(mlx_array_size(g[k]), in.size[k]);
        for (size_t i = 0; i < in.size[k]; i++) {
            double v = in.vals[k][i], h = (c->h ? c->h : 1e-6) * fmax(1.0, fabs(v));
            in.vals[k][i] = v + h;
            double up = loss_at(c, &in, w);
            in.vals[k][i] = v - h;
            double down = loss_at(c, &in, w);
            in.vals[k][i] = v;
            expect_close("vjp", c->name, k, i, tu_get(g[k], i), (up - down) / (2 * h), 1e-5, 1e-6);
        }
    }

    /* jvp against the vjp: <jvp(t), w> == sum_k <t_k, g_k> */
    mlx_array t[MAX_IN];
    double want = 0;
    for (int k = 0; k < c->nin; k++) {
        double tv[MAX_ELEMS];
        for (size_t i = 0; i < in.size[k]; i++)
            tv[i] = cos(0.9 * (double)i + (double)k);
        t[k] = tu_f64(tv, c->shape[k], c->ndim[k]);
        want += dot_arrays(t[k], g[k]);
    }
    mlx_vector_array tans = vector_of(t, c->nin);
    mlx_vector_array jouts = mlx_vector_array_new(), jtans = mlx_vector_array_new();
    mlx_array jt = mlx_array_new();
    if (missing_jvp(c)) {
        if (!mlx_jvp(&jouts, &jtans, f, primals, tans))
            fail_msg("%s: mlx_jvp should fail as MLX's", c->name);
        if (!tu_last_error_has(missing_jvp(c)))
            fail_msg("%s: mlx_jvp failed with: %s", c->name, tu_last_error());
        tu_reset_errors();
    } else {
        if (mlx_jvp(&jouts, &jtans, f, primals, tans))
            fail_msg("%s: mlx_jvp failed: %s", c->name, tu_last_error());
        assert_int_equal(mlx_vector_array_get(&jt, jtans, 0), 0);
        assert_int_equal(mlx_array_eval(jt), 0);
        /* a case through float32 (a step given) has float32 tangents */
        expect_close("jvp", c->name, -1, 0, dot_arrays(jt, w), want, c->h ? 1e-6 : 1e-9, 1e-12);
    }

    /* value_and_grad of the scalar loss, every argument */
    loss_payload lp = {c, w};
    mlx_closure lf = mlx_closure_new_func_payload(apply_loss, &lp, NULL);
    int argnums[MAX_IN] = {0, 1, 2};
    mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
    assert_int_equal(mlx_value_and_grad(&vg, lf, argnums, (size_t)c->nin), 0);
    mlx_vector_array vals = mlx_vector_array_new(), vgrads = mlx_vector_array_new();
    if (mlx_closure_value_and_grad_apply(&vals, &vgrads, vg, primals))
        fail_msg("%s: value_and_grad failed: %s", c->name, tu_last_error());
    mlx_array l = mlx_array_new();
    assert_int_equal(mlx_vector_array_get(&l, vals, 0), 0);
    assert_int_equal(mlx_array_eval(l), 0);
    expect_close("value", c->name, -1, 0, tu_get(l, 0), loss_at(c, &in, w), 1e-12, 1e-12);
    for (int k = 0; k < c->nin; k++) {
        mlx_array gk = mlx_array_new();
        assert_int_equal(mlx_vector_array_get(&gk, vgrads, (size_t)k), 0);
        assert_int_equal(mlx_array_eval(gk), 0);
        for (size_t i = 0; i < in.size[k]; i++)
            expect_close("value_and_grad", c->name, k, i, tu_get(gk, i), tu_get(g[k], i), 1e-12, 1e-12);
        mlx_array_free(gk);
    }

    mlx_array_free(l);
    mlx_vector_array_free(vals);
    mlx_vector_array_free(vgrads);
    mlx_closure_value_and_grad_free(vg);
    mlx_closure_free(lf);
    mlx_array_free(jt);
    mlx_vector_array_free(jouts);
    mlx_vector_array_free(jtans);
    mlx_vector_array_free(tans);
    tu_free_n(t, (size_t)c->nin);
    tu_free_n(g, (size_t)c->nin);
    mlx_vector_array_free(outs);
    mlx_vector_array_free(grads);
    mlx_vector_array_free(cots);
    mlx_vector_array_free(primals);
    mlx_closure_free(f);
    mlx_array_free(w);
    mlx_array_free(out0);
    tu_free_n(x, (size_t)c->nin);
}

static void test_gradients_match_finite_differences(void **state) { check_case(*state); }

/* One test per row, named for its op, so a failure names what broke. */
int main(void)
{
    static struct CMUnitTest tests[N_CASES];
    static char names[N_CASES][64];
    for (int i = 0; i < N_CASES; i++) {
        snprintf(names[i], sizeof names[i], "gradients_of_%s_match_finite_differences", cases[i].name);
        tests[i] = (struct CMUnitTest){names[i], test_gradients_match_finite_differences, NULL,
                                       tu_test_teardown, (void *)&cases[i]};
    }
    return cmocka_run_group_tests_name("grad", tests, tu_group_setup, tu_group_teardown);
}
