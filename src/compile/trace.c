/* Owns tracing: running a function body once on placeholder inputs and
 * turning the graph it returns into a trace program (compile_internal.h),
 * plus matching a trace against a call and freeing it.
 *
 * The walk over the traced graph is iterative (a 10,000-deep tape must not
 * grow the C stack). Each node it meets is one of:
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
#include "compile/ptrmap.h"
#include "graph/eval.h"
#include "graph/prims_placeholder.h"
#include "handles/vector.h"
#include "mlx/c/compile.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

static const char fn_compile[] = "compile";

/* Depth of traces running on this thread (a nested compiled call inside a
 * body sees a non-zero depth and runs its own body instead). */
static _Thread_local int tl_trace_depth;

bool mc_compile_tracing(void) { return tl_trace_depth > 0; }

/* ---- steps ---- */

int mc_step_init(mc_step *s, int prim, int n_in, const int *in, const mc_meta *meta,
                 const void *params, size_t params_size)
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

/* ---- traces ---- */

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

static void meta_of(mc_meta *m, const mc_array *a)
{
    m->dtype = a->dtype;
    m->ndim = a->ndim;
    if (a->ndim)
        memcpy(m->shape, a->shape, (size_t)a->ndim * sizeof(int));
}

/* ---- growable arrays for the walk ---- */

typedef struct buf {
    void *items;
    size_t len, cap, elem;
} buf;

static void *buf_push(buf *b)
{
    if (b->len == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 32;
        void *ni = mc_xrealloc(b->items, ncap * b->elem);
        if (!ni)
            return NULL;
        b->items = ni;
        b->cap = ncap;
    }
    return (char *)b->items + b->elem * b->len++;
}

enum { K_INPUT, K_CONST, K_STEP, K_PENDING };

typedef struct node_info {
    mc_array *a; /* borrowed: the traced graph holds it during the walk */
    int kind;
    int ref;     /* input index, step index, or const index (-1: unused) */
} node_info;

typedef struct frame {
    int info;
    int next;
} frame;

typedef struct walk {
    mc_ptrmap seen;   /* node -> index into infos */
    mc_ptrmap real;   /* the call's real inputs (may not be reached) */
    buf infos;        /* node_info */
    buf stack;        /* frame */
    buf consts;       /* int: info index of each used constant, in order */
    buf steps;        /* int: info index of each step, in topological order */
    buf step_in;      /* int: info indices of the steps' inputs, concatenated */
    mc_array *const *ph;
    int n_ph;
} walk;

static void walk_free(walk *w)
{
    mc_ptrmap_free(&w->seen);
    mc_ptrmap_free(&w->real);
    mc_xfree(w->infos.items);
    mc_xfree(w->stack.items);
    mc_xfree(w->consts.items);
    mc_xfree(w->steps.items);
    mc_xfree(w->step_in.items);
}

static node_info *info_at(walk *w, int i) { return (node_info *)w->infos.items + i; }

static int oom(void) { return mc_error_oom(fn_compile, 0); }

/* Marks a constant as used by a step or an output. */
static int use_const(walk *w, int info)
{
    node_info *ni = info_at(w, info);
    if (ni->kind != K_CONST || ni->ref >= 0)
        return 0;
    int *slot = buf_push(&w->consts);
    if (!slot)
        return oom();
    ni = info_at(w, info);
    ni->ref = (int)w->consts.len - 1;
    *slot = info;
    return 0;
}

/* Records a node met for the first time; pushes it if it must be walked.
 * *idx receives its info index. */
static int meet(walk *w, mc_array *a, int *idx)
{
    if (mc_ptrmap_get(&w->real, a))
        return mc_error("[%s] Attempting to compile a function with uncaptured inputs is not allowed.",
                        fn_compile);
    node_info *ni = buf_push(&w->infos);
    if (!ni)
        return oom();
    int i = (int)w->infos.len - 1;
    ni->a = a;
    ni->ref = -1;
    if (a->prim == MC_PRIM_PLACEHOLDER && a->params_size == sizeof(mc_placeholder_params)) {
        int k = ((const mc_placeholder_params *)a->params)->index;
        if (k >= 0 && k < w->n_ph && w->ph[k] == a) {
            ni->kind = K_INPUT;
            ni->ref = k;
        }
    }
    if (ni->ref < 0)
        ni->kind = a->prim == MC_PRIM_NONE ? K_CONST : K_PENDING;
    if (mc_ptrmap_put(&w->seen, a, i))
        return oom();
    if (ni->kind == K_PENDING) {
        frame *f = buf_push(&w->stack);
        if (!f)
            return oom();
        *f = (frame){i, 0};
    }
    *idx = i;
    return 0;
}

