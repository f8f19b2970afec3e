/* Owns distributed.h's ops (MLX's mlx/distributed/ops.cpp): the argument
 * checks, the identity on a group of one, and one communication node
 * (src/distributed/prims_distributed.c). */
#include <string.h>

#include "distributed/prims_distributed.h"
#include "mlx/c/distributed.h"
#include "ops/op_util.h"
#include "runtime/error.h"

/* The group behind a handle (null: the global group). */
static mc_group *op_group(mlx_distributed_group group, const char *fn) { return mc_group_from_ctx(group.ctx, fn); }

/* The checks every op taking an array starts with: the result pointer,
 * x, then the group; NULL with one error reported if one fails. */
static mc_group *op_begin(mlx_array *res, mlx_array x, mlx_distributed_group group, mc_array **a, const char *fn)
{
    if (mc_op_check_res(res, fn))
        return NULL;
    *a = mc_op_arg(x, fn, "x");
    return *a ? op_group(group, fn) : NULL;
}

static mc_array *dist_node(int prim, mc_array *x, const mc_dist_params *p, const char *fn)
{
    return mc_node_new(fn, prim, &x, x ? 1 : 0, p, sizeof *p);
}

/* all_sum, all_max, all_min: x itself on a group of one. */
static int all_reduce_op(mlx_array *res, mlx_array x, mlx_distributed_group group, int op, const char *fn)
{
    mc_array *a;
    mc_group *g = op_begin(res, x, group, &a, fn);
    if (!g)
        return 1;
    if (g->size == 1)
        return mc_op_store(res, mc_array_retain(a), fn);
    mc_dist_params p;
    memset(&p, 0, sizeof p);
    p.group = g;
    p.op = op;
    return mc_op_store(res, dist_node(MC_PRIM_ALL_REDUCE, a, &p, fn), fn);
}

int mlx_distributed_all_sum(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                            const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return all_reduce_op(res, x, group, MC_MPI_SUM, "distributed_all_sum");
}

int mlx_distributed_all_max(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                            const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return all_reduce_op(res, x, group, MC_MPI_MAX, "distributed_all_max");
}

int mlx_distributed_all_min(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                            const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return all_reduce_op(res, x, group, MC_MPI_MIN, "distributed_all_min");
}

/* all_gather and sum_scatter: x itself on a group of one. */
static int one_input_op(mlx_array *res, mlx_array x, mlx_distributed_group group, int prim, const char *fn)
{
    mc_array *a;
    mc_group *g = op_begin(res, x, group, &a, fn);
    if (!g)
        return 1;
    if (g->size == 1)
        return mc_op_store(res, mc_array_retain(a), fn);
    if (prim == MC_PRIM_REDUCE_SCATTER && (a->ndim == 0 || a->shape[0] % g->size != 0)) {
        char shape[512];
        return mc_error("[%s] Invalid shape=%s for a group of size %d. The first dimension (axis 0) must be "
                        "divisible by the group size.",
                        fn, mc_shape_str(shape, sizeof shape, a->ndim, a->shape), g->size);
    }
    mc_dist_params p;
    memset(&p, 0, sizeof p);
    p.group = g;
    return mc_op_store(res, dist_node(prim, a, &p, fn), fn);
}

int mlx_distributed_all_gather(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                               const mlx_stream S)
{
    MC_STREAM_REQUIRED(S);
    (void)S;
    return one_input_op(res, x, group, MC_PRIM_ALL_GATHER, "distributed_all_gather");
}

int mlx_distributed_sum_scatter(mlx_array *res, const mlx_array x, const mlx_distributed_group group,
                                const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return one_input_op(res, x, group, MC_PRIM_REDUCE_SCATTER, "distributed_sum_scatter");
}

int mlx_distributed_send(mlx_array *res, const mlx_array x, int dst, const mlx_distributed_group group,
                         const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    const char *fn = "distributed_send";
    mc_array *a;
    mc_group *g = op_begin(res, x, group, &a, fn);
    if (!g)
        return 1;
    if (g->size == 1)
        return mc_error("[%s] Cannot send to a singleton group.", fn);
    if (dst < 0 || dst >= g->size)
        return mc_error("[%s] Invalid destination=%d for a group of size %d.", fn, dst, g->size);
    mc_dist_params p;
    memset(&p, 0, sizeof p);
    p.group = g;
    p.peer = dst;
    return mc_op_store(res, dist_node(MC_PRIM_SEND, a, &p, fn), fn);
}

static int recv_op(mlx_array *res, const int *shape, size_t ndim, mlx_dtype dtype, int src,
                   mlx_distributed_group group, const char *fn)
{
    if (mc_op_check_res(res, fn) || mc_op_check_shape(shape, ndim, fn) || mc_op_check_dtype(dtype, fn))
        return 1;
    mc_group *g = op_group(group, fn);
    if (!g)
        return 1;
    if (g->size == 1)
        return mc_error("[%s] Cannot recv from a singleton group.", fn);
    if (src < 0 || src >= g->size)
        return mc_error("[%s] Invalid source=%d for a group of size %d.", fn, src, g->size);
    mc_dist_params p;
    memset(&p, 0, sizeof p);
    p.group = g;
    p.peer = src;
    p.dtype = dtype;
    p.ndim = (int)ndim;
    if (ndim)
        memcpy(p.shape, shape, ndim * sizeof(int));
    return mc_op_store(res, dist_node(MC_PRIM_RECV, NULL, &p, fn), fn);
}

int mlx_distributed_recv(mlx_array *res, const int *shape, size_t shape_num, mlx_dtype dtype, int src,
                         const mlx_distributed_group group, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    return recv_op(res, shape, shape_num, dtype, src, group, "distributed_recv");
}

int mlx_distributed_recv_like(mlx_array *res, const mlx_array x, int src, const mlx_distributed_group group,
                              const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    const char *fn = "distributed_recv_like";
    mc_array *a = mc_op_arg(x, fn, "x");
    if (!a)
        return 1;
    return recv_op(res, a->shape, (size_t)a->ndim, a->dtype, src, group, fn);
}
