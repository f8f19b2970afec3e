/* Owns the linear algebra ops: matmul and addmm (one node each), and
 * inner, outer, tensordot, tensordot_axis and kron, composed from reshape,
 * transpose, matmul and multiply as MLX composes them. Argument checks and
 * their messages follow MLX's ops.cpp. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "graph/prims_matmul.h"
#include "graph/prims_view.h"
#include "ops/op_util.h"
#include "runtime/error.h"

/* ---- building blocks on descriptors; each returns a new reference or
 * NULL with an error reported ---- */

static mc_array *reshaped(mc_array *x, int ndim, const int *shape, const char *fn)
{
    if (mc_array_has_shape(x, ndim, shape))
        return mc_array_retain(x);
    return mc_node_dims(MC_PRIM_RESHAPE, x, ndim, shape, fn);
}

static mc_array *transposed(mc_array *x, const int *perm, const char *fn)
{
    bool identity = true;
    for (int i = 0; i < x->ndim; i++)
        identity = identity && perm[i] == i;
    if (identity)
        return mc_array_retain(x);
    return mc_node_dims(MC_PRIM_TRANSPOSE, x, x->ndim, perm, fn);
}

static mc_array *binary(mc_array *x, mc_array *y, mc_binary_op op, const char *fn)
{
    mlx_array r = {NULL};
    if (mc_op_binary(&r, mc_handle(x), mc_handle(y), op, false, fn))
        return NULL;
    return mc_arr(r);
}

/* matmul on descriptors: MLX's checks in MLX's order (shapes, then the
 * promoted dtype must be inexact), then one Matmul node. */
static mc_array *matmul_arrays(mc_array *a, mc_array *b, const char *fn)
{
    if (mc_matmul_check_shapes(a, b, fn))
        return NULL;
    mlx_dtype t = mc_promote(a->dtype, b->dtype);
    if (!mc_dtype_is_inexact(t)) {
        mc_error("[%s] Only inexact types are supported but %s and %s were provided which results in "
                 "%s, which is not a floating point type.", fn, mc_dtype_name(a->dtype),
                 mc_dtype_name(b->dtype), mc_dtype_name(t));
        return NULL;
    }
    mc_array *out = NULL;
    mc_array *in[2] = {mc_node_astype(a, t, fn), NULL};
    if (in[0])
        in[1] = mc_node_astype(b, t, fn);
    if (in[1])
        out = mc_node_new(fn, MC_PRIM_MATMUL, in, 2, NULL, 0);
    mc_array_release(in[0]);
    mc_array_release(in[1]);
    return out;
}

/* Reads the two operands of a binary linear algebra op. */
static int two_args(mlx_array *res, mlx_array a, mlx_array b, mc_array **x, mc_array **y, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return 1;
    *x = mc_op_arg(a, fn, "a");
    *y = *x ? mc_op_arg(b, fn, "b") : NULL;
    return *y ? 0 : 1;
}

int mlx_matmul(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "matmul";
    mc_array *x, *y;
    if (two_args(res, a, b, &x, &y, fn))
        return 1;
    return mc_op_store(res, matmul_arrays(x, y, fn), fn);
}

/* ---- addmm ---- */

/* MLX computes complex addmm as alpha * (a @ b) + beta * c. */
static mc_array *addmm_complex(mc_array *c, mc_array *a, mc_array *b, float alpha, float beta, const char *fn)
{
    mc_array *out = NULL, *ab = NULL, *al = NULL, *be = NULL, *left = NULL, *right = NULL;
    ab = matmul_arrays(a, b, fn);
    if (!ab)
        goto done;
    al = mc_array_scalar(fn, MLX_FLOAT32, &alpha);
    be = al ? mc_array_scalar(fn, MLX_FLOAT32, &beta) : NULL;
    if (!be)
        goto done;
    left = binary(ab, al, MC_B_MULTIPLY, fn);
    right = left ? binary(be, c, MC_B_MULTIPLY, fn) : NULL;
    if (right)
        out = binary(left, right, MC_B_ADD, fn);
done:
    mc_array_release(ab);
    mc_array_release(al);
    mc_array_release(be);
    mc_array_release(left);
    mc_array_release(right);
    return out;
}

