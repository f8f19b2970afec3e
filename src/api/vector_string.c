/* Owns mlx-c's mlx_vector_string functions: each checks its handles and
 * calls the list of owned string copies behind them (handles/vector.h).
 * _get lends out the stored text, as mlx-c hands out its std::string's
 * buffer. */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

static mc_vec *checked(mlx_vector_string h, const char *fn)
{
    return mc_vec_ctx_checked(h.ctx, fn, "mlx_vector_string");
}

static int set_data(const char *fn, mlx_vector_string *vec, const char *const *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    return mc_vec_store(&vec->ctx, mc_vec_new_from(fn, MC_VEC_STRING, data, size));
}

static int append_data(const char *fn, mlx_vector_string vec, const char *const *data, size_t size)
{
    mc_vec *v = checked(vec, fn);
    return v ? mc_vec_append_from(fn, v, data, size) : 1;
}

mlx_vector_string mlx_vector_string_new(void)
{
    return (mlx_vector_string){mc_vec_new("mlx_vector_string_new", MC_VEC_STRING, 0)};
}

int mlx_vector_string_free(mlx_vector_string vec)
{
    mc_vec_free(vec.ctx);
    return 0;
}

int mlx_vector_string_set(mlx_vector_string *vec, const mlx_vector_string src)
{
    static const char fn[] = "mlx_vector_string_set";
    mc_vec *s = checked(src, fn);
    if (!s)
        return 1;
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    /* Copied aside first: src may be *vec itself. */
    return mc_vec_store(&vec->ctx, mc_vec_copy(fn, s));
}

mlx_vector_string mlx_vector_string_new_data(const char **data, size_t size)
{
    return (mlx_vector_string){mc_vec_new_from("mlx_vector_string_new_data", MC_VEC_STRING, data, size)};
}

mlx_vector_string mlx_vector_string_new_value(const char *val)
{
    return (mlx_vector_string){mc_vec_new_from("mlx_vector_string_new_value", MC_VEC_STRING, &val, 1)};
}

int mlx_vector_string_set_data(mlx_vector_string *vec, const char **data, size_t size)
{
    return set_data("mlx_vector_string_set_data", vec, data, size);
}

int mlx_vector_string_set_value(mlx_vector_string *vec, const char *val)
{
    return set_data("mlx_vector_string_set_value", vec, &val, 1);
}

int mlx_vector_string_append_data(mlx_vector_string vec, const char **data, size_t size)
{
    return append_data("mlx_vector_string_append_data", vec, data, size);
}

int mlx_vector_string_append_value(mlx_vector_string vec, const char *val)
{
    return append_data("mlx_vector_string_append_value", vec, &val, 1);
}

size_t mlx_vector_string_size(mlx_vector_string vec)
{
    mc_vec *v = checked(vec, "mlx_vector_string_size");
    return v ? v->len : 0;
}

int mlx_vector_string_get(char **res, const mlx_vector_string vec, size_t idx)
{
    static const char fn[] = "mlx_vector_string_get";
    if (!res)
        return mc_error("[%s] The output pointer is NULL.", fn);
    mc_vec *v = checked(vec, fn);
    if (!v || mc_vec_check_index(fn, v, idx))
        return 1;
    *res = mc_vec_strings(v)[idx];
    return 0;
}
