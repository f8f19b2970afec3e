/* Owns the tape of a transform: the function's run on copies of the
 * primals, and the iterative walk that orders the graph between them and
 * the outputs (a 100,000-node chain must not recurse). */
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
    /* the nodes before the copies: a node may be the last holder of a copy */
    mc_ad_release_all(t->nodes, t->n);
    mc_ad_release_all(t->outs, t->nout);
    mc_ad_release_all(t->copies, t->np);
    mc_ptrmap_free(&t->marks);
    memset(t, 0, sizeof *t);
}

int mc_tape_marks(const mc_tape *t, const mc_array *node)
{
    int *m = mc_ptrmap_get(&t->marks, node);
    return m ? *m : 0;
}

static int set_marks(mc_tape *t, const mc_array *node, int marks, const char *fn)
{
    return mc_ptrmap_put(&t->marks, node, marks) ? mc_error_oom(fn, sizeof(void *)) : 0;
}

/* The stand-in of a primal: a Reshape to its own shape, a distinct node
 * that evaluates to a view of the primal's data when that is row-major
 * (MLX's copy shares the buffer the same way). */
static mc_array *identity_of(mc_array *p, const char *fn)
{
    mc_array *c = mc_node_dims(MC_PRIM_RESHAPE, p, p->ndim, p->shape, fn);
    if (c)
        c->tracer = true;
    return c;
}

static int push_node(mc_tape *t, size_t *cap, mc_array *a, const char *fn)
{
    if ((size_t)t->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        mc_array **nn = mc_xrealloc(t->nodes, ncap * sizeof *nn);
        if (!nn)
            return mc_error_oom(fn, ncap * sizeof *nn);
        t->nodes = nn;
        *cap = ncap;
    }
    t->nodes[t->n++] = mc_array_retain(a);
    return 0;
}

typedef struct frame {
    mc_array *node;
    int next; /* the next input to visit */
} frame;

/* Post-order from one output: a node is finished after all its inputs,
 * and joins the tape if one of them needs a derivative. */
static int walk_from(mc_tape *t, mc_array *root, frame **stack, size_t *stack_cap, size_t *tape_cap,
                     const char *fn)
{
    if (mc_tape_marks(t, root))
        return 0;
    if (set_marks(t, root, MC_TAPE_SEEN, fn))
        return 1;
    size_t depth = 0;
    (*stack)[depth++] = (frame){root, 0};
    while (depth > 0) {
        frame *top = &(*stack)[depth - 1];
        mc_array *a = top->node;
        if (top->next < a->n_inputs) {
            mc_array *in = a->inputs[top->next++];
            if (mc_tape_marks(t, in))
                continue;
            if (set_marks(t, in, MC_TAPE_SEEN, fn))
                return 1;
            if (depth == *stack_cap) {
                size_t ncap = *stack_cap * 2;
                frame *ns = mc_xrealloc(*stack, ncap * sizeof *ns);
                if (!ns)
                    return mc_error_oom(fn, ncap * sizeof *ns);
                *stack = ns;
                *stack_cap = ncap;
            }
            (*stack)[depth++] = (frame){in, 0};
            continue;
        }
        depth--;
        /* MLX: nothing below a stop_gradient is differentiated */
        if (a->prim == MC_PRIM_STOP_GRADIENT)
            continue;
        for (int i = 0; i < a->n_inputs; i++) {
            if (mc_tape_marks(t, a->inputs[i]) & MC_TAPE_GRAD) {
                if (set_marks(t, a, MC_TAPE_SEEN | MC_TAPE_GRAD, fn) || push_node(t, tape_cap, a, fn))
                    return 1;
                break;
            }
        }
    }
    return 0;
}

int mc_tape_build(mc_tape *t, const char *fn, mc_ad_fun f, void *ctx, mc_array *const *primals, int np,
                  const bool *grad)
{
    memset(t, 0, sizeof *t);
    t->copies = mc_xmalloc((size_t)(np ? np : 1) * sizeof *t->copies);
    if (!t->copies)
        return mc_error_oom(fn, (size_t)np * sizeof *t->copies);
    for (; t->np < np; t->np++) {
        mc_array *c = identity_of(primals[t->np], fn);
        if (!c)
            goto fail;
        t->copies[t->np] = c;
    }
    mc_tracing_enter();
    int failed = f(ctx, t->copies, np, &t->outs, &t->nout);
    mc_tracing_leave();
    if (failed) {
        t->outs = NULL;
        t->nout = 0;
        goto fail;
    }
    /* the copies are where the walk stops: marked before it starts */
    for (int i = 0; i < np; i++)
        if (set_marks(t, t->copies[i], MC_TAPE_SEEN | (!grad || grad[i] ? MC_TAPE_GRAD : 0), fn))
            goto fail;
    size_t stack_cap = 64, tape_cap = 0;
    frame *stack = mc_xmalloc(stack_cap * sizeof *stack);
    if (!stack) {
        mc_error_oom(fn, stack_cap * sizeof *stack);
        goto fail;
    }
    int rc = 0;
    for (int i = 0; i < t->nout && !rc; i++)
        rc = walk_from(t, t->outs[i], &stack, &stack_cap, &tape_cap, fn);
    mc_xfree(stack);
    if (rc)
        goto fail;
    return 0;
fail:
    mc_tape_release(t);
    return 1;
}
