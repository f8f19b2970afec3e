/* The worker pool: splits large loops across cores. Small work runs inline
 * on the calling thread. */
#ifndef MC_RUNTIME_POOL_H
#define MC_RUNTIME_POOL_H

#include <stddef.h>

/* A piece of a loop: process items [begin, end). */
typedef void (*mc_range_fn)(void *ctx, size_t begin, size_t end);

/* Runs fn over [0, n) in chunks of at least `grain` items (grain 0 counts
 * as 1), on up to mc_pool_threads() threads including the caller, and
 * returns when all are done. Chunks are contiguous and balanced (sizes
 * differ by at most one item), at most 4 per thread, and claimed by
 * whichever thread is free. Runs inline (one call of fn over [0, n)) when
 * n <= grain, when the pool has one thread, when called from inside fn or a
 * worker, and while another thread's call is using the pool. fn must not
 * fail and must not change the thread count. */
void mc_parallel_for(size_t n, size_t grain, mc_range_fn fn, void *ctx);

/* Threads used by mc_parallel_for (default: MLX_CPU_THREADS if it is a
 * positive integer, else the number of online cores; at most 1024). The
 * first call also sets OpenBLAS to one thread (the BLAS code splits large
 * products across this pool), so the BLAS code calls this once before its
 * first cblas call. */
int mc_pool_threads(void);

#endif
