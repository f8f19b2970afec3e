/* The worker pool: splits large loops across cores. Small work runs inline
 * on the calling thread. */
#ifndef MC_RUNTIME_POOL_H
#define MC_RUNTIME_POOL_H

#include <stddef.h>

/* A piece of a loop: process items [begin, end). */
typedef void (*mc_range_fn)(void *ctx, size_t begin, size_t end);

/* Runs fn over [0, n) in chunks of at least `grain` items, on up to
 * mc_pool_threads() threads including the caller, and returns when all are
 * done. Runs inline when n <= grain or the pool has one thread, and when
 * called from inside a pool worker (no nested parallelism). fn must not
 * fail; it may not call back into mc_parallel_for. */
void mc_parallel_for(size_t n, size_t grain, mc_range_fn fn, void *ctx);

/* Threads used by mc_parallel_for (default: MLX_CPU_THREADS, else the
 * number of online cores). */
int mc_pool_threads(void);

#endif
