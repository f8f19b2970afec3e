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

static uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* An open-addressing set of slots, with caller-supplied hash and equality
 * kept outside: entries store the slot and its hash. */
typedef struct slot_set {
    int *slots;       /* -1 = empty */
    uint64_t *hashes;
    size_t cap;       /* power of two, at least twice the entries */
} slot_set;

static int set_init(slot_set *s, size_t n)
{
    s->cap = 16;
    while (s->cap < 2 * n + 2)
        s->cap *= 2;
    s->slots = mc_xmalloc(s->cap * sizeof *s->slots);
    s->hashes = mc_xmalloc(s->cap * sizeof *s->hashes);
    if (!s->slots || !s->hashes)
        return 1;
    for (size_t i = 0; i < s->cap; i++)
        s->slots[i] = -1;
    return 0;
}

static void set_free(slot_set *s)
{
    mc_xfree(s->slots);
    mc_xfree(s->hashes);
}

/* ---- scalar constants ---- */

static bool is_scalar_const(const mc_array *a)
{
    return a->ndim == 0 && mc_array_evaluated(a) && mc_dtype_size(a->dtype) <= 16;
}

static uint64_t scalar_hash(const mc_array *a)
{
    return hash_bytes(mix(0, (uint64_t)a->dtype), a->data, mc_dtype_size(a->dtype));
}

static bool scalar_equal(const mc_array *a, const mc_array *b)
{
    return a->dtype == b->dtype && !memcmp(a->data, b->data, mc_dtype_size(a->dtype));
}

/* ---- steps ---- */

static uint64_t step_hash(const mc_step *s)
{
    uint64_t h = mix(mix(0, (uint64_t)s->prim), (uint64_t)s->n_in);
    for (int i = 0; i < s->n_in; i++)
        h = mix(h, (uint64_t)s->in[i]);
    return hash_bytes(h, s->params, s->params_size);
}

static bool step_equal(const mc_step *a, const mc_step *b)
{
    if (a->prim != b->prim || a->n_in != b->n_in || a->params_size != b->params_size)
        return false;
    if (a->dtype != b->dtype || a->ndim != b->ndim)
        return false;
    if (a->n_in && memcmp(a->in, b->in, (size_t)a->n_in * sizeof(int)))
        return false;
    if (a->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof(int)))
        return false;
    return !a->params_size || !memcmp(a->params, b->params, a->params_size);
}

/* The dtype of the value in a slot. */
static mlx_dtype slot_dtype(const mc_trace *t, int slot)
{
    int ni = t->n_inputs, nc = t->n_consts;
    if (slot < ni)
        return t->in_meta[slot].dtype;
    if (slot < ni + nc)
        return t->consts[slot - ni]->dtype;
    return t->steps[slot - ni - nc].dtype;
}

/* MLX's no-ops: Copy (here: to the same dtype) and StopGradient. */
static bool is_noop(const mc_trace *t, const mc_step *s)
{
    if (s->n_in != 1 || slot_dtype(t, s->in[0]) != s->dtype)
        return false;
    return s->prim == MC_PRIM_COPY || s->prim == MC_PRIM_STOP_GRADIENT;
}

