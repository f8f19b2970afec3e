/* Owns the quantization ops of ops.h: quantize, dequantize and
 * quantized_matmul, with MLX 0.31.1's argument checks and messages
 * (mlx/ops.cpp) in MLX's order, then nodes of prims_quant.c. Only the
 * "affine" mode is implemented; "mxfp4", "mxfp8" and "nvfp4" are
 * recognised and reported as not supported here. Checks MLX's CPU backend
 * makes only when it evaluates (group sizes and bits of the product,
 * float64) are made here when the node is built. */
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_quant.h"
#include "handles/vector.h"
#include "ops/op_util.h"
#include "runtime/error.h"

/* ---- shared checks ---- */

static int parse_mode(const char *mode, mc_qmode *out, const char *fn)
{
    static const char *const names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};
    if (!mode)
        return mc_error("[%s] The quantization mode is NULL.", fn);
    for (int i = 0; i < 4; i++) {
        if (strcmp(mode, names[i]) == 0) {
            *out = (mc_qmode)i;
            return 0;
        }
    }
    return mc_error("[%s] Invalid quantization mode '%s'.", fn, mode);
}

/* MLX's defaults per mode (quantization_params_from_mode). */
static void mode_params(mc_qmode m, mlx_optional_int gs, mlx_optional_int bits, int *g, int *b)
{
    static const int dgs[] = {64, 32, 32, 16}, dbits[] = {4, 4, 8, 4};
    *g = gs.has_value ? gs.value : dgs[m];
    *b = bits.has_value ? bits.value : dbits[m];
}

static mlx_optional_int some_int(int v) { return (mlx_optional_int){v, true}; }

static int not_affine(const char *mode, const char *fn)
{
    return mc_error("[%s] Quantization mode '%s' is not supported by mlx-cpu yet (only 'affine').", fn, mode);
}

/* validate_global_scale: only nvfp4 takes one (which is not supported
 * here, so any global scale given with affine is the error MLX gives). */
static int check_global_scale(mlx_array gs, const char *fn)
{
    if (gs.ctx)
        return mc_error("[%s] Global scale is only supported for 'nvfp4' quantization mode.", fn);
    return 0;
}

/* MLX's validate_mode_with_type for "affine": biases given, and scales and
 * biases promote to a floating type (*t). */
static int check_scales_type(const mc_array *scales, const mc_array *biases, mlx_dtype *t, const char *fn)
{
    if (!biases)
        return mc_error("[%s] Biases must be provided for affine quantization.", fn);
    *t = mc_promote(scales->dtype, biases->dtype);
    if (!mc_dtype_is_float(*t))
        return mc_error("[%s] Only real floating types are supported but scales.dtype() == %s and "
                        "biases.dtype() == %s.",
                        fn, mc_dtype_name(scales->dtype), mc_dtype_name(biases->dtype));
    return 0;
}

/* ---- quantize ---- */

static int check_quantize(const mc_array *w, int gs, int bits, const char *fn)
{
    char sh[512];
    if (!mc_dtype_is_float(w->dtype))
        return mc_error("[%s] Only real floating types can be quantized but w has type %s.", fn,
                        mc_dtype_name(w->dtype));
    if (w->ndim < 2)
        return mc_error("[%s] The matrix to be quantized must have at least 2 dimension but it has only %d.", fn,
                        w->ndim);
    if (gs <= 0 || w->shape[w->ndim - 1] % gs != 0)
        return mc_error("[%s] The last dimension of the matrix needs to be divisible by the quantization group "
                        "size %d. However the provided  matrix has shape %s",
                        fn, gs, mc_shape_str(sh, sizeof sh, w->ndim, w->shape));
    return 0;
}

static int check_affine_params(int gs, int bits, const char *fn)
{
    if (gs != 32 && gs != 64 && gs != 128)
        return mc_error("[%s] The requested group size %d is not supported. The supported group sizes are 32, "
                        "64, and 128.",
                        fn, gs);
    if (bits < 2 || bits > 8 || bits == 7)
        return mc_error("[%s] The requested number of bits %d is not supported. The supported bits are 2, 3, "
                        "4, 5, 6 and 8.",
                        fn, bits);
    return 0;
}

