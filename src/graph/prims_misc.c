/* Owns the View primitive: an array's bytes read as another dtype, the
 * last axis scaled by the ratio of the item sizes (the op checks MLX's
 * rules). Row-contiguous input is shared; any other view is first laid
 * out row-major in the output's own buffer. MLX gives View no vjp or jvp:
 * asking for one is an error, as in MLX. */
#include "graph/prims_misc.h"
#include "graph/build.h"
#include "graph/elementwise.h"
#include "runtime/error.h"

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

static int view_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    (void)vjps, (void)node, (void)cot, (void)argnums, (void)nargs;
    return mc_error("[%s] The vjp of View is not implemented in MLX: a dtype reinterpretation has no gradient.",
                    fn);
}

static mc_array *view_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)node, (void)tans, (void)argnums, (void)nargs;
    mc_error("[%s] The jvp of View is not implemented in MLX: a dtype reinterpretation has no gradient.", fn);
    return NULL;
}

const mc_prim_info mc_prim_view = {
    .name = "View",
    .arity = 1,
    .infer = view_infer,
    .eval = view_eval,
    .vjp = view_vjp,
    .jvp = view_jvp,
};
