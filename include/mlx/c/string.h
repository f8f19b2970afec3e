/* Strings: an owned, NUL-terminated copy of text (mlx-c's mlx_string). */
#ifndef MLX_STRING_H
#define MLX_STRING_H

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* A string handle. The ctx is owned by the handle; free it with mlx_string_free. */
typedef struct mlx_string_ {
  void* ctx;
} mlx_string;

/* Returns a new empty string; the caller frees it. */
mlx_string mlx_string_new(void);
/* Returns a new string holding a copy of str; the caller frees it. */
mlx_string mlx_string_new_data(const char* str);
/* Makes *str a copy of src; returns 0, or 1 on error. */
int mlx_string_set(mlx_string* str, const mlx_string src);
/* Returns the text, owned by the string and valid until it is set or freed. */
const char* mlx_string_data(mlx_string str);
/* Frees the string; returns 0. Freeing an empty handle is allowed. */
int mlx_string_free(mlx_string str);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