int mlx_quantize(mlx_vector_array *res, const mlx_array w, mlx_optional_int group_size, mlx_optional_int bits,
                 const char *mode, const mlx_array global_scale, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "quantize";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_qmode m;
    int gs, nb;
    mc_array *x = mc_op_arg(w, fn, "w");
    if (!x || parse_mode(mode, &m, fn))
        return 1;
    mode_params(m, group_size, bits, &gs, &nb);
    if (check_quantize(x, gs, nb, fn) || check_global_scale(global_scale, fn))
        return 1;
    if (m != MC_QMODE_AFFINE)
        return not_affine(mode, fn);
    if (check_affine_params(gs, nb, fn))
        return 1;
    if (x->dtype == MLX_FLOAT64)
        return mc_error("[fast::Quantize::eval_cpu] Only supports floating point inputs");
    mc_array *out[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int i = 0; i < 3 && !rc; i++) {
        mc_quant_params p = {0};
        p.group_size = gs;
        p.bits = nb;
        p.which = i;
        out[i] = mc_node_new(fn, MC_PRIM_QUANTIZE, &x, 1, &p, sizeof p);
        rc = out[i] == NULL;
    }
    if (!rc)
        rc = mc_vec_assign(fn, res, out, 3);
    for (int i = 0; i < 3; i++)
        mc_array_release(out[i]);
    return rc;
}

/* ---- dequantize ---- */

static int check_dequantize_shapes(const mc_array *w, const mc_array *sc, const mc_array *bi, int gs, int bits,
                                   const char *fn)
{
    if (w->ndim != sc->ndim || w->ndim != bi->ndim)
        return mc_error("[%s] Shape of scales and biases does not match the matrix", fn);
    for (int d = 0; d < w->ndim - 1; d++)
        if (w->shape[d] != sc->shape[d] || w->shape[d] != bi->shape[d])
            return mc_error("[%s] Shape of scales and biases does not match the matrix", fn);
    int64_t out_size = (int64_t)w->shape[w->ndim - 1] * 32 / bits;
    if (out_size != (int64_t)sc->shape[sc->ndim - 1] * gs) {
        char s1[512], s2[512];
        return mc_error("[%s] Shape of scales and biases does not match the matrix given the quantization "
                        "parameters. Provided matrix of shape %s and scales/biases of shape %s with "
                        "group_size=%d and bits=%d.",
                        fn, mc_shape_str(s1, sizeof s1, w->ndim, w->shape),
                        mc_shape_str(s2, sizeof s2, sc->ndim, sc->shape), gs, bits);
    }
    return 0;
}

int mlx_dequantize(mlx_array *res, const mlx_array w, const mlx_array scales, const mlx_array biases,
                   mlx_optional_int group_size, mlx_optional_int bits, const char *mode,
                   const mlx_array global_scale, mlx_optional_dtype dtype, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "dequantize";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_qmode m;
    int gs, nb;
    mc_array *x = mc_op_arg(w, fn, "w");
    mc_array *sc = x ? mc_op_arg(scales, fn, "scales") : NULL;
    mc_array *bi = biases.ctx ? mc_arr(biases) : NULL;
    if (!sc || parse_mode(mode, &m, fn))
        return 1;
    if (dtype.has_value && (mc_op_check_dtype(dtype.value, fn) || !mc_dtype_is_float(dtype.value)))
        return mc_error("[%s] Only real floating types are supported but output dtype == %s.", fn,
                        mc_dtype_name(dtype.value));
    if (m != MC_QMODE_AFFINE)
        return not_affine(mode, fn);
    mlx_dtype t;
    if (check_scales_type(sc, bi, &t, fn))
        return 1;
    mlx_dtype out_t = dtype.has_value ? dtype.value : t;
    mode_params(m, group_size, bits, &gs, &nb);
    if (nb <= 0)
        return mc_error("[%s] Invalid value for bits: %d", fn, nb);
    if (gs <= 0)
        return mc_error("[%s] Invalid value for group_size: %d", fn, gs);
    if (x->dtype != MLX_UINT32)
        return mc_error("[%s] The matrix should be given as a uint32", fn);
    if (x->ndim < 2)
        return mc_error("[%s] The matrix to be dequantized must have at least 2 dimension but it has only %d.", fn,
                        x->ndim);
    if (check_global_scale(global_scale, fn) || check_dequantize_shapes(x, sc, bi, gs, nb, fn))
        return 1;
    if (nb > 8)
        return mc_error("[%s] bits=%d is not supported by mlx-cpu (at most 8).", fn, nb);
    mc_gb e;
    mc_gb_begin(&e, fn);
    mc_array *s2 = mc_gb_astype(&e, sc, t), *b2 = mc_gb_astype(&e, bi, t);
    mc_array *d = s2 && b2 ? mc_gb_hold(&e, mc_node_dequantize(x, s2, b2, gs, nb, fn)) : NULL;
    return mc_op_store(res, mc_gb_finish_ref(&e, mc_gb_astype(&e, d, out_t)), fn);
}

