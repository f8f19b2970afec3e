/* Owns Depends: an output equal to its first input whose evaluation first
 * evaluates the other inputs (MLX's depends(inputs, dependencies)).
 *
 * MLX makes one multi-output node of all the inputs and dependencies. Our
 * nodes have one output each, so depends builds one Depends node per
 * input, with inputs [input_i, dependencies...]. That is all MLX's
 * behaviour asks for: evaluation reaches a node's inputs before the node,
 * so every dependency is computed before any output is read, and each
 * output is a view of input_i's data (no copy, nothing to compute). Two
 * outputs sharing dependencies evaluate them once, as any shared input.
 * Packing the outputs into one buffer and slicing it (the multi-output
 * linalg design) would copy every input for no gain.
 *
 * Derivatives: MLX's Depends::vjp gives input_i its output's cotangent and
 * each dependency zeros (here summed over the per-output nodes, the same
 * total); MLX has no jvp for Depends, so jvp reports "Not implemented". */
#include <string.h>

#include "graph/build.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"

static int depends_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)params;
    if (n < 1)
        return mc_error("[%s] Internal: Depends needs an input.", fn);
    out->dtype = in[0]->dtype;
    out->ndim = in[0]->ndim;
    memcpy(out->shape, in[0]->shape, sizeof(int) * (size_t)in[0]->ndim);
    return 0;
}

static int depends_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    (void)params;
    mc_array_set_view(out, in[0], in[0]->data, in[0]->strides);
    return 0;
}

static int depends_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                       const char *fn)
{
    for (int k = 0; k < nargs; k++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *g = argnums[k] == 0 ? cot : mc_gb_zeros_like(&s, node->inputs[argnums[k]]);
        if (mc_vjp_store(vjps, k, &s, g))
            return 1;
    }
    return 0;
}

static mc_array *depends_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    (void)node;
    (void)tans;
    (void)argnums;
    (void)nargs;
    mc_error("[%s] Not implemented for Depends: MLX has no jvp for it.", fn);
    return NULL;
}

const mc_prim_info mc_prim_depends = {
    .name = "Depends",
    .arity = MC_ARITY_ANY,
    .infer = depends_infer,
    .eval = depends_eval,
    .vjp = depends_vjp,
    .jvp = depends_jvp,
    .vmap = mc_vmap_unsupported,
};
