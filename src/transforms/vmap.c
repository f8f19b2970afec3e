/* Owns vmap (vmap.h): the trace on placeholders, and the replay of the
 * traced graph on batched inputs through the primitives' vmap rules. The
 * replay is the one post-order walk of graph/walk.h, applying each rule
 * as the walk leaves a node, so a deep graph does not recurse. */
#include "transforms/vmap.h"

#include <string.h>

#include "graph/build.h"
#include "graph/prims_placeholder.h"
#include "graph/tracing.h"
#include "graph/vmap_rules.h"
#include "graph/walk.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "transforms/tape.h"

/* The checks of MLX's vmap_trace, in its order and with its messages (the
 * size compared against is the last batched input's); *size gets the
 * batch size (-1: no input is batched). */
static int check_in_axes(mc_array *const *inputs, int n, const int *in_axes, int n_axes, int *size, const char *fn)
{
    if (n_axes != n)
        return mc_error("[%s] The number of in axes (%d) must match the number of inputs (%d).", fn, n_axes, n);
    *size = -1;
    for (int i = 0; i < n; i++) {
        int ax = in_axes[i];
        if (ax == -1)
            continue;
        if (inputs[i]->ndim == 0)
            return mc_error("[%s] Cannot vmap an input with zero dimensions.", fn);
        if (ax < -1 || ax >= inputs[i]->ndim)
            return mc_error("[%s] Axis %d invalid for input with %d dimensions.", fn, ax, inputs[i]->ndim);
        *size = inputs[i]->shape[ax];
    }
    for (int i = 0; i < n; i++)
        if (in_axes[i] != -1 && inputs[i]->shape[in_axes[i]] != *size)
            return mc_error("[%s] Inconsistent axis sizes: %d and %d.", fn, inputs[i]->shape[in_axes[i]], *size);
    return 0;
}

/* The stand-in of input i batched on axis ax: a Placeholder of its shape
 * without that axis, which cannot be evaluated. */
static mc_array *placeholder(mc_array *in, int ax, int i, const char *fn)
{
    mc_placeholder_params p;
    memset(&p, 0, sizeof p);
    p.meta.dtype = in->dtype;
    p.meta.ndim = in->ndim - 1;
    for (int d = 0, k = 0; d < in->ndim; d++)
        if (d != ax)
            p.meta.shape[k++] = in->shape[d];
    p.index = i;
    return mc_node_new_meta(fn, MC_PRIM_PLACEHOLDER, &p.meta, NULL, 0, &p, sizeof p);
}

int mc_vmap_trace(const char *fn, mc_ad_fun f, void *ctx, mc_array *const *inputs, int n, const int *in_axes,
                  int n_axes, mc_array ***s_inputs, mc_array ***outs, int *nout)
{
    int size;
    if (check_in_axes(inputs, n, in_axes, n_axes, &size, fn))
        return 1;
    mc_array **s = mc_xcalloc((size_t)(n ? n : 1), sizeof *s);
    if (!s)
        return mc_error_oom(fn, (size_t)n * sizeof *s);
    int made = 0;
    for (; made < n; made++) {
        s[made] = in_axes[made] == -1 ? mc_array_retain(inputs[made])
                                      : placeholder(inputs[made], in_axes[made], made, fn);
        if (!s[made]) {
            mc_ad_release_all(s, made);
            return 1;
        }
    }
    mc_tracing_enter();
    int failed = f(ctx, s, n, outs, nout);
    mc_tracing_leave();
    if (failed) {
        mc_ad_release_all(s, n);
        return 1;
    }
    *s_inputs = s;
    return 0;
}

/* ---- the replay ---- */

/* An array of the batched graph and where its batch is (-1: nowhere). */
typedef struct batched {
    mc_array *a; /* owned */
    int axis;
} batched;

/* The walk's value per node: an index into vals, or one of these. */
enum { NOT_BATCHED = -1, TRACED_INPUT = -2 };

