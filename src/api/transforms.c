/* Owns mlx-c's transforms.h evaluation entry points. */
#include "graph/eval.h"
#include "handles/vector.h"
#include "mlx/c/transforms.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static int mc_eval_vector(const mlx_vector_array outputs, const char *fn)
{
    if (!outputs.ctx)
        return mc_error("[%s] The vector of arrays is an empty handle.", fn);
    size_t n = mlx_vector_array_size(outputs);
    mc_array **arrs = mc_xmalloc((n ? n : 1) * sizeof *arrs);
    if (!arrs)
        return mc_error_oom(fn, n * sizeof *arrs);
    for (size_t i = 0; i < n; i++)
        arrs[i] = mc_vec_at(outputs, i);
    int rc = mc_eval(arrs, n, fn);
    mc_xfree(arrs);
    return rc;
}

int mlx_eval(const mlx_vector_array outputs) { return mc_eval_vector(outputs, "mlx_eval"); }

/* Evaluation is synchronous on this library: async_eval finishes the work
 * before returning, which satisfies every later wait or read. */
int mlx_async_eval(const mlx_vector_array outputs) { return mc_eval_vector(outputs, "mlx_async_eval"); }
