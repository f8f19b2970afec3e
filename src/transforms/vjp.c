/* Owns reverse mode (mc_vjp): the tape run backwards, each node's vjp rule
 * turning its output's cotangent into its inputs', summed where an array
 * feeds several nodes. A node's cotangent and the tape's reference on it
 * are dropped as soon as its rule has run, so the forward graph dies
 * behind the backward pass except where the derivative graph uses it. */
#include <string.h>

#include "graph/build.h"
#include "graph/primitive.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "transforms/tape.h"

/* Cotangents by node: a map to a slot of a growable array. */
typedef struct cotans {
    mc_ptrmap slot_of;
    mc_darray slots; /* mc_array *, owned (NULL once taken) */
} cotans;

static mc_array **cotans_slot(const cotans *c, int i) { return mc_darray_at(&c->slots, (size_t)i); }

static void cotans_free(cotans *c)
{
    for (size_t i = c->slots.len; i > 0; i--)
        mc_array_release(*cotans_slot(c, (int)i - 1));
    mc_darray_free(&c->slots);
    mc_ptrmap_free(&c->slot_of);
}

/* Takes node's cotangent out of the map (NULL if none): the caller owns it. */
static mc_array *cotans_take(cotans *c, const mc_array *node)
{
    int *slot = mc_ptrmap_get(&c->slot_of, node);
    if (!slot)
        return NULL;
    mc_array **p = cotans_slot(c, *slot), *r = *p;
    *p = NULL;
    return r;
}

/* Adds g (a reference handed over) to node's cotangent. */
static int cotans_add(cotans *c, const mc_array *node, mc_array *g, const char *fn)
{
    int *slot = mc_ptrmap_get(&c->slot_of, node);
    mc_array **p = slot ? cotans_slot(c, *slot) : NULL;
    if (p && *p) {
        mc_gb s;
        mc_gb_begin(&s, fn);
        mc_array *sum = mc_gb_finish_ref(&s, mc_gb_op(&s, MC_B_ADD, *p, g));
        mc_array_release(g);
        if (!sum)
            return 1;
        mc_array_release(*p);
        *p = sum;
        return 0;
    }
    if (p) {
        *p = g;
        return 0;
    }
    mc_array **fresh = mc_darray_push(&c->slots);
    if (!fresh || mc_ptrmap_put(&c->slot_of, node, (int)c->slots.len - 1)) {
        if (fresh)
            c->slots.len--;
        mc_array_release(g);
        return mc_error_oom(fn, c->slots.len * sizeof g);
    }
    *fresh = g;
    return 0;
}

/* Pairs outputs with cotangents as MLX does, storing each cotangent (in
 * its output's dtype) into the map. */
static int seed_cotangents(cotans *c, const mc_tape *t, mc_array *const *cots, int nc, const char *fn)
{
    int ci = 0;
    for (int i = 0; i < t->nout; i++) {
        mc_array *o = t->outs[i];
        if (o->prim == MC_PRIM_STOP_GRADIENT)
            continue;
        if (ci >= nc)
            return mc_error("[%s] Number of outputs to compute gradients for (%d) does not match number of "
                            "cotangents (%d).",
                            fn, t->nout, nc);
        if (!mc_array_has_shape(o, cots[ci]->ndim, cots[ci]->shape)) {
            char os[256], cs[256];
            return mc_error("[%s] Output shape %s does not match cotangent shape %s.%s", fn,
                            mc_shape_str(os, sizeof os, o->ndim, o->shape),
                            mc_shape_str(cs, sizeof cs, cots[ci]->ndim, cots[ci]->shape),
                            t->nout == 1 && o->size == 1 ? " If you are using grad your function must return a scalar."
                                                         : "");
        }
        /* the first cotangent of an output returned twice wins, as in MLX */
        int *slot = mc_ptrmap_get(&c->slot_of, o);
        if (!slot) {
            mc_array *g = mc_node_astype(cots[ci], o->dtype, fn);
            if (!g || cotans_add(c, o, g, fn))
                return 1;
        }
        ci++;
    }
    return 0;
}

/* Runs node's vjp rule on its cotangent and hands each input's part to
 * the map. */
static int backward_step(cotans *c, const mc_tape *t, mc_step_scratch *sc, mc_array *node, mc_array *cot,
                         const char *fn)
{
    /* every primitive with inputs has a vjp rule (test_primitives) */
    if (mc_step_scratch_fit(sc, node->n_inputs, fn))
        return 1;
    int *args = sc->args.items, nargs = 0;
    mc_array **vjps = sc->arrs.items;
    for (int i = 0; i < node->n_inputs; i++)
        if (mc_tape_marks(t, node->inputs[i]) & MC_TAPE_GRAD)
            args[nargs++] = i;
    if (mc_prims[node->prim]->vjp(vjps, node, cot, args, nargs, fn))
        return 1;
    int rc = 0;
    for (int k = 0; k < nargs; k++) {
        if (rc)
            mc_array_release(vjps[k]);
        else
            rc = cotans_add(c, node->inputs[args[k]], vjps[k], fn);
    }
    return rc;
}

int mc_vjp(const char *fn, mc_ad_fun f, void *ctx, mc_array *const *primals, int np, mc_array *const *cots,
           int nc, const int *argnums, int na, mc_array ***outs, int *nout, mc_array **vjps)
{
    bool *grad = mc_xcalloc((size_t)(np ? np : 1), sizeof *grad);
    if (!grad)
        return mc_error_oom(fn, (size_t)np);
    for (int k = 0; k < na; k++)
        grad[argnums[k]] = true;
    mc_tape t;
    int rc = mc_tape_build(&t, fn, f, ctx, primals, np, grad);
    mc_xfree(grad);
    if (rc)
        return 1;
    cotans c = {.slots = MC_DARRAY_INIT(mc_array *)};
    rc = seed_cotangents(&c, &t, cots, nc, fn);
    mc_step_scratch sc = MC_STEP_SCRATCH_INIT;
    mc_array **nodes = t.nodes.items;
    for (size_t k = t.nodes.len; k > 0 && !rc; k--) {
        mc_array *node = nodes[k - 1];
        mc_array *cot = cotans_take(&c, node);
        if (cot)
            rc = backward_step(&c, &t, &sc, node, cot, fn);
        mc_array_release(cot);
        /* the tape's reference: the forward node lives on only where the
         * derivative graph uses it */
        t.nodes.len = k - 1;
        mc_array_release(node);
    }
    int k = 0;
    for (; k < na && !rc; k++) {
        mc_array *copy = t.copies[argnums[k]];
        mc_array *g = cotans_take(&c, copy);
        if (!g) {
            mc_gb s;
            mc_gb_begin(&s, fn);
            g = mc_gb_finish_ref(&s, mc_gb_zeros_like(&s, copy));
        }
        if (!g) {
            rc = 1;
            break;
        }
        vjps[k] = g;
    }
    mc_step_scratch_free(&sc);
    cotans_free(&c);
    if (rc) {
        while (k > 0)
            mc_array_release(vjps[--k]);
        mc_tape_release(&t);
        return 1;
    }
    *outs = t.outs;
    *nout = t.nout;
    t.outs = NULL;
    t.nout = 0;
    mc_tape_release(&t);
    return 0;
}