int mlx_addmm(mlx_array *res, const mlx_array c, const mlx_array a, const mlx_array b, float alpha, float beta,
              const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "addmm";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *z = mc_op_arg(c, fn, "c");
    mc_array *x = z ? mc_op_arg(a, fn, "a") : NULL;
    mc_array *y = x ? mc_op_arg(b, fn, "b") : NULL;
    if (!y)
        return 1;
    if (x->ndim == 0 || y->ndim == 0)
        return mc_error("[%s] Got 0 dimension input. Inputs must have at least one dimension.", fn);
    mlx_dtype t = mc_promote(mc_promote(x->dtype, y->dtype), z->dtype);
    if (t == MLX_COMPLEX64)
        return mc_op_store(res, addmm_complex(z, x, y, alpha, beta, fn), fn);
    if (mc_matmul_check_shapes(x, y, fn))
        return 1;
    if (!mc_dtype_is_float(t))
        return mc_error("[%s] Only real floating point types are supported but %s, %s and %s were "
                        "provided which results in %s, which is not a real floating point type.", fn,
                        mc_dtype_name(z->dtype), mc_dtype_name(x->dtype), mc_dtype_name(y->dtype),
                        mc_dtype_name(t));
    mc_array *out = NULL;
    mc_array *in[3] = {mc_node_astype(x, t, fn), NULL, NULL};
    if (in[0])
        in[1] = mc_node_astype(y, t, fn);
    if (in[1])
        in[2] = mc_node_astype(z, t, fn);
    if (in[2]) {
        mc_addmm_params p = {alpha, beta};
        out = mc_node_new(fn, MC_PRIM_ADDMM, in, 3, &p, sizeof p);
    }
    for (int i = 0; i < 3; i++)
        mc_array_release(in[i]);
    return mc_op_store(res, out, fn);
}

/* ---- tensordot, inner, outer ---- */

/* x with its axes permuted by perm, as a matrix of shape dims. A 2-D
 * transpose keeps its shape and reaches matmul as a view, which BLAS reads
 * as a transpose; dims that merge make Reshape copy in logical order. */
static mc_array *as_matrix(mc_array *x, const int *perm, const int *dims, const char *fn)
{
    mc_array *t = transposed(x, perm, fn);
    if (!t)
        return NULL;
    mc_array *m = reshaped(t, 2, dims, fn);
    mc_array_release(t);
    return m;
}

/* Contracts axes axa of a with axes axb of b (n pairs, any sign): a's other
 * axes move to the front and b's to the back, both become matrices, one
 * matmul, and the result takes the shape of the free axes. */
static mc_array *tensordot_arrays(mc_array *a, mc_array *b, const int *axa, const int *axb, int n, const char *fn)
{
    int na[MC_MAX_NDIM], nbx[MC_MAX_NDIM];
    bool ca[MC_MAX_NDIM] = {false}, cb[MC_MAX_NDIM] = {false};
    int64_t csize = 1, size1 = 1, size2 = 1;
    for (int i = 0; i < n; i++) {
        if (mc_op_axis(axa[i], a->ndim, &na[i], fn) || mc_op_axis(axb[i], b->ndim, &nbx[i], fn))
            return NULL;
        if (ca[na[i]] || cb[nbx[i]]) {
            mc_error("[%s] Repeated axis in the contracted axes.", fn);
            return NULL;
        }
        ca[na[i]] = cb[nbx[i]] = true;
        if (a->shape[na[i]] != b->shape[nbx[i]]) {
            mc_error("[%s] a and b must have the same shape on the contracted axes.", fn);
            return NULL;
        }
        /* saturating: an empty operand's other dims may multiply past
         * int64 (a 0 later still gives 0); > INT_MAX is refused below */
        if (__builtin_mul_overflow(csize, (int64_t)a->shape[na[i]], &csize))
            csize = INT64_MAX;
    }
    int t1[MC_MAX_NDIM], t2[MC_MAX_NDIM], rshape[2 * MC_MAX_NDIM];
    int k1 = 0, k2 = 0, nr = 0;
    for (int i = 0; i < a->ndim; i++) {
        if (!ca[i]) {
            t1[k1++] = i;
            if (__builtin_mul_overflow(size1, (int64_t)a->shape[i], &size1))
                size1 = INT64_MAX;
            rshape[nr++] = a->shape[i];
        }
    }
    for (int i = 0; i < n; i++) {
        t1[k1++] = na[i];
        t2[k2++] = nbx[i];
    }
    for (int i = 0; i < b->ndim; i++) {
        if (!cb[i]) {
            t2[k2++] = i;
            if (__builtin_mul_overflow(size2, (int64_t)b->shape[i], &size2))
                size2 = INT64_MAX;
            rshape[nr++] = b->shape[i];
        }
    }
    if (csize > INT_MAX || size1 > INT_MAX || size2 > INT_MAX) {
        mc_error("[%s] The operands are too large to contract (a dimension of the matrix product "
                 "would exceed %d).", fn, INT_MAX);
        return NULL;
    }
    if (nr > MC_MAX_NDIM) {
        mc_error("[%s] The result would have %d dimensions; at most %d are supported.", fn, nr, MC_MAX_NDIM);
        return NULL;
    }
    mc_array *out = NULL, *x = NULL, *y = NULL, *p = NULL;
    int xs[2] = {(int)size1, (int)csize}, ys[2] = {(int)csize, (int)size2};
    if (!(x = as_matrix(a, t1, xs, fn)) || !(y = as_matrix(b, t2, ys, fn)) || !(p = matmul_arrays(x, y, fn)))
        goto done;
    out = reshaped(p, nr, rshape, fn);
done:
    mc_array_release(x);
    mc_array_release(y);
    mc_array_release(p);
    return out;
}

