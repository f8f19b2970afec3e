/* The reductions' parameters and dtype rule: Reduce and ArgReduce
 * (prims_reduce.c), LogSumExp and Softmax (prims_reduce_fused.c). They keep
 * the reduced dims (size 1) in their output; the ops squeeze them when
 * keepdims is false. Axes are normalised and sorted; params are zeroed
 * before they are filled, so they compare bytewise. */
#ifndef MC_GRAPH_PRIMS_REDUCE_H
#define MC_GRAPH_PRIMS_REDUCE_H

#include "graph/primitive.h"

typedef enum mc_reduce_kind {
    MC_RK_SUM,
    MC_RK_PROD,
    MC_RK_MAX,
    MC_RK_MIN,
    MC_RK_ALL,
    MC_RK_ANY,
    MC_RK_MEAN, /* the sum times 1/count, in the output dtype */
    MC_RK_VAR,  /* floating input; ddof as MLX */
    MC_RK_STD,
    MC_RK_COUNT
} mc_reduce_kind;

typedef struct mc_reduce_params {
    int kind; /* mc_reduce_kind */
    int ddof;
    int n;
    int axes[MC_MAX_NDIM];
} mc_reduce_params;

/* MLX's output dtype of a reduction kind on input dtype d. */
mlx_dtype mc_reduce_out_dtype(int kind, mlx_dtype d);

/* ArgReduce: uint32 indices along one axis (op: 0 argmax, 1 argmin). */
typedef struct mc_argreduce_params {
    int op;
    int axis;
} mc_argreduce_params;

/* LogSumExp (over axes, floating input) and Softmax (same shape and dtype
 * as its floating input; precise is recorded, the half types always
 * compute in float32). */
typedef struct mc_softmax_params {
    int n;
    int axes[MC_MAX_NDIM];
    int precise;
} mc_softmax_params;

#endif
