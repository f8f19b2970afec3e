/* Owns mlx-c's array.h: constructors, setters, queries, item and data
 * accessors, contiguity queries and printing. */
#include <string.h>

#include "api/array_print.h"
#include "array/array.h"
#include "graph/eval.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

const mlx_array mlx_array_empty = {NULL};

size_t mlx_dtype_size(mlx_dtype dtype)
{
    if (!mc_dtype_valid(dtype)) {
        mc_error("[mlx_dtype_size] Unknown dtype value %d.", (int)dtype);
        return 0;
    }
    return mc_dtype_size(dtype);
}

/* Replaces the reference *dst holds with `a` (taken over). */
static int mc_store(mlx_array *dst, mc_array *a, const char *fn)
{
    if (!dst) {
        mc_array_release(a);
        return mc_error("[%s] The output array pointer is NULL.", fn);
    }
    if (!a)
        return 1;
    mc_array_release(mc_arr(*dst));
    dst->ctx = a;
    return 0;
}

int mlx_array_tostring(mlx_string *str, const mlx_array arr)
{
    static const char fn[] = "mlx_array_tostring";
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return 1;
    if (!str)
        return mc_error("[%s] The output string pointer is NULL.", fn);
    if (mc_eval1(a, fn))
        return 1;
    char *text = mc_array_format(a, fn);
    if (!text)
        return 1;
    mlx_string s = mlx_string_new_data(text);
    mc_xfree(text);
    if (!s.ctx)
        return 1;
    mlx_string_free(*str);
    *str = s;
    return 0;
}

mlx_array mlx_array_new(void) { return mlx_array_empty; }

int mlx_array_free(mlx_array arr)
{
    mc_array_release(mc_arr(arr));
    return 0;
}

static mlx_array mc_new_scalar(const char *fn, mlx_dtype dtype, const void *value)
{
    return mc_handle(mc_array_scalar(fn, dtype, value));
}

mlx_array mlx_array_new_bool(bool val) { return mc_new_scalar("mlx_array_new_bool", MLX_BOOL, &val); }
mlx_array mlx_array_new_int(int val)
{
    int32_t v = val;
    return mc_new_scalar("mlx_array_new_int", MLX_INT32, &v);
}
mlx_array mlx_array_new_float32(float val) { return mc_new_scalar("mlx_array_new_float32", MLX_FLOAT32, &val); }
mlx_array mlx_array_new_float(float val) { return mc_new_scalar("mlx_array_new_float", MLX_FLOAT32, &val); }
mlx_array mlx_array_new_float64(double val) { return mc_new_scalar("mlx_array_new_float64", MLX_FLOAT64, &val); }
mlx_array mlx_array_new_double(double val) { return mc_new_scalar("mlx_array_new_double", MLX_FLOAT64, &val); }
mlx_array mlx_array_new_complex(float real_val, float imag_val)
{
    float v[2] = {real_val, imag_val};
    return mc_new_scalar("mlx_array_new_complex", MLX_COMPLEX64, v);
}

mlx_array mlx_array_new_data(const void *data, const int *shape, int dim, mlx_dtype dtype)
{
    return mc_handle(mc_array_from_data("mlx_array_new_data", data, dim, shape, dtype));
}

static mc_array *mc_new_managed(const char *fn, void *data, const int *shape, int dim, mlx_dtype dtype,
                                void (*dtor)(void *), void *dtor_arg)
{
    mc_array *a = mc_array_alloc(fn, dtype, dim, shape);
    if (!a)
        return NULL;
    if (a->size && !data) {
        mc_error("[%s] The data pointer is NULL for %zu elements.", fn, a->size);
        mc_array_release(a);
        return NULL;
    }
    mc_buffer *b = mc_buffer_wrap(data, a->size * mc_dtype_size(dtype), dtor, dtor_arg);
    if (!b) {
        mc_error_oom(fn, sizeof(mc_buffer));
        mc_array_release(a);
        return NULL;
    }
    mc_array_set_buffer(a, b, data);
    return a;
}

mlx_array mlx_array_new_data_managed(void *data, const int *shape, int dim, mlx_dtype dtype,
                                     void (*dtor)(void *))
{
    return mc_handle(mc_new_managed("mlx_array_new_data_managed", data, shape, dim, dtype, dtor, data));
}

mlx_array mlx_array_new_data_managed_payload(void *data, const int *shape, int dim, mlx_dtype dtype,
                                             void *payload, void (*dtor)(void *))
{
    return mc_handle(mc_new_managed("mlx_array_new_data_managed_payload", data, shape, dim, dtype,
                                    dtor, payload));
}

int mlx_array_set(mlx_array *arr, const mlx_array src)
{
    static const char fn[] = "mlx_array_set";
    if (!arr)
        return mc_error("[%s] The output array pointer is NULL.", fn);
    mc_array *s = mc_arr_checked(src, fn);
    if (!s)
        return 1;
    mc_array_retain(s);
    mc_array_release(mc_arr(*arr));
    arr->ctx = s;
    return 0;
}

