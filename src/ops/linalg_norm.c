/* Owns the norms (norm, norm_l2, norm_matrix) and cross, composed from
 * elementwise ops and reductions in MLX's steps (MLX's linalg.cpp), so
 * their values, dtypes and gradients are MLX's. The spectral and nuclear
 * norms go through svd. */
#include <math.h>
#include <string.h>

#include "graph/elementwise.h"
#include "ops/linalg_internal.h"
#include "ops/op_util.h"
#include "runtime/error.h"

static const char norm_fn[] = "linalg::norm";

/* sqrt(sum(|a|^2)) over axes. */
static int l2_norm(mlx_array *res, mlx_array a, const int *axes, int n, bool keepdims, mlx_stream s)
{
    mlx_array t = mlx_array_new();
    int rc =
        mc_arr(a)->dtype == MLX_COMPLEX64 ? mlx_abs(&t, a, s) || mlx_multiply(&t, t, t, s) : mlx_square(&t, a, s);
    rc = rc || mlx_sum_axes(&t, t, axes, (size_t)n, keepdims, s) || mlx_sqrt(res, t, s);
    mlx_array_free(t);
    return rc;
}

static int vector_norm(mlx_array *res, mlx_array a, double ord, int axis, bool keepdims, mlx_stream s)
{
    mlx_dtype dt = mc_at_least_float(mc_arr(a)->dtype);
    mlx_array t = mlx_array_new(), zero = mlx_array_new_int(0), p = mlx_array_new(), q = mlx_array_new();
    int rc;
    if (ord == 0.0)
        rc = mlx_not_equal(&t, a, zero, s) || mlx_sum_axis(&t, t, axis, keepdims, s) || mlx_astype(res, t, dt, s);
    else if (ord == 1.0)
        rc = mlx_abs(&t, a, s) || mlx_sum_axis(&t, t, axis, keepdims, s) || mlx_astype(res, t, dt, s);
    else if (ord == 2.0)
        rc = l2_norm(res, a, &axis, 1, keepdims, s);
    else if (ord == INFINITY)
        rc = mlx_abs(&t, a, s) || mlx_max_axis(&t, t, axis, keepdims, s) || mlx_astype(res, t, dt, s);
    else if (ord == -INFINITY)
        rc = mlx_abs(&t, a, s) || mlx_min_axis(&t, t, axis, keepdims, s) || mlx_astype(res, t, dt, s);
    else {
        mlx_array_free(p), mlx_array_free(q);
        p = mlx_array_new_float64(ord), q = mlx_array_new_float64(1.0 / ord);
        rc = mlx_astype(&p, p, dt, s) || mlx_astype(&q, q, dt, s) || mlx_abs(&t, a, s) || mlx_power(&t, t, p, s) ||
             mlx_sum_axis(&t, t, axis, keepdims, s) || mlx_power(res, t, q, s);
    }
    mlx_array_free(t), mlx_array_free(zero), mlx_array_free(p), mlx_array_free(q);
    return rc;
}

/* The singular values of the matrices over axes (row, col), reduced to
 * their max (ord 2), min (-2) or sum (nuclear, ord 0 here). */
static int svd_norm(mlx_array *res, mlx_array a, const int *axes, int ord, bool keepdims, mlx_stream s)
{
    mc_array *x = mc_arr(a);
    int nd = x->ndim, row = axes[0] < 0 ? axes[0] + nd : axes[0], col = axes[1] < 0 ? axes[1] + nd : axes[1];
    mlx_array m = mlx_array_new(), sv = mlx_array_new();
    mlx_vector_array out = mlx_vector_array_new();
    int rc = row > col ? mlx_moveaxis(&m, a, row, -1, s) || mlx_moveaxis(&m, m, col, -1, s)
                       : mlx_moveaxis(&m, a, col, -1, s) || mlx_moveaxis(&m, m, row, -2, s);
    /* an empty vector handle means its allocation failed (and reported) */
    rc = rc || !out.ctx || mlx_linalg_svd(&out, m, false, s) || mlx_vector_array_get(&sv, out, 0);
    if (ord == 2)
        rc = rc || mlx_max_axis(&sv, sv, -1, false, s);
    else if (ord == -2)
        rc = rc || mlx_min_axis(&sv, sv, -1, false, s);
    else
        rc = rc || mlx_sum_axis(&sv, sv, -1, false, s);
    int sorted[2] = {row < col ? row : col, row < col ? col : row};
    rc = rc || (keepdims && mlx_expand_dims_axes(&sv, sv, sorted, 2, s));
    rc = rc || (ord ? mlx_astype(res, sv, mc_at_least_float(x->dtype), s) : mlx_array_set(res, sv));
    mlx_array_free(m), mlx_array_free(sv);
    mlx_vector_array_free(out);
    return rc;
}

