/* Owns replaying a trace program on real inputs: one new lazy node per
 * step, with the step's primitive and parameters, over the nodes made for
 * its inputs. Nothing is evaluated here. A trace is shared by every call of
 * its thread and only read, so replay needs no lock. */
#include <string.h>

#include "compile/compile_internal.h"
#include "graph/primitive.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static const char fn_compile[] = "compile";

int mc_trace_replay(const mc_trace *t, mc_array *const *inputs, int n, mc_array **outs)
{
    int ni = t->n_inputs, nc = t->n_consts;
    size_t total = (size_t)ni + (size_t)nc + (size_t)t->n_steps;
    int max_in = 1;
    for (int s = 0; s < t->n_steps; s++)
        if (t->steps[s].n_in > max_in)
            max_in = t->steps[s].n_in;
    mc_array **vals = mc_xmalloc((total ? total : 1) * sizeof *vals);
    mc_array **args = mc_xmalloc((size_t)max_in * sizeof *args);
    int made = 0;
    int rc = 1;
    if (!vals || !args) {
        mc_error_oom(fn_compile, total * sizeof *vals);
        goto done;
    }
    if (n != ni) {
        mc_error("[%s] The trace takes %d inputs but %d were given.", fn_compile, ni, n);
        goto done;
    }
    for (int i = 0; i < ni; i++)
        vals[i] = inputs[i];
    for (int c = 0; c < nc; c++)
        vals[ni + c] = t->consts[c];

    for (int s = 0; s < t->n_steps; s++) {
        const mc_step *st = &t->steps[s];
        for (int i = 0; i < st->n_in; i++)
            args[i] = vals[st->in[i]];
        mc_array *a;
        if (t->shapeless) {
            /* infer follows the new shapes, or says why it cannot (e.g. a
             * reshape to a fixed size that no longer fits) */
            a = mc_node_new(fn_compile, st->prim, args, st->n_in, st->params, st->params_size);
        } else {
            mc_meta m;
            m.dtype = st->dtype;
            m.ndim = st->ndim;
            if (st->ndim)
                memcpy(m.shape, st->shape, (size_t)st->ndim * sizeof(int));
            a = mc_node_new_meta(fn_compile, st->prim, &m, args, st->n_in, st->params, st->params_size);
        }
        if (!a)
            goto done;
        vals[ni + nc + s] = a;
        made++;
    }
    for (int o = 0; o < t->n_outputs; o++)
        outs[o] = mc_array_retain(vals[t->outputs[o]]);
    rc = 0;
done:
    /* The nodes made here are held by their consumers and the outputs; drop
     * the walk's own references. */
    for (int s = 0; s < made; s++)
        mc_array_release(vals[ni + nc + s]);
    mc_xfree(vals);
    mc_xfree(args);
    return rc;
}
