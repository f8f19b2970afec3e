/* Owns the float distributions drawn in one pass from a key: uniform,
 * normal (both forms), gumbel, laplace and truncated_normal. Each checks
 * its arguments as MLX's mlx/random.cpp does, prepares the parameter arrays
 * exactly as MLX's composition computes them (converted to the dtype,
 * differences and products rounded in it), and builds one RandomDist node
 * whose kernel finishes the formula per element (simd/random_dist.h).
 * Why fused rather than composed of our ops: MLX's erfinv, erf and log on
 * the CPU are its own polynomials and libm's, not our unary kernels, and a
 * single pass is what makes the generator run at memory speed. */
#include <math.h>
#include <string.h>

#include "graph/elementwise.h"
#include "ops/op_util.h"
#include "ops/random_internal.h"
#include "runtime/error.h"

/* The checks every distribution shares; fills the params' shape. */
static int dist_begin(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, const char *fn)
{
    return mc_op_check_res(res, fn) || mc_op_check_shape(shape, shape_num, fn) || mc_op_check_dtype(dtype, fn);
}

/* p for the kernel: one element as it is, else broadcast to shape and
 * made row-major (a copy only when p varies across the output). */
static int param_input(mlx_array *out, mlx_array p, int ndim, const int *shape, mlx_stream s)
{
    if (mc_arr(p)->size == 1)
        return mlx_array_set(out, p);
    return mlx_broadcast_to(out, p, shape, (size_t)ndim, s) || mlx_contiguous(out, *out, false, s);
}

/* Builds the RandomDist node into *res from the key and up to two
 * parameter arrays (empty handles are left out). */
static int dist_node(mlx_array *res, mc_random_dist_params *p, mlx_array key, mlx_array p0, mlx_array p1,
                     const char *fn, mlx_stream s)
{
    mlx_array in0 = mlx_array_new(), in1 = mlx_array_new();
    mc_array *k = NULL, *out = NULL;
    int rc = (p0.ctx && param_input(&in0, p0, p->ndim, p->shape, s)) ||
             (p1.ctx && param_input(&in1, p1, p->ndim, p->shape, s));
    if (!rc && (k = mc_random_key_arg(key, fn)) != NULL) {
        mc_array *in[3] = {k, mc_arr(in0), mc_arr(in1)};
        p->n_params = (in0.ctx != NULL) + (in1.ctx != NULL);
        if (!in0.ctx)
            in[1] = in[2];
        out = mc_node_new(fn, MC_PRIM_RANDOM_DIST, in, 1 + p->n_params, p, sizeof *p);
    }
    rc = rc || !k || mc_op_store(res, out, fn);
    mc_array_release(k);
    mlx_array_free(in0), mlx_array_free(in1);
    return rc;
}

static void dist_params(mc_random_dist_params *p, mc_rdist_kind kind, mlx_dtype dtype, const int *shape,
                        size_t ndim)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->dtype = dtype;
    p->ndim = (int)ndim;
    if (ndim)
        memcpy(p->shape, shape, sizeof(int) * ndim);
}

/* MLX's uniform refuses float64 after building its operands. */
static int uniform_type(mlx_dtype dtype, const char *fn)
{
    if (dtype == MLX_FLOAT64)
        return mc_error("[%s] Unsupported type float64: uniform draws float32, float16 or bfloat16.", fn);
    return 0;
}

/* range's shape must broadcast into shape (MLX's uniform check). */
static int check_into_shape(mlx_array range, const int *shape, size_t shape_num, const char *fn)
{
    mc_array *r = mc_arr(range);
    int nd, out[MC_MAX_NDIM];
    char a[512], b[512];
    if (mc_broadcast_shapes((int)shape_num, shape, r->ndim, r->shape, &nd, out, fn))
        return 1;
    if (nd != (int)shape_num || memcmp(out, shape, sizeof(int) * shape_num) != 0)
        return mc_error("[%s] Cannot generate random values of shape %s from broadcasted shape %s.", fn,
                        mc_shape_str(a, sizeof a, (int)shape_num, shape), mc_shape_str(b, sizeof b, nd, out));
    return 0;
}