static int matrix_norm(mlx_array *res, mlx_array a, double ord, const int *axes, bool keepdims, mlx_stream s)
{
    mlx_dtype dt = mc_at_least_float(mc_arr(a)->dtype);
    int row = axes[0], col = axes[1];
    mlx_array t = mlx_array_new();
    int rc;
    /* MLX's axis arithmetic as it is, negative axes included */
    if (ord == -1.0 || ord == 1.0) {
        col -= (!keepdims && col > row && col > 0);
        rc = mlx_abs(&t, a, s) || mlx_sum_axis(&t, t, row, keepdims, s) ||
             (ord > 0 ? mlx_max_axis(&t, t, col, keepdims, s) : mlx_min_axis(&t, t, col, keepdims, s)) ||
             mlx_astype(res, t, dt, s);
    } else if (ord == INFINITY || ord == -INFINITY) {
        row -= (!keepdims && row > col && row > 0);
        rc = mlx_abs(&t, a, s) || mlx_sum_axis(&t, t, col, keepdims, s) ||
             (ord > 0 ? mlx_max_axis(&t, t, row, keepdims, s) : mlx_min_axis(&t, t, row, keepdims, s)) ||
             mlx_astype(res, t, dt, s);
    } else if (ord == 2.0 || ord == -2.0) {
        rc = svd_norm(res, a, axes, (int)ord, keepdims, s);
    } else {
        rc = mc_error("[%s] Invalid ord %g for matrix norm.", norm_fn, ord);
    }
    mlx_array_free(t);
    return rc;
}

/* The axes a norm runs over: the given ones, or every axis of a. */
static int norm_axes(const mc_array *x, const int *axis, size_t axis_num, int *axes)
{
    if (axis) {
        for (size_t i = 0; i < axis_num && i < 3; i++)
            axes[i] = axis[i];
        return (int)axis_num;
    }
    for (int i = 0; i < x->ndim && i < 3; i++)
        axes[i] = i;
    return x->ndim;
}

int mlx_linalg_norm(mlx_array *res, const mlx_array a, double ord, const int *axis, size_t axis_num, bool keepdims,
                    const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_array *x = mc_op_arg(a, norm_fn, "a");
    if (mc_op_check_res(res, norm_fn) || !x)
        return 1;
    int axes[3], n = norm_axes(x, axis, axis_num, axes);
    if (n == 1)
        return vector_norm(res, a, ord, axes[0], keepdims, s);
    if (n == 2)
        return matrix_norm(res, a, ord, axes, keepdims, s);
    return mc_error("[%s] Received too many axes for norm.", norm_fn);
}

int mlx_linalg_norm_matrix(mlx_array *res, const mlx_array a, const char *ord, const int *axis, size_t axis_num,
                           bool keepdims, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_array *x = mc_op_arg(a, norm_fn, "a");
    if (mc_op_check_res(res, norm_fn) || !x)
        return 1;
    if (!ord)
        return mc_error("[%s] ord is NULL.", norm_fn);
    int axes[3], n = norm_axes(x, axis, axis_num, axes);
    if (n != 2)
        return mc_error("[%s] Norm '%s' only supported for matrices, but received %d axis/axes.", norm_fn, ord, n);
    if (!strcmp(ord, "f") || !strcmp(ord, "fro"))
        return l2_norm(res, a, axes, 2, keepdims, s);
    if (!strcmp(ord, "nuc"))
        return svd_norm(res, a, axes, 0, keepdims, s);
    return mc_error("[%s] Invalid ord value '%s' for matrix norm.", norm_fn, ord);
}

int mlx_linalg_norm_l2(mlx_array *res, const mlx_array a, const int *axis, size_t axis_num, bool keepdims,
                       const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    mc_array *x = mc_op_arg(a, norm_fn, "a");
    if (mc_op_check_res(res, norm_fn) || !x)
        return 1;
    if (!axis) {
        /* MLX: the norm of the flattened array over its one axis */
        mlx_array f = mlx_array_new();
        int zero = 0, rc = mlx_flatten(&f, a, 0, -1, s) || l2_norm(res, f, &zero, 1, keepdims, s);
        mlx_array_free(f);
        return rc;
    }
    if (axis_num > 2)
        return mc_error("[%s] Received too many axes for norm.", norm_fn);
    return l2_norm(res, a, axis, (int)axis_num, keepdims, s);
}

/* -- cross ------------------------------------------------------------------ */

static int cross_check(const mc_array *x, int axis, const char *fn)
{
    if (axis >= x->ndim || axis + x->ndim < 0)
        return mc_error("[%s] axis %d invalid for array with %d dimensions.", fn, axis, x->ndim);
    int d = x->shape[axis < 0 ? axis + x->ndim : axis];
    if (d < 2 || d > 3)
        return mc_error("[%s] The specified axis must have size 2 or 3.", fn);
    return 0;
}