int mlx_array_set_bool(mlx_array *arr, bool val)
{
    return mc_store(arr, mc_array_scalar("mlx_array_set_bool", MLX_BOOL, &val), "mlx_array_set_bool");
}
int mlx_array_set_int(mlx_array *arr, int val)
{
    int32_t v = val;
    return mc_store(arr, mc_array_scalar("mlx_array_set_int", MLX_INT32, &v), "mlx_array_set_int");
}
int mlx_array_set_float32(mlx_array *arr, float val)
{
    return mc_store(arr, mc_array_scalar("mlx_array_set_float32", MLX_FLOAT32, &val), "mlx_array_set_float32");
}
int mlx_array_set_float(mlx_array *arr, float val)
{
    return mc_store(arr, mc_array_scalar("mlx_array_set_float", MLX_FLOAT32, &val), "mlx_array_set_float");
}
int mlx_array_set_float64(mlx_array *arr, double val)
{
    return mc_store(arr, mc_array_scalar("mlx_array_set_float64", MLX_FLOAT64, &val), "mlx_array_set_float64");
}
int mlx_array_set_double(mlx_array *arr, double val)
{
    return mc_store(arr, mc_array_scalar("mlx_array_set_double", MLX_FLOAT64, &val), "mlx_array_set_double");
}
int mlx_array_set_complex(mlx_array *arr, float real_val, float imag_val)
{
    float v[2] = {real_val, imag_val};
    return mc_store(arr, mc_array_scalar("mlx_array_set_complex", MLX_COMPLEX64, v), "mlx_array_set_complex");
}
int mlx_array_set_data(mlx_array *arr, const void *data, const int *shape, int dim, mlx_dtype dtype)
{
    static const char fn[] = "mlx_array_set_data";
    if (!arr)
        return mc_error("[%s] The output array pointer is NULL.", fn);
    return mc_store(arr, mc_array_from_data(fn, data, dim, shape, dtype), fn);
}

size_t mlx_array_itemsize(const mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_itemsize");
    return a ? mc_dtype_size(a->dtype) : 0;
}

size_t mlx_array_size(const mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_size");
    return a ? a->size : 0;
}

size_t mlx_array_nbytes(const mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_nbytes");
    return a ? a->size * mc_dtype_size(a->dtype) : 0;
}

size_t mlx_array_ndim(const mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_ndim");
    return a ? (size_t)a->ndim : 0;
}

const int *mlx_array_shape(const mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_shape");
    return a ? a->shape : NULL;
}

const size_t *mlx_array_strides(const mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_strides");
    /* int64 and size_t have the same size on every supported target; a
     * negative stride reads as a huge size_t, as it does in mlx-c */
    _Static_assert(sizeof(size_t) == sizeof(int64_t), "strides are returned in place");
    return a ? (const size_t *)a->strides : NULL;
}

int mlx_array_dim(const mlx_array arr, int dim)
{
    static const char fn[] = "mlx_array_dim";
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return 0;
    int d = dim < 0 ? dim + a->ndim : dim;
    if (d < 0 || d >= a->ndim) {
        mc_error("[%s] Dimension %d is out of range for an array with %d dimensions.", fn, dim, a->ndim);
        return 0;
    }
    return a->shape[d];
}

mlx_dtype mlx_array_dtype(const mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_dtype");
    return a ? a->dtype : MLX_BOOL;
}

int mlx_array_eval(mlx_array arr)
{
    mc_array *a = mc_arr_checked(arr, "mlx_array_eval");
    return a ? mc_eval1(a, "mlx_array_eval") : 1;
}

/* Evaluates arr and checks it holds one element of `want`. */
static const void *mc_item(const mlx_array arr, mlx_dtype want, const void *res, const char *fn)
{
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return NULL;
    if (!res) {
        mc_error("[%s] The output pointer is NULL.", fn);
        return NULL;
    }
    if (a->dtype != want) {
        mc_error("[%s] The array has dtype %s, not %s.", fn, mc_dtype_name(a->dtype), mc_dtype_name(want));
        return NULL;
    }
    if (a->size != 1) {
        mc_error("[%s] item can only be called on arrays of size 1, not size %zu.", fn, a->size);
        return NULL;
    }
    if (mc_eval1(a, fn))
        return NULL;
    return a->data;
}

