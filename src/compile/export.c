/* Owns exporting and importing functions (export.h): the signatures of the
 * traces in a file, matching a call against them as MLX's FunctionTable
 * does, and the conversions between compile's trace programs and the
 * traces io/mlxfn.h reads and writes.
 *
 * An exported function is traced as compile traces (placeholders, the
 * graph recorded and simplified) but never fused: MLX must see its own
 * primitives. An imported one is held as trace programs with no cache key
 * beyond their inputs; calling it replays the matching one. */
#include <stdlib.h>
#include <string.h>

#include "compile/compile_internal.h"
#include "compile/export.h"
#include "handles/stream.h"
#include "io/mlxfn.h"
#include "mlx/c/compile.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* What a trace is found by: its inputs and the names of the keyword ones. */
typedef struct sig {
    int n_inputs;
    mc_meta *in_meta; /* owned (a trace's own for imported functions) */
    int n_kw;
    char **kw; /* owned */
} sig;

static void sig_clear(sig *s, bool own_meta)
{
    if (own_meta)
        mc_xfree(s->in_meta);
    for (int i = 0; i < s->n_kw; i++)
        mc_xfree(s->kw[i]);
    mc_xfree(s->kw);
    memset(s, 0, sizeof *s);
}

/* MLX's FunctionTable::match: every keyword name of the trace is given,
 * and the inputs (positional, then keyword ones by sorted name) agree in
 * dtype, ndim and, unless shapeless, shape. */
static bool sig_match(const sig *s, bool shapeless, const mc_meta *in, int n, const char *const *kw, int n_kw)
{
    if (s->n_inputs != n)
        return false;
    for (int i = 0; i < s->n_kw; i++) {
        bool found = false;
        for (int j = 0; j < n_kw && !found; j++)
            found = !strcmp(s->kw[i], kw[j]);
        if (!found)
            return false;
    }
    for (int i = 0; i < n; i++) {
        const mc_meta *a = &in[i], *b = &s->in_meta[i];
        if (a->dtype != b->dtype || a->ndim != b->ndim)
            return false;
        if (!shapeless && a->ndim && memcmp(a->shape, b->shape, sizeof(int) * (size_t)a->ndim))
            return false;
    }
    return true;
}

static int oom(const char *fn) { return mc_error_oom(fn, 0); }

static int copy_names(char ***dst, const char *const *src, int n, const char *fn)
{
    *dst = mc_xcalloc(n ? (size_t)n : 1, sizeof **dst);
    if (!*dst)
        return oom(fn);
    for (int i = 0; i < n; i++)
        if (!((*dst)[i] = mc_xstrdup(src[i])))
            return oom(fn);
    return 0;
}

/* ---- exporting ---- */

struct mc_exporter {
    mc_mlxfn_writer w;
    bool shapeless;
    int n_sigs;
    sig *sigs;
};

mc_exporter *mc_exporter_new(const char *path, bool shapeless, const char *fn)
{
    mc_exporter *x = mc_xcalloc(1, sizeof *x);
    if (!x) {
        oom(fn);
        return NULL;
    }
    if (mc_mlxfn_writer_open(&x->w, path, shapeless, fn)) {
        mc_xfree(x);
        return NULL;
    }
    x->shapeless = shapeless;
    return x;
}

void mc_exporter_free(mc_exporter *x)
{
    if (!x)
        return;
    mc_mlxfn_writer_close(&x->w);
    for (int i = 0; i < x->n_sigs; i++)
        sig_clear(&x->sigs[i], true);
    mc_xfree(x->sigs);
    mc_xfree(x);
}

