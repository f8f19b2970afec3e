/* Collectives and point-to-point messages: mlx-c v0.6.0's distributed.h.
 *
 * Each function follows ops.h's contract: the result is a lazy array put
 * in *res (the caller frees it); 0, or 1 with one error reported and *res
 * unchanged. The communication happens when the result is evaluated, so
 * every process of the group must evaluate the same collectives in the
 * same order. A null group (ctx NULL) means the global group
 * (mlx_distributed_init(false, NULL)). On a group of size 1 every
 * collective returns x itself. docs/distributed.md has the details: the
 * checks made across processes, timeouts, and MPI's thread level. */
#ifndef MLX_DISTRIBUTED_H
#define MLX_DISTRIBUTED_H

#include <stddef.h>

#include "mlx/c/array.h"
#include "mlx/c/distributed_group.h"
#include "mlx/c/stream.h"

#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

/* x of every process concatenated along axis 0 in rank order (a scalar
 * gives a vector of the group's size). */
int mlx_distributed_all_gather(mlx_array *res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                               const mlx_stream S);
/* The elementwise maximum, minimum and sum of x over the group. */
int mlx_distributed_all_max(mlx_array *res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                            const mlx_stream s);
int mlx_distributed_all_min(mlx_array *res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                            const mlx_stream s);
int mlx_distributed_all_sum(mlx_array *res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                            const mlx_stream s);
/* An array of the shape and dtype given, received from rank src. */
int mlx_distributed_recv(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, int src,
                         const mlx_distributed_group group /* may be null */, const mlx_stream s);
/* As recv with x's shape and dtype. */
int mlx_distributed_recv_like(mlx_array *res, const mlx_array x, int src,
                              const mlx_distributed_group group /* may be null */, const mlx_stream s);
/* Sends x to rank dst; the result (x's values) carries the dependency:
 * evaluating it sends. */
int mlx_distributed_send(mlx_array *res, const mlx_array x, int dst, const mlx_distributed_group group /* may be null */,
                         const mlx_stream s);
/* The sum over the group of x, scattered: rank r gets the r-th of size
 * equal blocks along axis 0 (whose length the size must divide). */
int mlx_distributed_sum_scatter(mlx_array *res, const mlx_array x, const mlx_distributed_group group /* may be null */,
                                const mlx_stream s);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
