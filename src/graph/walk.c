/* Owns the iterative post-order walk (walk.h). A frame per node being
 * descended holds the index of its next input; a node is left when its
 * frame is popped, so each node comes after all of its inputs. */
#include "graph/walk.h"

#include "runtime/error.h"

typedef struct frame {
    mc_array *node;
    int next; /* next input to meet */
    int val;
} frame;

void mc_walk_init(mc_walk *w, const mc_walk_visitor *visitor, const char *fn)
{
    *w = (mc_walk){.visitor = *visitor, .fn = fn, .stack = MC_DARRAY_INIT(frame)};
}

static int oom(mc_walk *w) { return mc_error_oom(w->fn, (w->stack.len + w->seen.count) * sizeof(frame)); }

static int leave(mc_walk *w, mc_array *node, int val)
{
    return w->visitor.leave ? w->visitor.leave(w->visitor.ctx, node, val) : 0;
}

/* Meets a node that is not recorded yet: records it and leaves it, or
 * pushes its frame, as the visitor says. */
static int meet(mc_walk *w, mc_array *node)
{
    int val = 0;
    int what = w->visitor.enter(w->visitor.ctx, node, &val);
    if (what < 0)
        return 1;
    if (what == MC_WALK_SKIP)
        return 0;
    if (mc_ptrmap_put(&w->seen, node, val))
        return oom(w);
    if (what == MC_WALK_LEAF)
        return leave(w, node, val);
    frame *f = mc_darray_push(&w->stack);
    if (!f)
        return oom(w);
    *f = (frame){node, 0, val};
    return 0;
}

int mc_walk_from(mc_walk *w, mc_array *root)
{
    if (!root || mc_walk_value(w, root))
        return 0;
    if (meet(w, root))
        return 1;
    while (w->stack.len) {
        frame *top = mc_darray_last(&w->stack);
        if (top->next < top->node->n_inputs) {
            mc_array *in = top->node->inputs[top->next++];
            if (!mc_walk_value(w, in) && meet(w, in))
                return 1;
            continue;
        }
        frame done = *top;
        w->stack.len--;
        if (leave(w, done.node, done.val))
            return 1;
    }
    return 0;
}

void mc_walk_free(mc_walk *w)
{
    mc_ptrmap_free(&w->seen);
    mc_darray_free(&w->stack);
}

/* ---- collecting an order ---- */

typedef struct collect {
    bool pending_only;
    mc_darray *order;
    const char *fn;
} collect;

static int collect_enter(void *ctx, mc_array *node, int *val)
{
    const collect *c = ctx;
    (void)val;
    return c->pending_only && node->prim == MC_PRIM_NONE ? MC_WALK_SKIP : MC_WALK_DESCEND;
}

static int collect_leave(void *ctx, mc_array *node, int val)
{
    const collect *c = ctx;
    (void)val;
    mc_array **slot = mc_darray_push(c->order);
    if (!slot)
        return mc_error_oom(c->fn, c->order->len * sizeof *slot);
    *slot = node;
    return 0;
}

int mc_walk_collect(mc_array *const *roots, size_t n, bool pending_only, mc_darray *order, const char *fn)
{
    collect c = {pending_only, order, fn};
    mc_walk w;
    mc_walk_init(&w, &(mc_walk_visitor){collect_enter, collect_leave, &c}, fn);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = mc_walk_from(&w, roots[i]);
    mc_walk_free(&w);
    return rc;
}
