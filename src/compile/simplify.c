/* Owns simplification of a trace program (MLX's compile_simplify, done as
 * one value-numbering pass, which suffices because steps are already in
 * topological order):
 *   - constant scalars of equal dtype and value become one constant;
 *   - a Copy to the same dtype and a StopGradient (no-ops for values)
 *     are replaced by their input;
 *   - a step equal to an earlier one (same primitive, same parameter
 *     bytes, same inputs after merging) is replaced by it, unless it is an
 *     output (as in MLX, outputs keep their own node);
 *   - steps and constants that no output needs are dropped. */
#include <string.h>

#include "compile/compile_internal.h"
#include "graph/primitive.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "runtime/hash.h"
#include "runtime/ptrmap.h"

/* ---- scalar constants, keyed by value ---- */

static bool is_scalar_const(const mc_array *a)
{
    return a->ndim == 0 && mc_array_evaluated(a) && mc_dtype_size(a->dtype) <= 16;
}

static uint64_t scalar_hash(const void *key, const void *ctx)
{
    const mc_array *a = key;
    (void)ctx;
    return mc_hash_bytes(mc_hash_mix((uint64_t)a->dtype), a->data, mc_dtype_size(a->dtype));
}

static bool scalar_equal(const void *x, const void *y, const void *ctx)
{
    const mc_array *a = x, *b = y;
    (void)ctx;
    return a->dtype == b->dtype && !memcmp(a->data, b->data, mc_dtype_size(a->dtype));
}

/* ---- steps, keyed by what they compute ---- */

static uint64_t step_hash(const void *key, const void *ctx)
{
    const mc_step *s = key;
    (void)ctx;
    uint64_t h = mc_hash_combine(mc_hash_mix((uint64_t)s->prim), (uint64_t)s->n_in);
    for (int i = 0; i < s->n_in; i++)
        h = mc_hash_combine(h, (uint64_t)s->in[i]);
    return mc_hash_bytes(h, s->params, s->params_size);
}

static bool step_equal(const void *x, const void *y, const void *ctx)
{
    const mc_step *a = x, *b = y;
    (void)ctx;
    if (a->prim != b->prim || a->n_in != b->n_in || a->params_size != b->params_size)
        return false;
    if (a->prim > MC_PRIM_NONE && a->prim < MC_PRIM_COUNT && mc_prims[a->prim]->communicates)
        return false;
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    if (a->n_in && memcmp(a->in, b->in, (size_t)a->n_in * sizeof(int)))
        return false;
    if (a->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int)))
        return false;
    return !a->params_size || !memcmp(a->params, b->params, a->params_size);
}

/* MLX's no-ops: Copy (here: to the same dtype) and StopGradient. */
static bool is_noop(const mc_trace *t, const mc_step *s)
{
    if (s->n_in != 1 || mc_trace_slot_dtype(t, s->in[0]) != s->dtype)
        return false;
    return s->prim == MC_PRIM_COPY || s->prim == MC_PRIM_STOP_GRADIENT;
}

int mc_trace_simplify(mc_trace *t)
{
    int ni = t->n_inputs, nc = t->n_consts, ns = t->n_steps;
    size_t total = mc_trace_slots(t);
    int *remap = mc_xmalloc((total ? total : 1) * sizeof *remap);
    unsigned char *out = mc_xcalloc(total ? total : 1, 1);
    unsigned char *live = mc_xcalloc(total ? total : 1, 1);
    int *newslot = mc_xmalloc((total ? total : 1) * sizeof *newslot);
    mc_ptrmap consts, steps; /* a representative -> its slot */
    mc_ptrmap_init_by_content(&consts, scalar_hash, scalar_equal, NULL);
    mc_ptrmap_init_by_content(&steps, step_hash, step_equal, NULL);
    int rc;
    if (!remap || !out || !live || !newslot || mc_ptrmap_reserve(&consts, (size_t)nc) ||
        mc_ptrmap_reserve(&steps, (size_t)ns))
        goto oom;
    /* Nothing allocates below (the maps have room for every entry), so t
     * changes only once nothing can fail. */

    for (size_t i = 0; i < total; i++)
        remap[i] = (int)i;
    for (int o = 0; o < t->n_outputs; o++)
        out[t->outputs[o]] = 1;

    bool added;
    for (int c = 0; c < nc; c++) {
        const mc_array *a = t->consts[c];
        if (!is_scalar_const(a))
            continue;
        int first = *mc_ptrmap_get_or_put(&consts, a, ni + c, &added);
        remap[ni + c] = first;
    }

    for (int s = 0; s < ns; s++) {
        mc_step *st = &t->steps[s];
        int slot = ni + nc + s;
        for (int i = 0; i < st->n_in; i++)
            st->in[i] = remap[st->in[i]];
        if (is_noop(t, st)) {
            remap[slot] = st->in[0];
            continue;
        }
        /* a step's inputs change no more once it is in the map */
        int first = *mc_ptrmap_get_or_put(&steps, st, slot, &added);
        if (!out[slot])
            remap[slot] = first;
    }
    for (int o = 0; o < t->n_outputs; o++) {
        t->outputs[o] = remap[t->outputs[o]];
        live[t->outputs[o]] = 1;
    }

    /* Liveness, from the outputs back (inputs of a step come before it). */
    for (int s = ns - 1; s >= 0; s--) {
        const mc_step *st = &t->steps[s];
        if (!live[ni + nc + s])
            continue;
        for (int i = 0; i < st->n_in; i++)
            live[st->in[i]] = 1;
    }
    mc_trace_compact(t, live, newslot);
    rc = 0;
    goto done;

oom:
    rc = mc_error_oom("compile", total * sizeof(int));
done:
    mc_xfree(remap);
    mc_xfree(out);
    mc_xfree(live);
    mc_xfree(newslot);
    mc_ptrmap_free(&consts);
    mc_ptrmap_free(&steps);
    return rc;
}