/* The trace program as io/mlxfn.h writes it (pointers into t). */
static int write_trace(mc_exporter *x, const mc_trace *t, const char *const *kw, int n_kw, const char *fn)
{
    mc_mlxfn_node *nodes = mc_xmalloc((t->n_steps ? (size_t)t->n_steps : 1) * sizeof *nodes);
    mc_meta *metas = mc_xmalloc((t->n_steps ? (size_t)t->n_steps : 1) * sizeof *metas);
    int rc = 1;
    if (!nodes || !metas) {
        oom(fn);
        goto done;
    }
    for (int s = 0; s < t->n_steps; s++) {
        const mc_step *st = &t->steps[s];
        metas[s].dtype = st->dtype;
        metas[s].ndim = st->ndim;
        if (st->ndim)
            memcpy(metas[s].shape, st->shape, sizeof(int) * (size_t)st->ndim);
        nodes[s] = (mc_mlxfn_node){.prim = st->prim,
                                   .n_in = st->n_in,
                                   .in = st->in,
                                   .meta = &metas[s],
                                   .params = st->params,
                                   .params_size = st->params_size};
    }
    mc_mlxfn_trace tr = {.n_inputs = t->n_inputs,
                         .in_meta = t->in_meta,
                         .n_kw = n_kw,
                         .kw = kw,
                         .n_consts = t->n_consts,
                         .consts = t->consts,
                         .n_nodes = t->n_steps,
                         .nodes = nodes,
                         .n_outputs = t->n_outputs,
                         .outputs = t->outputs};
    rc = mc_mlxfn_write_trace(&x->w, &tr, fn);
done:
    mc_xfree(nodes);
    mc_xfree(metas);
    return rc;
}

int mc_exporter_add(mc_exporter *x, mc_closure *fun, mc_array *const *args, int n, const char *const *kw, int n_kw,
                    const char *fn)
{
    mc_meta *in_meta = mc_xmalloc((n ? (size_t)n : 1) * sizeof *in_meta);
    if (!in_meta)
        return oom(fn);
    for (int i = 0; i < n; i++)
        mc_meta_of(&in_meta[i], args[i]);
    for (int i = 0; i < x->n_sigs; i++) {
        if (sig_match(&x->sigs[i], x->shapeless, in_meta, n, kw, n_kw)) {
            mc_xfree(in_meta);
            return mc_error("[%s] Attempting to export a function twice with the same signature is not allowed.",
                            fn);
        }
    }
    sig *grown = mc_xrealloc(x->sigs, (size_t)(x->n_sigs + 1) * sizeof *grown);
    if (!grown) {
        mc_xfree(in_meta);
        return oom(fn);
    }
    x->sigs = grown;
    sig s = {.n_inputs = n, .in_meta = in_meta};
    mc_trace *t = NULL;
    mc_trace_key key = {.stream = mc_default_stream_index(), .shapeless = x->shapeless};
    int rc = 1;
    if (copy_names(&s.kw, kw, n_kw, fn)) {
        s.n_kw = n_kw; /* frees what was copied */
        goto done;
    }
    s.n_kw = n_kw;
    /* MLX traces, simplifies and writes its own primitives: no fusion */
    if (mc_trace_build(&t, fun, args, n, &key, MLX_COMPILE_MODE_NO_FUSE))
        goto done;
    if (write_trace(x, t, kw, n_kw, fn))
        goto done;
    x->sigs[x->n_sigs++] = s;
    rc = 0;
done:
    mc_trace_free(t);
    if (rc)
        sig_clear(&s, true);
    return rc;
}

/* ---- importing ---- */

struct mc_imported {
    bool shapeless;
    int n;
    sig *sigs; /* in_meta points into traces[i] */
    mc_trace **traces;
};

void mc_imported_free(mc_imported *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->n; i++) {
        sig_clear(&f->sigs[i], false);
        mc_trace_free(f->traces[i]);
    }
    mc_xfree(f->sigs);
    mc_xfree(f->traces);
    mc_xfree(f);
}

/* A trace program of one function read from a file: its graph recorded
 * as compile records a traced body's. */
static mc_trace *to_trace(const mc_mlxfn_fun *g, bool shapeless, const char *fn)
{
    mc_trace *t = mc_xcalloc(1, sizeof *t);
    if (!t) {
        oom(fn);
        return NULL;
    }
    t->stream = mc_default_stream_index();
    t->shapeless = shapeless;
    t->n_inputs = g->n_inputs;
    t->in_meta = mc_xmalloc((g->n_inputs ? (size_t)g->n_inputs : 1) * sizeof *t->in_meta);
    t->constants = mc_xmalloc(sizeof(uint64_t));
    if (!t->in_meta || !t->constants) {
        oom(fn);
        mc_trace_free(t);
        return NULL;
    }
    for (int i = 0; i < g->n_inputs; i++)
        mc_meta_of(&t->in_meta[i], g->inputs[i]);
    if (mc_trace_record(t, g->inputs, g->outputs, g->n_outputs, NULL, 0)) {
        mc_trace_free(t);
        return NULL;
    }
    return t;
}

