/* Owns forward mode (mc_jvp): the tape run in order, each node's jvp rule
 * turning its inputs' tangents into its output's. */
#include <string.h>

#include "graph/build.h"
#include "graph/primitive.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "transforms/tape.h"

/* Tangents by node: index into tans[], which parallels copies then nodes. */
typedef struct tangents {
    mc_ptrmap index_of;
    mc_array **tans;
    int n;
} tangents;

static int put_tangent(tangents *g, const mc_array *node, mc_array *tan, const char *fn)
{
    if (mc_ptrmap_put(&g->index_of, node, g->n)) {
        mc_array_release(tan);
        return mc_error_oom(fn, sizeof(void *));
    }
    g->tans[g->n++] = tan;
    return 0;
}

static mc_array *tangent_of(const tangents *g, const mc_array *node)
{
    int *i = mc_ptrmap_get(&g->index_of, node);
    return i ? g->tans[*i] : NULL;
}

static mc_array *forward_step(const tangents *g, mc_step_scratch *sc, mc_array *node, const char *fn)
{
    /* every primitive with inputs has a jvp rule (test_primitives) */
    if (mc_step_scratch_fit(sc, node->n_inputs, fn))
        return NULL;
    int *args = sc->args.items, nargs = 0;
    mc_array **tans = sc->arrs.items;
    for (int i = 0; i < node->n_inputs; i++) {
        mc_array *t = tangent_of(g, node->inputs[i]);
        if (t) {
            args[nargs] = i;
            tans[nargs++] = t;
        }
    }
    return mc_prims[node->prim]->jvp(node, tans, args, nargs, fn);
}

int mc_jvp(const char *fn, mc_ad_fun f, void *ctx, mc_array *const *primals, mc_array *const *tans, int n,
           mc_array ***outs, int *nout, mc_array ***jvps)
{
    for (int i = 0; i < n; i++)
        if (!mc_array_has_shape(primals[i], tans[i]->ndim, tans[i]->shape))
            return mc_error("[%s] Input shape does not match shape of tangent.", fn);
    mc_tape t;
    if (mc_tape_build(&t, fn, f, ctx, primals, n, NULL))
        return 1;
    tangents g;
    memset(&g, 0, sizeof g);
    int rc = 0;
    size_t steps = t.nodes.len;
    g.tans = mc_xmalloc((n + steps + 1) * sizeof *g.tans);
    mc_array **res = mc_xcalloc((size_t)(t.nout ? t.nout : 1), sizeof *res);
    if (!g.tans || !res)
        rc = mc_error_oom(fn, (n + steps + (size_t)t.nout) * sizeof *res);
    for (int i = 0; i < n && !rc; i++)
        rc = put_tangent(&g, t.copies[i], mc_array_retain(tans[i]), fn);
    mc_step_scratch sc = MC_STEP_SCRATCH_INIT;
    mc_array **nodes = t.nodes.items;
    for (size_t k = 0; k < steps && !rc; k++) {
        mc_array *tan = forward_step(&g, &sc, nodes[k], fn);
        rc = tan ? put_tangent(&g, nodes[k], tan, fn) : 1;
    }
    mc_step_scratch_free(&sc);
    for (int i = 0; i < t.nout && !rc; i++) {
        mc_array *tan = tangent_of(&g, t.outs[i]);
        if (tan) {
            res[i] = mc_array_retain(tan);
        } else {
            mc_gb s;
            mc_gb_begin(&s, fn);
            res[i] = mc_gb_finish_ref(&s, mc_gb_zeros_like(&s, t.outs[i]));
            rc = res[i] ? 0 : 1;
        }
    }
    for (int i = g.n - 1; i >= 0; i--)
        mc_array_release(g.tans[i]);
    mc_xfree(g.tans);
    mc_ptrmap_free(&g.index_of);
    if (rc) {
        if (res)
            mc_ad_release_all(res, t.nout);
        mc_tape_release(&t);
        return 1;
    }
    *outs = t.outs;
    *nout = t.nout;
    *jvps = res;
    t.outs = NULL;
    t.nout = 0;
    mc_tape_release(&t);
    return 0;
}
