/* Owns fusion of a trace program (MLX's compile_fuse, for one output per
 * fused node): chains of elementwise steps (Unary, Binary, AsType) become
 * one Compiled step (MC_PRIM_FUSED, run by fused_prim.c) when the values in
 * between are used by nothing else. Going from the last step back, each
 * fusable step not yet taken roots a region that grows over its operands:
 * an operand step joins if it is fusable, is not an output of the trace,
 * and every use of it is by the region (so no intermediate is needed
 * outside). Regions have at most MC_FUSED_MAX_OPS steps and
 * MC_FUSED_MAX_INPUTS distinct inputs; a lone step is left as it is.
 *
 * MLX also fuses broadcasts and builds multi-output fused nodes when an
 * intermediate is also an output; here such an output ends the region
 * (it stays a node of its own), which gives the same values. */
#include <stdlib.h>
#include <string.h>

#include "compile/compile_internal.h"
#include "graph/prims_binary.h"
#include "graph/prims_copy.h"
#include "graph/prims_fused.h"
#include "graph/prims_unary.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static bool fusable(const mc_step *s)
{
    switch (s->prim) {
    case MC_PRIM_UNARY:
        return s->n_in == 1 && s->params_size == sizeof(mc_unary_params);
    case MC_PRIM_BINARY:
        return s->n_in == 2 && s->params_size == sizeof(mc_binary_params);
    case MC_PRIM_ASTYPE:
        return s->n_in == 1 && s->params_size == sizeof(mc_astype_params);
    default:
        return false;
    }
}

typedef struct fuse_state {
    const mc_trace *t;
    int base;           /* slot of step 0 */
    int *uses;          /* per slot: references by steps and outputs */
    unsigned char *out; /* per slot: is an output */
    int *owner;         /* per step: root of its region, or -1 */
    int members[MC_FUSED_MAX_OPS];
    int n_members;
} fuse_state;

static bool in_region(const fuse_state *f, int step)
{
    for (int i = 0; i < f->n_members; i++)
        if (f->members[i] == step)
            return true;
    return false;
}

/* References to slot from the region's steps. */
static int uses_in_region(const fuse_state *f, int slot)
{
    int n = 0;
    for (int i = 0; i < f->n_members; i++) {
        const mc_step *m = &f->t->steps[f->members[i]];
        for (int k = 0; k < m->n_in; k++)
            n += m->in[k] == slot;
    }
    return n;
}

/* Grows the region rooted at f->members[0] to a fixpoint. */
static void grow(fuse_state *f)
{
    bool changed = true;
    while (changed && f->n_members < MC_FUSED_MAX_OPS) {
        changed = false;
        for (int i = 0; i < f->n_members && f->n_members < MC_FUSED_MAX_OPS; i++) {
            const mc_step *m = &f->t->steps[f->members[i]];
            for (int k = 0; k < m->n_in && f->n_members < MC_FUSED_MAX_OPS; k++) {
                int slot = m->in[k];
                int u = slot - f->base;
                if (u < 0 || in_region(f, u) || f->owner[u] >= 0 || f->out[slot] ||
                    !fusable(&f->t->steps[u]) || uses_in_region(f, slot) != f->uses[slot])
                    continue;
                f->members[f->n_members++] = u;
                changed = true;
            }
        }
    }
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Builds the fused step of the region (members sorted, root last) into
 * *st. Returns 0, 1 if the region has too many inputs (left unfused), or
 * -1 on allocation failure. */
static int build(const fuse_state *f, mc_step *st)
{
    const mc_trace *t = f->t;
    int ext[MC_FUSED_MAX_INPUTS];
    int n_ext = 0;
    mc_fused_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < f->n_members; i++) {
        const mc_step *m = &t->steps[f->members[i]];
        mc_fused_op *o = &p.ops[i];
        int operand[2] = {0, -1};
        for (int k = 0; k < m->n_in; k++) {
            int slot = m->in[k];
            int pos = -1;
            for (int j = 0; j < f->n_members && pos < 0; j++)
                if (f->members[j] == slot - f->base)
                    pos = j;
            if (pos >= 0) {
                operand[k] = MC_FUSED_MAX_INPUTS + pos; /* renumbered below */
                continue;
            }
            int e = 0;
            while (e < n_ext && ext[e] != slot)
                e++;
            if (e == n_ext) {
                if (n_ext == MC_FUSED_MAX_INPUTS)
                    return 1;
                ext[n_ext++] = slot;
            }
            operand[k] = e;
        }
        o->a = operand[0];
        o->b = operand[1];
        o->dtype = (int32_t)m->dtype;
        if (m->prim == MC_PRIM_UNARY) {
            o->kind = MC_FUSED_UNARY;
            o->op = (int32_t)((const mc_unary_params *)m->params)->op;
        } else if (m->prim == MC_PRIM_BINARY) {
            o->kind = MC_FUSED_BINARY;
            o->op = (int32_t)((const mc_binary_params *)m->params)->op;
        } else {
            o->kind = MC_FUSED_ASTYPE;
            o->op = (int32_t)((const mc_astype_params *)m->params)->to;
        }
    }
    /* step results come after the inputs, whose count is known now */
    for (int i = 0; i < f->n_members; i++) {
        if (p.ops[i].a >= MC_FUSED_MAX_INPUTS)
            p.ops[i].a = n_ext + p.ops[i].a - MC_FUSED_MAX_INPUTS;
        if (p.ops[i].b >= MC_FUSED_MAX_INPUTS)
            p.ops[i].b = n_ext + p.ops[i].b - MC_FUSED_MAX_INPUTS;
    }
    p.n_in = n_ext;
    p.n_ops = f->n_members;
    const mc_step *root = &t->steps[f->members[f->n_members - 1]];
    mc_meta meta;
    meta.dtype = root->dtype;
    meta.ndim = root->ndim;
    if (root->ndim)
        memcpy(meta.shape, root->shape, (size_t)root->ndim * sizeof(int));
    return mc_step_init(st, MC_PRIM_FUSED, n_ext, ext, &meta, &p, mc_fused_params_size(p.n_ops)) ? -1 : 0;
}

