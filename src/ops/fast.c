/* The op constructors of fast.h: MLX 0.31.1's argument checks, messages
 * and dtype rules (mlx/fast.cpp), then one node of the primitive
 * (prims_fast.c) on inputs converted as MLX converts them. */
#include <math.h>
#include <string.h>

#include "graph/prims_fast.h"
#include "mlx/c/fast.h"
#include "ops/ew.h"
#include "runtime/error.h"

static char *shape_str(char *buf, size_t n, const mc_array *a) { return mc_shape_str(buf, n, a->ndim, a->shape); }

/* An optional argument: NULL for an empty handle, else its descriptor. */
static mc_array *opt_arg(mlx_array a) { return a.ctx ? mc_arr(a) : NULL; }

static int check_affine(const mc_array *a, const mc_array *x, const char *what, const char *fn)
{
    if (a->ndim != 1)
        return mc_error("[%s] %s must have 1 dimension but has %d dimensions.", fn, what, a->ndim);
    if ((int)a->size != x->shape[x->ndim - 1])
        return mc_error("[%s] %s must have the same size as the last dimension of x but has %zu elements.", fn,
                        what, a->size);
    return 0;
}

/* weight converted to t, or a 0-d `fill` of type t when absent (MLX's
 * stand-in). */
static mc_array *affine_input(mc_gb *s, mc_array *a, mlx_dtype t, double fill)
{
    return a ? mc_gb_astype(s, a, t) : mc_gb_scalar(s, fill, t);
}

int mlx_fast_rms_norm(mlx_array *res, const mlx_array x, const mlx_array weight, float eps, const mlx_stream st)
{
    MC_STREAM_REQUIRED(st);
    static const char fn[] = "rms_norm";
    (void)st;
    mc_gb s;
    mc_array *xa;
    if (mc_ew_args1(&s, fn, res, x, &xa))
        return 1;
    mc_array *w = opt_arg(weight);
    if (xa->ndim == 0)
        return mc_error("[%s] Input must have at least 1 dimension but got input with 0 dimensions.", fn);
    if (w && check_affine(w, xa, "(*weight)", fn))
        return 1;
    mlx_dtype t = w ? mc_promote(xa->dtype, w->dtype) : xa->dtype;
    if (!mc_dtype_is_float(t))
        return mc_error("[%s] Received unsupported type %s.", fn, mc_dtype_name(t));
    mc_norm_params p = {eps};
    mc_array *in[2] = {mc_gb_astype(&s, xa, t), affine_input(&s, w, t, 1)};
    mc_array *r = s.failed ? NULL : mc_gb_hold(&s, mc_node_new(fn, MC_PRIM_RMS_NORM, in, 2, &p, sizeof p));
    return mc_ew_finish(&s, res, r);
}

int mlx_fast_layer_norm(mlx_array *res, const mlx_array x, const mlx_array weight, const mlx_array bias, float eps,
                        const mlx_stream st)
{
    MC_STREAM_REQUIRED(st);
    static const char fn[] = "layer_norm";
    (void)st;
    mc_gb s;
    mc_array *xa;
    if (mc_ew_args1(&s, fn, res, x, &xa))
        return 1;
    mc_array *w = opt_arg(weight), *b = opt_arg(bias);
    if (xa->ndim == 0)
        return mc_error("[%s] Input must have at least 1 dimension but got input with 0 dimensions.", fn);
    if ((w && check_affine(w, xa, "weight", fn)) || (b && check_affine(b, xa, "bias", fn)))
        return 1;
    /* MLX promotes with the bias only when there is a weight */
    mlx_dtype t = !w  ? xa->dtype
                  : b ? mc_promote(mc_promote(xa->dtype, w->dtype), b->dtype)
                      : mc_promote(xa->dtype, w->dtype);
    if (!mc_dtype_is_float(t))
        return mc_error("[%s] Received unsupported type %s.", fn, mc_dtype_name(t));
    mc_norm_params p = {eps};
    mc_array *in[3] = {mc_gb_astype(&s, xa, t), affine_input(&s, w, t, 1), affine_input(&s, b, t, 0)};
    mc_array *r = s.failed ? NULL : mc_gb_hold(&s, mc_node_new(fn, MC_PRIM_LAYER_NORM, in, 3, &p, sizeof p));
    return mc_ew_finish(&s, res, r);
}