typedef struct replay {
    mc_walk walk;
    mc_ptrmap s_inputs; /* traced input -> index into vals, or TRACED_INPUT */
    mc_darray vals;     /* batched */
    mc_step_scratch sc;
    const char *fn;
} replay;

static int enter(void *ctx, mc_array *node, int *val)
{
    replay *r = ctx;
    int *v = mc_ptrmap_get(&r->s_inputs, node);
    *val = v ? *v : NOT_BATCHED;
    return v ? MC_WALK_LEAF : MC_WALK_DESCEND;
}

static int push_batched(replay *r, mc_array *a, int axis)
{
    batched *b = mc_darray_push(&r->vals);
    if (!b) {
        mc_array_release(a);
        return mc_error_oom(r->fn, (r->vals.len + 1) * sizeof *b);
    }
    *b = (batched){a, axis};
    return 0;
}

static batched *batched_of(replay *r, const mc_array *node)
{
    int *v = mc_walk_value(&r->walk, node);
    return v && *v >= 0 ? mc_darray_at(&r->vals, (size_t)*v) : NULL;
}

/* After its inputs: a node one of whose inputs has a batched value gets
 * one too, from its primitive's rule (or, when every such input turned
 * out the same for the whole batch, from its primitive again). */
static int leave(void *ctx, mc_array *node, int val)
{
    replay *r = ctx;
    if (val != NOT_BATCHED || node->n_inputs == 0)
        return 0;
    if (mc_step_scratch_fit(&r->sc, node->n_inputs, r->fn))
        return 1;
    int *axes = r->sc.args.items;
    mc_array **in = r->sc.arrs.items;
    bool any = false, mapped = false;
    for (int i = 0; i < node->n_inputs; i++) {
        batched *b = batched_of(r, node->inputs[i]);
        in[i] = b ? b->a : node->inputs[i];
        axes[i] = b ? b->axis : -1;
        any |= b != NULL;
        mapped |= b && b->axis >= 0;
    }
    if (!any)
        return 0;
    mc_array *out = NULL;
    int axis = -1;
    const mc_prim_info *p = mc_prims[node->prim];
    if (!mapped) {
        if (!(out = mc_node_like(node, in, node->n_inputs, r->fn)))
            return 1;
    } else if (!p->vmap) {
        return mc_error("[%s] Internal: %s has no vmap rule.", r->fn, mc_prim_name(node->prim, node->params));
    } else if (p->vmap(&out, &axis, node, in, axes, r->fn)) {
        return 1;
    }
    int idx = (int)r->vals.len;
    if (push_batched(r, out, axis))
        return 1;
    *mc_walk_value(&r->walk, node) = idx;
    return 0;
}

/* The checks MLX leaves to its callers: the three lists agree, and each
 * batched input is its traced input with the batch axis added. */
static int check_replace(mc_array *const *inputs, int n, mc_array *const *s_inputs, int n_s, const int *in_axes,
                         int n_in_axes, int nout, int n_out_axes, int *size, const char *fn)
{
    if (n_out_axes != nout)
        return mc_error("[%s] The number of out axes (%d) must match the number of outputs (%d).", fn, n_out_axes,
                        nout);
    if (n_s != n)
        return mc_error("[%s] The number of traced inputs (%d) must match the number of inputs (%d).", fn, n_s, n);
    if (check_in_axes(inputs, n, in_axes, n_in_axes, size, fn))
        return 1;
    if (*size < 0)
        return mc_error("[%s] At least one of in_axes must be non-None.", fn);
    for (int i = 0; i < n; i++) {
        int ax = in_axes[i];
        if (ax < 0)
            continue;
        const mc_array *a = inputs[i], *s = s_inputs[i];
        bool ok = a->dtype == s->dtype && s->ndim == a->ndim - 1;
        for (int d = 0, k = 0; ok && d < a->ndim; d++)
            if (d != ax)
                ok = a->shape[d] == s->shape[k++];
        if (!ok) {
            char s1[256], s2[256];
            return mc_error("[%s] Input %d of shape %s is not its traced input of shape %s with axis %d added.",
                            fn, i, mc_shape_str(s1, sizeof s1, a->ndim, a->shape),
                            mc_shape_str(s2, sizeof s2, s->ndim, s->shape), ax);
        }
    }
    return 0;
}

