/* Owns building lazy nodes and choosing an output buffer for them. */
#include <string.h>

#include "graph/eval.h"
#include "graph/primitive.h"
#include "graph/tracing.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* Parameters up to this size share the node's allocation. */
enum { MC_NODE_INLINE_PARAMS = 512 };

/* A node with the wrong number of inputs would make its rules read past
 * them: a bug in the op that builds it, reported rather than run. */
static int mc_node_check_arity(const char *fn, int prim, int n)
{
    if (prim <= MC_PRIM_NONE || prim >= MC_PRIM_COUNT)
        return mc_error("[%s] Internal error: no primitive %d.", fn, prim);
    int arity = mc_prims[prim]->arity;
    if (arity != MC_ARITY_ANY && n != arity)
        return mc_error("[%s] Internal error: %s takes %d inputs, not %d.", fn, mc_prims[prim]->name, arity, n);
    return 0;
}

mc_array *mc_node_new_meta(const char *fn, int prim, const mc_meta *meta, mc_array *const *inputs,
                           int n, const void *params, size_t params_size)
{
    if (mc_node_check_arity(fn, prim, n))
        return NULL;
    /* inputs and parameters live in the descriptor's own allocation (one
     * allocation per node), except parameters too large to keep beside the
     * data once the node has run */
    size_t in_bytes = (size_t)n * sizeof *inputs;
    in_bytes = (in_bytes + 15) & ~(size_t)15;
    bool apart = params_size > MC_NODE_INLINE_PARAMS;
    void *extra = NULL;
    mc_array *out = mc_array_alloc_ex(fn, meta->dtype, meta->ndim, meta->shape,
                                      in_bytes + (apart ? 0 : params_size), &extra);
    if (!out)
        return NULL;
    if (params_size) {
        out->params = apart ? mc_xmalloc(params_size) : (char *)extra + in_bytes;
        if (!out->params) {
            mc_array_release(out);
            mc_error_oom(fn, params_size);
            return NULL;
        }
        out->params_apart = apart;
        memcpy(out->params, params, params_size);
        out->params_size = params_size;
    }
    if (n > 0)
        out->inputs = extra;
    for (int i = 0; i < n; i++) {
        out->inputs[i] = mc_array_retain(inputs[i]);
        out->tracer |= inputs[i]->tracer;
    }
    out->tracer &= mc_tracing();
    out->n_inputs = n;
    out->prim = prim;
    return out;
}

mc_array *mc_node_new(const char *fn, int prim, mc_array *const *inputs, int n, const void *params,
                      size_t params_size)
{
    mc_meta meta;
    for (int i = 0; i < n; i++) {
        if (!inputs[i]) {
            mc_error("[%s] Input %d is an empty array.", fn, i);
            return NULL;
        }
    }
    if (mc_node_check_arity(fn, prim, n))
        return NULL;
    if (mc_prims[prim]->infer(&meta, inputs, n, params, fn))
        return NULL;
    return mc_node_new_meta(fn, prim, &meta, inputs, n, params, params_size);
}

int mc_out_alloc(mc_array *out, mc_array *const *cands, int n, const char *fn)
{
    /* a tracer keeps its inputs for the transform: none may give its
     * buffer away (one only the tracer holds would look donatable) */
    for (int i = 0; i < n && !(out->tracer && mc_tracing()); i++) {
        if (cands[i] && mc_array_donatable(cands[i], out)) {
            mc_array_donate(out, cands[i]);
            return 0;
        }
    }
    size_t nbytes = out->size * mc_dtype_size(out->dtype);
    mc_buffer *b = mc_buffer_alloc(nbytes);
    if (!b) {
        char shape[96];
        return mc_error("[%s] Out of memory allocating %zu bytes for a %s array of shape %s, the output of "
                        "step %s.",
                        mc_eval_caller(), nbytes, mc_dtype_name(out->dtype),
                        mc_shape_str(shape, sizeof shape, out->ndim, out->shape), fn);
    }
    mc_array_set_buffer(out, b, b->data);
    return 0;
}

const char *mc_prim_name(int prim, const void *params)
{
    if (prim <= MC_PRIM_NONE || prim >= MC_PRIM_COUNT)
        return "Data";
    const mc_prim_info *p = mc_prims[prim];
    return p->name_of ? p->name_of(params) : p->name;
}
