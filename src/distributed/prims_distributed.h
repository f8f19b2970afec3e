/* The communication primitives (prims_distributed.c): AllReduce (sum, max,
 * min), AllGather, ReduceScatter (sum), Send and Recv, as MLX's
 * mlx/distributed/primitives.h. Their rows are in graph/prim_list.h; the
 * ops that build them are src/ops/distributed.c. */
#ifndef MC_DISTRIBUTED_PRIMS_DISTRIBUTED_H
#define MC_DISTRIBUTED_PRIMS_DISTRIBUTED_H

#include "array/array.h"
#include "distributed/group.h"

/* One params struct for the family; zeroed before it is filled, since
 * nodes compare params with memcmp. */
typedef struct mc_dist_params {
    mc_group *group;
    int op;   /* AllReduce: MC_MPI_SUM, MC_MPI_MAX or MC_MPI_MIN */
    int peer; /* Send: the destination; Recv: the source */
    /* Recv: what arrives */
    mlx_dtype dtype;
    int ndim;
    int shape[MC_MAX_NDIM];
} mc_dist_params;

#endif