/* All inputs of a pending node are classified: it becomes a step if one
 * of them depends on an input, else a constant. */
static int finish(walk *w, int i)
{
    mc_array *a = info_at(w, i)->a;
    bool dep = false;
    for (int k = 0; k < a->n_inputs; k++) {
        int kind = info_at(w, *mc_ptrmap_get(&w->seen, a->inputs[k]))->kind;
        if (kind == K_INPUT || kind == K_STEP)
            dep = true;
    }
    if (!dep) {
        info_at(w, i)->kind = K_CONST;
        return 0;
    }
    for (int k = 0; k < a->n_inputs; k++) {
        int in = *mc_ptrmap_get(&w->seen, a->inputs[k]);
        if (use_const(w, in))
            return 1;
        int *slot = buf_push(&w->step_in);
        if (!slot)
            return oom();
        *slot = in;
    }
    int *slot = buf_push(&w->steps);
    if (!slot)
        return oom();
    *slot = i;
    info_at(w, i)->kind = K_STEP;
    info_at(w, i)->ref = (int)w->steps.len - 1;
    return 0;
}

/* Post-order walk from one output, without recursion. */
static int walk_from(walk *w, mc_array *root)
{
    int idx;
    if (mc_ptrmap_get(&w->seen, root))
        return 0;
    if (meet(w, root, &idx))
        return 1;
    while (w->stack.len) {
        frame *f = (frame *)w->stack.items + w->stack.len - 1;
        mc_array *a = info_at(w, f->info)->a;
        if (f->next < a->n_inputs) {
            mc_array *in = a->inputs[f->next++];
            if (!mc_ptrmap_get(&w->seen, in) && meet(w, in, &idx))
                return 1;
            continue;
        }
        int done = f->info;
        w->stack.len--;
        if (finish(w, done))
            return 1;
    }
    return 0;
}

/* The slot of a classified node in the final numbering. */
static int slot_of(walk *w, int info, int n_inputs, int n_consts)
{
    node_info *ni = info_at(w, info);
    switch (ni->kind) {
    case K_INPUT:
        return ni->ref;
    case K_CONST:
        return n_inputs + ni->ref;
    default:
        return n_inputs + n_consts + ni->ref;
    }
}

/* Turns the traced outputs into t's program. */
static int build_program(mc_trace *t, mc_array *const *ph, mc_array *const *outs, int n_out,
                         mc_array *const *real, int n_real)
{
    walk w = {.infos.elem = sizeof(node_info),
              .stack.elem = sizeof(frame),
              .consts.elem = sizeof(int),
              .steps.elem = sizeof(int),
              .step_in.elem = sizeof(int),
              .ph = ph,
              .n_ph = t->n_inputs};
    mc_array **lazy = NULL;
    int rc = 1;

    for (int i = 0; i < n_real; i++)
        if (mc_ptrmap_put(&w.real, real[i], i))
            goto oom;
    for (int i = 0; i < n_out; i++) {
        if (walk_from(&w, outs[i]))
            goto done;
        if (use_const(&w, *mc_ptrmap_get(&w.seen, outs[i])))
            goto done;
    }

    /* Evaluate the constants that are still lazy, all in one go. */
    int n_consts = (int)w.consts.len;
    const int *ci = w.consts.items;
    size_t n_lazy = 0;
    lazy = mc_xmalloc((n_consts ? (size_t)n_consts : 1) * sizeof *lazy);
    if (!lazy)
        goto oom;
    for (int i = 0; i < n_consts; i++) {
        mc_array *a = info_at(&w, ci[i])->a;
        if (!mc_array_evaluated(a))
            lazy[n_lazy++] = a;
    }
    if (n_lazy && mc_eval(lazy, n_lazy, fn_compile))
        goto done;

    t->consts = mc_xcalloc(n_consts ? (size_t)n_consts : 1, sizeof *t->consts);
    t->steps = mc_xcalloc(w.steps.len ? w.steps.len : 1, sizeof *t->steps);
    t->outputs = mc_xmalloc((n_out ? (size_t)n_out : 1) * sizeof *t->outputs);
    if (!t->consts || !t->steps || !t->outputs)
        goto oom;
    for (int i = 0; i < n_consts; i++)
        t->consts[t->n_consts++] = mc_array_retain(info_at(&w, ci[i])->a);

    const int *si = w.steps.items;
    const int *sin = w.step_in.items;
    int scratch[64];
    for (size_t k = 0; k < w.steps.len; k++) {
        mc_array *a = info_at(&w, si[k])->a;
        int *in = a->n_inputs <= 64 ? scratch : mc_xmalloc((size_t)a->n_inputs * sizeof(int));
        if (!in)
            goto oom;
        for (int j = 0; j < a->n_inputs; j++)
            in[j] = slot_of(&w, *sin++, t->n_inputs, n_consts);
        mc_meta m;
        meta_of(&m, a);
        int bad = mc_step_init(&t->steps[k], a->prim, a->n_inputs, in, &m, a->params, a->params_size);
        if (in != scratch)
            mc_xfree(in);
        if (bad)
            goto oom;
        t->n_steps++;
    }
    for (int i = 0; i < n_out; i++)
        t->outputs[i] = slot_of(&w, *mc_ptrmap_get(&w.seen, outs[i]), t->n_inputs, n_consts);
    t->n_outputs = n_out;
    rc = 0;
    goto done;
oom:
    rc = oom();
done:
    mc_xfree(lazy);
    walk_free(&w);
    return rc;
}

