/* Owns the draws MLX composes of other ops on top of bits, uniform and
 * gumbel: bernoulli, randint, categorical (three forms) and
 * multivariate_normal. Each is the same composition as mlx/random.cpp's,
 * through our ops, which round as MLX's do. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "graph/elementwise.h"
#include "ops/op_util.h"
#include "ops/random_internal.h"
#include "runtime/error.h"

int mlx_random_bernoulli(mlx_array *res, const mlx_array p, const int *shape, size_t shape_num,
                         const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "bernoulli";
    mc_array *pa = mc_op_arg(p, fn, "p");
    if (mc_op_check_res(res, fn) || !pa || mc_op_check_shape(shape, shape_num, fn))
        return 1;
    if (!mc_dtype_is_float(pa->dtype))
        return mc_error("[%s] bernoulli probability `p` must be a float type, not %s.", fn,
                        mc_dtype_name(pa->dtype));
    /* p on the scale [0, the float32 after 2^32): p >= 1 is always true
     * and p <= 0 never */
    mlx_array upper = mlx_array_new_float(nextafterf(4294967295.0f, FLT_MAX));
    mlx_array bits = mlx_array_new(), thr = mlx_array_new(), out = mlx_array_new();
    mc_array *k = upper.ctx ? mc_random_key_arg(key, fn) : NULL; /* a failed upper has reported */
    int rc = !k;
    if (!rc) {
        bits.ctx = mc_random_bits_node(k, (int)shape_num, shape, 4, fn);
        rc = !bits.ctx || mlx_multiply(&thr, p, upper, s) || mlx_less(&out, bits, thr, s);
    }
    if (!rc) {
        mc_array *o = mc_arr(out);
        char a[512], b[512];
        if (o->ndim != (int)shape_num || memcmp(o->shape, shape, sizeof(int) * shape_num) != 0)
            rc = mc_error("[%s] shape of `p` %s is incompatible with argument `shape` %s.", fn,
                          mc_shape_str(a, sizeof a, pa->ndim, pa->shape),
                          mc_shape_str(b, sizeof b, (int)shape_num, shape));
    }
    rc = rc || mlx_array_set(res, out);
    mc_array_release(k);
    mlx_array_free(upper), mlx_array_free(bits), mlx_array_free(thr), mlx_array_free(out);
    return rc;
}

int mlx_random_randint(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "randint";
    if (mc_op_check_res(res, fn) || mc_op_check_dtype(dtype, fn) || !mc_op_arg(low, fn, "low") ||
        !mc_op_arg(high, fn, "high"))
        return 1;
    if (mc_dtype_is_inexact(dtype))
        return mc_error("[%s] randint only accepts integer dtypes and bool, not %s.", fn, mc_dtype_name(dtype));
    /* MLX 0.31.1: a float32 uniform draw, floored at low, truncated */
    mlx_array u = mlx_array_new();
    int rc = mlx_random_uniform(&u, low, high, shape, shape_num, MLX_FLOAT32, key, s) ||
             mlx_maximum(&u, u, low, s) || mlx_astype(&u, u, dtype, s) || mlx_array_set(res, u);
    mlx_array_free(u);
    return rc;
}

/* argmax(gumbel noise + logits) along the class axis, inserted into the
 * sample shape where it lines up with logits' axis (MLX's
 * categorical_impl). */
static int categorical_impl(mlx_array *res, mlx_array logits, int axis, int ndim, const int *shape, mlx_array key,
                            const char *fn, mlx_stream s)
{
    mc_array *l = mc_arr(logits);
    int gshape[MC_MAX_NDIM];
    int offset = axis + ndim - l->ndim + 1;
    if (ndim + 1 > MC_MAX_NDIM || offset < 0 || offset > ndim)
        return mc_error("[%s] Requested shape does not line up with logits of %d dimensions.", fn, l->ndim);
    memcpy(gshape, shape, sizeof(int) * (size_t)offset);
    gshape[offset] = l->shape[axis];
    memcpy(gshape + offset + 1, shape + offset, sizeof(int) * (size_t)(ndim - offset));
    mlx_array g = mlx_array_new();
    int rc = mlx_random_gumbel(&g, gshape, (size_t)ndim + 1, MLX_FLOAT32, key, s) || mlx_add(&g, g, logits, s) ||
             mlx_argmax_axis(&g, g, offset, false, s) || mlx_array_set(res, g);
    mlx_array_free(g);
    return rc;
}

static int categorical_axis(mlx_array logits, int axis, int *ax, const char *fn)
{
    mc_array *l = mc_op_arg(logits, fn, "logits");
    if (!l)
        return 1;
    *ax = axis < 0 ? axis + l->ndim : axis;
    if (*ax < 0 || *ax >= l->ndim)
        return mc_error("[%s] Invalid axis %d for logits with %d dimensions.", fn, axis, l->ndim);
    return 0;
}

int mlx_random_categorical_shape(mlx_array *res, const mlx_array logits, int axis, const int *shape,
                                 size_t shape_num, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "categorical";
    int ax;
    if (mc_op_check_res(res, fn) || categorical_axis(logits, axis, &ax, fn) ||
        mc_op_check_shape(shape, shape_num, fn))
        return 1;
    mc_array *l = mc_arr(logits);
    int reduced[MC_MAX_NDIM], nr = 0;
    for (int i = 0; i < l->ndim; i++)
        if (i != ax)
            reduced[nr++] = l->shape[i];
    /* broadcast(shape, reduced) == shape: reduced, right-aligned, has
     * shape's dims or ones */
    bool fits = nr <= (int)shape_num;
    for (int i = 1; fits && i <= nr; i++)
        fits = reduced[nr - i] == 1 || reduced[nr - i] == shape[shape_num - (size_t)i];
    char a[512], b[512];
    if (!fits)
        return mc_error("[%s] Requested shape %s is not broadcast compatible with reduced logits shape %s.", fn,
                        mc_shape_str(a, sizeof a, (int)shape_num, shape), mc_shape_str(b, sizeof b, nr, reduced));
    return categorical_impl(res, logits, ax, (int)shape_num, shape, key, fn, s);
}