static int uniform_impl(mlx_array *res, mlx_array low, mlx_array high, const int *shape, size_t shape_num,
                        mlx_dtype dtype, mlx_array key, const char *fn, mlx_stream s)
{
    if (!mc_op_arg(low, fn, "low") || !mc_op_arg(high, fn, "high"))
        return 1;
    if (!mc_dtype_is_float(dtype))
        return mc_error("[%s] Can only generate uniform numbers with real floating point type, not %s.", fn,
                        mc_dtype_name(dtype));
    mlx_array lo = mlx_array_new(), hi = mlx_array_new(), range = mlx_array_new();
    int rc = mlx_astype(&lo, low, dtype, s) || mlx_astype(&hi, high, dtype, s) ||
             mlx_subtract(&range, hi, lo, s) || check_into_shape(range, shape, shape_num, fn) ||
             uniform_type(dtype, fn);
    if (!rc) {
        mc_random_dist_params p;
        dist_params(&p, MC_RD_UNIFORM, dtype, shape, shape_num);
        rc = dist_node(res, &p, key, lo, range, fn, s);
    }
    mlx_array_free(lo), mlx_array_free(hi), mlx_array_free(range);
    return rc;
}

int mlx_random_uniform(mlx_array *res, const mlx_array low, const mlx_array high, const int *shape,
                       size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "uniform";
    if (dist_begin(res, shape, shape_num, dtype, fn))
        return 1;
    return uniform_impl(res, low, high, shape, shape_num, dtype, key, fn, s);
}

/* MLX's complex normal: erfinv of uniform float32 pairs on a trailing axis
 * of 2, read as complex64 (no sqrt(2) factor, as in MLX), then scale * x
 * and loc + x without casting the parameters. */
static int complex_normal(mlx_array *res, const int *shape, size_t shape_num, mlx_array loc, mlx_array scale,
                          mlx_array key, const char *fn, mlx_stream s)
{
    if (shape_num + 1 > MC_MAX_NDIM)
        return mc_error("[%s] A complex64 draw of %zu dimensions has too many.", fn, shape_num);
    int pairs[MC_MAX_NDIM];
    for (size_t i = 0; i < shape_num; i++)
        pairs[i] = shape[i];
    pairs[shape_num] = 2;
    mlx_array lo = mlx_array_new_float32(nextafterf(-1.0f, 0.0f)), hi = mlx_array_new_float32(1.0f);
    mlx_array x = mlx_array_new();
    int rc = uniform_impl(&x, lo, hi, pairs, shape_num + 1, MLX_FLOAT32, key, fn, s) || mlx_erfinv(&x, x, s) ||
             mlx_view(&x, x, MLX_COMPLEX64, s) || mlx_squeeze_axis(&x, x, -1, s) ||
             (scale.ctx && mlx_multiply(&x, scale, x, s)) || (loc.ctx && mlx_add(&x, loc, x, s)) ||
             mlx_array_set(res, x);
    mlx_array_free(lo), mlx_array_free(hi), mlx_array_free(x);
    return rc;
}

/* MLX's normal with optional loc and scale arrays (empty handles). */
static int normal_impl(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, mlx_array loc,
                       mlx_array scale, mlx_array key, const char *fn, mlx_stream s)
{
    if (dist_begin(res, shape, shape_num, dtype, fn))
        return 1;
    if (dtype == MLX_COMPLEX64)
        return complex_normal(res, shape, shape_num, loc, scale, key, fn, s);
    if (!mc_dtype_is_float(dtype))
        return mc_error("[%s] Can only generate uniform numbers with floating point type, not %s.", fn,
                        mc_dtype_name(dtype));
    mlx_array std = mlx_array_new(), loc_t = mlx_array_new(), sc = mlx_array_new();
    mlx_array one = mlx_array_new(), core = mlx_array_new();
    int rc = mlx_array_set_float64(&std, sqrt(2.0)) || mlx_astype(&std, std, dtype, s) ||
             (scale.ctx && (mlx_astype(&sc, scale, dtype, s) || mlx_multiply(&std, std, sc, s))) ||
             (loc.ctx && mlx_astype(&loc_t, loc, dtype, s));
    /* the result's shape: shape broadcast with the parameters' */
    int nd = (int)shape_num, out[MC_MAX_NDIM], prev[MC_MAX_NDIM];
    rc = rc || mc_broadcast_shapes((int)shape_num, shape, mc_arr(std)->ndim, mc_arr(std)->shape, &nd, out, fn);
    if (!rc && loc.ctx) {
        memcpy(prev, out, sizeof(int) * (size_t)nd);
        rc = mc_broadcast_shapes(nd, prev, mc_arr(loc_t)->ndim, mc_arr(loc_t)->shape, &nd, out, fn);
    }
    if (!rc) {
        mc_random_dist_params p;
        dist_params(&p, MC_RD_NORMAL, dtype, shape, shape_num);
        if (nd == (int)shape_num) {
            /* the parameters vary within the samples' shape: one pass */
            rc = dist_node(res, &p, key, std, loc_t, fn, s);
        } else {
            /* they widen the result: draw sqrt(2)-free samples (times 1,
             * which rounds nothing) and finish as MLX's ops do */
            rc = mlx_array_set_float64(&one, 1.0) || mlx_astype(&one, one, dtype, s) ||
                 dist_node(&core, &p, key, one, mlx_array_new(), fn, s) || mlx_multiply(&core, std, core, s) ||
                 (loc.ctx && mlx_add(&core, loc_t, core, s)) || mlx_array_set(res, core);
        }
    }
    mlx_array_free(std), mlx_array_free(loc_t), mlx_array_free(sc), mlx_array_free(one), mlx_array_free(core);
    return rc;
}

