/* Owns mlx-c's compile.h: compiled closures, the compile mode, and the
 * process-wide erase and clear.
 *
 * A compiled closure is an mc_closure whose payload is a heap record
 * (mc_compiled) holding the user's closure. Its calls look up the calling
 * thread's cache by fun_id: for mlx_compile, fun_id is the record's own
 * address; for mlx_detail_compile, the caller's value. When the last
 * reference to a closure made by mlx_compile goes, the record's destructor
 * erases fun_id from every thread's cache and only then frees the record,
 * so the address cannot come back as a new closure's fun_id while traces
 * are still keyed by it (invariant 4). */
#include <stdlib.h>
#include <string.h>

#include "compile/compile_internal.h"
#include "handles/stream.h"
#include "handles/vector.h"
#include "mlx/c/compile.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

typedef struct mc_compiled {
    mc_closure *fun;     /* the user's closure (a reference) */
    uintptr_t fun_id;
    bool owns_id;        /* erase fun_id everywhere when the record dies */
    bool shapeless;
    size_t n_constants;
    uint64_t constants[]; /* n_constants values */
} mc_compiled;

/* ---- mode ---- */

enum { MODE_UNSET = -1 };
static atomic_int compile_mode = MODE_UNSET;

int mc_compile_mode(void)
{
    int m = atomic_load_explicit(&compile_mode, memory_order_relaxed);
    if (m != MODE_UNSET)
        return m;
    /* First use: MLX reads MLX_DISABLE_COMPILE once. A concurrent set wins. */
    int init = getenv("MLX_DISABLE_COMPILE") ? MLX_COMPILE_MODE_DISABLED : MLX_COMPILE_MODE_ENABLED;
    int expect = MODE_UNSET;
    atomic_compare_exchange_strong(&compile_mode, &expect, init);
    return atomic_load_explicit(&compile_mode, memory_order_relaxed);
}

int mlx_set_compile_mode(mlx_compile_mode mode)
{
    if ((int)mode < MLX_COMPILE_MODE_DISABLED || (int)mode > MLX_COMPILE_MODE_ENABLED)
        return mc_error("[set_compile_mode] Unknown compile mode %d (expected 0 to 3).", (int)mode);
    atomic_store_explicit(&compile_mode, (int)mode, memory_order_relaxed);
    return 0;
}

int mlx_disable_compile(void) { return mlx_set_compile_mode(MLX_COMPILE_MODE_DISABLED); }

int mlx_enable_compile(void) { return mlx_set_compile_mode(MLX_COMPILE_MODE_ENABLED); }

/* ---- erase and clear ---- */

int mlx_detail_compile_erase(uintptr_t fun_id)
{
    mc_cache_erase(fun_id);
    return 0;
}

int mlx_detail_compile_clear_cache(void)
{
    mc_cache_clear();
    return 0;
}

/* ---- calling a compiled closure ---- */

static const char fn_compile[] = "compile";

/* Stores outs[0..n) (references taken over) as the call's result. */
static int store_outputs(mlx_vector_array *res, mc_array **outs, int n)
{
    int rc = mc_vec_assign(fn_compile, res, outs, (size_t)n);
    for (int i = 0; i < n; i++)
        mc_array_release(outs[i]);
    return rc;
}

