/* Owns mlx-c's mlx_vector_array functions: each checks its handles and
 * calls the list of array references behind them (handles/vector.h, where
 * the helpers that ops and compile use live). */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

/* Replaces *vec's items by data's, keeping *vec's object if it has one. */
static int set_data(const char *fn, mlx_vector_array *vec, const mlx_array *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    return mc_vec_store(&vec->ctx, mc_vec_new_from(fn, MC_VEC_ARRAY, data, size));
}

/* Every item is checked before any is added: a failed call changes nothing. */
static int append_data(const char *fn, mlx_vector_array vec, const mlx_array *data, size_t size)
{
    mc_vec *v = mc_vec_checked(vec, fn);
    return v ? mc_vec_append_from(fn, v, data, size) : 1;
}

mlx_vector_array mlx_vector_array_new(void)
{
    return (mlx_vector_array){mc_vec_new("mlx_vector_array_new", MC_VEC_ARRAY, 0)};
}

int mlx_vector_array_free(mlx_vector_array vec)
{
    mc_vec_free(vec.ctx);
    return 0;
}

int mlx_vector_array_set(mlx_vector_array *vec, const mlx_vector_array src)
{
    static const char fn[] = "mlx_vector_array_set";
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec *s = mc_vec_checked(src, fn);
    return s ? mc_vec_assign(fn, vec, mc_vec_arrays(s), s->len) : 1;
}

mlx_vector_array mlx_vector_array_new_data(const mlx_array *data, size_t size)
{
    return (mlx_vector_array){mc_vec_new_from("mlx_vector_array_new_data", MC_VEC_ARRAY, data, size)};
}

mlx_vector_array mlx_vector_array_new_value(const mlx_array val)
{
    return (mlx_vector_array){mc_vec_new_from("mlx_vector_array_new_value", MC_VEC_ARRAY, &val, 1)};
}

int mlx_vector_array_set_data(mlx_vector_array *vec, const mlx_array *data, size_t size)
{
    return set_data("mlx_vector_array_set_data", vec, data, size);
}

int mlx_vector_array_set_value(mlx_vector_array *vec, const mlx_array val)
{
    return set_data("mlx_vector_array_set_value", vec, &val, 1);
}

int mlx_vector_array_append_data(mlx_vector_array vec, const mlx_array *data, size_t size)
{
    return append_data("mlx_vector_array_append_data", vec, data, size);
}

int mlx_vector_array_append_value(mlx_vector_array vec, const mlx_array val)
{
    return append_data("mlx_vector_array_append_value", vec, &val, 1);
}

size_t mlx_vector_array_size(mlx_vector_array vec)
{
    mc_vec *v = mc_vec_checked(vec, "mlx_vector_array_size");
    return v ? v->len : 0;
}

int mlx_vector_array_get(mlx_array *res, const mlx_vector_array vec, size_t idx)
{
    static const char fn[] = "mlx_vector_array_get";
    if (!res)
        return mc_error("[%s] The output array pointer is NULL.", fn);
    mc_vec *v = mc_vec_checked(vec, fn);
    if (!v || mc_vec_check_index(fn, v, idx))
        return 1;
    /* Retain before releasing: *res may already refer to this array. */
    mc_array *a = mc_array_retain(mc_vec_arrays(v)[idx]);
    mc_array_release(mc_arr(*res));
    res->ctx = a;
    return 0;
}
