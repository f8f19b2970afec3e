/* Owns mlx-c's mlx_vector_string functions: each checks its handles and
 * arguments and works on the list of owned string copies behind the handle
 * (handles/vector.h). _get lends out the stored text, as mlx-c hands out
 * its std::string's buffer. */
#include "mlx/c/vector.h"

#include "handles/vector.h"
#include "runtime/error.h"

static const char type_name[] = "mlx_vector_string";

static mc_vec *checked(mlx_vector_string h, const char *fn) { return mc_vec_ctx_checked(h.ctx, fn, type_name); }

static int check_strings(const char *fn, const char *const *data, size_t size)
{
    if (size && !data)
        return mc_error("[%s] The data pointer is NULL for %zu strings.", fn, size);
    for (size_t i = 0; i < size; i++)
        if (!data[i])
            return mc_error("[%s] String %zu of %zu is NULL.", fn, i, size);
    return 0;
}

/* A new list holding copies of data[0..size), or NULL with an error. */
static mc_vec *from_data(const char *fn, const char *const *data, size_t size)
{
    if (check_strings(fn, data, size))
        return NULL;
    mc_vec *v = mc_vec_new(fn, MC_VEC_STRING, size);
    if (v && mc_vec_append_strings(fn, v, data, size)) {
        mc_vec_free(v);
        v = NULL;
    }
    return v;
}

/* Replaces *vec's strings by copies of data's (which may be *vec's own). */
static int set_data(const char *fn, mlx_vector_string *vec, const char *const *data, size_t size)
{
    if (!vec)
        return mc_error("[%s] The output vector pointer is NULL.", fn);
    mc_vec *v = from_data(fn, data, size);
    if (!v)
        return 1;
    vec->ctx = mc_vec_replace(vec->ctx, v);
    return 0;
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
    mc_vec *v = mc_vec_copy(fn, s);
    if (!v)
        return 1;
    vec->ctx = mc_vec_replace(vec->ctx, v);
    return 0;
}

mlx_vector_string mlx_vector_string_new_data(const char **data, size_t size)
{
    return (mlx_vector_string){from_data("mlx_vector_string_new_data", data, size)};
}

mlx_vector_string mlx_vector_string_new_value(const char *val)
{
    return (mlx_vector_string){from_data("mlx_vector_string_new_value", &val, 1)};
}

int mlx_vector_string_set_data(mlx_vector_string *vec, const char **data, size_t size)
{
    return set_data("mlx_vector_string_set_data", vec, data, size);
}

int mlx_vector_string_set_value(mlx_vector_string *vec, const char *val)
{
    return set_data("mlx_vector_string_set_value", vec, &val, 1);
}

static int append_data(const char *fn, mlx_vector_string vec, const char *const *data, size_t size)
{
    mc_vec *v = checked(vec, fn);
    if (!v || check_strings(fn, data, size))
        return 1;
    return mc_vec_append_strings(fn, v, data, size);
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
    if (!v)
        return 1;
    if (idx >= v->len)
        return mc_error("[%s] Index %zu out of range for a vector of size %zu.", fn, idx, v->len);
    *res = mc_vec_strings(v)[idx];
    return 0;
}
