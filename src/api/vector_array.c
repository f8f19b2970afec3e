/* Owns mlx-c's mlx_vector_array functions: each checks its handles and
 * arguments and works on the list of array references behind the handle
 * (handles/vector.h, where the helpers that ops and compile use live). */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

/* Checks data[0..size): a pointer for a non-zero size, and no empty
 * handle. Returns 0 or reports. */
static int check_arrays(const char *fn, const mlx_array *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu arrays.", fn, size);
    for (size_t i = 0; i < size; i++)
        if (!data[i].ctx)
            return mc_error("[%s] Array %zu of %zu is empty (an mlx_array_new() handle that was never set).", fn,
                            i, size);
    return 0;
}

/* A new list holding references to data[0..size), or NULL with an error. */
static mc_vec *from_data(const char *fn, const mlx_array *data, size_t size)
{
    if (check_arrays(fn, data, size))
        return NULL;
    mc_vec *v = mc_vec_new(fn, MC_VEC_ARRAY, size);
    if (v && mc_vec_append_array_handles(fn, v, data, size)) {
        mc_vec_free(v);
        v = NULL;
    }
    return v;
}

/* Replaces *vec's items by data's, keeping *vec's object if it has one. */
static int set_data(const char *fn, mlx_vector_array *vec, const mlx_array *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec *v = from_data(fn, data, size);
    if (!v)
        return 1;
    vec->ctx = mc_vec_replace(vec->ctx, v);
    return 0;
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
    if (!s)
        return 1;
    return mc_vec_assign(fn, vec, mc_vec_arrays(s), s->len);
}

mlx_vector_array mlx_vector_array_new_data(const mlx_array *data, size_t size)
{
    return (mlx_vector_array){from_data("mlx_vector_array_new_data", data, size)};
}

mlx_vector_array mlx_vector_array_new_value(const mlx_array val)
{
    return (mlx_vector_array){from_data("mlx_vector_array_new_value", &val, 1)};
}

int mlx_vector_array_set_data(mlx_vector_array *vec, const mlx_array *data, size_t size)
{
    return set_data("mlx_vector_array_set_data", vec, data, size);
}

int mlx_vector_array_set_value(mlx_vector_array *vec, const mlx_array val)
{
    return set_data("mlx_vector_array_set_value", vec, &val, 1);
}

/* All items are checked before any is added: a failed call changes nothing. */
static int append_data(const char *fn, mlx_vector_array vec, const mlx_array *data, size_t size)
{
    mc_vec *v = mc_vec_checked(vec, fn);
    if (!v || check_arrays(fn, data, size))
        return 1;
    return mc_vec_append_array_handles(fn, v, data, size);
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
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    /* Retain before releasing: *res may already refer to this array. */
    mc_array *a = mc_array_retain(mc_vec_arrays(v)[idx]);
    mc_array_release(mc_arr(*res));
    res->ctx = a;
    return 0;
}