int mlx_random_normal_broadcast(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype,
                                const mlx_array loc, const mlx_array scale, const mlx_array key,
                                const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return normal_impl(res, shape, shape_num, dtype, loc, scale, key, "normal", s);
}

int mlx_random_normal(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, float loc, float scale,
                      const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    /* as MLX's float overload: loc 0 and scale 1 are left out */
    mlx_array l = mlx_array_new(), sc = mlx_array_new();
    int rc = (loc != 0 && mlx_array_set_float32(&l, loc)) || (scale != 1 && mlx_array_set_float32(&sc, scale)) ||
             normal_impl(res, shape, shape_num, dtype, l, sc, key, "normal", s);
    mlx_array_free(l), mlx_array_free(sc);
    return rc;
}

int mlx_random_gumbel(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, const mlx_array key,
                      const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "gumbel";
    if (dist_begin(res, shape, shape_num, dtype, fn))
        return 1;
    if (!mc_dtype_is_float(dtype))
        return mc_error("[%s] Can only generate uniform numbers with real floating point type, not %s.", fn,
                        mc_dtype_name(dtype));
    if (uniform_type(dtype, fn))
        return 1;
    mc_random_dist_params p;
    dist_params(&p, MC_RD_GUMBEL, dtype, shape, shape_num);
    return dist_node(res, &p, key, mlx_array_new(), mlx_array_new(), fn, s);
}

int mlx_random_laplace(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, float loc, float scale,
                       const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "laplace";
    if (dist_begin(res, shape, shape_num, dtype, fn))
        return 1;
    if (!mc_dtype_is_float(dtype))
        return mc_error("[%s] Can only generate uniform numbers with real floating point type, not %s.", fn,
                        mc_dtype_name(dtype));
    mc_random_dist_params p;
    dist_params(&p, MC_RD_LAPLACE, dtype, shape, shape_num);
    p.scale = scale, p.loc = loc;
    p.has_scale = scale != 1.0f, p.has_loc = loc != 0.0f;
    return dist_node(res, &p, key, mlx_array_new(), mlx_array_new(), fn, s);
}

int mlx_random_truncated_normal(mlx_array *res, const mlx_array lower, const mlx_array upper, const int *shape,
                                size_t shape_num, mlx_dtype dtype, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "truncated_normal";
    if (dist_begin(res, shape, shape_num, dtype, fn) || !mc_op_arg(lower, fn, "lower") ||
        !mc_op_arg(upper, fn, "upper"))
        return 1;
    if (!mc_dtype_is_float(dtype))
        return mc_error("[%s] trunc_normal only accepts floating point dtypes, not %s.", fn, mc_dtype_name(dtype));
    mlx_array lo = mlx_array_new(), hi = mlx_array_new(), both = mlx_array_new();
    /* the uniform draw's range has the shape of erf(upper) - erf(lower) */
    int rc = mlx_astype(&lo, lower, dtype, s) || mlx_astype(&hi, upper, dtype, s) ||
             mlx_subtract(&both, hi, lo, s) || check_into_shape(both, shape, shape_num, fn) ||
             uniform_type(dtype, fn);
    if (!rc) {
        mc_random_dist_params p;
        dist_params(&p, MC_RD_TRUNCATED, dtype, shape, shape_num);
        rc = dist_node(res, &p, key, lo, hi, fn, s);
    }
    mlx_array_free(lo), mlx_array_free(hi), mlx_array_free(both);
    return rc;
}