/* ---- quantized_matmul ---- */

/* MLX's validate_quantized_input and extract_quantized_matmul_dims. */
static int check_qmm_shapes(const mc_array *x, const mc_array *w, const mc_array *sc, const mc_array *bi, int gs,
                            int bits, bool transpose, const char *fn)
{
    char s1[512], s2[512];
    if (w->dtype != MLX_UINT32)
        return mc_error("[%s] The weight matrix should be uint32 but received %s", fn, mc_dtype_name(w->dtype));
    if (bi && !mc_array_has_shape(bi, sc->ndim, sc->shape))
        return mc_error("[%s] Scales and biases should have the same shape. Received scales with shape %s and "
                        "biases with %s",
                        fn, mc_shape_str(s1, sizeof s1, sc->ndim, sc->shape),
                        mc_shape_str(s2, sizeof s2, bi->ndim, bi->shape));
    bool batch_ok = w->ndim >= 2 && sc->ndim == w->ndim;
    for (int d = 0; batch_ok && d < w->ndim - 2; d++)
        batch_ok = w->shape[d] == sc->shape[d];
    if (!batch_ok)
        return mc_error("[%s] Weight and scales should have the same batch shape. Received weight with shape %s, "
                        "scales with %s.",
                        fn, mc_shape_str(s1, sizeof s1, w->ndim, w->shape),
                        mc_shape_str(s2, sizeof s2, sc->ndim, sc->shape));
    int64_t wk = (int64_t)w->shape[w->ndim - 1] * 32 / bits;
    if (wk != (int64_t)sc->shape[sc->ndim - 1] * gs)
        return mc_error("[%s] The shapes of the weight and scales are incompatible based on bits and group_size. "
                        "w.shape() == %s and scales.shape() == %s with group_size=%d and bits=%d",
                        fn, mc_shape_str(s1, sizeof s1, w->ndim, w->shape),
                        mc_shape_str(s2, sizeof s2, sc->ndim, sc->shape), gs, bits);
    if (x->ndim < 1)
        return mc_error("[%s] Got 0 dimension input. Inputs must have at least one dimension.", fn);
    int64_t inner = transpose ? wk : w->shape[w->ndim - 2], outer = transpose ? w->shape[w->ndim - 2] : wk;
    if (inner != x->shape[x->ndim - 1])
        return mc_error("[%s] Last dimension of first input with shape (..., %d) does not match the expanded "
                        "quantized matrix (%lld, %lld) computed from shape %s with group_size=%d, bits=%d and "
                        "transpose=%s",
                        fn, x->shape[x->ndim - 1], (long long)inner, (long long)outer,
                        mc_shape_str(s1, sizeof s1, w->ndim, w->shape), gs, bits, transpose ? "true" : "false");
    return 0;
}

/* The batch dims of a (all but the last two) broadcast to the batch shape
 * bs of nb dims. */
static mc_array *broadcast_batch(mc_gb *e, mc_array *a, int nb, const int *bs)
{
    if (!a)
        return NULL;
    int shape[MC_MAX_NDIM];
    memcpy(shape, bs, sizeof(int) * (size_t)nb);
    shape[nb] = a->shape[a->ndim - 2];
    shape[nb + 1] = a->shape[a->ndim - 1];
    return mc_gb_broadcast(e, a, nb + 2, shape);
}

