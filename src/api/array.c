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

/* Copies the one element of arr, of dtype want and size bytes, to *res. */
static int item(void *res, size_t size, const mlx_array arr, mlx_dtype want, const char *fn)
{
    const void *p = mc_item(arr, want, res, fn);
    if (!p)
        return 1;
    memcpy(res, p, size);
    return 0;
}

int mlx_array_item_bool(bool *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_BOOL, "mlx_array_item_bool");
}

int mlx_array_item_uint8(uint8_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_UINT8, "mlx_array_item_uint8");
}

int mlx_array_item_uint16(uint16_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_UINT16, "mlx_array_item_uint16");
}

int mlx_array_item_uint32(uint32_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_UINT32, "mlx_array_item_uint32");
}

int mlx_array_item_uint64(uint64_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_UINT64, "mlx_array_item_uint64");
}

int mlx_array_item_int8(int8_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_INT8, "mlx_array_item_int8");
}

int mlx_array_item_int16(int16_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_INT16, "mlx_array_item_int16");
}

int mlx_array_item_int32(int32_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_INT32, "mlx_array_item_int32");
}

int mlx_array_item_int64(int64_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_INT64, "mlx_array_item_int64");
}

int mlx_array_item_float32(float *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_FLOAT32, "mlx_array_item_float32");
}

int mlx_array_item_float64(double *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_FLOAT64, "mlx_array_item_float64");
}

int mlx_array_item_complex64(mlx_complex64_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_COMPLEX64, "mlx_array_item_complex64");
}

int mlx_array_item_float16(mc_f16_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_FLOAT16, "mlx_array_item_float16");
}

int mlx_array_item_bfloat16(mc_bf16_t *res, const mlx_array arr)
{
    return item(res, sizeof *res, arr, MLX_BFLOAT16, "mlx_array_item_bfloat16");
}

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

const bool *mlx_array_data_bool(const mlx_array arr) { return mc_data(arr, MLX_BOOL, "mlx_array_data_bool"); }

const uint8_t *mlx_array_data_uint8(const mlx_array arr)
{
    return mc_data(arr, MLX_UINT8, "mlx_array_data_uint8");
}

const uint16_t *mlx_array_data_uint16(const mlx_array arr)
{
    return mc_data(arr, MLX_UINT16, "mlx_array_data_uint16");
}

const uint32_t *mlx_array_data_uint32(const mlx_array arr)
{
    return mc_data(arr, MLX_UINT32, "mlx_array_data_uint32");
}

const uint64_t *mlx_array_data_uint64(const mlx_array arr)
{
    return mc_data(arr, MLX_UINT64, "mlx_array_data_uint64");
}

const int8_t *mlx_array_data_int8(const mlx_array arr) { return mc_data(arr, MLX_INT8, "mlx_array_data_int8"); }

const int16_t *mlx_array_data_int16(const mlx_array arr)
{
    return mc_data(arr, MLX_INT16, "mlx_array_data_int16");
}

const int32_t *mlx_array_data_int32(const mlx_array arr)
{
    return mc_data(arr, MLX_INT32, "mlx_array_data_int32");
}

const int64_t *mlx_array_data_int64(const mlx_array arr)
{
    return mc_data(arr, MLX_INT64, "mlx_array_data_int64");
}

const float *mlx_array_data_float32(const mlx_array arr)
{
    return mc_data(arr, MLX_FLOAT32, "mlx_array_data_float32");
}

const double *mlx_array_data_float64(const mlx_array arr)
{
    return mc_data(arr, MLX_FLOAT64, "mlx_array_data_float64");
}

const mlx_complex64_t *mlx_array_data_complex64(const mlx_array arr)
{
    return mc_data(arr, MLX_COMPLEX64, "mlx_array_data_complex64");
}

const mc_f16_t *mlx_array_data_float16(const mlx_array arr)
{
    return mc_data(arr, MLX_FLOAT16, "mlx_array_data_float16");
}

const mc_bf16_t *mlx_array_data_bfloat16(const mlx_array arr)
{
    return mc_data(arr, MLX_BFLOAT16, "mlx_array_data_bfloat16");
}

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