/* mlx::core::fast::rope: offset is an array (0-d or one per batch entry). */
static int rope_op(mlx_array *res, mlx_array x, int dims, bool traditional, mlx_optional_float base, float scale,
                   mc_array *offset, mlx_array freqs)
{
    static const char fn[] = "rope";
    char buf[96];
    mc_gb s;
    mc_array *xa;
    if (mc_ew_args1(&s, fn, res, x, &xa))
        return 1;
    mc_array *f = opt_arg(freqs);
    if (f && base.has_value)
        return mc_error("[%s] Only one of base or freqs can have a value.", fn);
    if (!f && !base.has_value)
        return mc_error("[%s] Neither base nor freqs has a value.", fn);
    if (xa->ndim < 3)
        return mc_error("[%s] Input must have at least 3 dimensions but got input with %d dimensions.", fn,
                        xa->ndim);
    if (!mc_dtype_is_float(xa->dtype))
        return mc_error("[%s] Input must be a floating type but got %s.", fn, mc_dtype_name(xa->dtype));
    if (offset->ndim > 1)
        return mc_error("[%s] offset must have at most one dimension but has shape %s.", fn,
                        shape_str(buf, sizeof buf, offset));
    if (offset->size != 1 && (int)offset->size != xa->shape[0])
        return mc_error("[%s] offset must be a scalar or vector with %d elements but has shape %s.", fn,
                        xa->shape[0], shape_str(buf, sizeof buf, offset));
    if (!mc_dtype_is_integer(offset->dtype))
        return mc_error("[%s] offset must be an integer but got type %s.", fn, mc_dtype_name(offset->dtype));
    if (dims <= 0)
        return mc_error("[%s] dims must be positive but got %d.", fn, dims);
    if (dims % 2 != 0)
        return mc_error("[%s] dims must be even but got %d.", fn, dims);
    if (dims > xa->shape[xa->ndim - 1])
        return mc_error("[%s] dims must not exceed the input's last dimension (%d) but got %d.", fn,
                        xa->shape[xa->ndim - 1], dims);
    if (f && (f->ndim != 1 || f->shape[0] != dims / 2))
        return mc_error("[%s] freqs must be one dimensional with size %d but got shape %s.", fn, dims / 2,
                        shape_str(buf, sizeof buf, f));
    if (f && !mc_dtype_is_inexact(f->dtype) && !mc_dtype_is_integer(f->dtype) && f->dtype != MLX_BOOL)
        return mc_error("[%s] freqs must be real, got %s.", fn, mc_dtype_name(f->dtype));
    mc_rope_params p;
    memset(&p, 0, sizeof p);
    p.dims = dims;
    p.traditional = traditional;
    p.forward = 1;
    p.has_freqs = f != NULL;
    p.base = base.has_value ? base.value : 1.0f;
    p.scale = scale;
    /* MLX keeps 4-byte integer offsets and converts others to int32; the
     * kernel reads int32 (a uint32 offset beyond INT32_MAX is out of any
     * sequence) */
    mc_array *in[3] = {xa, mc_gb_astype(&s, offset, MLX_INT32), f ? mc_gb_astype(&s, f, MLX_FLOAT32) : NULL};
    mc_array *r = s.failed ? NULL : mc_gb_hold(&s, mc_node_new(fn, MC_PRIM_ROPE, in, f ? 3 : 2, &p, sizeof p));
    return mc_ew_finish(&s, res, r);
}

int mlx_fast_rope(mlx_array *res, const mlx_array x, int dims, bool traditional, mlx_optional_float base,
                  float scale, int offset, const mlx_array freqs, const mlx_stream st)
{
    MC_STREAM_REQUIRED(st);
    (void)st;
    int32_t off = offset;
    mc_array *o = mc_array_scalar("rope", MLX_INT32, &off);
    if (!o)
        return 1;
    int rc = rope_op(res, x, dims, traditional, base, scale, o, freqs);
    mc_array_release(o);
    return rc;
}

int mlx_fast_rope_dynamic(mlx_array *res, const mlx_array x, int dims, bool traditional, mlx_optional_float base,
                          float scale, const mlx_array offset, const mlx_array freqs, const mlx_stream st)
{
    MC_STREAM_REQUIRED(st);
    (void)st;
    mc_array *o = mc_op_arg(offset, "rope", "offset");
    if (!o)
        return 1;
    return rope_op(res, x, dims, traditional, base, scale, o, freqs);
}

