/* Owns the communication primitives: each one's shape rule, its eval over
 * the MPI backend, and its vjp and jvp, MLX's (mlx/distributed/primitives.cpp):
 * AllReduce passes the cotangent through and reduces the tangent;
 * AllGather's cotangent is this process's block; Send, Recv and
 * ReduceScatter have no derivative rules in MLX and report so.
 *
 * Every process evaluates the same communication nodes in the same order
 * (eval's post-order walk is deterministic), and before each collective
 * the backend checks that the processes agree on it (mc_mpi_agree, or
 * within mc_mpi_all_reduce). */
#include "distributed/prims_distributed.h"

#include <string.h>

#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_slice.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

static const char *all_reduce_fn(int op)
{
    return op == MC_MPI_MAX ? "all_max" : op == MC_MPI_MIN ? "all_min" : "all_sum";
}

/* ---- shared pieces of eval ---- */

/* Checks the group can still be used; a timed-out operation breaks it. */
static int dist_begin(const mc_dist_params *p, const char *fn) { return mc_group_check_usable(p->group, fn); }

/* After a backend call: a timeout leaves MPI owning the buffers it was
 * given, so keep `keep` alive for good and refuse the group from now on. */
static int dist_end(int rc, const mc_dist_params *p, mc_buffer *keep)
{
    if (rc == MC_MPI_ABANDONED) {
        atomic_store(&p->group->broken, true);
        if (keep)
            mc_mpi_keep(mc_buffer_retain(keep));
    }
    return rc ? 1 : 0;
}

/* x's data as one row-major block: x's own, or a copy in *tmp (which the
 * caller releases). */
static int dist_row_major(mc_array *x, mc_array **tmp, const char *fn)
{
    *tmp = NULL;
    if (x->flags & MC_FLAG_ROW_CONTIG)
        return 0;
    mc_array *t = mc_array_alloc(fn, x->dtype, x->ndim, x->shape);
    if (!t)
        return 1;
    if (mc_run_unary(t, x, mc_kernels()->convert[x->dtype][x->dtype], fn)) {
        mc_array_release(t);
        return 1;
    }
    *tmp = t;
    return 0;
}

/* out as a view of all of x (the singleton group's collectives, Send). */
static int dist_share(mc_array *out, mc_array *x)
{
    mc_array_set_view(out, x, x->data, x->strides);
    return 0;
}

/* ---- AllReduce ---- */

static int same_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n, (void)params, (void)fn;
    out->dtype = in[0]->dtype;
    out->ndim = in[0]->ndim;
    memcpy(out->shape, in[0]->shape, sizeof(int) * (size_t)in[0]->ndim);
    return 0;
}

static int all_reduce_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_dist_params *p = params;
    const char *fn = all_reduce_fn(p->op);
    mc_array *x = in[0];
    if (dist_begin(p, fn))
        return 1;
    if (!p->group->comm)
        return dist_share(out, x);
    /* reduce in place when x's buffer can be taken or x had to be copied
     * anyway; otherwise from x into a fresh output. The backend checks
     * that the processes agree first (a small reduction's data travels
     * with the check, from the backend's own buffers) */
    const void *xdata = x->data;
    bool row = (x->flags & MC_FLAG_ROW_CONTIG) != 0;
    if (row ? mc_out_alloc(out, in, 1, fn) : mc_run_unary(out, x, mc_kernels()->convert[x->dtype][x->dtype], fn))
        return 1;
    const void *src = row && out->data != xdata ? xdata : out->data;
    return dist_end(mc_mpi_all_reduce(p->group->comm, p->op, src, out->data, out->size, out->dtype, fn), p, NULL);
}

/* MLX's: the cotangent passes through unchanged (each process keeps its
 * own; a data-parallel program all-sums its gradients itself). */
static int all_reduce_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                          const char *fn)
{
    (void)node, (void)argnums, (void)nargs, (void)fn;
    vjps[0] = mc_array_retain(cot);
    return 0;
}

static const char *all_reduce_name(const void *params)
{
    int op = ((const mc_dist_params *)params)->op;
    return op == MC_MPI_MAX ? "Max AllReduce" : op == MC_MPI_MIN ? "Min AllReduce" : "Sum AllReduce";
}

const mc_prim_info mc_prim_all_reduce = {
    .name = "AllReduce",
    .arity = 1,
    .infer = same_infer,
    .eval = all_reduce_eval,
    .vjp = all_reduce_vjp,
    .jvp = mc_jvp_linear, /* the tangent reduced the same way, as MLX */
    .name_of = all_reduce_name,
    .communicates = true,
    .vmap = mc_vmap_same_axis,
};

/* ---- AllGather ---- */

static int all_gather_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    same_infer(out, in, n, params, fn);
    int size = ((const mc_dist_params *)params)->group->size;
    if (out->ndim == 0) {
        out->ndim = 1;
        out->shape[0] = size;
    } else {
        out->shape[0] *= size;
    }
    return 0;
}

/* AllGather and ReduceScatter: agree, then run `run` from x's row-major
 * data into a fresh output. */
typedef int (*dist_run_fn)(mc_mpi_comm *c, const void *in, void *out, size_t count, mlx_dtype dt, const char *fn);

