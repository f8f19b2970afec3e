/* The whole mlx-c API that mlx-cpu implements (see docs/api.md). */
#ifndef MLX_ALL_H
#define MLX_ALL_H

#include "mlx/c/array.h"
#include "mlx/c/error.h"
#include "mlx/c/half.h"
#include "mlx/c/string.h"

#endif
