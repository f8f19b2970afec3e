/* Owns the trace program's data (program.h): steps, freeing a trace,
 * matching it against a call, and the compaction that simplify and fuse
 * both end with. */
#include "compile/program.h"

#include <string.h>

#include "runtime/alloc.h"

/* ---- steps ---- */

int mc_step_init(mc_step *s, int prim, int n_in, const int *in, const mc_meta *meta, const void *params,
                 size_t params_size)
{
    memset(s, 0, sizeof *s);
    size_t nints = (size_t)n_in + (size_t)meta->ndim;
    s->in = mc_xmalloc((nints ? nints : 1) * sizeof(int));
    if (!s->in)
        return 1;
    if (params_size) {
        s->params = mc_xmalloc(params_size);
        if (!s->params) {
            mc_xfree(s->in);
            s->in = NULL;
            return 1;
        }
        memcpy(s->params, params, params_size);
    }
    if (n_in)
        memcpy(s->in, in, (size_t)n_in * sizeof(int));
    s->shape = s->in + n_in;
    if (meta->ndim)
        memcpy(s->shape, meta->shape, (size_t)meta->ndim * sizeof(int));
    s->prim = prim;
    s->n_in = n_in;
    s->ndim = meta->ndim;
    s->dtype = meta->dtype;
    s->params_size = params_size;
    return 0;
}

void mc_step_clear(mc_step *s)
{
    mc_xfree(s->in);
    mc_xfree(s->params);
    memset(s, 0, sizeof *s);
}

void mc_meta_of(mc_meta *m, const mc_array *a)
{
    m->dtype = a->dtype;
    m->ndim = a->ndim;
    if (a->ndim)
        memcpy(m->shape, a->shape, (size_t)a->ndim * sizeof(int));
}

/* ---- traces ---- */

mlx_dtype mc_trace_slot_dtype(const mc_trace *t, int slot)
{
    int ni = t->n_inputs, nc = t->n_consts;
    if (slot < ni)
        return t->in_meta[slot].dtype;
    if (slot < ni + nc)
        return t->consts[slot - ni]->dtype;
    return t->steps[slot - ni - nc].dtype;
}

bool mc_trace_matches(const mc_trace *t, mc_array *const *inputs, int n, const mc_trace_key *key)
{
    if (t->stream != key->stream || t->shapeless != key->shapeless || t->n_inputs != n)
        return false;
    if (t->n_constants != key->n_constants)
        return false;
    if (key->n_constants && memcmp(t->constants, key->constants, key->n_constants * sizeof(uint64_t)))
        return false;
    for (int i = 0; i < n; i++) {
        const mc_meta *m = &t->in_meta[i];
        const mc_array *a = inputs[i];
        if (m->dtype != a->dtype || m->ndim != a->ndim)
            return false;
        if (!t->shapeless && a->ndim && memcmp(m->shape, a->shape, (size_t)a->ndim * sizeof(int)))
            return false;
    }
    return true;
}

void mc_trace_compact(mc_trace *t, const unsigned char *keep, int *newslot)
{
    int ni = t->n_inputs, nc = t->n_consts, ns = t->n_steps;
    int kc = 0, ks = 0;
    /* A kept item moves to an index no later than its own, so one forward
     * pass compacts in place. */
    for (int i = 0; i < ni; i++)
        newslot[i] = i;
    for (int c = 0; c < nc; c++) {
        if (!keep[ni + c]) {
            newslot[ni + c] = -1;
            mc_array_release(t->consts[c]);
            continue;
        }
        newslot[ni + c] = ni + kc;
        t->consts[kc++] = t->consts[c];
    }
    for (int s = 0; s < ns; s++) {
        mc_step *st = &t->steps[s];
        if (!keep[ni + nc + s]) {
            newslot[ni + nc + s] = -1;
            mc_step_clear(st);
            continue;
        }
        newslot[ni + nc + s] = ni + kc + ks;
        for (int i = 0; i < st->n_in; i++)
            st->in[i] = newslot[st->in[i]];
        t->steps[ks++] = *st;
    }
    /* the tail's entries were moved or cleared: drop their stale copies */
    if (ks < ns)
        memset(t->steps + ks, 0, (size_t)(ns - ks) * sizeof *t->steps);
    for (int o = 0; o < t->n_outputs; o++)
        t->outputs[o] = newslot[t->outputs[o]];
    t->n_consts = kc;
    t->n_steps = ks;
}

void mc_trace_free(mc_trace *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n_consts; i++)
        mc_array_release(t->consts[i]);
    for (int i = 0; i < t->n_steps; i++)
        mc_step_clear(&t->steps[i]);
    mc_xfree(t->consts);
    mc_xfree(t->steps);
    mc_xfree(t->outputs);
    mc_xfree(t->in_meta);
    mc_xfree(t->constants);
    mc_xfree(t);
}
