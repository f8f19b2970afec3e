/* Arrays: the n-dimensional, typed, lazily evaluated value of MLX.
 * An mlx_array handle holds one reference to an array; every handle a
 * function returns or writes is the caller's to free with mlx_array_free. */
#ifndef MLX_ARRAY_H
#define MLX_ARRAY_H

#include "mlx/c/string.h"

#include <float.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <complex.h>
typedef float _Complex mlx_complex64_t;

#include "mlx/c/half.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* An array handle. A handle from mlx_array_new() is empty (ctx NULL) until an
 * op or setter writes to it. */
typedef struct mlx_array_ {
  void* ctx;
} mlx_array;

/* An empty handle, for initialising variables (an object, not a macro, as in
 * mlx-c; defined once in the library). */
extern const mlx_array mlx_array_empty;

/* Element types; the values are mlx-c's. */
typedef enum mlx_dtype_ {
  MLX_BOOL,
  MLX_UINT8,
  MLX_UINT16,
  MLX_UINT32,
  MLX_UINT64,
  MLX_INT8,
  MLX_INT16,
  MLX_INT32,
  MLX_INT64,
  MLX_FLOAT16,
  MLX_FLOAT32,
  MLX_FLOAT64,
  MLX_BFLOAT16,
  MLX_COMPLEX64,
} mlx_dtype;

/* Returns the size in bytes of one element of dtype, or 0 (with an error
 * reported) for a value that is not a dtype. */
size_t mlx_dtype_size(mlx_dtype dtype);

/* Evaluates arr and writes MLX's printed form of it to *str; returns 0 or 1. */
int mlx_array_tostring(mlx_string* str, const mlx_array arr);
/* Returns an empty handle; mlx_array_free on it is allowed. */
mlx_array mlx_array_new(void);
/* Drops the handle's reference; the array is freed when none is left. */
int mlx_array_free(mlx_array arr);
/* Scalar constructors: each returns a new 0-d array the caller frees.
 * new_int is int32, new_float/new_float32 float32, new_double/new_float64
 * float64, new_complex complex64. */
mlx_array mlx_array_new_bool(bool val);
mlx_array mlx_array_new_int(int val);
mlx_array mlx_array_new_float32(float val);
mlx_array mlx_array_new_float(float val);
mlx_array mlx_array_new_float64(double val);
mlx_array mlx_array_new_double(double val);
mlx_array mlx_array_new_complex(float real_val, float imag_val);
/* Returns a new array holding a copy of data (row-major, dim entries of
 * shape); on bad arguments reports an error and returns an empty handle. */
mlx_array mlx_array_new_data(
    const void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype);
/* Returns a new array that uses data in place, without copying; dtor(data)
 * runs exactly once, when the last array using the buffer is freed. If the
 * creation fails (bad arguments, out of memory) it returns an empty handle
 * with an error reported and does not run dtor: the caller still owns data. */
mlx_array mlx_array_new_data_managed(
    void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype,
    void (*dtor)(void*));
/* As mlx_array_new_data_managed, but dtor receives payload instead of data. */
mlx_array mlx_array_new_data_managed_payload(
    void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype,
    void* payload,
    void (*dtor)(void*));
/* Setters: make *arr refer to a new value (the old reference is dropped).
 * Each returns 0, or 1 with an error reported. */
int mlx_array_set(mlx_array* arr, const mlx_array src);
int mlx_array_set_bool(mlx_array* arr, bool val);
int mlx_array_set_int(mlx_array* arr, int val);
int mlx_array_set_float32(mlx_array* arr, float val);
int mlx_array_set_float(mlx_array* arr, float val);
int mlx_array_set_float64(mlx_array* arr, double val);
int mlx_array_set_double(mlx_array* arr, double val);
int mlx_array_set_complex(mlx_array* arr, float real_val, float imag_val);
int mlx_array_set_data(
    mlx_array* arr,
    const void* data,
    const int* shape,
    int dim,
    mlx_dtype dtype);
