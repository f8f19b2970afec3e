/* Owns the driver of tracing: running a function body once on placeholder
 * inputs, then recording the graph it returns as a trace program
 * (record.c), simplifying (simplify.c) and fusing (fuse.c) it as the
 * compile mode asks. Also knows whether the calling thread is tracing. */
#include <string.h>

#include "compile/compile_internal.h"
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

static int oom(void) { return mc_error_oom(fn_compile, 0); }

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
        mc_meta_of(&t->in_meta[i], inputs[i]);
        p.meta = t->in_meta[i];
        p.index = i;
        ph[i] = mc_node_new_meta(fn_compile, MC_PRIM_PLACEHOLDER, &p.meta, NULL, 0, &p, sizeof p);
        if (!ph[i])
            goto fail;
    }

    mc_compile_count_trace();
    if (run_body(fun, ph, n, &outs, &n_out))
        goto fail;
    if (mc_trace_record(t, ph, outs, n_out, inputs, n))
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