int mc_trace_simplify(mc_trace *t)
{
    int ni = t->n_inputs, nc = t->n_consts, ns = t->n_steps;
    size_t total = (size_t)ni + (size_t)nc + (size_t)ns;
    int *remap = mc_xmalloc((total ? total : 1) * sizeof *remap);
    unsigned char *flags = mc_xcalloc(total ? total : 1, 1); /* 1: output, 2: live */
    int *newslot = mc_xmalloc((total ? total : 1) * sizeof *newslot);
    slot_set consts = {0}, steps = {0};
    mc_array **nconsts = NULL;
    mc_step *nsteps = NULL;
    int rc;
    if (!remap || !flags || !newslot || set_init(&consts, (size_t)nc) ||
        set_init(&steps, (size_t)ns))
        goto oom;
    nconsts = mc_xmalloc((nc ? (size_t)nc : 1) * sizeof *nconsts);
    nsteps = mc_xmalloc((ns ? (size_t)ns : 1) * sizeof *nsteps);
    if (!nconsts || !nsteps)
        goto oom;
    /* Nothing allocates below, so t changes only once nothing can fail. */

    for (size_t i = 0; i < total; i++)
        remap[i] = (int)i;
    for (int o = 0; o < t->n_outputs; o++)
        flags[t->outputs[o]] |= 1;

    for (int c = 0; c < nc; c++) {
        const mc_array *a = t->consts[c];
        if (!is_scalar_const(a))
            continue;
        uint64_t h = scalar_hash(a);
        size_t k = h & (consts.cap - 1);
        for (; consts.slots[k] >= 0; k = (k + 1) & (consts.cap - 1)) {
            if (consts.hashes[k] == h && scalar_equal(t->consts[consts.slots[k] - ni], a))
                break;
        }
        if (consts.slots[k] >= 0) {
            remap[ni + c] = consts.slots[k];
        } else {
            consts.slots[k] = ni + c;
            consts.hashes[k] = h;
        }
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
        uint64_t h = step_hash(st);
        size_t k = h & (steps.cap - 1);
        for (; steps.slots[k] >= 0; k = (k + 1) & (steps.cap - 1)) {
            if (steps.hashes[k] == h && step_equal(&t->steps[steps.slots[k] - ni - nc], st))
                break;
        }
        if (steps.slots[k] >= 0) {
            if (!(flags[slot] & 1))
                remap[slot] = steps.slots[k];
        } else {
            steps.slots[k] = slot;
            steps.hashes[k] = h;
        }
    }
    for (int o = 0; o < t->n_outputs; o++) {
        t->outputs[o] = remap[t->outputs[o]];
        flags[t->outputs[o]] |= 2;
    }

    /* Liveness, from the outputs back (inputs of a step come before it). */
    for (int s = ns - 1; s >= 0; s--) {
        const mc_step *st = &t->steps[s];
        if (!(flags[ni + nc + s] & 2))
            continue;
        for (int i = 0; i < st->n_in; i++)
            flags[st->in[i]] |= 2;
    }

    /* Renumber, keeping live constants and steps in their order. */
    int kc = 0, ks = 0;
    for (int i = 0; i < ni; i++)
        newslot[i] = i;
    for (int c = 0; c < nc; c++)
        newslot[ni + c] = (flags[ni + c] & 2) ? kc++ : -1;
    for (int s = 0; s < ns; s++)
        newslot[ni + nc + s] = (flags[ni + nc + s] & 2) ? ks++ : -1;
    for (int c = 0; c < nc; c++) {
        if (newslot[ni + c] >= 0) {
            newslot[ni + c] += ni;
            nconsts[newslot[ni + c] - ni] = t->consts[c];
        }
    }
    for (int s = 0; s < ns; s++)
        if (newslot[ni + nc + s] >= 0)
            newslot[ni + nc + s] += ni + kc;

    for (int c = 0; c < nc; c++)
        if (newslot[ni + c] < 0)
            mc_array_release(t->consts[c]);
    for (int s = 0; s < ns; s++) {
        mc_step *st = &t->steps[s];
        if (newslot[ni + nc + s] < 0) {
            mc_step_clear(st);
            continue;
        }
        for (int i = 0; i < st->n_in; i++)
            st->in[i] = newslot[st->in[i]];
        nsteps[newslot[ni + nc + s] - ni - kc] = *st;
    }
    for (int o = 0; o < t->n_outputs; o++)
        t->outputs[o] = newslot[t->outputs[o]];
    mc_xfree(t->consts);
    mc_xfree(t->steps);
    t->consts = nconsts;
    t->steps = nsteps;
    t->n_consts = kc;
    t->n_steps = ks;
    nconsts = NULL;
    nsteps = NULL;
    rc = 0;
    goto done;

oom:
    rc = mc_error_oom("compile", total * sizeof(int));
done:
    mc_xfree(remap);
    mc_xfree(flags);
    mc_xfree(newslot);
    mc_xfree(nconsts);
    mc_xfree(nsteps);
    set_free(&consts);
    set_free(&steps);
    return rc;
}