static int sdpa_check(mc_array *const qkv[3], const char *mode, const mc_array *mask, const char *fn)
{
    char buf[96], buf2[96];
    for (int i = 0; i < 3; i++)
        if (qkv[i]->ndim != 4)
            return mc_error("[%s] input with shape %s expected to be rank 4", fn,
                            shape_str(buf, sizeof buf, qkv[i]));
    if (strcmp(mode, "") != 0 && strcmp(mode, "causal") != 0 && strcmp(mode, "array") != 0)
        return mc_error("[%s] Invalid mask_mode %s. mask_mode must be 'causal', 'array' or ''.", fn, mode);
    if (strcmp(mode, "causal") == 0 && mask)
        return mc_error("[%s] Invalid mask_arr for mask_mode 'casusal'. No array mask should be passed.", fn);
    if (mask && strcmp(mode, "causal") != 0 && mask->ndim > 4)
        return mc_error("[%s] the mask with shape %s expected to have at most rank 4.", fn,
                        shape_str(buf, sizeof buf, mask));
    for (int i = 1; i < 3; i++)
        if (qkv[i]->shape[0] != qkv[0]->shape[0])
            return mc_error("[%s] mismatching batch dimension for input with shape %s.", fn,
                            shape_str(buf, sizeof buf, qkv[i]));
    if (qkv[0]->shape[3] != qkv[1]->shape[3])
        return mc_error("[%s] query, keys expected to have matching last dimension; found query shape %s for keys "
                        "shape %s.",
                        fn, shape_str(buf, sizeof buf, qkv[0]), shape_str(buf2, sizeof buf2, qkv[1]));
    if (qkv[1]->shape[1] != qkv[2]->shape[1])
        return mc_error(
            "[%s] keys, values expected to have matching n_kv_heads; found keys with n_heads %d for values "
            "with n_heads %d.",
            fn, qkv[1]->shape[1], qkv[2]->shape[1]);
    if (qkv[1]->shape[1] == 0 || qkv[0]->shape[1] % qkv[1]->shape[1] != 0)
        return mc_error("[%s] n_heads must be a multiple of n_kv_heads, found n_heads %d for n_kv_heads %d.", fn,
                        qkv[0]->shape[1], qkv[1]->shape[1]);
    if (qkv[1]->shape[2] != qkv[2]->shape[2])
        return mc_error("[%s] keys and values must have the same sequence length; found keys shape %s for values "
                        "shape %s.",
                        fn, shape_str(buf, sizeof buf, qkv[1]), shape_str(buf2, sizeof buf2, qkv[2]));
    return 0;
}

int mlx_fast_scaled_dot_product_attention(mlx_array *res, const mlx_array queries, const mlx_array keys,
                                          const mlx_array values, float scale, const char *mask_mode,
                                          const mlx_array mask_arr, const mlx_array sinks, const mlx_stream st)
{
    MC_STREAM_REQUIRED(st);
    static const char fn[] = "scaled_dot_product_attention";
    (void)st;
    char buf[96];
    if (mc_op_check_res(res, fn))
        return 1;
    mc_array *qkv[3] = {mc_op_arg(queries, fn, "queries"), NULL, NULL};
    if (!qkv[0] || !(qkv[1] = mc_op_arg(keys, fn, "keys")) || !(qkv[2] = mc_op_arg(values, fn, "values")))
        return 1;
    const char *mode = mask_mode ? mask_mode : "";
    mc_array *mask = opt_arg(mask_arr), *sk = opt_arg(sinks);
    if (sdpa_check(qkv, mode, mask, fn))
        return 1;
    bool causal = strcmp(mode, "causal") == 0;
    mlx_dtype t = mc_promote(mc_promote(qkv[0]->dtype, qkv[1]->dtype), qkv[2]->dtype);
    if (!mc_dtype_is_float(t))
        return mc_error("[%s] Received unsupported type %s.", fn, mc_dtype_name(t));
    if (mask && mc_promote(mask->dtype, t) != t)
        return mc_error("[%s] Mask type must promote to output type %s.", fn, mc_dtype_name(t));
    if (sk && mc_promote(sk->dtype, t) != t)
        return mc_error("[%s] Type of sinks must promote to output type %s.", fn, mc_dtype_name(t));
    if (sk && (sk->ndim != 1 || sk->shape[0] != qkv[0]->shape[1]))
        return mc_error("[%s] Received invalid shape for sinks %s.", fn, shape_str(buf, sizeof buf, sk));
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *in[5];
    int n = 0;
    for (int i = 0; i < 3; i++)
        in[n++] = mc_gb_astype(&s, qkv[i], t);
    if (mask) {
        /* broadcast as a view: the kernel reads it through its strides */
        int shape[4] = {qkv[0]->shape[0], qkv[0]->shape[1], qkv[0]->shape[2], qkv[1]->shape[2]};
        int mn = mask->ndim;
        bool ok = true;
        for (int d = 0; d < mn; d++) {
            int md = mask->shape[mn - 1 - d], od = shape[3 - d];
            ok = ok && (md == od || md == 1);
        }
        if (!ok) {
            char buf2[96];
            mc_gb_end(&s);
            return mc_error("[broadcast_to] Cannot broadcast array of shape %s to shape %s.",
                            shape_str(buf, sizeof buf, mask), mc_shape_str(buf2, sizeof buf2, 4, shape));
        }
        mc_array *m = mask->dtype == MLX_BOOL ? mask : mc_gb_astype(&s, mask, t);
        in[n++] = mc_gb_broadcast(&s, m, 4, shape);
    }
    if (sk)
        in[n++] = mc_gb_astype(&s, sk, t);
    mc_sdpa_params p = {scale, causal, mask != NULL, sk != NULL};
    mc_array *r = s.failed ? NULL : mc_gb_hold(&s, mc_node_new(fn, MC_PRIM_SDPA, in, n, &p, sizeof p));
    return mc_ew_finish(&s, res, r);
}
