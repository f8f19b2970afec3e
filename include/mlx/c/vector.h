/* Vectors: growable lists of arrays, of array lists, of ints and of strings
 * (mlx-c's mlx_vector_* handles). A vector owns its elements: it holds its
 * own reference to every array it stores and its own copy of every string.
 * Every vector a function returns is the caller's to free. */
#ifndef MLX_VECTOR_H
#define MLX_VECTOR_H

#include <stddef.h>

#include "mlx/c/array.h"
#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* The four vector types share one set of functions:
 *   _new            returns a new vector with no items;
 *   _new_data       returns a vector holding the first size items of data;
 *   _new_value      returns a vector holding the one item val;
 *   _set            makes *vec a copy of src (the old contents are freed);
 *   _set_data, _set_value  replace *vec's contents with data or val;
 *   _append_data, _append_value  add items at the end of vec;
 *   _size           returns the number of items (0, with an error reported,
 *                   for a null handle);
 *   _get            writes item idx to *res, replacing what *res held;
 *                   fails if idx >= size;
 *   _free           frees the vector and drops what it holds (an empty
 *                   handle is allowed).
 * Functions returning int return 0, or 1 with an error reported; those
 * returning a vector return an empty handle on error. */

/* A list of arrays. Storing an array takes a reference; _get makes *res
 * (an mlx_array the caller frees) refer to the stored array. */
typedef struct mlx_vector_array_ {
  void* ctx;
} mlx_vector_array;
mlx_vector_array mlx_vector_array_new(void);
int mlx_vector_array_set(mlx_vector_array* vec, const mlx_vector_array src);
int mlx_vector_array_free(mlx_vector_array vec);
mlx_vector_array mlx_vector_array_new_data(const mlx_array* data, size_t size);
mlx_vector_array mlx_vector_array_new_value(const mlx_array val);
int mlx_vector_array_set_data(
    mlx_vector_array* vec,
    const mlx_array* data,
    size_t size);
int mlx_vector_array_set_value(mlx_vector_array* vec, const mlx_array val);
int mlx_vector_array_append_data(
    mlx_vector_array vec,
    const mlx_array* data,
    size_t size);
int mlx_vector_array_append_value(mlx_vector_array vec, const mlx_array val);
size_t mlx_vector_array_size(mlx_vector_array vec);
int mlx_vector_array_get(
    mlx_array* res,
    const mlx_vector_array vec,
    size_t idx);

/* A list of array lists. Storing a list stores its arrays (references, not
 * copies of data); _get writes a list the caller frees to *res. */
typedef struct mlx_vector_vector_array_ {
  void* ctx;
} mlx_vector_vector_array;
mlx_vector_vector_array mlx_vector_vector_array_new(void);
int mlx_vector_vector_array_set(
    mlx_vector_vector_array* vec,
    const mlx_vector_vector_array src);
int mlx_vector_vector_array_free(mlx_vector_vector_array vec);
mlx_vector_vector_array mlx_vector_vector_array_new_data(
    const mlx_vector_array* data,
    size_t size);
mlx_vector_vector_array mlx_vector_vector_array_new_value(
    const mlx_vector_array val);
int mlx_vector_vector_array_set_data(
    mlx_vector_vector_array* vec,
    const mlx_vector_array* data,
    size_t size);
int mlx_vector_vector_array_set_value(
    mlx_vector_vector_array* vec,
    const mlx_vector_array val);
int mlx_vector_vector_array_append_data(
    mlx_vector_vector_array vec,
    const mlx_vector_array* data,
    size_t size);
int mlx_vector_vector_array_append_value(
    mlx_vector_vector_array vec,
    const mlx_vector_array val);
size_t mlx_vector_vector_array_size(mlx_vector_vector_array vec);
int mlx_vector_vector_array_get(
    mlx_vector_array* res,
    const mlx_vector_vector_array vec,
    size_t idx);

/* A list of ints. data is copied (it is only read, although mlx-c types it
 * int*); _get writes the value to *res. */
typedef struct mlx_vector_int_ {
  void* ctx;
} mlx_vector_int;
mlx_vector_int mlx_vector_int_new(void);
int mlx_vector_int_set(mlx_vector_int* vec, const mlx_vector_int src);
int mlx_vector_int_free(mlx_vector_int vec);
mlx_vector_int mlx_vector_int_new_data(int* data, size_t size);
mlx_vector_int mlx_vector_int_new_value(int val);
int mlx_vector_int_set_data(mlx_vector_int* vec, int* data, size_t size);
int mlx_vector_int_set_value(mlx_vector_int* vec, int val);
int mlx_vector_int_append_data(mlx_vector_int vec, int* data, size_t size);
int mlx_vector_int_append_value(mlx_vector_int vec, int val);
size_t mlx_vector_int_size(mlx_vector_int vec);
int mlx_vector_int_get(int* res, const mlx_vector_int vec, size_t idx);

/* A list of NUL-terminated strings, each copied in. _get writes a pointer
 * to the stored text, owned by the vector and valid until it changes or is
 * freed (the caller must not free or write through it). */
typedef struct mlx_vector_string_ {
  void* ctx;
} mlx_vector_string;
mlx_vector_string mlx_vector_string_new(void);
int mlx_vector_string_set(mlx_vector_string* vec, const mlx_vector_string src);
int mlx_vector_string_free(mlx_vector_string vec);
mlx_vector_string mlx_vector_string_new_data(const char** data, size_t size);
mlx_vector_string mlx_vector_string_new_value(const char* val);
int mlx_vector_string_set_data(
    mlx_vector_string* vec,
    const char** data,
    size_t size);
int mlx_vector_string_set_value(mlx_vector_string* vec, const char* val);
int mlx_vector_string_append_data(
    mlx_vector_string vec,
    const char** data,
    size_t size);
int mlx_vector_string_append_value(mlx_vector_string vec, const char* val);
size_t mlx_vector_string_size(mlx_vector_string vec);
int mlx_vector_string_get(char** res, const mlx_vector_string vec, size_t idx);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
