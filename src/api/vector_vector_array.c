/* Owns mlx-c's mlx_vector_vector_array functions: each checks its handles
 * and arguments and works on the list of array lists behind the handle
 * (handles/vector.h). Each stored list is a copy of the one given (new
 * references to the same arrays), so later changes to either side do not
 * show through, as with mlx-c's std::vector<std::vector<array>>. */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

static const char type_name[] = "mlx_vector_vector_array";

static mc_vec *checked(mlx_vector_vector_array h, const char *fn)
{
    return mc_vec_ctx_checked(h.ctx, fn, type_name);
}

static int check_lists(const char *fn, const mlx_vector_array *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu vectors.", fn, size);
    for (size_t i = 0; i < size; i++)
        if (!data[i].ctx)
            return mc_error("[%s] Vector %zu of %zu is empty (its ctx is NULL).", fn, i, size);
    return 0;
}

/* A new list holding copies of the lists data[0..size), or NULL. */
static mc_vec *from_data(const char *fn, const mlx_vector_array *data, size_t size)
{
    if (check_lists(fn, data, size))
        return NULL;
    mc_vec *v = mc_vec_new(fn, MC_VEC_VECTOR, size);
    if (v && mc_vec_append_vector_handles(fn, v, data, size)) {
        mc_vec_free(v);
        v = NULL;
    }
    return v;
}

/* Puts v (NULL: a failure already reported) into *vec. */
static int store(mlx_vector_vector_array *vec, mc_vec *v)
{
    if (!v)
        return 1;
    vec->ctx = mc_vec_replace(vec->ctx, v);
    return 0;
}

mlx_vector_vector_array mlx_vector_vector_array_new(void)
{
    return (mlx_vector_vector_array){mc_vec_new("mlx_vector_vector_array_new", MC_VEC_VECTOR, 0)};
}

int mlx_vector_vector_array_free(mlx_vector_vector_array vec)
{
    mc_vec_free(vec.ctx);
    return 0;
}

int mlx_vector_vector_array_set(mlx_vector_vector_array *vec, const mlx_vector_vector_array src)
{
    static const char fn[] = "mlx_vector_vector_array_set";
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec *s = checked(src, fn);
    /* Copied aside first: src may be *vec itself. */
    return s ? store(vec, mc_vec_copy(fn, s)) : 1;
}

mlx_vector_vector_array mlx_vector_vector_array_new_data(const mlx_vector_array *data, size_t size)
{
    return (mlx_vector_vector_array){from_data("mlx_vector_vector_array_new_data", data, size)};
}

mlx_vector_vector_array mlx_vector_vector_array_new_value(const mlx_vector_array val)
{
    return (mlx_vector_vector_array){from_data("mlx_vector_vector_array_new_value", &val, 1)};
}

static int set_data(const char *fn, mlx_vector_vector_array *vec, const mlx_vector_array *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    return store(vec, from_data(fn, data, size));
}

int mlx_vector_vector_array_set_data(mlx_vector_vector_array *vec, const mlx_vector_array *data, size_t size)
{
    return set_data("mlx_vector_vector_array_set_data", vec, data, size);
}

int mlx_vector_vector_array_set_value(mlx_vector_vector_array *vec, const mlx_vector_array val)
{
    return set_data("mlx_vector_vector_array_set_value", vec, &val, 1);
}

static int append_data(const char *fn, mlx_vector_vector_array vec, const mlx_vector_array *data, size_t size)
{
    mc_vec *v = checked(vec, fn);
    if (!v || check_lists(fn, data, size))
        return 1;
    return mc_vec_append_vector_handles(fn, v, data, size);
}

int mlx_vector_vector_array_append_data(mlx_vector_vector_array vec, const mlx_vector_array *data, size_t size)
{
    return append_data("mlx_vector_vector_array_append_data", vec, data, size);
}

int mlx_vector_vector_array_append_value(mlx_vector_vector_array vec, const mlx_vector_array val)
{
    return append_data("mlx_vector_vector_array_append_value", vec, &val, 1);
}

size_t mlx_vector_vector_array_size(mlx_vector_vector_array vec)
{
    mc_vec *v = checked(vec, "mlx_vector_vector_array_size");
    return v ? v->len : 0;
}

int mlx_vector_vector_array_get(mlx_vector_array *res, const mlx_vector_vector_array vec, size_t idx)
{
    static const char fn[] = "mlx_vector_vector_array_get";
    if (!res)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec *v = checked(vec, fn);
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    mc_vec *item = mc_vec_vectors(v)[idx];
    return mc_vec_assign(fn, res, mc_vec_arrays(item), item->len);
}
