/* Owns the view primitives Reshape, Transpose and Broadcast: their outputs
 * share the input's buffer with new shape and strides, copying only when a
 * reshape cannot be expressed as strides of the input. */
#include <string.h>

#include "graph/prims.h"
#include "runtime/error.h"

static void copy_meta_shape(mc_meta *out, mlx_dtype dtype, const mc_dims_params *p)
{
    out->dtype = dtype;
    out->ndim = p->ndim;
    memcpy(out->shape, p->dims, sizeof(int) * (size_t)p->ndim);
}

void mc_dims_print(FILE *f, const void *params)
{
    const mc_dims_params *p = params;
    char s[512];
    fputs(mc_shape_str(s, sizeof s, p->ndim, p->dims), f);
}

int mc_reshape_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_dims_params *p = params;
    size_t size;
    if (!mc_shape_size(p->ndim, p->dims, &size) || size != in[0]->size) {
        char s[512];
        return mc_error("[%s] Cannot reshape array of size %zu into shape %s.", fn, in[0]->size,
                        mc_shape_str(s, sizeof s, p->ndim, p->dims));
    }
    copy_meta_shape(out, in[0]->dtype, p);
    return 0;
}

int mc_reshape_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    mc_array *x = in[0];
    if (x->flags & MC_FLAG_ROW_CONTIG) {
        int64_t strides[MC_MAX_NDIM];
        mc_row_strides(out->ndim, out->shape, strides);
        mc_array_set_view(out, x, x->data, strides);
        return 0;
    }
    /* otherwise copy x in its own logical (row-major) order, which the new
     * shape then reads as a plain reshape */
    if (mc_array_alloc_data(out, "reshape"))
        return 1;
    int64_t dst[MC_MAX_NDIM];
    mc_row_strides(x->ndim, x->shape, dst);
    size_t item = mc_dtype_size(x->dtype);
    mc_unary_strided(mc_kernels()->convert[x->dtype][x->dtype], item, item, x->data, x->strides,
                     out->data, dst, x->ndim, x->shape);
    return 0;
}

int mc_transpose_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)fn;
    const mc_dims_params *p = params;
    out->dtype = in[0]->dtype;
    out->ndim = p->ndim;
    for (int i = 0; i < p->ndim; i++)
        out->shape[i] = in[0]->shape[p->dims[i]];
    return 0;
}

int mc_transpose_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_dims_params *p = params;
    int64_t strides[MC_MAX_NDIM];
    for (int i = 0; i < p->ndim; i++)
        strides[i] = in[0]->strides[p->dims[i]];
    mc_array_set_view(out, in[0], in[0]->data, strides);
    return 0;
}

int mc_broadcast_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    const mc_dims_params *p = params;
    int nd;
    int shape[MC_MAX_NDIM];
    if (mc_broadcast_shapes(in[0]->ndim, in[0]->shape, p->ndim, p->dims, &nd, shape, fn))
        return 1;
    if (nd != p->ndim || memcmp(shape, p->dims, sizeof(int) * (size_t)nd)) {
        char s1[256], s2[256];
        return mc_error("[%s] Cannot broadcast array of shape %s into shape %s.", fn,
                        mc_shape_str(s1, sizeof s1, in[0]->ndim, in[0]->shape),
                        mc_shape_str(s2, sizeof s2, p->ndim, p->dims));
    }
    copy_meta_shape(out, in[0]->dtype, p);
    return 0;
}

int mc_broadcast_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    int64_t strides[MC_MAX_NDIM];
    mc_broadcast_strides(in[0], out->ndim, out->shape, strides);
    mc_array_set_view(out, in[0], in[0]->data, strides);
    return 0;
}
