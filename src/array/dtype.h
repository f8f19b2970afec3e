/* Facts about element types: size, kind, name, and MLX's promotion order. */
#ifndef MC_ARRAY_DTYPE_H
#define MC_ARRAY_DTYPE_H

#include <stdbool.h>
#include <stddef.h>

#include "mlx/c/array.h"

enum { MC_NUM_DTYPES = MLX_COMPLEX64 + 1 };

typedef enum mc_kind {
    MC_KIND_BOOL,
    MC_KIND_UINT,
    MC_KIND_INT,
    MC_KIND_FLOAT,
    MC_KIND_COMPLEX,
} mc_kind;

/* True if d is one of the 14 mlx-c dtypes. */
static inline bool mc_dtype_valid(int d) { return d >= 0 && d < MC_NUM_DTYPES; }

/* Element sizes, 4 bits per dtype: read on every op, so a constant rather
 * than a call into a table. */
#define MC_DTYPE_SIZE_AT(d, n) ((unsigned long long)(n) << (4 * (d)))
#define MC_DTYPE_SIZES                                                                                       \
    (MC_DTYPE_SIZE_AT(MLX_BOOL, 1) | MC_DTYPE_SIZE_AT(MLX_UINT8, 1) | MC_DTYPE_SIZE_AT(MLX_UINT16, 2) |      \
     MC_DTYPE_SIZE_AT(MLX_UINT32, 4) | MC_DTYPE_SIZE_AT(MLX_UINT64, 8) | MC_DTYPE_SIZE_AT(MLX_INT8, 1) |      \
     MC_DTYPE_SIZE_AT(MLX_INT16, 2) | MC_DTYPE_SIZE_AT(MLX_INT32, 4) | MC_DTYPE_SIZE_AT(MLX_INT64, 8) |       \
     MC_DTYPE_SIZE_AT(MLX_FLOAT16, 2) | MC_DTYPE_SIZE_AT(MLX_FLOAT32, 4) | MC_DTYPE_SIZE_AT(MLX_FLOAT64, 8) | \
     MC_DTYPE_SIZE_AT(MLX_BFLOAT16, 2) | MC_DTYPE_SIZE_AT(MLX_COMPLEX64, 8))

/* Size in bytes of one element; d must be valid. */
static inline size_t mc_dtype_size(mlx_dtype d) { return (size_t)((MC_DTYPE_SIZES >> (4 * (unsigned)d)) & 15); }
/* MLX's name: "int32", "float16", "bool", ... ; "unknown" for invalid values. */
const char *mc_dtype_name(int d);
mc_kind mc_dtype_kind(mlx_dtype d);

static inline bool mc_dtype_is_float(mlx_dtype d) { return mc_dtype_kind(d) == MC_KIND_FLOAT; }
static inline bool mc_dtype_is_integer(mlx_dtype d)
{
    mc_kind k = mc_dtype_kind(d);
    return k == MC_KIND_INT || k == MC_KIND_UINT;
}
/* floating or complex: MLX's "inexact" category. */
static inline bool mc_dtype_is_inexact(mlx_dtype d)
{
    mc_kind k = mc_dtype_kind(d);
    return k == MC_KIND_FLOAT || k == MC_KIND_COMPLEX;
}

/* MLX's promote_types: the smallest dtype both a and b convert to
 * (e.g. uint8+int8 -> int16, int32+float32 -> float32, float16+bfloat16 -> float32). */
mlx_dtype mc_promote(mlx_dtype a, mlx_dtype b);

#endif
