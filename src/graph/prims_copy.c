/* Owns the AsType and Copy primitives: a row-major copy of any view,
 * converting the element type on the way. */
#include "graph/build.h"
#include "graph/elementwise.h"
#include "graph/prims_copy.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

static int astype_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)n;
    (void)fn;
    out->dtype = ((const mc_astype_params *)params)->to;
    out->ndim = in[0]->ndim;
    for (int i = 0; i < in[0]->ndim; i++)
        out->shape[i] = in[0]->shape[i];
    return 0;
}

static int astype_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    mlx_dtype to = ((const mc_astype_params *)params)->to;
    mc_convert_kernel k = mc_kernels()->convert[in[0]->dtype][to];
    if (!k)
        return mc_error("[astype] Cannot convert %s to %s.", mc_dtype_name(in[0]->dtype), mc_dtype_name(to));
    return mc_run_unary(out, in[0], k, "astype");
}

/* The cotangent goes back to the input's dtype; the tangent on to the
 * output's (the cast is linear). */
static int astype_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                      const char *fn)
{
    (void)argnums;
    (void)nargs;
    vjps[0] = mc_node_astype(cot, node->inputs[0]->dtype, fn);
    return vjps[0] ? 0 : 1;
}

const mc_prim_info mc_prim_astype = {
    .name = "AsType",
    .arity = 1,
    .infer = astype_infer,
    .eval = astype_eval,
    .vjp = astype_vjp,
    .jvp = mc_jvp_linear,
    .vmap = mc_vmap_same_axis,
};

const mc_prim_info mc_prim_copy = {
    .name = "Copy",
    .arity = 1,
    .infer = astype_infer,
    .eval = astype_eval,
    .vjp = astype_vjp,
    .jvp = mc_jvp_linear,
    .vmap = mc_vmap_same_axis,
};
