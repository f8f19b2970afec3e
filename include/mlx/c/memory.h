/* Memory: what the array buffers use, and the cache of freed buffers that
 * the library keeps for reuse. All sizes are in bytes. */
#ifndef MLX_MEMORY_H
#define MLX_MEMORY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* Frees every cached buffer; returns 0. */
int mlx_clear_cache(void);
/* Write the bytes held by live arrays, the bytes held in the cache, the
 * memory limit, or the highest active total since start or the last
 * reset; return 0. */
int mlx_get_active_memory(size_t* res);
int mlx_get_cache_memory(size_t* res);
int mlx_get_memory_limit(size_t* res);
int mlx_get_peak_memory(size_t* res);
/* Sets the recorded peak to 0, as MLX does; returns 0. */
int mlx_reset_peak_memory(void);
/* Set the cache limit (0 disables caching; the cache is trimmed at once)
 * or the memory limit, and write the previous value to *res; return 0. */
int mlx_set_cache_limit(size_t* res, size_t limit);
int mlx_set_memory_limit(size_t* res, size_t limit);
/* Wired memory is a GPU notion: the limit is only recorded (the previous
 * one is written to *res) and has no effect; returns 0. */
int mlx_set_wired_limit(size_t* res, size_t limit);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
