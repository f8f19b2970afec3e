/* Owns recording: turning the graph a function body returned (run on
 * placeholders by trace.c) into a trace program (program.h).
 *
 * The graph is walked in post-order (graph/walk.h). Each node it meets is
 * one of:
 *   - an input: one of this trace's placeholders;
 *   - a constant: a node that does not depend on any input (data the body
 *     captured, or work it did on such data); constants are evaluated now,
 *     once, so that replays on several threads share only evaluated arrays
 *     and never evaluate a shared node at the same time;
 *   - a step: a node that depends on an input; steps are what a replay
 *     rebuilds on the real inputs.
 * Only the constants that a step or an output uses are kept. */
#include <string.h>

#include "compile/compile_internal.h"
#include "graph/eval.h"
#include "graph/prims_placeholder.h"
#include "graph/walk.h"
#include "runtime/alloc.h"
#include "runtime/darray.h"
#include "runtime/error.h"
#include "runtime/ptrmap.h"

static const char fn_compile[] = "compile";

enum { K_INPUT, K_CONST, K_STEP, K_PENDING };

typedef struct node_info {
    mc_array *a; /* borrowed: the traced graph holds it during the walk */
    int kind;
    int ref; /* input index, step index, or const index (-1: unused) */
} node_info;

typedef struct recorder {
    mc_walk walk;      /* node -> index into infos */
    mc_ptrmap real;    /* the call's real inputs (may not be reached) */
    mc_darray infos;   /* node_info */
    mc_darray consts;  /* int: info index of each used constant, in order */
    mc_darray steps;   /* int: info index of each step, in topological order */
    mc_darray step_in; /* int: info indices of the steps' inputs, concatenated */
    mc_array *const *ph;
    int n_ph;
} recorder;

static void recorder_free(recorder *r)
{
    mc_walk_free(&r->walk);
    mc_ptrmap_free(&r->real);
    mc_darray_free(&r->infos);
    mc_darray_free(&r->consts);
    mc_darray_free(&r->steps);
    mc_darray_free(&r->step_in);
}

static node_info *info_at(const recorder *r, int i) { return mc_darray_at(&r->infos, (size_t)i); }

/* The info index of a node the walk has met. */
static int info_of(const recorder *r, const mc_array *a) { return *mc_walk_value(&r->walk, a); }

static int oom(void) { return mc_error_oom(fn_compile, 0); }

static int push_int(mc_darray *a, int v)
{
    int *slot = mc_darray_push(a);
    if (!slot)
        return oom();
    *slot = v;
    return 0;
}

/* Marks a constant as used by a step or an output. */
static int use_const(recorder *r, int info)
{
    node_info *ni = info_at(r, info);
    if (ni->kind != K_CONST || ni->ref >= 0)
        return 0;
    if (push_int(&r->consts, info))
        return 1;
    info_at(r, info)->ref = (int)r->consts.len - 1;
    return 0;
}

/* The walk meets a node for the first time: classify it. */
static int enter(void *ctx, mc_array *a, int *val)
{
    recorder *r = ctx;
    if (mc_ptrmap_get(&r->real, a)) {
        mc_error("[%s] Attempting to compile a function with uncaptured inputs is not allowed.", fn_compile);
        return -1;
    }
    node_info *ni = mc_darray_push(&r->infos);
    if (!ni) {
        oom();
        return -1;
    }
    ni->a = a;
    ni->ref = -1;
    if (a->prim == MC_PRIM_PLACEHOLDER && a->params_size == sizeof(mc_placeholder_params)) {
        int k = ((const mc_placeholder_params *)a->params)->index;
        if (k >= 0 && k < r->n_ph && r->ph[k] == a) {
            ni->kind = K_INPUT;
            ni->ref = k;
        }
    }
    if (ni->ref < 0)
        ni->kind = a->prim == MC_PRIM_NONE ? K_CONST : K_PENDING;
    *val = (int)r->infos.len - 1;
    return ni->kind == K_PENDING ? MC_WALK_DESCEND : MC_WALK_LEAF;
}

/* All inputs of a pending node are classified: it becomes a step if one
 * of them depends on an input, else a constant. */