int mlx_random_categorical_num_samples(mlx_array *res, const mlx_array logits_, int axis, int num_samples,
                                       const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "categorical";
    int ax;
    if (mc_op_check_res(res, fn) || categorical_axis(logits_, axis, &ax, fn))
        return 1;
    if (num_samples < 0)
        return mc_error("[%s] num_samples, %d, must be non-negative.", fn, num_samples);
    mlx_array logits = mlx_array_new();
    int rc = mlx_expand_dims(&logits, logits_, -1, s);
    if (!rc) {
        mc_array *l = mc_arr(logits);
        int shape[MC_MAX_NDIM], n = 0;
        for (int i = 0; i < l->ndim; i++)
            if (i != ax)
                shape[n++] = l->shape[i];
        shape[n - 1] = num_samples;
        rc = categorical_impl(res, logits, ax, n, shape, key, fn, s);
    }
    mlx_array_free(logits);
    return rc;
}

int mlx_random_categorical(mlx_array *res, const mlx_array logits, int axis, const mlx_array key,
                           const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "categorical";
    int ax;
    if (mc_op_check_res(res, fn) || categorical_axis(logits, axis, &ax, fn))
        return 1;
    mc_array *l = mc_arr(logits);
    int shape[MC_MAX_NDIM], n = 0;
    for (int i = 0; i < l->ndim; i++)
        if (i != ax)
            shape[n++] = l->shape[i];
    return categorical_impl(res, logits, ax, n, shape, key, fn, s);
}

int mlx_random_multivariate_normal(mlx_array *res, const mlx_array mean, const mlx_array cov, const int *shape,
                                   size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "multivariate_normal";
    mc_array *m = mc_op_arg(mean, fn, "mean"), *c = mc_op_arg(cov, fn, "cov");
    if (mc_op_check_res(res, fn) || !m || !c || mc_op_check_shape(shape, shape_num, fn) ||
        mc_op_check_dtype(dtype, fn))
        return 1;
    if (dtype != MLX_FLOAT32)
        return mc_error("[%s] dtype must be float32, not %s.", fn, mc_dtype_name(dtype));
    if (m->ndim < 1)
        return mc_error("[%s] mean must have at least one dimension.", fn);
    if (c->ndim < 2)
        return mc_error("[%s] cov must have at least two dimensions.", fn);
    int n = m->shape[m->ndim - 1];
    if (c->shape[c->ndim - 1] != c->shape[c->ndim - 2])
        return mc_error("[%s] last two dimensions of cov must be equal, not %d and %d.", fn, c->shape[c->ndim - 2],
                        c->shape[c->ndim - 1]);
    if (n != c->shape[c->ndim - 1])
        return mc_error("[%s] mean (last dimension %d) and cov (%d x %d) must have compatible shapes.", fn, n,
                        c->shape[c->ndim - 2], c->shape[c->ndim - 1]);
    /* broadcast(broadcast(cov batch, mean batch), shape) + (n) */
    int nd1, s1[MC_MAX_NDIM], nd2, out[MC_MAX_NDIM];
    if (mc_broadcast_shapes(c->ndim - 2, c->shape, m->ndim - 1, m->shape, &nd1, s1, fn) ||
        mc_broadcast_shapes(nd1, s1, (int)shape_num, shape, &nd2, out, fn))
        return 1;
    if (nd2 + 1 > MC_MAX_NDIM)
        return mc_error("[%s] the samples would have more than %d dimensions.", fn, MC_MAX_NDIM);
    out[nd2] = n;
    /* the square root of cov as MLX takes it: (U * sqrt(S)[..., None, :]) @ Vt */
    mlx_array cf = mlx_array_new(), u = mlx_array_new(), sv = mlx_array_new(), vt = mlx_array_new();
    mlx_array std = mlx_array_new(), z = mlx_array_new();
    mlx_vector_array usv = mlx_vector_array_new();
    /* an empty vector handle means its allocation failed (and reported) */
    int rc = !usv.ctx || mlx_astype(&cf, cov, MLX_FLOAT32, s) || mlx_linalg_svd(&usv, cf, true, s) ||
             mlx_vector_array_get(&u, usv, 0) || mlx_vector_array_get(&sv, usv, 1) ||
             mlx_vector_array_get(&vt, usv, 2) || mlx_sqrt(&sv, sv, s) || mlx_expand_dims(&sv, sv, -2, s) || mlx_multiply(&std, u, sv, s) ||
             mlx_matmul(&std, std, vt, s) || mlx_astype(&std, std, dtype, s);
    /* standard normal samples, then mean + (z[..., None, :] @ std)[..., 0, :] */
    rc = rc || mlx_random_normal(&z, out, (size_t)nd2 + 1, dtype, 0.0f, 1.0f, key, s) ||
         mlx_expand_dims(&z, z, -2, s) || mlx_matmul(&z, z, std, s) || mlx_squeeze_axis(&z, z, -2, s) ||
         mlx_add(&z, mean, z, s) || mlx_array_set(res, z);
    mlx_array_free(cf), mlx_array_free(u), mlx_array_free(sv), mlx_array_free(vt);
    mlx_array_free(std), mlx_array_free(z);
    mlx_vector_array_free(usv);
    return rc;
}