/* x * y, or -(x * y) if neg, or x1 * y1 - x2 * y2 when x2 is given. */
static int prod_term(mlx_array *res, mlx_array x1, mlx_array y1, const mlx_array *x2, const mlx_array *y2,
                     bool neg, mlx_stream s)
{
    mlx_array t = mlx_array_new();
    int rc = mlx_multiply(res, x1, y1, s);
    if (x2)
        rc = rc || mlx_multiply(&t, *x2, *y2, s) || mlx_subtract(res, *res, t, s);
    if (neg)
        rc = rc || mlx_negative(res, *res, s);
    mlx_array_free(t);
    return rc;
}

int mlx_linalg_cross(mlx_array *res, const mlx_array a, const mlx_array b, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "linalg::cross";
    mc_array *x = mc_op_arg(a, fn, "a"), *y = x ? mc_op_arg(b, fn, "b") : NULL;
    if (mc_op_check_res(res, fn) || !y || cross_check(x, axis, fn) || cross_check(y, axis, fn))
        return 1;
    bool a2 = x->shape[axis < 0 ? axis + x->ndim : axis] == 2,
         b2 = y->shape[axis < 0 ? axis + y->ndim : axis] == 2;
    mlx_dtype t = mc_promote(x->dtype, y->dtype);
    int as[MC_MAX_NDIM], bs[MC_MAX_NDIM], out[MC_MAX_NDIM], nd;
    memcpy(as, x->shape, sizeof(int) * (size_t)x->ndim);
    memcpy(bs, y->shape, sizeof(int) * (size_t)y->ndim);
    as[axis < 0 ? axis + x->ndim : axis] = 3;
    bs[axis < 0 ? axis + y->ndim : axis] = 3;
    if (mc_broadcast_shapes(x->ndim, as, y->ndim, bs, &nd, out, fn))
        return 1;
    int ax = axis < 0 ? axis + nd : axis;
    mlx_array ac = mlx_array_new(), bc = mlx_array_new(),
              c[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()};
    mlx_array ai[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()};
    mlx_array bi[3] = {mlx_array_new(), mlx_array_new(), mlx_array_new()};
    mlx_vector_array sa = mlx_vector_array_new(), sb = mlx_vector_array_new(), parts = mlx_vector_array_new();
    out[ax] = a2 ? 2 : 3;
    int rc = !sa.ctx || !sb.ctx || !parts.ctx || mlx_astype(&ac, a, t, s) ||
             mlx_broadcast_to(&ac, ac, out, (size_t)nd, s);
    out[ax] = b2 ? 2 : 3;
    rc = rc || mlx_astype(&bc, b, t, s) || mlx_broadcast_to(&bc, bc, out, (size_t)nd, s) ||
         mlx_split(&sa, ac, a2 ? 2 : 3, ax, s) || mlx_split(&sb, bc, b2 ? 2 : 3, ax, s);
    for (int i = 0; i < 3 && !rc; i++) {
        if (i < (a2 ? 2 : 3))
            rc = mlx_vector_array_get(&ai[i], sa, (size_t)i);
        if (!rc && i < (b2 ? 2 : 3))
            rc = mlx_vector_array_get(&bi[i], sb, (size_t)i);
    }
    if (rc) {
    } else if (a2 && b2) {
        rc = mlx_zeros_like(&c[0], ai[0], s) || mlx_array_set(&c[1], c[0]);
    } else if (b2) {
        rc = prod_term(&c[0], ai[2], bi[1], NULL, NULL, true, s) ||
             prod_term(&c[1], ai[2], bi[0], NULL, NULL, false, s);
    } else if (a2) {
        rc = prod_term(&c[0], ai[1], bi[2], NULL, NULL, false, s) ||
             prod_term(&c[1], ai[0], bi[2], NULL, NULL, true, s);
    } else {
        rc = prod_term(&c[0], ai[1], bi[2], &ai[2], &bi[1], false, s) ||
             prod_term(&c[1], ai[2], bi[0], &ai[0], &bi[2], false, s);
    }
    rc = rc || prod_term(&c[2], ai[0], bi[1], &ai[1], &bi[0], false, s) ||
         mlx_vector_array_set_data(&parts, c, 3) || mlx_concatenate_axis(res, parts, ax, s);
    mlx_array_free(ac), mlx_array_free(bc);
    for (int i = 0; i < 3; i++)
        mlx_array_free(c[i]), mlx_array_free(ai[i]), mlx_array_free(bi[i]);
    mlx_vector_array_free(sa), mlx_vector_array_free(sb), mlx_vector_array_free(parts);
    return rc;
}