static int leave(void *ctx, mc_array *a, int i)
{
    recorder *r = ctx;
    if (info_at(r, i)->kind != K_PENDING)
        return 0;
    bool dep = false;
    for (int k = 0; k < a->n_inputs; k++) {
        int kind = info_at(r, info_of(r, a->inputs[k]))->kind;
        if (kind == K_INPUT || kind == K_STEP)
            dep = true;
    }
    if (!dep) {
        info_at(r, i)->kind = K_CONST;
        return 0;
    }
    for (int k = 0; k < a->n_inputs; k++) {
        int in = info_of(r, a->inputs[k]);
        if (use_const(r, in) || push_int(&r->step_in, in))
            return 1;
    }
    if (push_int(&r->steps, i))
        return 1;
    info_at(r, i)->kind = K_STEP;
    info_at(r, i)->ref = (int)r->steps.len - 1;
    return 0;
}

/* The slot of a classified node in the final numbering. */
static int slot_of(const recorder *r, int info, int n_inputs, int n_consts)
{
    const node_info *ni = info_at(r, info);
    switch (ni->kind) {
    case K_INPUT: return ni->ref;
    case K_CONST: return n_inputs + ni->ref;
    default: return n_inputs + n_consts + ni->ref;
    }
}

int mc_trace_record(mc_trace *t, mc_array *const *ph, mc_array *const *outs, int n_out, mc_array *const *real,
                    int n_real)
{
    recorder r = {.infos = MC_DARRAY_INIT(node_info),
                  .consts = MC_DARRAY_INIT(int),
                  .steps = MC_DARRAY_INIT(int),
                  .step_in = MC_DARRAY_INIT(int),
                  .ph = ph,
                  .n_ph = t->n_inputs};
    mc_walk_init(&r.walk, &(mc_walk_visitor){enter, leave, &r}, false, fn_compile);
    mc_array **lazy = NULL;
    int rc = 1;

    for (int i = 0; i < n_real; i++)
        if (mc_ptrmap_put(&r.real, real[i], i))
            goto oom;
    for (int i = 0; i < n_out; i++) {
        if (mc_walk_from(&r.walk, outs[i]))
            goto done;
        if (use_const(&r, info_of(&r, outs[i])))
            goto done;
    }

    /* Evaluate the constants that are still lazy, all in one go. */
    int n_consts = (int)r.consts.len;
    const int *ci = r.consts.items;
    size_t n_lazy = 0;
    lazy = mc_xmalloc((n_consts ? (size_t)n_consts : 1) * sizeof *lazy);
    if (!lazy)
        goto oom;
    for (int i = 0; i < n_consts; i++) {
        mc_array *a = info_at(&r, ci[i])->a;
        if (!mc_array_evaluated(a))
            lazy[n_lazy++] = a;
    }
    if (n_lazy && mc_eval(lazy, n_lazy, fn_compile))
        goto done;

    t->consts = mc_xcalloc(n_consts ? (size_t)n_consts : 1, sizeof *t->consts);
    t->steps = mc_xcalloc(r.steps.len ? r.steps.len : 1, sizeof *t->steps);
    t->outputs = mc_xmalloc((n_out ? (size_t)n_out : 1) * sizeof *t->outputs);
    if (!t->consts || !t->steps || !t->outputs)
        goto oom;
    for (int i = 0; i < n_consts; i++)
        t->consts[t->n_consts++] = mc_array_retain(info_at(&r, ci[i])->a);

    const int *si = r.steps.items;
    const int *sin = r.step_in.items;
    int scratch[64];
    for (size_t k = 0; k < r.steps.len; k++) {
        mc_array *a = info_at(&r, si[k])->a;
        int *in = a->n_inputs <= 64 ? scratch : mc_xmalloc((size_t)a->n_inputs * sizeof(int));
        if (!in)
            goto oom;
        for (int j = 0; j < a->n_inputs; j++)
            in[j] = slot_of(&r, *sin++, t->n_inputs, n_consts);
        mc_meta m;
        mc_meta_of(&m, a);
        int bad = mc_step_init(&t->steps[k], a->prim, a->n_inputs, in, &m, a->params, a->params_size);
        if (in != scratch)
            mc_xfree(in);
        if (bad)
            goto oom;
        t->n_steps++;
    }
    for (int i = 0; i < n_out; i++)
        t->outputs[i] = slot_of(&r, info_of(&r, outs[i]), t->n_inputs, n_consts);
    t->n_outputs = n_out;
    rc = 0;
    goto done;
oom:
    rc = oom();
done:
    mc_xfree(lazy);
    recorder_free(&r);
    return rc;
}
