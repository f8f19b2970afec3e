/* The library's version. */
#ifndef MLX_VERSION_H
#define MLX_VERSION_H

#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* Writes the version string to *str_ (replacing what it held); returns 0,
 * or 1 with an error reported. */
int mlx_version(mlx_string* str_);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