#define MC_ITEM(name, ctype, dtype)                                                    \
    int mlx_array_item_##name(ctype *res, const mlx_array arr)                         \
    {                                                                                  \
        const void *p = mc_item(arr, dtype, res, "mlx_array_item_" #name);             \
        if (!p)                                                                        \
            return 1;                                                                  \
        memcpy(res, p, sizeof *res);                                                   \
        return 0;                                                                      \
    }

MC_ITEM(bool, bool, MLX_BOOL)
MC_ITEM(uint8, uint8_t, MLX_UINT8)
MC_ITEM(uint16, uint16_t, MLX_UINT16)
MC_ITEM(uint32, uint32_t, MLX_UINT32)
MC_ITEM(uint64, uint64_t, MLX_UINT64)
MC_ITEM(int8, int8_t, MLX_INT8)
MC_ITEM(int16, int16_t, MLX_INT16)
MC_ITEM(int32, int32_t, MLX_INT32)
MC_ITEM(int64, int64_t, MLX_INT64)
MC_ITEM(float32, float, MLX_FLOAT32)
MC_ITEM(float64, double, MLX_FLOAT64)
MC_ITEM(complex64, mlx_complex64_t, MLX_COMPLEX64)

/* The half-precision accessors exist on every target: they move two bytes,
 * so they work for any caller whose compiler has the type (see half.h),
 * even where the compiler that built the library lacks it. */
#define MC_EXPORT __attribute__((visibility("default")))
#ifdef HAS_FLOAT16
typedef float16_t mc_f16_t;
#else
typedef uint16_t mc_f16_t;
MC_EXPORT int mlx_array_item_float16(mc_f16_t *res, const mlx_array arr);
MC_EXPORT const mc_f16_t *mlx_array_data_float16(const mlx_array arr);
#endif
#ifdef HAS_BFLOAT16
typedef bfloat16_t mc_bf16_t;
#else
typedef uint16_t mc_bf16_t;
MC_EXPORT int mlx_array_item_bfloat16(mc_bf16_t *res, const mlx_array arr);
MC_EXPORT const mc_bf16_t *mlx_array_data_bfloat16(const mlx_array arr);
#endif
MC_ITEM(float16, mc_f16_t, MLX_FLOAT16)
MC_ITEM(bfloat16, mc_bf16_t, MLX_BFLOAT16)

static const void *mc_data(const mlx_array arr, mlx_dtype want, const char *fn)
{
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return NULL;
    if (a->dtype != want) {
        mc_error("[%s] The array has dtype %s, not %s.", fn, mc_dtype_name(a->dtype), mc_dtype_name(want));
        return NULL;
    }
    if (mc_eval1(a, fn))
        return NULL;
    return a->data;
}

#define MC_DATA(name, ctype, dtype)                                                    \
    const ctype *mlx_array_data_##name(const mlx_array arr)                            \
    {                                                                                  \
        return mc_data(arr, dtype, "mlx_array_data_" #name);                           \
    }

MC_DATA(bool, bool, MLX_BOOL)
MC_DATA(uint8, uint8_t, MLX_UINT8)
MC_DATA(uint16, uint16_t, MLX_UINT16)
MC_DATA(uint32, uint32_t, MLX_UINT32)
MC_DATA(uint64, uint64_t, MLX_UINT64)
MC_DATA(int8, int8_t, MLX_INT8)
MC_DATA(int16, int16_t, MLX_INT16)
MC_DATA(int32, int32_t, MLX_INT32)
MC_DATA(int64, int64_t, MLX_INT64)
MC_DATA(float32, float, MLX_FLOAT32)
MC_DATA(float64, double, MLX_FLOAT64)
MC_DATA(complex64, mlx_complex64_t, MLX_COMPLEX64)
MC_DATA(float16, mc_f16_t, MLX_FLOAT16)
MC_DATA(bfloat16, mc_bf16_t, MLX_BFLOAT16)

int _mlx_array_is_available(bool *res, const mlx_array arr)
{
    static const char fn[] = "_mlx_array_is_available";
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return 1;
    if (!res)
        return mc_error("[%s] The output pointer is NULL.", fn);
    *res = mc_array_evaluated(a);
    return 0;
}

int _mlx_array_wait(const mlx_array arr)
{
    /* evaluation is synchronous: an array that was evaluated is ready, and
     * waiting on one that was never scheduled evaluates it, as MLX does */
    mc_array *a = mc_arr_checked(arr, "_mlx_array_wait");
    return a ? mc_eval1(a, "_mlx_array_wait") : 1;
}

static int mc_flag_query(bool *res, const mlx_array arr, unsigned flag, const char *fn)
{
    mc_array *a = mc_arr_checked(arr, fn);
    if (!a)
        return 1;
    if (!res)
        return mc_error("[%s] The output pointer is NULL.", fn);
    if (mc_eval1(a, fn))
        return 1;
    *res = (a->flags & flag) != 0;
    return 0;
}

int _mlx_array_is_contiguous(bool *res, const mlx_array arr)
{
    return mc_flag_query(res, arr, MC_FLAG_CONTIG, "_mlx_array_is_contiguous");
}
int _mlx_array_is_row_contiguous(bool *res, const mlx_array arr)
{
    return mc_flag_query(res, arr, MC_FLAG_ROW_CONTIG, "_mlx_array_is_row_contiguous");
}
int _mlx_array_is_col_contiguous(bool *res, const mlx_array arr)
{
    return mc_flag_query(res, arr, MC_FLAG_COL_CONTIG, "_mlx_array_is_col_contiguous");
}