int mlx_tensordot(mlx_array *res, const mlx_array a, const mlx_array b, const int *axes_a, size_t axes_a_num,
                  const int *axes_b, size_t axes_b_num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "tensordot";
    mc_array *x, *y;
    if (two_args(res, a, b, &x, &y, fn))
        return 1;
    if (axes_a_num != axes_b_num)
        return mc_error("[%s] axes must have the same size.", fn);
    if (axes_a_num && (!axes_a || !axes_b))
        return mc_error("[%s] The axes pointer is NULL for %zu axes.", fn, axes_a_num);
    if (axes_a_num > (size_t)x->ndim || axes_a_num > (size_t)y->ndim)
        return mc_error("[%s] %zu axes to contract but a has %d and b has %d dimensions.", fn, axes_a_num,
                        x->ndim, y->ndim);
    return mc_op_store(res, tensordot_arrays(x, y, axes_a, axes_b, (int)axes_a_num, fn), fn);
}

int mlx_tensordot_axis(mlx_array *res, const mlx_array a, const mlx_array b, int axis, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "tensordot";
    mc_array *x, *y;
    if (two_args(res, a, b, &x, &y, fn))
        return 1;
    if (axis < 0)
        return mc_error("[%s] axis must be greater or equal to 0.", fn);
    if (axis > x->ndim || axis > y->ndim)
        return mc_error("[%s] axis must be less than the number of dimensions of a and b.", fn);
    int axa[MC_MAX_NDIM], axb[MC_MAX_NDIM];
    for (int i = 0; i < axis; i++) {
        axb[i] = i;
        axa[i] = i - axis;
    }
    return mc_op_store(res, tensordot_arrays(x, y, axa, axb, axis, fn), fn);
}

int mlx_inner(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "inner";
    mc_array *x, *y;
    if (two_args(res, a, b, &x, &y, fn))
        return 1;
    if (x->ndim == 0 || y->ndim == 0)
        return mc_op_store(res, binary(x, y, MC_B_MULTIPLY, fn), fn);
    if (x->shape[x->ndim - 1] != y->shape[y->ndim - 1])
        return mc_error("[%s] a and b must have the same last dimension.", fn);
    int last = -1;
    return mc_op_store(res, tensordot_arrays(x, y, &last, &last, 1, fn), fn);
}

int mlx_outer(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "outer";
    mc_array *x, *y;
    if (two_args(res, a, b, &x, &y, fn))
        return 1;
    if (x->size > INT_MAX || y->size > INT_MAX)
        return mc_error("[%s] An operand has more than %d elements.", fn, INT_MAX);
    int xs[2] = {(int)x->size, 1}, ys[1] = {(int)y->size};
    mc_array *out = NULL, *col = NULL, *row = NULL;
    if ((col = reshaped(x, 2, xs, fn)) && (row = reshaped(y, 1, ys, fn)))
        out = binary(col, row, MC_B_MULTIPLY, fn);
    mc_array_release(col);
    mc_array_release(row);
    return mc_op_store(res, out, fn);
}

/* ---- kron ---- */

int mlx_kron(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "kron";
    mc_array *x, *y;
    if (two_args(res, a, b, &x, &y, fn))
        return 1;
    if (x->size == 0 || y->size == 0)
        return mc_error("[%s] Input arrays cannot be empty.", fn);
    int nd = x->ndim > y->ndim ? x->ndim : y->ndim;
    if (2 * nd > MC_MAX_NDIM)
        return mc_error("[%s] Inputs of %d dimensions need %d intermediate dimensions; at most %d are "
                        "supported.", fn, nd, 2 * nd, MC_MAX_NDIM);
    /* a's dims interleaved with ones, b's after them: their product
     * broadcast to (a0, b0, a1, b1, ...) reads as the Kronecker product */
    int as[MC_MAX_NDIM], bs[MC_MAX_NDIM], os[MC_MAX_NDIM];
    for (int i = 0; i < 2 * nd; i++)
        as[i] = bs[i] = 1;
    for (int i = 0; i < nd; i++)
        os[i] = 1;
    for (int i = nd - 1, j = x->ndim - 1; j >= 0; i--, j--) {
        as[2 * i] = x->shape[j];
        os[i] = x->shape[j];
    }
    for (int i = nd - 1, j = y->ndim - 1; j >= 0; i--, j--) {
        bs[2 * i + 1] = y->shape[j];
        int64_t v = (int64_t)os[i] * y->shape[j];
        if (v > INT_MAX)
            return mc_error("[%s] Shape dimension %lld is outside the supported range [%d, %d]. MLX "
                            "currently uses 32-bit integers for shape dimensions.", fn, (long long)v,
                            INT_MIN, INT_MAX);
        os[i] = (int)v;
    }
    mc_array *out = NULL, *xr = NULL, *yr = NULL, *p = NULL;
    if ((xr = reshaped(x, 2 * nd, as, fn)) && (yr = reshaped(y, 2 * nd, bs, fn)) &&
        (p = binary(xr, yr, MC_B_MULTIPLY, fn)))
        out = reshaped(p, nd, os, fn);
    mc_array_release(xr);
    mc_array_release(yr);
    mc_array_release(p);
    return mc_op_store(res, out, fn);
}