static int compiled_call(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    mc_compiled *rec = payload;
    int mode = mc_compile_mode();
    /* Inside another trace the body is traced through (MLX does the same
     * when its inputs are tracers); with compile off it just runs. */
    if (mode == MLX_COMPILE_MODE_DISABLED || mc_compile_tracing())
        return mc_closure_call(rec->fun, res, in);

    size_t len = mc_vec_len(in);
    if (len > (size_t)INT32_MAX)
        return mc_error("[%s] Too many inputs (%zu).", fn_compile, len);
    int n = (int)len;
    mc_array **inputs = mc_xmalloc((len ? len : 1) * sizeof *inputs);
    if (!inputs)
        return mc_error_oom(fn_compile, len * sizeof *inputs);
    for (int i = 0; i < n; i++) {
        inputs[i] = mc_vec_at(in, (size_t)i);
        if (!inputs[i]) {
            mc_xfree(inputs);
            return mc_error("[%s] Input %d is an empty array.", fn_compile, i);
        }
    }

    mc_trace_key key = {
        .stream = mc_default_stream_index(),
        .shapeless = rec->shapeless,
        .constants = rec->constants,
        .n_constants = rec->n_constants,
    };
    int rc = 1;
    mc_array **outs = NULL;
    /* Holding e keeps the trace alive through the replay even if another
     * thread erases or clears meanwhile (invariant 5). */
    mc_entries *e = mc_cache_acquire(rec->fun_id, fn_compile);
    if (!e)
        goto done;
    mc_trace *t = NULL;
    mc_list *it;
    mc_list_foreach(it, &e->traces)
    {
        mc_trace *c = mc_list_entry(it, mc_trace, link);
        if (mc_trace_matches(c, inputs, n, &key)) {
            t = c;
            break;
        }
    }
    if (!t) {
        if (mc_trace_build(&t, rec->fun, inputs, n, &key, mode)) {
            mc_cache_forget_if_empty(e); /* invariant 6 */
            goto done;
        }
        mc_entries_add(e, t);
    }
    outs = mc_xmalloc((t->n_outputs ? (size_t)t->n_outputs : 1) * sizeof *outs);
    if (!outs) {
        mc_error_oom(fn_compile, (size_t)t->n_outputs * sizeof *outs);
        goto done;
    }
    if (mc_trace_replay(t, inputs, n, outs))
        goto done;
    rc = store_outputs(res, outs, t->n_outputs);
done:
    mc_xfree(outs);
    mc_xfree(inputs);
    mc_entries_release(e);
    return rc;
}

/* ---- making compiled closures ---- */

/* The record's destructor: runs when the compiled closure's last reference
 * goes, outside any library lock. */
static void compiled_free(void *payload)
{
    mc_compiled *rec = payload;
    if (rec->owns_id)
        mc_cache_erase(rec->fun_id);
    mc_closure_release(rec->fun);
    mc_xfree(rec);
}

/* Replaces what *res refers to by c (a reference taken over). */
static void store_closure(mlx_closure *res, mc_closure *c)
{
    mc_closure *old = res->ctx;
    res->ctx = c;
    mc_closure_release(old);
}

static int make_compiled(mlx_closure *res, const mlx_closure fun, bool owns_id, uintptr_t fun_id,
                         bool shapeless, const uint64_t *constants, size_t n_constants, const char *fn)
{
    if (!res)
        return mc_error("[%s] The output closure pointer is NULL.", fn);
    mc_closure *f = fun.ctx;
    if (mc_compile_mode() == MLX_COMPILE_MODE_DISABLED) {
        /* MLX hands back the function itself. */
        store_closure(res, f ? mc_closure_retain(f) : NULL);
        return 0;
    }
    if (!f)
        return mc_error("[%s] Cannot compile a function without a target.", fn);
    if (n_constants && !constants)
        return mc_error("[%s] The constants pointer is NULL for %zu constants.", fn, n_constants);
    if (n_constants > (SIZE_MAX - sizeof(mc_compiled)) / sizeof(uint64_t))
        return mc_error("[%s] Too many constants (%zu).", fn, n_constants);

    mc_compiled *rec = mc_xmalloc(sizeof *rec + n_constants * sizeof(uint64_t));
    if (!rec)
        return mc_error_oom(fn, sizeof *rec);
    rec->fun = mc_closure_retain(f);
    rec->fun_id = owns_id ? (uintptr_t)rec : fun_id;
    rec->owns_id = owns_id;
    rec->shapeless = shapeless;
    rec->n_constants = n_constants;
    if (n_constants)
        memcpy(rec->constants, constants, n_constants * sizeof(uint64_t));
    /* On failure mc_closure_create runs compiled_free(rec) itself. */
    mc_closure *c = mc_closure_create(fn, NULL, compiled_call, NULL, rec, compiled_free);
    if (!c)
        return 1;
    store_closure(res, c);
    return 0;
}

int mlx_compile(mlx_closure *res, const mlx_closure fun, bool shapeless)
{
    return make_compiled(res, fun, true, 0, shapeless, NULL, 0, "compile");
}

int mlx_detail_compile(mlx_closure *res, const mlx_closure fun, uintptr_t fun_id, bool shapeless,
                       const uint64_t *constants, size_t constants_num)
{
    return make_compiled(res, fun, false, fun_id, shapeless, constants, constants_num, "compile");
}
