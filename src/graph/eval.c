/* Owns graph evaluation: an iterative post-order walk over pending nodes,
 * running each once and detaching it from its inputs so that intermediates
 * die as soon as nothing needs them. */
#include "graph/eval.h"

#include <stdint.h>
#include <string.h>

#include "graph/primitive.h"
#include "graph/tracing.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* An open-addressing set of node pointers: visited nodes of one walk. */
typedef struct ptr_set {
    mc_array **slots;
    size_t cap; /* power of two */
    size_t count;
} ptr_set;

static size_t ptr_hash(const void *p)
{
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static int ptr_set_grow(ptr_set *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 64;
    mc_array **ns = mc_xcalloc(ncap, sizeof *ns);
    if (!ns)
        return 1;
    for (size_t i = 0; i < s->cap; i++) {
        mc_array *p = s->slots[i];
        if (!p)
            continue;
        size_t h = ptr_hash(p) & (ncap - 1);
        while (ns[h])
            h = (h + 1) & (ncap - 1);
        ns[h] = p;
    }
    mc_xfree(s->slots);
    s->slots = ns;
    s->cap = ncap;
    return 0;
}

/* Inserts p; returns 1 if newly added, 0 if present, -1 on OOM. */
static int ptr_set_add(ptr_set *s, mc_array *p)
{
    if ((s->count + 1) * 2 > s->cap && ptr_set_grow(s))
        return -1;
    size_t h = ptr_hash(p) & (s->cap - 1);
    while (s->slots[h]) {
        if (s->slots[h] == p)
            return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->slots[h] = p;
    s->count++;
    return 1;
}

/* A growable stack of (node, next input index) frames. */
typedef struct frame {
    mc_array *node;
    int next;
} frame;

typedef struct vec {
    void *items;
    size_t len, cap, elem;
} vec;

static void *vec_push(vec *v)
{
    if (v->len == v->cap) {
        size_t ncap = v->cap ? v->cap * 2 : 64;
        void *ni = mc_xrealloc(v->items, ncap * v->elem);
        if (!ni)
            return NULL;
        v->items = ni;
        v->cap = ncap;
    }
    return (char *)v->items + v->elem * v->len++;
}

static void mc_node_detach(mc_array *a)
{
    mc_array **inputs = a->inputs;
    int n = a->n_inputs;
    a->inputs = NULL;
    a->n_inputs = 0;
    a->prim = MC_PRIM_NONE;
    mc_xfree(a->params);
    a->params = NULL;
    a->params_size = 0;
    for (int i = 0; i < n; i++)
        mc_array_release(inputs[i]);
    mc_xfree(inputs);
}

static int mc_run_node(mc_array *a, const char *fn)
{
    if (a->prim == MC_PRIM_PLACEHOLDER)
        return mc_error("[%s] Cannot evaluate a placeholder of a compile trace; evaluate the "
                        "compiled function's outputs instead.", fn);
    if (mc_prims[a->prim]->eval(a, a->inputs, a->n_inputs, a->params))
        return 1;
    /* a tracer keeps its node while a transform may still read it */
    if (!(a->tracer && mc_tracing()))
        mc_node_detach(a);
    return 0;
}

int mc_eval(mc_array *const *outs, size_t n, const char *fn)
{
    ptr_set seen = {0};
    vec stack = {.elem = sizeof(frame)};
    vec order = {.elem = sizeof(mc_array *)};
    int rc = 0;

    /* Post-order of the pending subgraph, without recursion. Every node in
     * `order` is held by its consumer or by outs, so none dies meanwhile. */
    for (size_t i = 0; i < n && !rc; i++) {
        mc_array *root = outs[i];
        if (!root || root->prim == MC_PRIM_NONE || mc_array_evaluated(root))
            continue;
        int added = ptr_set_add(&seen, root);
        if (added < 0)
            goto oom;
        if (!added)
            continue;
        frame *f = vec_push(&stack);
        if (!f)
            goto oom;
        *f = (frame){root, 0};
        while (stack.len) {
            frame *top = (frame *)stack.items + stack.len - 1;
            if (top->next < top->node->n_inputs) {
                mc_array *in = top->node->inputs[top->next++];
                if (in->prim == MC_PRIM_NONE || mc_array_evaluated(in))
                    continue;
                added = ptr_set_add(&seen, in);
                if (added < 0)
                    goto oom;
                if (!added)
                    continue;
                frame *nf = vec_push(&stack);
                if (!nf)
                    goto oom;
                *nf = (frame){in, 0};
            } else {
                mc_array **slot = vec_push(&order);
                if (!slot)
                    goto oom;
                *slot = top->node;
                stack.len--;
            }
        }
    }

    /* No extra references are taken: a node still to run is held by its
     * consumers, which run after it, so detaching a finished node (which
     * releases only earlier nodes) never frees pending work, and each
     * intermediate dies, or is donated, right after its last consumer. */
    mc_array **nodes = order.items;
    for (size_t i = 0; i < order.len && !rc; i++)
        rc = mc_run_node(nodes[i], fn);
    goto done;

oom:
    rc = mc_error_oom(fn, stack.cap * sizeof(frame));
done:
    mc_xfree(seen.slots);
    mc_xfree(stack.items);
    mc_xfree(order.items);
    return rc;
}