static int dist_block_eval(mc_array *out, mc_array *x, const mc_dist_params *p, int op, dist_run_fn run,
                           bool count_is_input, const char *fn)
{
    mc_array *tmp;
    if (dist_begin(p, fn))
        return 1;
    if (!p->group->comm)
        return dist_share(out, x);
    int rc = mc_mpi_agree(p->group->comm, op, x->dtype, x->size, fn);
    if (rc)
        return dist_end(rc, p, NULL);
    if (dist_row_major(x, &tmp, fn))
        return 1;
    mc_array *src = tmp ? tmp : x;
    rc = mc_array_alloc_data(out, fn);
    if (!rc)
        rc = run(p->group->comm, src->data, out->data, count_is_input ? src->size : out->size, src->dtype, fn);
    mc_array_release(tmp);
    return rc;
}

static int all_gather_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    return dist_block_eval(out, in[0], params, MC_MPI_GATHER, mc_mpi_all_gather, true, "all_gather");
}

/* This process's block of the cotangent (MLX's slice at rank * n). */
static int all_gather_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                          const char *fn)
{
    (void)argnums, (void)nargs;
    const mc_dist_params *p = node->params;
    mc_array *x = node->inputs[0];
    mc_slice_params sp;
    memset(&sp, 0, sizeof sp);
    sp.ndim = cot->ndim;
    for (int d = 0; d < cot->ndim; d++) {
        sp.stop[d] = cot->shape[d];
        sp.strides[d] = 1;
    }
    int rows = x->ndim == 0 ? 1 : x->shape[0];
    sp.start[0] = p->group->rank * rows;
    sp.stop[0] = sp.start[0] + rows;
    mc_gb s;
    mc_gb_begin(&s, fn);
    mc_array *g = mc_gb_slice(&s, cot, &sp);
    if (x->ndim == 0) {
        int axis = 0;
        g = mc_gb_squeeze(&s, g, &axis, 1);
    }
    return mc_vjp_store(vjps, 0, &s, g);
}

const mc_prim_info mc_prim_all_gather = {
    .name = "AllGather",
    .arity = 1,
    .infer = all_gather_infer,
    .eval = all_gather_eval,
    .vjp = all_gather_vjp,
    .jvp = mc_jvp_linear,
    .communicates = true,
    .vmap = mc_vmap_same_axis,
};

/* ---- ReduceScatter (sum) ---- */

static int sum_scatter_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    same_infer(out, in, n, params, fn);
    int size = ((const mc_dist_params *)params)->group->size;
    if (out->ndim == 0 || out->shape[0] % size != 0)
        return mc_error(
            "[%s] Invalid shape for a group of size %d. The first dimension (axis 0) must be divisible "
            "by the group size.",
            fn, size);
    out->shape[0] /= size;
    return 0;
}

static int sum_scatter_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    return dist_block_eval(out, in[0], params, MC_MPI_SUM_SCATTER, mc_mpi_sum_scatter, false, "sum_scatter");
}

const mc_prim_info mc_prim_reduce_scatter = {
    .name = "Sum ReduceScatter",
    .arity = 1,
    .infer = sum_scatter_infer,
    .eval = sum_scatter_eval,
    .vjp = mc_vjp_none,
    .jvp = mc_jvp_none,
    .communicates = true,
    .vmap = mc_vmap_unsupported,
};

/* ---- Send and Recv ---- */

static int send_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_dist_params *p = params;
    const char *fn = "send";
    mc_array *x = in[0], *tmp;
    if (dist_begin(p, fn))
        return 1;
    if (!p->group->comm)
        return mc_error("[%s] Communication not implemented in an empty distributed group.", fn);
    if (dist_row_major(x, &tmp, fn))
        return 1;
    mc_array *src = tmp ? tmp : x;
    int rc = mc_mpi_send(p->group->comm, src->data, src->size, src->dtype, p->peer, fn);
    if (rc) {
        dist_end(rc, p, src->buf);
    } else {
        /* the result is what was sent: it carries the dependency on it */
        dist_share(out, src);
    }
    mc_array_release(tmp);
    return rc ? 1 : 0;
}

const mc_prim_info mc_prim_send = {
    .name = "Send",
    .arity = 1,
    .infer = same_infer,
    .eval = send_eval,
    .vjp = mc_vjp_none,
    .jvp = mc_jvp_none,
    .communicates = true,
    .vmap = mc_vmap_same_axis,
};

static int recv_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)in, (void)n, (void)fn;
    const mc_dist_params *p = params;
    out->dtype = p->dtype;
    out->ndim = p->ndim;
    memcpy(out->shape, p->shape, sizeof(int) * (size_t)p->ndim);
    return 0;
}

static int recv_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)in, (void)n;
    const mc_dist_params *p = params;
    const char *fn = "recv";
    if (dist_begin(p, fn))
        return 1;
    if (!p->group->comm)
        return mc_error("[%s] Communication not implemented in an empty distributed group.", fn);
    if (mc_array_alloc_data(out, fn))
        return 1;
    return mc_mpi_recv(p->group->comm, out->data, out->size, out->dtype, p->peer, fn);
}

const mc_prim_info mc_prim_recv = {
    .name = "Recv",
    .arity = 0,
    .infer = recv_infer,
    .eval = recv_eval,
    .vjp = mc_vjp_none,
    .jvp = mc_jvp_none,
    .communicates = true,
    .vmap = mc_vmap_unsupported,
};
