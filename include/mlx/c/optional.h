/* Optional scalars: a value plus a flag saying whether it was given. Ops
 * that take one use their default when has_value is false. */
#ifndef MLX_OPTIONAL_H
#define MLX_OPTIONAL_H

#include <stdbool.h>

#include "mlx/c/array.h"
#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* An int that may be absent (value is ignored when has_value is false). */
typedef struct mlx_optional_int_ {
  int value;
  bool has_value;
} mlx_optional_int;

/* A float that may be absent. */
typedef struct mlx_optional_float_ {
  float value;
  bool has_value;
} mlx_optional_float;

/* A dtype that may be absent. */
typedef struct mlx_optional_dtype_ {
  mlx_dtype value;
  bool has_value;
} mlx_optional_dtype;

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
