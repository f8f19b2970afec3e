/* Owns mlx-c's transforms_impl.h: mlx_detail_vmap_trace and
 * mlx_detail_vmap_replace. The work is src/transforms/vmap.c; this file
 * turns handles into arrays and back. */
#include <limits.h>

#include "api/closure_run.h"
#include "handles/vector.h"
#include "mlx/c/transforms_impl.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "transforms/vmap.h"

static const char fn[] = "vmap";

/* The arrays of a vector handle (borrowed), or NULL with an error. */
static mc_array *const *arrays_of(mlx_vector_array v, int *n)
{
    mc_vec *vec = mc_vec_checked(v, fn);
    if (!vec)
        return NULL;
    if (vec->len > INT_MAX) {
        mc_error("[%s] %zu arrays are more than vmap takes.", fn, vec->len);
        return NULL;
    }
    *n = (int)vec->len;
    static mc_array *const none[1] = {NULL};
    return vec->len ? mc_vec_arrays(vec) : none;
}

static int axes_count(const int *axes, size_t num, int *n, const char *what)
{
    if (!axes && num)
        return mc_error("[%s] %s is NULL with %zu entries.", fn, what, num);
    if (num > INT_MAX)
        return mc_error("[%s] %zu %s are more than vmap takes.", fn, num, what);
    *n = (int)num;
    return 0;
}

/* Stores n arrays (references handed over, released in any case) into a
 * vector handle. */
static int store(mlx_vector_array *res, mc_array **arrs, int n)
{
    mlx_vector_array v = mc_vec_from(fn, arrs, (size_t)n);
    mc_ad_release_all(arrs, n);
    if (!v.ctx)
        return 1;
    mc_vec_move(res, v);
    return 0;
}

int mlx_detail_vmap_trace(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun,
                          const mlx_vector_array inputs, const int *in_axes, size_t in_axes_num)
{
    if (!res_0 || !res_1)
        return mc_error("[%s] A result pointer is NULL.", fn);
    if (!fun.ctx)
        return mc_error("[%s] Expected a non-empty mlx_closure (the handle's ctx is NULL).", fn);
    int n = 0, na = 0, nout = 0;
    mc_array *const *in = arrays_of(inputs, &n);
    if (!in || axes_count(in_axes, in_axes_num, &na, "in_axes"))
        return 1;
    mc_closure_run run = {fun.ctx, fn, false};
    mc_array **s_inputs, **outs;
    if (mc_vmap_trace(fn, mc_run_closure, &run, in, n, in_axes, na, &s_inputs, &outs, &nout))
        return 1;
    if (store(res_0, s_inputs, n)) {
        mc_ad_release_all(outs, nout);
        return 1;
    }
    return store(res_1, outs, nout);
}

int mlx_detail_vmap_replace(mlx_vector_array *res, const mlx_vector_array inputs, const mlx_vector_array s_inputs,
                            const mlx_vector_array s_outputs, const int *in_axes, size_t in_axes_num,
                            const int *out_axes, size_t out_axes_num)
{
    if (!res)
        return mc_error("[%s] The result pointer is NULL.", fn);
    int n = 0, ns = 0, nout = 0, nia = 0, noa = 0;
    mc_array *const *in = arrays_of(inputs, &n);
    mc_array *const *s_in = in ? arrays_of(s_inputs, &ns) : NULL;
    mc_array *const *s_out = s_in ? arrays_of(s_outputs, &nout) : NULL;
    if (!s_out || axes_count(in_axes, in_axes_num, &nia, "in_axes") ||
        axes_count(out_axes, out_axes_num, &noa, "out_axes"))
        return 1;
    mc_array **outs;
    if (mc_vmap_replace(fn, in, n, s_in, ns, s_out, nout, in_axes, nia, out_axes, noa, &outs))
        return 1;
    return store(res, outs, nout);
}
