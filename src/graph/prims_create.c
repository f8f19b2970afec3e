/* Owns the Arange primitive. */
#include <math.h>
#include <string.h>

#include "graph/prims.h"
#include "runtime/error.h"

int mc_arange_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)in;
    (void)n;
    (void)fn;
    const mc_arange_params *p = params;
    out->dtype = p->dtype;
    out->ndim = 1;
    out->shape[0] = p->count;
    return 0;
}

int mc_arange_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)in;
    (void)n;
    const mc_arange_params *p = params;
    if (mc_array_alloc_data(out, "arange"))
        return 1;
    size_t count = out->size;
    if (count == 0)
        return 0;
    /* generate in float64 (or int64 for integer types, so large int64
     * ranges stay exact), then convert with the astype kernels */
    mlx_dtype gen = mc_dtype_is_integer(p->dtype) || p->dtype == MLX_BOOL ? MLX_INT64 : MLX_FLOAT64;
    enum { CHUNK = 1024 };
    union {
        double d[CHUNK];
        int64_t i[CHUNK];
    } tmp;
    mc_convert_kernel conv = mc_kernels()->convert[gen][p->dtype];
    size_t item = mc_dtype_size(p->dtype);
    int64_t istart = (int64_t)p->start, istep = (int64_t)p->step;
    for (size_t at = 0; at < count; at += CHUNK) {
        size_t m = count - at < CHUNK ? count - at : CHUNK;
        for (size_t k = 0; k < m; k++) {
            if (gen == MLX_INT64)
                tmp.i[k] = (int64_t)((uint64_t)istart + (uint64_t)istep * (uint64_t)(at + k));
            else
                tmp.d[k] = p->start + p->step * (double)(at + k);
        }
        conv(&tmp, (char *)out->data + at * item, m);
    }
    return 0;
}
