/* Owns the CustomTransforms primitive: the value of one output of a
 * function that brings its own derivative rules. Evaluation hands on the
 * function's output; vjp and jvp call the rules the node's params point
 * at (which the node's last input keeps alive). A function with several
 * outputs has a node per output: each node's vjp calls the rules with its
 * own cotangent and zeros for the others, which sums to the rules' answer
 * for all cotangents at once, a vjp being linear in its cotangents. */
#include "graph/prims_custom.h"

#include <string.h>

#include "graph/build.h"
#include "graph/vmap_rules.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static int custom_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    const mc_custom_params *p = params;
    if (p->n_args < 0 || p->n_out < 1 || p->index < 0 || p->index >= p->n_out || n != p->n_args + p->n_out + 1)
        return mc_error("[%s] Internal: a custom function node with %d inputs for %d arguments and %d outputs.", fn,
                        n, p->n_args, p->n_out);
    const mc_array *o = in[p->n_args + p->index];
    out->dtype = o->dtype;
    out->ndim = o->ndim;
    memcpy(out->shape, o->shape, sizeof(int) * (size_t)o->ndim);
    return 0;
}

static int custom_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)n;
    const mc_custom_params *p = params;
    mc_array *o = in[p->n_args + p->index];
    mc_array_set_view(out, o, o->data, o->strides);
    return 0;
}

static int custom_vjp(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn)
{
    const mc_custom_params *p = node->params;
    mc_array *const *outs = node->inputs + p->n_args;
    mc_array **cots = mc_xcalloc((size_t)p->n_out, sizeof *cots);
    mc_array **all = mc_xcalloc((size_t)(p->n_args ? p->n_args : 1), sizeof *all);
    int rc = 1, k = 0;
    if (!cots || !all) {
        mc_error_oom(fn, (size_t)(p->n_out + p->n_args) * sizeof *all);
        goto done;
    }
    for (int j = 0; j < p->n_out; j++) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        cots[j] = j == p->index ? mc_array_retain(cot) : mc_gb_finish_ref(&s, mc_gb_zeros_like(&s, outs[j]));
        if (!cots[j])
            goto done;
    }
    if (p->rules->vjp(p->rules->ctx, node->inputs, p->n_args, cots, outs, p->n_out, all, fn))
        goto done;
    for (; k < nargs; k++) {
        int a = argnums[k];
        if (a < p->n_args) {
            vjps[k] = mc_array_retain(all[a]);
        } else { /* an output behind its stop_gradient, or the holder */
            mc_gb s;
            mc_gb_begin(&s, fn);
            if (mc_vjp_store(vjps, k, &s, mc_gb_zeros_like(&s, node->inputs[a])))
                goto done;
        }
    }
    rc = 0;
done:
    if (rc)
        while (k > 0)
            mc_array_release(vjps[--k]);
    for (int j = p->n_args - 1; all && j >= 0; j--)
        mc_array_release(all[j]);
    for (int j = p->n_out - 1; cots && j >= 0; j--)
        mc_array_release(cots[j]);
    mc_xfree(all);
    mc_xfree(cots);
    return rc;
}

static mc_array *custom_jvp(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn)
{
    const mc_custom_params *p = node->params;
    int na = 0;
    while (na < nargs && argnums[na] < p->n_args)
        na++;
    mc_array **jvps = mc_xcalloc((size_t)p->n_out, sizeof *jvps);
    if (!jvps) {
        mc_error_oom(fn, (size_t)p->n_out * sizeof *jvps);
        return NULL;
    }
    mc_array *r = NULL;
    if (!p->rules->jvp(p->rules->ctx, node->inputs, p->n_args, tans, argnums, na, jvps, p->n_out, fn))
        r = mc_array_retain(jvps[p->index]);
    for (int j = p->n_out - 1; j >= 0; j--)
        mc_array_release(jvps[j]);
    mc_xfree(jvps);
    return r;
}

/* vmap: the caller's rule, when given; else vmap of the function itself
 * (MLX's default): the function's outputs are inputs of the node and the
 * replay has already batched them, so the node's output is its batched
 * output. */
static int custom_vmap(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const char *fn)
{
    const mc_custom_params *p = node->params;
    if (!p->rules->vmap) {
        int k = p->n_args + p->index;
        *out = mc_array_retain(in[k]);
        *out_axis = axes[k];
        return 0;
    }
    mc_array **outs = mc_xcalloc((size_t)p->n_out, sizeof *outs);
    int *out_axes = mc_xcalloc((size_t)p->n_out, sizeof *out_axes);
    int rc = 1;
    if (!outs || !out_axes)
        mc_error_oom(fn, (size_t)p->n_out * (sizeof *outs + sizeof *out_axes));
    else if (!p->rules->vmap(p->rules->ctx, in, axes, p->n_args, outs, out_axes, p->n_out, fn)) {
        *out = mc_array_retain(outs[p->index]);
        *out_axis = out_axes[p->index];
        rc = 0;
    }
    for (int j = p->n_out - 1; outs && j >= 0; j--)
        mc_array_release(outs[j]);
    mc_xfree(outs);
    mc_xfree(out_axes);
    return rc;
}

const mc_prim_info mc_prim_custom = {
    .name = "CustomTransforms",
    .arity = MC_ARITY_ANY,
    .infer = custom_infer,
    .eval = custom_eval,
    .vjp = custom_vjp,
    .jvp = custom_jvp,
    .vmap = custom_vmap,
};
