/* Owns mlx-c's mlx_vector_vector_array functions: each checks its handles
 * and calls the list of array lists behind them (handles/vector.h). Each
 * stored list is a copy of the one given (new references to the same
 * arrays), so later changes to either side do not show through, as with
 * mlx-c's std::vector<std::vector<array>>. */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

static mc_vec *checked(mlx_vector_vector_array h, const char *fn)
{
    return mc_vec_ctx_checked(h.ctx, fn, "mlx_vector_vector_array");
}

static int set_data(const char *fn, mlx_vector_vector_array *vec, const mlx_vector_array *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    return mc_vec_store(&vec->ctx, mc_vec_new_from(fn, MC_VEC_VECTOR, data, size));
}

static int append_data(const char *fn, mlx_vector_vector_array vec, const mlx_vector_array *data, size_t size)
{
    mc_vec *v = checked(vec, fn);
    return v ? mc_vec_append_from(fn, v, data, size) : 1;
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
    return s ? mc_vec_store(&vec->ctx, mc_vec_copy(fn, s)) : 1;
}

mlx_vector_vector_array mlx_vector_vector_array_new_data(const mlx_vector_array *data, size_t size)
{
    return (mlx_vector_vector_array){
        mc_vec_new_from("mlx_vector_vector_array_new_data", MC_VEC_VECTOR, data, size)};
}

mlx_vector_vector_array mlx_vector_vector_array_new_value(const mlx_vector_array val)
{
    return (mlx_vector_vector_array){mc_vec_new_from("mlx_vector_vector_array_new_value", MC_VEC_VECTOR, &val, 1)};
}

int mlx_vector_vector_array_set_data(mlx_vector_vector_array *vec, const mlx_vector_array *data, size_t size)
{
    return set_data("mlx_vector_vector_array_set_data", vec, data, size);
}

int mlx_vector_vector_array_set_value(mlx_vector_vector_array *vec, const mlx_vector_array val)
{
    return set_data("mlx_vector_vector_array_set_value", vec, &val, 1);
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
    if (!v || mc_vec_check_index(fn, v, idx))
        return 1;
    mc_vec *item = mc_vec_vectors(v)[idx];
    return mc_vec_assign(fn, res, mc_vec_arrays(item), item->len);
}