int mlx_quantized_matmul(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array scales,
                         const mlx_array biases, bool transpose, mlx_optional_int group_size,
                         mlx_optional_int bits, const char *mode, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "quantized_matmul";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_qmode m;
    int gs, nb;
    mc_array *a = mc_op_arg(x, fn, "x");
    mc_array *q = a ? mc_op_arg(w, fn, "w") : NULL;
    mc_array *sc = q ? mc_op_arg(scales, fn, "scales") : NULL;
    mc_array *bi = biases.ctx ? mc_arr(biases) : NULL;
    if (!sc || parse_mode(mode, &m, fn))
        return 1;
    if (m != MC_QMODE_AFFINE)
        return not_affine(mode, fn);
    mlx_dtype t;
    if (check_scales_type(sc, bi, &t, fn))
        return 1;
    mode_params(m, group_size, bits, &gs, &nb);
    if (gs <= 0 || nb <= 0)
        return mc_error("[%s] Quantization group size must be 32, 64 or 128.", fn);
    if (check_qmm_shapes(a, q, sc, bi, gs, nb, transpose, fn))
        return 1;
    t = mc_promote(a->dtype, t);
    if (!mc_dtype_is_float(t))
        return mc_error("[%s] Only real floating types are supported but x.dtype() == %s.", fn,
                        mc_dtype_name(a->dtype));
    /* what MLX's CPU kernel refuses when it runs */
    if (gs != 32 && gs != 64 && gs != 128)
        return mc_error("[%s] Quantization group size must be 32, 64 or 128.", fn);
    if (nb < 2 || nb > 8 || nb == 7)
        return mc_error("[%s] Quantization bits must be 2, 3, 4, 6 or 8.", fn);
    if (t == MLX_FLOAT64)
        return mc_error("[%s] only floating types are supported", fn);
    mc_gb e;
    mc_gb_begin(&e, fn);
    mc_array *in[4] = {mc_gb_astype(&e, a, t), q, mc_gb_astype(&e, sc, t), mc_gb_astype(&e, bi, t)};
    if (a->ndim > 2 && q->ndim > 2 && in[0] && in[2] && in[3]) {
        int bs[MC_MAX_NDIM], n1, n2;
        if (mc_broadcast_shapes(a->ndim - 2, a->shape, q->ndim - 2, q->shape, &n1, bs, fn)) {
            mc_gb_end(&e);
            return 1;
        }
        (void)n2;
        for (int i = 0; i < 4; i++)
            in[i] = broadcast_batch(&e, in[i], n1, bs);
    }
    mc_array *r = NULL;
    if (in[0] && in[1] && in[2] && in[3])
        r = mc_gb_hold(&e, mc_node_quantized_matmul(in[0], in[1], in[2], in[3], gs, nb, transpose, fn));
    return mc_op_store(res, mc_gb_finish_ref(&e, r), fn);
}

/* ---- gather_qmm ---- */

/* a with its leading dims (all but the last two) flattened into one:
 * (B, r, c); *batch gets B. */
static int flat3(mlx_array *res, mc_array *a, int *batch, mlx_stream s)
{
    int b = 1;
    for (int d = 0; d < a->ndim - 2; d++)
        b *= a->shape[d];
    int shape[3] = {b, a->shape[a->ndim - 2], a->shape[a->ndim - 1]};
    *batch = b;
    return mlx_reshape(res, mc_handle(a), shape, 3, s);
}

/* indices given, or MLX's default: arange over a's batch dims, shaped as
 * them. */
static int indices_or_default(mlx_array *res, mlx_array given, const mc_array *a, mlx_stream s)
{
    if (given.ctx)
        return mlx_array_set(res, given);
    int b = 1;
    for (int d = 0; d < a->ndim - 2; d++)
        b *= a->shape[d];
    int rc = mlx_arange(res, 0, b, 1, MLX_UINT32, s);
    return rc || mlx_reshape(res, *res, a->shape, (size_t)(a->ndim - 2), s);
}

/* MLX's GatherQMM composed: the selected batches of x and of the packed
 * weights (with their scales and biases) are taken, then multiplied pair by
 * pair; the result has the indices' broadcast shape followed by (M, N).
 * Values and gradients are MLX's; the selected weights are copied. */
