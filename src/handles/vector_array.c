/* Owns the mc_vec_* helpers of vector.h that work on mlx_vector_array
 * handles: how eval, ops, compile and closures read and build lists of
 * arrays without going through the public API. */
#include "handles/vector.h"

mc_vec *mc_vec_checked(mlx_vector_array h, const char *fn)
{
    return mc_vec_ctx_checked(h.ctx, fn, "mlx_vector_array");
}

/* A new list of references to arrs[0..n), or NULL with an error. */
static mc_vec *list_of(const char *fn, mc_array *const *arrs, size_t n)
{
    mc_vec *v = mc_vec_new(fn, MC_VEC_ARRAY, n);
    if (v && mc_vec_append_arrays(fn, v, arrs, n)) {
        mc_vec_free(v);
        v = NULL;
    }
    return v;
}

mlx_vector_array mc_vec_from(const char *fn, mc_array *const *arrs, size_t n)
{
    return (mlx_vector_array){list_of(fn, arrs, n)};
}

int mc_vec_push_take(const char *fn, mlx_vector_array h, mc_array *a)
{
    mc_vec *v = mc_vec_checked(h, fn);
    if (!v || mc_vec_append_arrays(fn, v, &a, 1)) {
        mc_array_release(a);
        return 1;
    }
    mc_array_release(a); /* the list took its own reference */
    return 0;
}

int mc_vec_push(const char *fn, mlx_vector_array h, mc_array *a)
{
    mc_vec *v = mc_vec_checked(h, fn);
    return v ? mc_vec_append_arrays(fn, v, &a, 1) : 1;
}

int mc_vec_assign(const char *fn, mlx_vector_array *dst, mc_array *const *arrs, size_t n)
{
    /* Built aside, then moved in: arrs may point into *dst itself. */
    mc_vec *v = list_of(fn, arrs, n);
    if (!v)
        return 1;
    dst->ctx = mc_vec_replace(dst->ctx, v);
    return 0;
}

void mc_vec_move(mlx_vector_array *dst, mlx_vector_array src) { dst->ctx = mc_vec_replace(dst->ctx, src.ctx); }
