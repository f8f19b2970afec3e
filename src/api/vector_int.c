/* Owns mlx-c's mlx_vector_int functions (shapes, axes): each checks its
 * handles and arguments and works on the list of ints behind the handle
 * (handles/vector.h). */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

static const char type_name[] = "mlx_vector_int";

static mc_vec *checked(mlx_vector_int h, const char *fn) { return mc_vec_ctx_checked(h.ctx, fn, type_name); }

static int check_data(const char *fn, const int *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu ints.", fn, size);
    return 0;
}

/* A new list holding data[0..size), or NULL with an error reported. */
static mc_vec *from_data(const char *fn, const int *data, size_t size)
{
    if (check_data(fn, data, size))
        return NULL;
    mc_vec *v = mc_vec_new(fn, MC_VEC_INT, size);
    if (v && mc_vec_append_ints(fn, v, data, size)) {
        mc_vec_free(v);
        v = NULL;
    }
    return v;
}

static int set_data(const char *fn, mlx_vector_int *vec, const int *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    /* Built aside: data may be *vec's own items. */
    mc_vec *v = from_data(fn, data, size);
    if (!v)
        return 1;
    vec->ctx = mc_vec_replace(vec->ctx, v);
    return 0;
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
    if (!s)
        return 1;
    return set_data(fn, vec, mc_vec_ints(s), s->len);
}

mlx_vector_int mlx_vector_int_new_data(int *data, size_t size)
{
    return (mlx_vector_int){from_data("mlx_vector_int_new_data", data, size)};
}

mlx_vector_int mlx_vector_int_new_value(int val)
{
    return (mlx_vector_int){from_data("mlx_vector_int_new_value", &val, 1)};
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
    static const char fn[] = "mlx_vector_int_append_data";
    mc_vec *v = checked(vec, fn);
    if (!v || check_data(fn, data, size))
        return 1;
    return mc_vec_append_ints(fn, v, data, size);
}

int mlx_vector_int_append_value(mlx_vector_int vec, int val)
{
    static const char fn[] = "mlx_vector_int_append_value";
    mc_vec *v = checked(vec, fn);
    return v ? mc_vec_append_ints(fn, v, &val, 1) : 1;
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
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    *res = mc_vec_ints(v)[idx];
    return 0;
}