/* Queries; they do not evaluate. On an empty handle they report an error and
 * return 0 (or NULL). */
size_t mlx_array_itemsize(const mlx_array arr);
size_t mlx_array_size(const mlx_array arr);
size_t mlx_array_nbytes(const mlx_array arr);
size_t mlx_array_ndim(const mlx_array arr);
/* The shape, owned by the array; valid while it lives. */
const int* mlx_array_shape(const mlx_array arr);
/* The strides in elements, owned by the array. Before evaluation they are
 * the row-major strides of the shape. */
const size_t* mlx_array_strides(const mlx_array arr);
/* Returns dimension dim (negative counts from the end). */
int mlx_array_dim(const mlx_array arr, int dim);
mlx_dtype mlx_array_dtype(const mlx_array arr);
/* Evaluates the array; returns 0 or 1. */
int mlx_array_eval(mlx_array arr);
/* item_*: evaluates a one-element array and writes its value to *res.
 * Fails if the array has more than one element or another dtype. */
int mlx_array_item_bool(bool* res, const mlx_array arr);
int mlx_array_item_uint8(uint8_t* res, const mlx_array arr);
int mlx_array_item_uint16(uint16_t* res, const mlx_array arr);
int mlx_array_item_uint32(uint32_t* res, const mlx_array arr);
int mlx_array_item_uint64(uint64_t* res, const mlx_array arr);
int mlx_array_item_int8(int8_t* res, const mlx_array arr);
int mlx_array_item_int16(int16_t* res, const mlx_array arr);
int mlx_array_item_int32(int32_t* res, const mlx_array arr);
int mlx_array_item_int64(int64_t* res, const mlx_array arr);
int mlx_array_item_float32(float* res, const mlx_array arr);
int mlx_array_item_float64(double* res, const mlx_array arr);
int mlx_array_item_complex64(mlx_complex64_t* res, const mlx_array arr);
#ifdef HAS_FLOAT16
int mlx_array_item_float16(float16_t* res, const mlx_array arr);
#endif
#ifdef HAS_BFLOAT16
int mlx_array_item_bfloat16(bfloat16_t* res, const mlx_array arr);
#endif
/* data_*: evaluates the array and returns a pointer to its first element,
 * owned by the array (read it with mlx_array_strides). NULL, with an error
 * reported, if the dtype differs. */
const bool* mlx_array_data_bool(const mlx_array arr);
const uint8_t* mlx_array_data_uint8(const mlx_array arr);
const uint16_t* mlx_array_data_uint16(const mlx_array arr);
const uint32_t* mlx_array_data_uint32(const mlx_array arr);
const uint64_t* mlx_array_data_uint64(const mlx_array arr);
const int8_t* mlx_array_data_int8(const mlx_array arr);
const int16_t* mlx_array_data_int16(const mlx_array arr);
const int32_t* mlx_array_data_int32(const mlx_array arr);
const int64_t* mlx_array_data_int64(const mlx_array arr);
const float* mlx_array_data_float32(const mlx_array arr);
const double* mlx_array_data_float64(const mlx_array arr);
const mlx_complex64_t* mlx_array_data_complex64(const mlx_array arr);
#ifdef HAS_FLOAT16
const float16_t* mlx_array_data_float16(const mlx_array arr);
#endif
#ifdef HAS_BFLOAT16
const bfloat16_t* mlx_array_data_bfloat16(const mlx_array arr);
#endif

/* Writes whether the array is evaluated (its data is there). */
int _mlx_array_is_available(bool* res, const mlx_array arr);
/* Waits for a pending evaluation of arr to finish. */
int _mlx_array_wait(const mlx_array arr);
/* Contiguity of the evaluated array's layout. */
int _mlx_array_is_contiguous(bool* res, const mlx_array arr);
int _mlx_array_is_row_contiguous(bool* res, const mlx_array arr);
int _mlx_array_is_col_contiguous(bool* res, const mlx_array arr);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
