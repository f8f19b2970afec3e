/* Owns mlx-c's memory.h functions: thin, checked wrappers over the counters
 * and limits of the data allocator (runtime/buffer_cache.h). */
#include "mlx/c/memory.h"

#include <stdatomic.h>

#include "runtime/buffer_cache.h"
#include "runtime/error.h"

/* Wired memory (pages pinned for a GPU) does not exist on a CPU. The value
 * is only recorded so that a program that sets and later restores it sees
 * its own numbers back; it has no effect. Default 0, as in MLX. */
static atomic_size_t wired_limit;

#define CHECK_OUT(fn, res)                                                   \
    do {                                                                     \
        if (!(res))                                                          \
            return mc_error("[" fn "] The result pointer must not be NULL."); \
    } while (0)

int mlx_clear_cache(void)
{
    mc_mem_clear_cache();
    return 0;
}

int mlx_get_active_memory(size_t *res)
{
    CHECK_OUT("mlx_get_active_memory", res);
    *res = mc_mem_active();
    return 0;
}

int mlx_get_cache_memory(size_t *res)
{
    CHECK_OUT("mlx_get_cache_memory", res);
    *res = mc_mem_cached();
    return 0;
}

int mlx_get_memory_limit(size_t *res)
{
    CHECK_OUT("mlx_get_memory_limit", res);
    *res = mc_mem_memory_limit();
    return 0;
}

int mlx_get_peak_memory(size_t *res)
{
    CHECK_OUT("mlx_get_peak_memory", res);
    *res = mc_mem_peak();
    return 0;
}

int mlx_reset_peak_memory(void)
{
    mc_mem_reset_peak();
    return 0;
}

/* The setters check res before changing anything, so a failed call leaves
 * the limit as it was. */
int mlx_set_cache_limit(size_t *res, size_t limit)
{
    CHECK_OUT("mlx_set_cache_limit", res);
    *res = mc_mem_set_cache_limit(limit);
    return 0;
}

int mlx_set_memory_limit(size_t *res, size_t limit)
{
    CHECK_OUT("mlx_set_memory_limit", res);
    *res = mc_mem_set_memory_limit(limit);
    return 0;
}

int mlx_set_wired_limit(size_t *res, size_t limit)
{
    CHECK_OUT("mlx_set_wired_limit", res);
    *res = atomic_exchange(&wired_limit, limit);
    return 0;
}
