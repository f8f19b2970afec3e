/* Owns the tape of a transform: the function's run on stand-ins of the
 * primals, and the order of the graph between them and the outputs (the
 * one post-order walk of graph/walk.h, so a 100,000-node chain does not
 * recurse). */
#include "transforms/tape.h"

#include <string.h>

#include "graph/build.h"
#include "graph/prims_view.h"
#include "graph/tracing.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

void mc_ad_release_all(mc_array **arrs, int n)
{
    if (!arrs)
        return;
    /* newest first: later arrays may hold references on earlier ones */
    for (int i = n - 1; i >= 0; i--)
        mc_array_release(arrs[i]);
    mc_xfree(arrs);
}

void mc_tape_release(mc_tape *t)
{
    /* the nodes before the stand-ins: a node may be the last holder of one */
    mc_array **nodes = t->nodes.items;
    for (size_t i = t->nodes.len; i > 0; i--)
        mc_array_release(nodes[i - 1]);
    mc_darray_free(&t->nodes);
    mc_ad_release_all(t->outs, t->nout);
    mc_ad_release_all(t->copies, t->np);
    mc_walk_free(&t->walk);
    memset(t, 0, sizeof *t);
}

int mc_step_scratch_fit(mc_step_scratch *s, int n, const char *fn)
{
    size_t need = n > 0 ? (size_t)n : 1;
    if (mc_darray_reserve(&s->args, need) || mc_darray_reserve(&s->arrs, need))
        return mc_error_oom(fn, need * (sizeof(int) + sizeof(mc_array *)));
    return 0;
}

void mc_step_scratch_free(mc_step_scratch *s)
{
    mc_darray_free(&s->args);
    mc_darray_free(&s->arrs);
}

int mc_tape_marks(const mc_tape *t, const mc_array *node)
{
    int *m = mc_walk_value(&t->walk, node);
    return m ? *m : 0;
}

/* The stand-in of a primal: a Reshape to its own shape, a distinct node
 * that evaluates to a view of the primal's data when that is row-major
 * (MLX's copy shares the buffer the same way). */
static mc_array *stand_in(mc_array *p, const char *fn)
{
    mc_array *c = mc_node_dims(MC_PRIM_RESHAPE, p, p->ndim, p->shape, fn);
    if (c)
        c->tracer = true;
    return c;
}

typedef struct build_ctx {
    mc_tape *t;
    mc_ptrmap stand_ins; /* stand-in -> its primal's MC_TAPE_* marks */
    const char *fn;
} build_ctx;

/* The walk stops at the stand-ins; every other node is descended. */
static int enter(void *ctx, mc_array *node, int *val)
{
    build_ctx *b = ctx;
    int *marks = mc_ptrmap_get(&b->stand_ins, node);
    *val = marks ? *marks : MC_TAPE_SEEN;
    return marks ? MC_WALK_LEAF : MC_WALK_DESCEND;
}

/* After its inputs: a node joins the tape if one of them needs a
 * derivative, except a stop_gradient (MLX differentiates nothing below
 * one). */
static int leave(void *ctx, mc_array *node, int val)
{
    build_ctx *b = ctx;
    mc_tape *t = b->t;
    if ((val & MC_TAPE_GRAD) || node->prim == MC_PRIM_STOP_GRADIENT)
        return 0;
    for (int i = 0; i < node->n_inputs; i++) {
        if (mc_tape_marks(t, node->inputs[i]) & MC_TAPE_GRAD) {
            mc_array **slot = mc_darray_push(&t->nodes);
            if (!slot)
                return mc_error_oom(b->fn, (t->nodes.len + 1) * sizeof *slot);
            *slot = mc_array_retain(node);
            *mc_walk_value(&t->walk, node) = val | MC_TAPE_GRAD;
            return 0;
        }
    }
    return 0;
}

int mc_tape_build(mc_tape *t, const char *fn, mc_ad_fun f, void *ctx, mc_array *const *primals, int np,
                  const bool *grad)
{
    memset(t, 0, sizeof *t);
    t->nodes = MC_DARRAY_INIT(mc_array *);
    build_ctx b = {t, {0}, fn};
    mc_walk_init(&t->walk, &(mc_walk_visitor){enter, leave, &b}, false, fn);
    t->copies = mc_xmalloc((size_t)(np ? np : 1) * sizeof *t->copies);
    if (!t->copies) {
        mc_error_oom(fn, (size_t)np * sizeof *t->copies);
        goto fail;
    }
    for (; t->np < np; t->np++) {
        mc_array *c = stand_in(primals[t->np], fn);
        if (!c)
            goto fail;
        t->copies[t->np] = c;
        if (mc_ptrmap_put(&b.stand_ins, c, MC_TAPE_SEEN | (!grad || grad[t->np] ? MC_TAPE_GRAD : 0))) {
            mc_error_oom(fn, sizeof(void *));
            t->np++;
            goto fail;
        }
    }
    mc_tracing_enter();
    int failed = f(ctx, t->copies, np, &t->outs, &t->nout);
    mc_tracing_leave();
    if (failed) {
        t->outs = NULL;
        t->nout = 0;
        goto fail;
    }
    for (int i = 0; i < t->nout; i++)
        if (mc_walk_from(&t->walk, t->outs[i]))
            goto fail;
    mc_ptrmap_free(&b.stand_ins);
    return 0;
fail:
    mc_ptrmap_free(&b.stand_ins);
    mc_tape_release(t);
    return 1;
}
