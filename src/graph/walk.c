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

void mc_walk_init(mc_walk *w, const mc_walk_visitor *visitor, bool pending_only, const char *fn)
{
    *w = (mc_walk){.visitor = *visitor, .fn = fn, .pending_only = pending_only, .stack = MC_DARRAY_INIT(frame)};
    if (!visitor->enter)
        mc_ptrmap_init_set(&w->seen);
}

static int oom(mc_walk *w) { return mc_error_oom(w->fn, (w->stack.len + w->seen.count) * sizeof(frame)); }

static int leave(mc_walk *w, mc_array *node, int val)
{
    if (w->order) {
        mc_array **slot = mc_darray_push(w->order);
        if (!slot)
            return oom(w);
        *slot = node;
    }
    return w->visitor.leave ? w->visitor.leave(w->visitor.ctx, node, val) : 0;
}

static int push(mc_walk *w, mc_array *node, int val)
{
    frame *f = mc_darray_push(&w->stack);
    if (!f)
        return oom(w);
    *f = (frame){node, 0, val};
    return 0;
}

/* Meets a node: if it is new, records it and leaves it, or pushes its
 * frame, as the visitor says. One lookup either way. */
static inline int meet(mc_walk *w, mc_array *node)
{
    /* evaluated: data, or a tracer that kept its node under a transform */
    if (w->pending_only && (node->prim == MC_PRIM_NONE || mc_array_evaluated(node)))
        return 0;
    if (!w->visitor.enter) {
        int added = mc_ptrmap_add(&w->seen, node);
        return added < 0 ? oom(w) : added ? push(w, node, 0) : 0;
    }
    bool added;
    int *slot = mc_ptrmap_get_or_put(&w->seen, node, 0, &added);
    if (!slot)
        return oom(w);
    if (!added)
        return 0;
    int val = 0;
    int what = w->visitor.enter(w->visitor.ctx, node, &val);
    if (what < 0)
        return 1;
    *slot = val; /* enter left the map alone, so slot still holds */
    return what == MC_WALK_LEAF ? leave(w, node, val) : push(w, node, val);
}

int mc_walk_from(mc_walk *w, mc_array *root)
{
    if (!root)
        return 0;
    if (meet(w, root))
        return 1;
    while (w->stack.len) {
        frame *top = mc_darray_last(&w->stack);
        if (top->next < top->node->n_inputs) {
            mc_array *in = top->node->inputs[top->next++];
            if (meet(w, in))
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

int mc_walk_collect(mc_array *const *roots, size_t n, bool pending_only, mc_darray *order, const char *fn)
{
    mc_walk w;
    mc_walk_init(&w, &(mc_walk_visitor){NULL, NULL, NULL}, pending_only, fn);
    w.order = order;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = mc_walk_from(&w, roots[i]);
    mc_walk_free(&w);
    return rc;
}
