/* Counters and limits of the array-data allocator (buffer_cache.c), for
 * mlx-c's memory.h functions (memory.c) and for tests. All calls are thread
 * safe and never fail. Byte counts are block capacities (a request rounded
 * up to its size class, see mc_data_capacity), as MLX counts the size of
 * the buffer it hands out rather than the bytes asked for. */
#ifndef MC_RUNTIME_BUFFER_CACHE_H
#define MC_RUNTIME_BUFFER_CACHE_H

#include <stddef.h>

/* Bytes a block for an nbytes request occupies (its size class), or 0 if
 * nbytes is too large to ever be allocated. */
size_t mc_data_capacity(size_t nbytes);

/* Bytes of live data blocks plus managed data (mc_data_account). */
size_t mc_mem_active(void);
/* Highest mc_mem_active() since start or the last mc_mem_reset_peak(). */
size_t mc_mem_peak(void);
/* Sets the peak to zero, as MLX's reset_peak_memory does. */
void mc_mem_reset_peak(void);
/* Bytes of freed blocks kept for reuse. */
size_t mc_mem_cached(void);

/* The memory limit: an allocation that would take active memory above it
 * fails. Default: 80% of physical RAM, or 8 GiB when that is unknown (MLX's
 * CPU allocator). set returns the previous limit; the limit applies from
 * the next allocation (live blocks are never taken back). */
size_t mc_mem_memory_limit(void);
size_t mc_mem_set_memory_limit(size_t limit);

/* The cache limit: freed blocks are kept while the cache stays at or below
 * it. 0 disables caching. Default: the default memory limit (memory.h in MLX:
 * "The cache limit defaults to the memory limit"). set returns the previous
 * limit and releases the oldest cached blocks until the cache fits. */
size_t mc_mem_cache_limit(void);
size_t mc_mem_set_cache_limit(size_t limit);

/* Bytes of freed small blocks the calling thread's magazine keeps (part of
 * mc_mem_cached; at most 64 KiB). For tests. */
size_t mc_mem_thread_cached(void);

/* Releases every cached block to the system: the shared lists and the
 * calling thread's magazine (another thread's magazine, at most 64 KiB, goes
 * to the shared lists when that thread exits). */
void mc_mem_clear_cache(void);

#endif
