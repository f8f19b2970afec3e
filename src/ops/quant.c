/* Owns the quantization ops of ops.h: quantize, dequantize,
 * quantized_matmul, gather_qmm and qqmm, in every mode MLX 0.31.1 has
 * ("affine", "mxfp4", "mxfp8", "nvfp4"), with its argument checks and
 * messages (mlx/ops.cpp) in its order, then nodes of prims_quant.c.
 * Checks MLX's CPU backend makes only when it evaluates (group sizes and
 * bits of the product, float64) are made here when the node is built; so
 * are the group size and bits of an fp mode's product, which MLX's kernel
 * assumes without checking. Where MLX's CPU qqmm stops (a W given as
 * floats, more than one row of x) this one goes on with the same
 * arithmetic. float64 input to an fp mode's quantize is quantized from
 * float32. */
#include <string.h>

#include "graph/elementwise.h"
#include "graph/prims_quant.h"
#include "handles/vector.h"
#include "ops/op_util.h"
#include "runtime/error.h"

/* ---- shared checks ---- */

/* by mc_qmode */
static const char *const mode_names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};

static int parse_mode(const char *mode, mc_qmode *out, const char *fn)
{
    if (!mode)
        return mc_error("[%s] The quantization mode is NULL.", fn);
    for (int i = 0; i < 4; i++) {
        if (strcmp(mode, mode_names[i]) == 0) {
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

/* MLX's validate_global_scale: only nvfp4 takes one, a float32 scalar.
 * *g gets it (NULL when not given). */
static int check_global_scale(mc_qmode m, mlx_array gs, mc_array **g, const char *fn)
{
    *g = NULL;
    if (!gs.ctx)
        return 0;
    if (m != MC_QMODE_NVFP4)
        return mc_error("[%s] Global scale is only supported for 'nvfp4' quantization mode.", fn);
    mc_array *a = mc_op_arg(gs, fn, "global_scale");
    if (!a)
        return 1;
    if (a->size != 1) {
        char sh[512];
        return mc_error("[%s] Global scale must be a scalar but got shape %s.", fn,
                        mc_shape_str(sh, sizeof sh, a->ndim, a->shape));
    }
    if (a->dtype != MLX_FLOAT32)
        return mc_error("[%s] Global scale must have dtype float32 but got %s.", fn, mc_dtype_name(a->dtype));
    *g = a;
    return 0;
}

/* MLX's validate_mode_with_type: "affine" needs biases, and scales and
 * biases promote to a floating type (*t); the fp modes need uint8 scales
 * and no biases (*t: bfloat16, their default output). */
static int check_scales_type(mc_qmode m, const mc_array *scales, const mc_array *biases, mlx_dtype *t,
                             const char *mode, const char *fn)
{
    if (m != MC_QMODE_AFFINE) {
        if (scales->dtype != MLX_UINT8)
            return mc_error("[%s] Scale type must be uint8 but received type %s.", fn,
                            mc_dtype_name(scales->dtype));
        if (biases)
            return mc_error("[%s] Biases must be null for quantization mode '%s'.", fn, mode);
        *t = MLX_BFLOAT16;
        return 0;
    }
    if (!biases)
        return mc_error("[%s] Biases must be provided for affine quantization.", fn);
    *t = mc_promote(scales->dtype, biases->dtype);
    if (!mc_dtype_is_float(*t))
        return mc_error("[%s] Only real floating types are supported but scales.dtype() == %s and "
                        "biases.dtype() == %s.",
                        fn, mc_dtype_name(scales->dtype), mc_dtype_name(biases->dtype));
    return 0;
}

/* The one group size and bits an fp mode has (MLX's fp_quantize and
 * fp_dequantize messages). */
static int check_fp_params(mc_qmode m, int gs, int bits, const char *fn)
{
    int want_gs = m == MC_QMODE_NVFP4 ? 16 : 32, want_bits = m == MC_QMODE_MXFP8 ? 8 : 4;
    if (gs != want_gs)
        return mc_error("[%s] %s quantization requires group size %d but got %d.", fn, mode_names[m], want_gs, gs);
    if (bits != want_bits)
        return mc_error("[%s] %s quantization requires bits to be %d but got %d.", fn, mode_names[m], want_bits,
                        bits);
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
    mc_array *g;
    if (check_quantize(x, gs, nb, fn) || check_global_scale(m, global_scale, &g, fn))
        return 1;
    if (m == MC_QMODE_AFFINE ? check_affine_params(gs, nb, fn) : check_fp_params(m, gs, nb, fn))
        return 1;
    if (x->dtype == MLX_FLOAT64 && m == MC_QMODE_AFFINE)
        return mc_error("[fast::Quantize::eval_cpu] Only supports floating point inputs");
    int nout = m == MC_QMODE_AFFINE ? 3 : 2;
    mc_array *out[3] = {NULL, NULL, NULL};
    mc_gb e;
    mc_gb_begin(&e, fn);
    mc_array *in[2] = {x->dtype == MLX_FLOAT64 ? mc_gb_astype(&e, x, MLX_FLOAT32) : x, g};
    int rc = in[0] == NULL;
    for (int i = 0; i < nout && !rc; i++) {
        mc_quant_params p = {0};
        p.group_size = gs;
        p.bits = nb;
        p.mode = (int)m;
        p.which = i;
        out[i] = mc_node_new(fn, MC_PRIM_QUANTIZE, in, g ? 2 : 1, &p, sizeof p);
        rc = out[i] == NULL;
    }
    if (!rc)
        rc = mc_vec_assign(fn, res, out, (size_t)nout);
    for (int i = 0; i < 3; i++)
        mc_array_release(out[i]);
    mc_gb_end(&e);
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

/* MLX's fp_dequantize shape checks. */
static int check_fp_dequantize_shapes(const mc_array *w, const mc_array *sc, const char *fn)
{
    bool same = w->ndim == sc->ndim;
    for (int d = 0; same && d < w->ndim - 1; d++)
        same = w->shape[d] == sc->shape[d];
    if (!same)
        return mc_error("[%s] Shape of scales does not match the matrix", fn);
    return 0;
}

static int check_fp_dequantize_size(const mc_array *w, const mc_array *sc, int gs, int bits, const char *fn)
{
    if ((int64_t)w->shape[w->ndim - 1] * 32 / bits != (int64_t)sc->shape[sc->ndim - 1] * gs) {
        char s1[512], s2[512];
        return mc_error("[%s] Shape of scales does not match the matrix given the quantization parameters. "
                        "Provided matrix of shape %s and scales of shape %s.",
                        fn, mc_shape_str(s1, sizeof s1, w->ndim, w->shape),
                        mc_shape_str(s2, sizeof s2, sc->ndim, sc->shape));
    }
    return 0;
}

/* An fp mode's Dequantize node, computed in out_t (float64 through
 * float32) and, with a global scale, promoted to float32 as MLX's
 * float32 scale promotes it. */
static mc_array *fp_dequantize(mc_gb *e, mc_array *w, mc_array *sc, mc_array *g, int gs, int nb, mc_qmode m,
                               mlx_dtype out_t)
{
    mc_quant_params p = {0};
    p.group_size = gs;
    p.bits = nb;
    p.mode = (int)m;
    p.dtype = out_t == MLX_FLOAT64 ? MLX_FLOAT32 : out_t;
    mc_array *in[3] = {w, sc, g};
    mc_array *d = mc_gb_hold(e, mc_node_new(e->fn, MC_PRIM_DEQUANTIZE, in, g ? 3 : 2, &p, sizeof p));
    return mc_gb_astype(e, d, g ? mc_promote(out_t, MLX_FLOAT32) : out_t);
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
    mlx_dtype t;
    if (check_scales_type(m, sc, bi, &t, mode, fn))
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
    mc_array *g;
    if (check_global_scale(m, global_scale, &g, fn))
        return 1;
    mc_gb e;
    if (m != MC_QMODE_AFFINE) {
        if (check_fp_params(m, gs, nb, fn) || check_fp_dequantize_shapes(x, sc, fn) ||
            check_fp_dequantize_size(x, sc, gs, nb, fn))
            return 1;
        mc_gb_begin(&e, fn);
        return mc_op_store(res, mc_gb_finish_ref(&e, fp_dequantize(&e, x, sc, g, gs, nb, m, out_t)), fn);
    }
    if (check_dequantize_shapes(x, sc, bi, gs, nb, fn))
        return 1;
    if (nb > 8)
        return mc_error("[%s] bits=%d is not supported by mlx-cpu (at most 8).", fn, nb);
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

/* The arguments of quantized_matmul and gather_qmm after MLX's checks. */
typedef struct qmm_args {
    mc_array *x, *w, *sc, *bi;
    mc_qmode m;
    int gs, nb;
    mlx_dtype t; /* the product's dtype */
} qmm_args;

/* The checks quantized_matmul and gather_qmm share, in MLX's order
 * (validate_mode_with_type, extract_quantized_matmul_dims, the product's
 * dtype). */
static int qmm_args_check(qmm_args *a, mlx_array x, mlx_array w, mlx_array scales, mlx_array biases,
                          bool transpose, mlx_optional_int group_size, mlx_optional_int bits, const char *mode,
                          const char *fn)
{
    a->x = mc_op_arg(x, fn, "x");
    a->w = a->x ? mc_op_arg(w, fn, "w") : NULL;
    a->sc = a->w ? mc_op_arg(scales, fn, "scales") : NULL;
    a->bi = biases.ctx ? mc_arr(biases) : NULL;
    mlx_dtype t;
    if (!a->sc || parse_mode(mode, &a->m, fn) || check_scales_type(a->m, a->sc, a->bi, &t, mode, fn))
        return 1;
    mode_params(a->m, group_size, bits, &a->gs, &a->nb);
    if (a->gs <= 0 || a->nb <= 0)
        return mc_error("[%s] Quantization group size must be 32, 64 or 128.", fn);
    if (check_qmm_shapes(a->x, a->w, a->sc, a->bi, a->gs, a->nb, transpose, fn))
        return 1;
    a->t = a->m == MC_QMODE_AFFINE ? mc_promote(a->x->dtype, t) : a->x->dtype;
    if (!mc_dtype_is_float(a->t))
        return mc_error("[%s] Only real floating types are supported but x.dtype() == %s.", fn,
                        mc_dtype_name(a->x->dtype));
    return 0;
}

/* What MLX's CPU kernels refuse when they run, and the fp modes' one group
 * size and bits, which MLX's kernels assume. */
static int check_qmm_kernel(const qmm_args *a, const char *fn)
{
    if (a->m != MC_QMODE_AFFINE) {
        if (check_fp_params(a->m, a->gs, a->nb, fn))
            return 1;
    } else if (a->gs != 32 && a->gs != 64 && a->gs != 128) {
        return mc_error("[%s] Quantization group size must be 32, 64 or 128.", fn);
    } else if (a->nb < 2 || a->nb > 8 || a->nb == 7) {
        return mc_error("[%s] Quantization bits must be 2, 3, 4, 6 or 8.", fn);
    }
    if (a->t == MLX_FLOAT64)
        return mc_error("[%s] only floating types are supported", fn);
    return 0;
}

int mlx_quantized_matmul(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array scales,
                         const mlx_array biases, bool transpose, mlx_optional_int group_size,
                         mlx_optional_int bits, const char *mode, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "quantized_matmul";
    if (mc_op_check_res(res, fn))
        return 1;
    qmm_args a;
    if (qmm_args_check(&a, x, w, scales, biases, transpose, group_size, bits, mode, fn) ||
        check_qmm_kernel(&a, fn))
        return 1;
    bool affine = a.m == MC_QMODE_AFFINE;
    mc_gb e;
    mc_gb_begin(&e, fn);
    mc_array *in[4] = {mc_gb_astype(&e, a.x, a.t), a.w, affine ? mc_gb_astype(&e, a.sc, a.t) : a.sc,
                       affine ? mc_gb_astype(&e, a.bi, a.t) : NULL};
    int n = affine ? 4 : 3;
    if (a.x->ndim > 2 && a.w->ndim > 2 && !e.failed) {
        int bs[MC_MAX_NDIM], nbd;
        if (mc_broadcast_shapes(a.x->ndim - 2, a.x->shape, a.w->ndim - 2, a.w->shape, &nbd, bs, fn)) {
            mc_gb_end(&e);
            return 1;
        }
        for (int i = 0; i < n; i++)
            in[i] = broadcast_batch(&e, in[i], nbd, bs);
    }
    mc_array *r = NULL;
    if (!e.failed)
        r = mc_gb_hold(&e, mc_node_quantized_matmul(in[0], in[1], in[2], in[3], a.gs, a.nb, a.m, transpose, fn));
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
    qmm_args qa;
    if (qmm_args_check(&qa, x, w, scales, biases, transpose, group_size, bits, mode, fn))
        return 1;
    mc_array *a = qa.x, *q = qa.w, *sc = qa.sc, *bi = qa.bi;
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
             flat3(&wf, q, &bw, s) || flat3(&sf, sc, &bw, s) || (bi && flat3(&bf, bi, &bw, s)) ||
             mlx_take_axis(&xf, xf, li, 0, s) || mlx_take_axis(&wf, wf, ri, 0, s) ||
             mlx_take_axis(&sf, sf, ri, 0, s) || (bi && mlx_take_axis(&bf, bf, ri, 0, s)) ||
             mlx_quantized_matmul(&y, xf, wf, sf, bf, transpose, some_int(qa.gs), some_int(qa.nb), mode, s);
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

/* ---- qqmm ---- */

/* validate_qqmm_inputs' type rules for either operand. */
static int check_qqmm_float(const mc_array *a, const char *which, const char *fn)
{
    if (!mc_dtype_is_float(a->dtype) || a->dtype == MLX_FLOAT64)
        return mc_error("[%s] Only real floating types except float64 are supported but %s argument dtype == %s.",
                        fn, which, mc_dtype_name(a->dtype));
    return 0;
}

/* MLX's checks on w (and its scales) and on x, in its order. */
static int check_qqmm(const mc_array *x, const mc_array *w, const mc_array *sc, int gs, int nb, const char *fn)
{
    char s1[512], s2[512];
    if (w->dtype == MLX_UINT32) {
        if (!sc)
            return mc_error("[%s] Scales must be provided if second argument is quantized.", fn);
        if (sc->dtype != MLX_UINT8)
            return mc_error("[%s] Scale type must be uint8 but received type %s.", fn, mc_dtype_name(sc->dtype));
        if (check_qmm_shapes(x, w, sc, NULL, gs, nb, true, fn))
            return 1;
    } else {
        if (check_qqmm_float(w, "second", fn))
            return 1;
        if (sc)
            return mc_error("[%s] Scales were given but the second argument is not quantized (it is %s).", fn,
                            mc_dtype_name(w->dtype));
    }
    if (check_qqmm_float(x, "first", fn))
        return 1;
    if (w->dtype != MLX_UINT32 && x->shape[x->ndim - 1] != w->shape[w->ndim - 1])
        return mc_error("[%s] Last dimension of first input with shape %s must match last dimension of second "
                        "input with shape %s.",
                        fn, mc_shape_str(s1, sizeof s1, x->ndim, x->shape),
                        mc_shape_str(s2, sizeof s2, w->ndim, w->shape));
    return 0;
}

int mlx_qqmm(mlx_array *res, const mlx_array x, const mlx_array w, const mlx_array w_scales,
             mlx_optional_int group_size, mlx_optional_int bits, const char *mode, const mlx_array global_scale_x,
             const mlx_array global_scale_w, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "qqmm";
    if (mc_op_check_res(res, fn))
        return 1;
    mc_qmode m;
    int gs, nb;
    mc_array *a = mc_op_arg(x, fn, "x");
    mc_array *q = a ? mc_op_arg(w, fn, "w") : NULL;
    mc_array *sc = w_scales.ctx ? mc_arr(w_scales) : NULL, *gx, *gw;
    if (!q || parse_mode(mode, &m, fn))
        return 1;
    if (m != MC_QMODE_NVFP4 && m != MC_QMODE_MXFP8)
        return mc_error("[%s] Only 'nvfp4' and 'mxfp8' quantization modes are supported but '%s' was provided.",
                        fn, mode);
    mode_params(m, group_size, bits, &gs, &nb);
    /* x as a matrix: a vector is one row; more dims against a 2-D w are
     * rows too */
    int k = a->ndim ? a->shape[a->ndim - 1] : 0, xs[MC_MAX_NDIM], xnd = a->ndim;
    memcpy(xs, a->shape, sizeof(int) * (size_t)a->ndim);
    if (a->ndim == 1 || (a->ndim > 2 && q->ndim == 2)) {
        xs[0] = k ? (int)(a->size / (size_t)k) : 0;
        xs[1] = k;
        xnd = 2;
    }
    if (xnd > 2 || q->ndim > 2 || xnd < 1 || q->ndim < 2)
        return mc_error("[%s] Only 2D inputs are supported but x.ndim() == %d and w.ndim() == %d.", fn, xnd,
                        q->ndim);
    if (gs <= 0 || nb <= 0)
        return check_fp_params(m, gs, nb, fn);
    /* the checks read x's dtype and its shape as a matrix */
    mc_array x2 = *a;
    x2.ndim = xnd;
    x2.shape = xs;
    if (check_qqmm(&x2, q, sc, gs, nb, fn) || check_global_scale(m, global_scale_x, &gx, fn) ||
        check_global_scale(m, global_scale_w, &gw, fn))
        return 1;
    if (m == MC_QMODE_NVFP4 && !gx != !gw)
        return mc_error("[%s] For nvfp4 mode, either both global_scale_x and global_scale_w must be provided, or "
                        "neither.",
                        fn);
    if (check_fp_params(m, gs, nb, fn))
        return 1;
    if (k % gs != 0)
        return mc_error("[%s] The last dimension of the first input (%d) must be divisible by the group size %d.",
                        fn, k, gs);
    mc_gb e;
    mc_gb_begin(&e, fn);
    mc_array *r = mc_gb_hold(&e, mc_node_qqmm(mc_gb_reshape(&e, a, 2, xs), q, sc, gs, nb, m, fn));
    if (r && a->ndim != 2) {
        int os[MC_MAX_NDIM];
        memcpy(os, a->shape, sizeof(int) * (size_t)a->ndim);
        os[a->ndim - 1] = r->shape[1];
        r = mc_gb_reshape(&e, r, a->ndim, os);
    }
    return mc_op_store(res, mc_gb_finish_ref(&e, r), fn);
}
