/* Owns mlx-c's mlx_vector_int functions (shapes, axes): each checks its
 * handles and calls the list of ints behind them (handles/vector.h). */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

static mc_vec *checked(mlx_vector_int h, const char *fn)
{
    return mc_vec_ctx_checked(h.ctx, fn, "mlx_vector_int");
}

/* Replaces *vec's items by data's (built aside: data may be *vec's own). */
static int set_data(const char *fn, mlx_vector_int *vec, const int *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    return mc_vec_store(&vec->ctx, mc_vec_new_from(fn, MC_VEC_INT, data, size));
}

static int append_data(const char *fn, mlx_vector_int vec, const int *data, size_t size)
{
    mc_vec *v = checked(vec, fn);
    return v ? mc_vec_append_from(fn, v, data, size) : 1;
}

mlx_vector_int mlx_vector_int_new(void)
{
    return (mlx_vector_int){mc_vec_new("mlx_vector_int_new", MC_VEC_INT, 0)};
}

int mlx_vector_int_free(mlx_vector_int vec)
{
    mc_vec_free(vec.ctx);
    return 0;
}

int mlx_vector_int_set(mlx_vector_int *vec, const mlx_vector_int src)
{
    static const char fn[] = "mlx_vector_int_set";
    mc_vec *s = checked(src, fn);
    return s ? set_data(fn, vec, mc_vec_ints(s), s->len) : 1;
}

mlx_vector_int mlx_vector_int_new_data(int *data, size_t size)
{
    return (mlx_vector_int){mc_vec_new_from("mlx_vector_int_new_data", MC_VEC_INT, data, size)};
}

mlx_vector_int mlx_vector_int_new_value(int val)
{
    return (mlx_vector_int){mc_vec_new_from("mlx_vector_int_new_value", MC_VEC_INT, &val, 1)};
}

int mlx_vector_int_set_data(mlx_vector_int *vec, int *data, size_t size)
{
    return set_data("mlx_vector_int_set_data", vec, data, size);
}

int mlx_vector_int_set_value(mlx_vector_int *vec, int val)
{
    return set_data("mlx_vector_int_set_value", vec, &val, 1);
}

int mlx_vector_int_append_data(mlx_vector_int vec, int *data, size_t size)
{
    return append_data("mlx_vector_int_append_data", vec, data, size);
}

int mlx_vector_int_append_value(mlx_vector_int vec, int val)
{
    return append_data("mlx_vector_int_append_value", vec, &val, 1);
}

size_t mlx_vector_int_size(mlx_vector_int vec)
{
    mc_vec *v = checked(vec, "mlx_vector_int_size");
    return v ? v->len : 0;
}

int mlx_vector_int_get(int *res, const mlx_vector_int vec, size_t idx)
{
    static const char fn[] = "mlx_vector_int_get";
    if (!res)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_vec *v = checked(vec, fn);
    if (!v || mc_vec_check_index(fn, v, idx))
        return 1;
    *res = mc_vec_ints(v)[idx];
    return 0;
}