int mc_trace_fuse(mc_trace *t)
{
    int ni = t->n_inputs, nc = t->n_consts, ns = t->n_steps;
    size_t total = mc_trace_slots(t);
    fuse_state f = {.t = t, .base = ni + nc};
    f.uses = mc_xcalloc(total ? total : 1, sizeof *f.uses);
    f.out = mc_xcalloc(total ? total : 1, 1);
    f.owner = mc_xmalloc((ns ? (size_t)ns : 1) * sizeof *f.owner);
    mc_step *fused = mc_xcalloc(ns ? (size_t)ns : 1, sizeof *fused); /* new step per root */
    int *newslot = mc_xmalloc((total ? total : 1) * sizeof *newslot);
    unsigned char *keep = mc_xmalloc(total ? total : 1);
    int rc = 1;
    if (!f.uses || !f.out || !f.owner || !fused || !newslot || !keep)
        goto oom;
    for (int s = 0; s < ns; s++) {
        f.owner[s] = -1;
        for (int k = 0; k < t->steps[s].n_in; k++)
            f.uses[t->steps[s].in[k]]++;
    }
    for (int o = 0; o < t->n_outputs; o++) {
        f.uses[t->outputs[o]]++;
        f.out[t->outputs[o]] = 1;
    }

    int n_fused = 0;
    for (int s = ns - 1; s >= 0; s--) {
        if (f.owner[s] >= 0 || !fusable(&t->steps[s]))
            continue;
        f.members[0] = s;
        f.n_members = 1;
        grow(&f);
        if (f.n_members < 2)
            continue;
        qsort(f.members, (size_t)f.n_members, sizeof(int), cmp_int);
        int b = build(&f, &fused[s]);
        if (b < 0)
            goto oom;
        if (b > 0)
            continue;
        for (int i = 0; i < f.n_members; i++)
            f.owner[f.members[i]] = s;
        n_fused++;
    }
    if (!n_fused) {
        rc = 0;
        goto done;
    }

    /* Keep roots (replaced by their fused step) and unfused steps; the
     * other members are used only inside their region, so nothing left
     * refers to them. Nothing fails from here on. */
    memset(keep, 1, total);
    for (int s = 0; s < ns; s++) {
        if (f.owner[s] == s) {
            mc_step_clear(&t->steps[s]);
            t->steps[s] = fused[s];
            memset(&fused[s], 0, sizeof fused[s]);
        } else if (f.owner[s] >= 0) {
            keep[ni + nc + s] = 0;
        }
    }
    mc_trace_compact(t, keep, newslot);
    rc = 0;
    goto done;
oom:
    rc = mc_error_oom("compile", total * sizeof(int));
done:
    if (fused)
        for (int s = 0; s < ns; s++)
            mc_step_clear(&fused[s]);
    mc_xfree(fused);
    mc_xfree(f.uses);
    mc_xfree(f.out);
    mc_xfree(f.owner);
    mc_xfree(newslot);
    mc_xfree(keep);
    return rc;
}
