/* Owns the View, ConvertFP8 and Hadamard primitives. View: an array's bytes read as another dtype, the
 * last axis scaled by the ratio of the item sizes (the op checks MLX's
 * rules). Row-contiguous input is shared; any other view is first laid
 * out row-major in the output's own buffer. MLX gives View no vjp or jvp:
 * asking for one is an error, as in MLX. ConvertFP8 (MLX's ToFP8 and
 * FromFP8) runs simd/fp8_k.c on float32 and uint8 (the op casts around
 * it); MLX gives it no derivative either. Hadamard runs the fast
 * Walsh-Hadamard kernel of simd/hadamard_k.c on a float32 row-major copy;
 * its vjp and jvp are the same transform of the cotangent or tangent, as
 * MLX's. */
#include "graph/prims_misc.h"
#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/vmap_rules.h"
#include <stdlib.h>

#include "runtime/error.h"
#include "simd/fp8.h"
#include "simd/hadamard.h"

static int view_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)fn;
    const mc_array *x = in[0];
    mlx_dtype to = ((const mc_view_params *)params)->to;
    size_t ib = mc_dtype_size(x->dtype), ob = mc_dtype_size(to);
    out->dtype = to;
    out->ndim = x->ndim;
    for (int i = 0; i < x->ndim; i++)
        out->shape[i] = x->shape[i];
    if (x->ndim && ib < ob)
        out->shape[x->ndim - 1] /= (int)(ob / ib);
    else if (x->ndim && ib > ob)
        out->shape[x->ndim - 1] *= (int)(ib / ob);
    return 0;
}

static int view_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    mc_array *x = in[0];
    int64_t strides[MC_MAX_NDIM];
    mc_row_strides(out->ndim, out->shape, strides);
    if (x->flags & MC_FLAG_ROW_CONTIG) {
        mc_array_set_view(out, x, x->data, strides);
        return 0;
    }
    if (mc_array_alloc_data(out, "view"))
        return 1;
    int64_t dst[MC_MAX_NDIM];
    mc_row_strides(x->ndim, x->shape, dst);
    size_t item = mc_dtype_size(x->dtype);
    mc_unary_strided(mc_kernels()->convert[x->dtype][x->dtype], item, item, x->data, x->strides, out->data, dst,
                     x->ndim, x->shape);
    return 0;
}

/* vmap (View and Hadamard, which act on the last axis): the batch first,
 * so the last axis stays the element's own. */
static int last_axis_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                          const char *fn)
{
    return mc_vmap_front_with(out, out_axis, node, in, axes, node->params, node->params_size, fn);
}

const mc_prim_info mc_prim_view = {
    .name = "View",
    .arity = 1,
    .infer = view_infer,
    .eval = view_eval,
    .vjp = mc_vjp_none,
    .jvp = mc_jvp_none,
    .vmap = last_axis_vmap,
};

/* -- ConvertFP8 ------------------------------------------------------------ */

static int fp8_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)fn;
    out->dtype = ((const mc_fp8_params *)params)->to_fp8 ? MLX_UINT8 : MLX_FLOAT32;
    out->ndim = in[0]->ndim;
    for (int i = 0; i < in[0]->ndim; i++)
        out->shape[i] = in[0]->shape[i];
    return 0;
}

static int fp8_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    bool to = ((const mc_fp8_params *)params)->to_fp8;
    const char *fn = to ? "to_fp8" : "from_fp8";
    mc_array *x = in[0];
    if (mc_array_alloc_data(out, fn))
        return 1;
    const void *src = x->data;
    void *tmp = NULL;
    size_t item = mc_dtype_size(x->dtype);
    if (!(x->flags & MC_FLAG_ROW_CONTIG) && x->size) {
        tmp = malloc(x->size * item);
        if (!tmp)
            return mc_error_oom(fn, x->size * item);
        int64_t dst[MC_MAX_NDIM];
        mc_row_strides(x->ndim, x->shape, dst);
        mc_unary_strided(mc_kernels()->convert[x->dtype][x->dtype], item, item, x->data, x->strides, tmp, dst,
                         x->ndim, x->shape);
        src = tmp;
    }
    if (to)
        mc_fp8_from_f32(src, out->data, x->size);
    else
        mc_fp8_to_f32(src, out->data, x->size);
    free(tmp);
    return 0;
}

static const char *fp8_name(const void *params)
{
    return ((const mc_fp8_params *)params)->to_fp8 ? "ToFP8" : "FromFP8";
}

const mc_prim_info mc_prim_convert_fp8 = {
    .name = "ConvertFP8",
    .name_of = fp8_name,
    .arity = 1,
    .infer = fp8_infer,
    .eval = fp8_eval,
    .vjp = mc_vjp_none,
    .jvp = mc_jvp_none,
    .vmap = mc_vmap_unsupported,
};

/* -- Hadamard -------------------------------------------------------------- */

static int hadamard_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)fn;
    (void)params;
    out->dtype = in[0]->dtype;
    out->ndim = in[0]->ndim;
    for (int i = 0; i < in[0]->ndim; i++)
        out->shape[i] = in[0]->shape[i];
    return 0;
}

static int hadamard_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_hadamard_params *p = params;
    mc_array *x = in[0];
    if (mc_array_alloc_data(out, "hadamard_transform"))
        return 1;
    int64_t dst[MC_MAX_NDIM];
    mc_row_strides(x->ndim, x->shape, dst);
    mc_unary_strided(mc_kernels()->convert[x->dtype][x->dtype], 4, 4, x->data, x->strides, out->data, dst, x->ndim,
                     x->shape);
    size_t len = (size_t)p->n * (size_t)p->m;
    if (len)
        mc_hadamard_rows(out->data, x->size / len, p->n, p->m, p->scale);
    return 0;
}

static int hadamard_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                        const char *fn)
{
    (void)argnums;
    (void)nargs;
    mc_array *in[1] = {cot};
    vjps[0] = mc_node_like(node, in, 1, fn);
    return vjps[0] ? 0 : 1;
}

static mc_array *hadamard_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)argnums;
    (void)nargs;
    return mc_node_like(node, tans, 1, fn);
}

const mc_prim_info mc_prim_hadamard = {
    .name = "Hadamard",
    .arity = 1,
    .infer = hadamard_infer,
    .eval = hadamard_eval,
    .vjp = hadamard_vjp,
    .jvp = hadamard_jvp,
    .vmap = last_axis_vmap,
};