/* Runs the body on placeholders; *outs receives owned references. */
static int run_body(mc_closure *fun, mc_array *const *ph, int n, mc_array ***outs, int *n_out)
{
    mlx_vector_array args = mc_vec_from(fn_compile, ph, (size_t)n);
    if (!args.ctx)
        return 1;
    mlx_vector_array res = {NULL};
    tl_trace_depth++;
    int rc = mc_closure_call(fun, &res, args);
    tl_trace_depth--;
    mlx_vector_array_free(args);
    if (rc) {
        mlx_vector_array_free(res);
        return 1;
    }
    size_t len = mc_vec_len(res);
    if (len > (size_t)MC_MAX_NDIM * 1024 * 1024) {
        mlx_vector_array_free(res);
        return mc_error("[%s] The function returned %zu arrays, too many.", fn_compile, len);
    }
    mc_array **o = mc_xmalloc((len ? len : 1) * sizeof *o);
    if (!o) {
        mlx_vector_array_free(res);
        return oom();
    }
    for (size_t i = 0; i < len; i++) {
        o[i] = mc_vec_at(res, i);
        if (!o[i]) {
            mc_xfree(o);
            mlx_vector_array_free(res);
            return mc_error("[%s] Output %zu of the compiled function is an empty array.", fn_compile, i);
        }
        mc_array_retain(o[i]);
    }
    mlx_vector_array_free(res);
    *outs = o;
    *n_out = (int)len;
    return 0;
}

int mc_trace_build(mc_trace **out, mc_closure *fun, mc_array *const *inputs, int n,
                   const mc_trace_key *key, int mode)
{
    mc_array **ph = NULL, **outs = NULL;
    int n_out = 0;
    mc_trace *t = mc_xcalloc(1, sizeof *t);
    if (!t)
        return oom();
    t->stream = key->stream;
    t->shapeless = key->shapeless;
    t->n_inputs = n;
    t->in_meta = mc_xmalloc((n ? (size_t)n : 1) * sizeof *t->in_meta);
    t->constants = mc_xmalloc((key->n_constants ? key->n_constants : 1) * sizeof(uint64_t));
    ph = mc_xcalloc(n ? (size_t)n : 1, sizeof *ph);
    if (!t->in_meta || !t->constants || !ph)
        goto oom;
    t->n_constants = key->n_constants;
    if (key->n_constants)
        memcpy(t->constants, key->constants, key->n_constants * sizeof(uint64_t));

    for (int i = 0; i < n; i++) {
        mc_placeholder_params p;
        memset(&p, 0, sizeof p); /* params are compared bytewise */
        meta_of(&t->in_meta[i], inputs[i]);
        p.meta = t->in_meta[i];
        p.index = i;
        ph[i] = mc_node_new_meta(fn_compile, MC_PRIM_PLACEHOLDER, &p.meta, NULL, 0, &p, sizeof p);
        if (!ph[i])
            goto fail;
    }

    mc_compile_count_trace();
    if (run_body(fun, ph, n, &outs, &n_out))
        goto fail;
    if (build_program(t, ph, outs, n_out, inputs, n))
        goto fail;
    if (mode != MLX_COMPILE_MODE_NO_SIMPLIFY && mc_trace_simplify(t))
        goto fail;
    if (mode == MLX_COMPILE_MODE_ENABLED && mc_trace_fuse(t))
        goto fail;

    for (int i = 0; i < n_out; i++)
        mc_array_release(outs[i]);
    for (int i = 0; i < n; i++)
        mc_array_release(ph[i]);
    mc_xfree(outs);
    mc_xfree(ph);
    *out = t;
    return 0;

oom:
    oom();
fail:
    for (int i = 0; i < n_out; i++)
        mc_array_release(outs[i]);
    for (int i = 0; ph && i < n; i++)
        mc_array_release(ph[i]);
    mc_xfree(outs);
    mc_xfree(ph);
    mc_trace_free(t);
    return 1;
}