mc_imported *mc_imported_load(const char *path, const char *fn)
{
    mc_mlxfn file;
    if (mc_mlxfn_load(&file, path, fn))
        return NULL;
    mc_imported *f = mc_xcalloc(1, sizeof *f);
    if (f) {
        f->sigs = mc_xcalloc(file.n_fun ? (size_t)file.n_fun : 1, sizeof *f->sigs);
        f->traces = mc_xcalloc(file.n_fun ? (size_t)file.n_fun : 1, sizeof *f->traces);
    }
    if (!f || !f->sigs || !f->traces) {
        oom(fn);
        goto fail;
    }
    f->shapeless = file.shapeless;
    for (int i = 0; i < file.n_fun; i++) {
        const mc_mlxfn_fun *g = &file.fun[i];
        mc_trace *t = to_trace(g, file.shapeless, fn);
        if (!t)
            goto fail;
        f->traces[f->n] = t;
        sig *s = &f->sigs[f->n++];
        s->n_inputs = t->n_inputs;
        s->in_meta = t->in_meta;
        if (copy_names(&s->kw, (const char *const *)g->kw, g->n_kw, fn)) {
            s->n_kw = g->n_kw;
            goto fail;
        }
        s->n_kw = g->n_kw;
    }
    mc_mlxfn_clear(&file);
    return f;
fail:
    mc_mlxfn_clear(&file);
    mc_imported_free(f);
    return NULL;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(**(const char *const *const *)a, **(const char *const *const *)b);
}

int mc_imported_call(const mc_imported *f, mc_array *const *args, int n, const mc_map *kwargs, mc_array ***outs,
                     int *n_out, const char *fn)
{
    size_t nk = kwargs ? kwargs->len : 0;
    size_t total = (size_t)n + nk;
    mc_array **in = mc_xmalloc((total ? total : 1) * sizeof *in);
    mc_meta *meta = mc_xmalloc((total ? total : 1) * sizeof *meta);
    char **keys = mc_xmalloc((nk ? nk : 1) * sizeof *keys);
    char ***order = mc_xmalloc((nk ? nk : 1) * sizeof *order);
    mc_array **res = NULL;
    int rc = 1;
    if (!in || !meta || !keys || !order) {
        oom(fn);
        goto done;
    }
    /* keyword inputs follow the positional ones in the order of their
     * names, as MLX's std::map orders them */
    for (size_t i = 0; i < nk; i++)
        order[i] = &kwargs->keys[i];
    qsort(order, nk, sizeof *order, cmp_key);
    for (int i = 0; i < n; i++)
        in[i] = args[i];
    for (size_t i = 0; i < nk; i++) {
        size_t k = (size_t)(order[i] - kwargs->keys);
        keys[i] = kwargs->keys[k];
        in[(size_t)n + i] = kwargs->arrs[k];
    }
    for (size_t i = 0; i < total; i++)
        mc_meta_of(&meta[i], in[i]);
    const mc_trace *t = NULL;
    for (int i = 0; i < f->n && !t; i++)
        if (total <= INT32_MAX &&
            sig_match(&f->sigs[i], f->shapeless, meta, (int)total, (const char *const *)keys, (int)nk))
            t = f->traces[i];
    if (!t) {
        mc_error("[%s] No imported function found which matches the given positional and keyword arguments "
                 "(%d positional and %zu keyword inputs; the file has %d function%s).",
                 fn, n, nk, f->n, f->n == 1 ? "" : "s");
        goto done;
    }
    res = mc_xmalloc((t->n_outputs ? (size_t)t->n_outputs : 1) * sizeof *res);
    if (!res) {
        oom(fn);
        goto done;
    }
    if (mc_trace_replay(t, in, (int)total, res))
        goto done;
    *outs = res;
    *n_out = t->n_outputs;
    res = NULL;
    rc = 0;
done:
    mc_xfree(res);
    mc_xfree(in);
    mc_xfree(meta);
    mc_xfree(keys);
    mc_xfree(order);
    return rc;
}
