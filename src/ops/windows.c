/* Owns the window functions (bartlett, blackman, hamming, hanning) and
 * pad_symmetric: compositions of existing ops, in MLX's float32 formulas
 * and order, so every step rounds where MLX's rounds. M < 1 gives an empty
 * float32 array and M == 1 a single one, as in MLX. */
#include "ops/op_util.h"
#include "runtime/error.h"

/* pi is not C11. */
static const double pi = 3.14159265358979323846;

/* The M < 2 cases, or n = 0, 1, ..., M - 1 in float32 in *n.
 * Returns 1 on failure, and sets *done when *res already holds the result. */
static int window_start(mlx_array *res, int M, mlx_array *n, bool *done, const char *fn, mlx_stream s)
{
    *done = false;
    if (mc_op_check_res(res, fn))
        return 1;
    if (M < 2) {
        int shape[1] = {M < 1 ? 0 : 1};
        *done = true;
        return mlx_ones(res, shape, 1, MLX_FLOAT32, s);
    }
    return mlx_arange(n, 0, M, 1, MLX_FLOAT32, s);
}

/* One float32 scalar operation in a chain: *x = op(x, k) or op(k, x). */
typedef int (*bin_fn)(mlx_array *, mlx_array, mlx_array, mlx_stream);

static int with_scalar(mlx_array *x, bin_fn op, float k, bool scalar_first, mlx_stream s)
{
    mlx_array c = mlx_array_new_float32(k), r = mlx_array_new();
    int rc = scalar_first ? op(&r, c, *x, s) : op(&r, *x, c, s);
    rc = rc || mlx_array_set(x, r);
    mlx_array_free(c);
    mlx_array_free(r);
    return rc;
}

static int finish(mlx_array *res, mlx_array x, int rc)
{
    rc = rc || mlx_array_set(res, x);
    mlx_array_free(x);
    return rc;
}

int mlx_bartlett(mlx_array *res, int M, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    bool done;
    mlx_array n = mlx_array_new();
    int rc = window_start(res, M, &n, &done, "bartlett", s);
    if (rc || done) {
        mlx_array_free(n);
        return rc;
    }
    /* 1 - |2/(M-1) n - 1| */
    rc = with_scalar(&n, mlx_multiply, 2.0f / (float)(M - 1), true, s) ||
         with_scalar(&n, mlx_subtract, 1.0f, false, s) || mlx_abs(&n, n, s) ||
         with_scalar(&n, mlx_subtract, 1.0f, true, s);
    return finish(res, n, rc);
}

int mlx_hanning(mlx_array *res, int M, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    bool done;
    mlx_array n = mlx_array_new();
    int rc = window_start(res, M, &n, &done, "hanning", s);
    if (rc || done) {
        mlx_array_free(n);
        return rc;
    }
    /* sin(pi/(M-1) n)^2 */
    rc =
        with_scalar(&n, mlx_multiply, (float)(pi / (M - 1)), true, s) || mlx_sin(&n, n, s) || mlx_square(&n, n, s);
    return finish(res, n, rc);
}

int mlx_hamming(mlx_array *res, int M, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    bool done;
    mlx_array n = mlx_array_new();
    int rc = window_start(res, M, &n, &done, "hamming", s);
    if (rc || done) {
        mlx_array_free(n);
        return rc;
    }
    /* 0.54 - 0.46 cos(2 pi/(M-1) n) */
    rc = with_scalar(&n, mlx_multiply, (float)((2.0 * pi) / (M - 1)), true, s) || mlx_cos(&n, n, s) ||
         with_scalar(&n, mlx_multiply, 0.46f, true, s) || with_scalar(&n, mlx_subtract, 0.54f, true, s);
    return finish(res, n, rc);
}

int mlx_blackman(mlx_array *res, int M, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    bool done;
    mlx_array n = mlx_array_new();
    int rc = window_start(res, M, &n, &done, "blackman", s);
    if (rc || done) {
        mlx_array_free(n);
        return rc;
    }
    /* (0.34 - 0.5 cos x) + 0.16 cos^2 x, x = 2 pi/(M-1) n */
    mlx_array c2 = mlx_array_new();
    rc = with_scalar(&n, mlx_multiply, (float)((2.0 * pi) / (M - 1)), true, s) || mlx_cos(&n, n, s) ||
         mlx_square(&c2, n, s) || with_scalar(&c2, mlx_multiply, 0.16f, true, s) ||
         with_scalar(&n, mlx_multiply, 0.5f, true, s) || with_scalar(&n, mlx_subtract, 0.34f, true, s) ||
         mlx_add(&n, n, c2, s);
    mlx_array_free(c2);
    return finish(res, n, rc);
}

int mlx_pad_symmetric(mlx_array *res, const mlx_array a, int pad_width, const mlx_array pad_value,
                      const char *mode, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "pad";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *x = mc_op_arg(a, fn, "a");
    if (!x)
        return 1;
    int axes[MC_MAX_NDIM], widths[MC_MAX_NDIM];
    for (int i = 0; i < x->ndim; i++) {
        axes[i] = i;
        widths[i] = pad_width;
    }
    return mlx_pad(res, a, axes, (size_t)x->ndim, widths, (size_t)x->ndim, widths, (size_t)x->ndim, pad_value,
                   mode, s);
}