int mlx_gather_qmm(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array scales,
                   const mlx_array biases, const mlx_array lhs_indices, const mlx_array rhs_indices,
                   bool transpose, mlx_optional_int group_size, mlx_optional_int bits, const char *mode,
                   bool sorted_indices, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    (void)sorted_indices;
    static const char fn[] = "gather_qmm";
    if (!lhs_indices.ctx && !rhs_indices.ctx)
        return mlx_quantized_matmul(res, x, w, scales, biases, transpose, group_size, bits, mode, s);
    if (mc_op_check_res(res, fn))
        return 1;
    mc_qmode m;
    int gs, nb;
    mc_array *a = mc_op_arg(x, fn, "x");
    mc_array *q = a ? mc_op_arg(w, fn, "w") : NULL;
    mc_array *sc = q ? mc_op_arg(scales, fn, "scales") : NULL;
    mc_array *bi = biases.ctx ? mc_arr(biases) : NULL;
    if (!sc || parse_mode(mode, &m, fn))
        return 1;
    if (m != MC_QMODE_AFFINE)
        return not_affine(mode, fn);
    mlx_dtype t;
    if (check_scales_type(sc, bi, &t, fn))
        return 1;
    mode_params(m, group_size, bits, &gs, &nb);
    if (gs <= 0 || nb <= 0)
        return mc_error("[%s] Quantization group size must be 32, 64 or 128.", fn);
    if (check_qmm_shapes(a, q, sc, bi, gs, nb, transpose, fn))
        return 1;
    t = mc_promote(a->dtype, t);
    if (!mc_dtype_is_float(t))
        return mc_error("[%s] Only real floating types are supported but x.dtype() == %s.", fn,
                        mc_dtype_name(a->dtype));
    mlx_array li = mlx_array_new(), ri = mlx_array_new(), xf = mlx_array_new(), wf = mlx_array_new();
    mlx_array sf = mlx_array_new(), bf = mlx_array_new(), y = mlx_array_new();
    mlx_vector_array in = mlx_vector_array_new(), bc = mlx_vector_array_new();
    int rc = !in.ctx || !bc.ctx || indices_or_default(&li, lhs_indices, a, s) ||
             indices_or_default(&ri, rhs_indices, q, s) ||
             mlx_vector_array_append_value(in, li) || mlx_vector_array_append_value(in, ri) ||
             mlx_broadcast_arrays(&bc, in, s) || mlx_vector_array_get(&li, bc, 0) ||
             mlx_vector_array_get(&ri, bc, 1);
    if (!rc && (!mc_dtype_is_integer(mc_arr(li)->dtype) || !mc_dtype_is_integer(mc_arr(ri)->dtype)))
        rc = mc_error("[%s] Got %s with invalid dtype. Indices must be integral.", fn,
                      mc_dtype_is_integer(mc_arr(li)->dtype) ? "rhs_indices" : "lhs_indices");
    if (!rc && a->ndim < 2) {
        char sh[512];
        rc = mc_error("[%s] Non-quantized input must have at least two dimensions but got input with shape %s.",
                      fn, mc_shape_str(sh, sizeof sh, a->ndim, a->shape));
    }
    if (!rc) {
        int ishape[MC_MAX_NDIM], ind = mc_arr(li)->ndim, nidx = (int)mc_arr(li)->size, bx, bw, flat[1] = {nidx};
        memcpy(ishape, mc_arr(li)->shape, sizeof(int) * (size_t)ind);
        ishape[ind] = a->shape[a->ndim - 2];
        rc = mlx_reshape(&li, li, flat, 1, s) || mlx_reshape(&ri, ri, flat, 1, s) || flat3(&xf, a, &bx, s) ||
             flat3(&wf, q, &bw, s) || flat3(&sf, sc, &bw, s) || flat3(&bf, bi, &bw, s) ||
             mlx_take_axis(&xf, xf, li, 0, s) || mlx_take_axis(&wf, wf, ri, 0, s) ||
             mlx_take_axis(&sf, sf, ri, 0, s) || mlx_take_axis(&bf, bf, ri, 0, s) ||
             mlx_quantized_matmul(&y, xf, wf, sf, bf, transpose, some_int(gs), some_int(nb), mode, s);
        if (!rc) {
            ishape[ind + 1] = mc_arr(y)->shape[2];
            rc = mlx_reshape(&y, y, ishape, (size_t)ind + 2, s) || mlx_array_set(res, y);
        }
    }
    mlx_array arrs[7] = {li, ri, xf, wf, sf, bf, y};
    for (int i = 0; i < 7; i++)
        mlx_array_free(arrs[i]);
    mlx_vector_array_free(in);
    mlx_vector_array_free(bc);
    return rc;
}
