/* Owns graph evaluation: running the pending nodes once each, in the order
 * of the post-order walk (walk.c), and detaching each from its inputs so
 * that intermediates die as soon as nothing needs them. */
#include "graph/eval.h"

#include "graph/primitive.h"
#include "graph/tracing.h"
#include "graph/walk.h"
#include "runtime/alloc.h"
#include "runtime/darray.h"
#include "runtime/error.h"
#include "runtime/tls.h"

static void mc_node_detach(mc_array *a)
{
    /* the inputs array and inline parameters are part of a's allocation:
     * only what they refer to, and parameters kept apart, are released */
    int n = a->n_inputs;
    a->n_inputs = 0;
    a->prim = MC_PRIM_NONE;
    if (a->params_apart)
        mc_xfree(a->params);
    a->params = NULL;
    a->params_apart = false;
    a->params_size = 0;
    for (int i = 0; i < n; i++)
        mc_array_release(a->inputs[i]);
    a->inputs = NULL;
}

static int mc_run_node(mc_array *a, const char *fn)
{
    if (a->prim == MC_PRIM_PLACEHOLDER)
        return mc_error("[%s] Cannot evaluate a placeholder of a compile or vmap trace; evaluate the "
                        "transformed function's outputs instead.", fn);
    if (mc_prims[a->prim]->eval(a, a->inputs, a->n_inputs, a->params))
        return 1;
    /* a tracer keeps its node while a transform may still read it */
    if (!(a->tracer && mc_tracing()))
        mc_node_detach(a);
    return 0;
}

static _Thread_local const char *tl_caller MC_TLS_FAST;

static bool mc_is_done(const mc_array *a) { return a->prim == MC_PRIM_NONE || mc_array_evaluated(a); }

/* Whether a is one pending node whose inputs are all evaluated (one op on
 * data, such as a collective on an array: its per-call cost is the
 * walk's otherwise), so it can run without a walk. */
static bool mc_is_single_step(const mc_array *a)
{
    if (mc_is_done(a))
        return false;
    for (int i = 0; i < a->n_inputs; i++)
        if (!mc_is_done(a->inputs[i]))
            return false;
    return true;
}

const char *mc_eval_caller(void) { return tl_caller ? tl_caller : "eval"; }

int mc_eval(mc_array *const *outs, size_t n, const char *fn)
{
    /* saved and restored: a step may evaluate (compile's replay does) */
    const char *outer = tl_caller;
    tl_caller = fn;
    if (n == 1 && outs[0] && mc_is_single_step(outs[0])) {
        /* held by outs, as the walk's nodes are */
        int rc = mc_run_node(outs[0], fn);
        tl_caller = outer;
        return rc;
    }
    /* Every node in `order` is held by its consumer or by outs, so none
     * dies before it runs. */
    mc_darray order = MC_DARRAY_INIT(mc_array *);
    int rc = mc_walk_collect(outs, n, true, &order, fn);

    /* No extra references are taken: a node still to run is held by its
     * consumers, which run after it, so detaching a finished node (which
     * releases only earlier nodes) never frees pending work, and each
     * intermediate dies, or is donated, right after its last consumer. */
    mc_array **nodes = order.items;
    for (size_t i = 0; i < order.len && !rc; i++)
        rc = mc_run_node(nodes[i], fn);
    mc_darray_free(&order);
    tl_caller = outer;
    return rc;
}