/* Output i: b's array with its batch moved to `axis`, or (b NULL or not
 * batched) `same` repeated `size` times along a new axis there. */
static mc_array *place_output(const batched *b, mc_array *same, int axis, int size, const char *fn)
{
    bool moves = b && b->axis >= 0;
    mc_array *a = b ? b->a : same;
    int nd = moves ? a->ndim : a->ndim + 1;
    int ax = axis < 0 ? axis + nd : axis;
    if (ax < 0 || ax >= nd || nd > MC_MAX_NDIM) {
        mc_error("[%s] Axis %d invalid for output with %d dimensions.", fn, axis, nd);
        return NULL;
    }
    if (moves)
        return b->axis == ax ? mc_array_retain(a) : mc_node_moveaxis(a, b->axis, ax, fn);
    int shape[MC_MAX_NDIM];
    for (int d = 0, k = 0; d < nd; d++)
        shape[d] = d == ax ? 1 : a->shape[k++];
    mc_array *e = mc_node_reshape(a, nd, shape, fn);
    if (!e)
        return NULL;
    shape[ax] = size;
    mc_array *r = mc_node_broadcast(e, nd, shape, fn);
    mc_array_release(e);
    return r;
}

int mc_vmap_replace(const char *fn, mc_array *const *inputs, int n, mc_array *const *s_inputs, int n_s,
                    mc_array *const *s_outputs, int nout, const int *in_axes, int n_in_axes, const int *out_axes,
                    int n_out_axes, mc_array ***res)
{
    int size;
    if (check_replace(inputs, n, s_inputs, n_s, in_axes, n_in_axes, nout, n_out_axes, &size, fn))
        return 1;
    replay r = {.vals = MC_DARRAY_INIT(batched), .sc = MC_STEP_SCRATCH_INIT, .fn = fn};
    mc_walk_init(&r.walk, &(mc_walk_visitor){enter, leave, &r}, false, fn);
    mc_array **outs = mc_xcalloc((size_t)(nout ? nout : 1), sizeof *outs);
    int rc = 1, done = 0;
    if (!outs) {
        mc_error_oom(fn, (size_t)nout * sizeof *outs);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        int v = TRACED_INPUT;
        if (in_axes[i] >= 0) {
            v = (int)r.vals.len;
            if (push_batched(&r, mc_array_retain(inputs[i]), in_axes[i]))
                goto out;
        }
        if (mc_ptrmap_put(&r.s_inputs, s_inputs[i], v)) {
            mc_error_oom(fn, sizeof(void *));
            goto out;
        }
    }
    for (int i = 0; i < nout; i++)
        if (mc_walk_from(&r.walk, s_outputs[i]))
            goto out;
    for (; done < nout; done++)
        if (!(outs[done] =
                  place_output(batched_of(&r, s_outputs[done]), s_outputs[done], out_axes[done], size, fn)))
            goto out;
    rc = 0;
out:
    if (rc && outs)
        mc_ad_release_all(outs, done);
    /* newest first: a later value may be the last holder of an earlier one */
    batched *vals = r.vals.items;
    for (size_t i = r.vals.len; i > 0; i--)
        mc_array_release(vals[i - 1].a);
    mc_darray_free(&r.vals);
    mc_ptrmap_free(&r.s_inputs);
    mc_step_scratch_free(&r.sc);
    mc_walk_free(&r.walk);
    if (!rc)
        *res = outs;
    return rc;
}
