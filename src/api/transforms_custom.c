/* Owns mlx_custom_function, mlx_custom_vjp and mlx_checkpoint, as MLX's
 * custom_function (mlx/transforms.cpp): the closure they return runs the
 * function, puts its outputs behind stop_gradient and wraps each in a
 * CustomTransforms node (graph/prims_custom.c) whose rules are the
 * caller's closures, or, where one is not given, the transforms of the
 * function itself (so checkpoint's vjp runs the function again). */
#include <stdatomic.h>
#include <string.h>

#include "api/closure_run.h"
#include "graph/build.h"
#include "graph/prims_custom.h"
#include "handles/fnbox.h"
#include "handles/vector.h"
#include "mlx/c/transforms.h"
#include "runtime/alloc.h"
#include "runtime/error.h"

/* The function and its rules: the payload of the closure the transforms
 * return, and what each node's rules point at. Refcounted: the closure
 * holds one reference, and so does the holder array of every call's
 * nodes, so the rules outlive whichever goes last. */
typedef struct custom_fn {
    atomic_long refs;
    mc_closure *fun;
    mc_fnbox *vjp, *jvp; /* mlx_closure_custom, mlx_closure_custom_jvp; NULL: fun's own */
    mc_fnbox *vmap;      /* mlx_closure_custom_vmap; NULL: vmap of fun */
    mc_custom_rules rules;
    unsigned char holder_byte; /* the holder arrays' one element */
} custom_fn;

static void custom_fn_release(void *p)
{
    custom_fn *cf = p;
    if (atomic_fetch_sub_explicit(&cf->refs, 1, memory_order_acq_rel) != 1)
        return;
    mc_closure_release(cf->fun);
    mc_fnbox_release(cf->vjp);
    mc_fnbox_release(cf->jvp);
    mc_fnbox_release(cf->vmap);
    mc_xfree(cf);
}

/* Moves the arrays of a result list into a new array of n references,
 * checking there are n. */
static int take_arrays(mlx_vector_array v, mc_array **out, int n, const char *what, const char *fn)
{
    size_t len = mc_vec_len(v);
    if (len != (size_t)n)
        return mc_error("[%s] The %s returned %zu arrays; %d were expected.", fn, what, len, n);
    for (int i = 0; i < n; i++)
        out[i] = mc_array_retain(mc_vec_at(v, (size_t)i));
    return 0;
}

typedef int (*custom_vjp_fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                              const mlx_vector_array);
typedef int (*custom_vjp_fun_payload)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                                      const mlx_vector_array, void *);
typedef int (*custom_jvp_fun)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array, const int *,
                              size_t);
typedef int (*custom_jvp_fun_payload)(mlx_vector_array *, const mlx_vector_array, const mlx_vector_array,
                                      const int *, size_t, void *);
typedef int (*custom_vmap_fun)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *, size_t);
typedef int (*custom_vmap_fun_payload)(mlx_vector_array *, mlx_vector_int *, const mlx_vector_array, const int *,
                                       size_t, void *);

/* A custom rule returned rc != 0: reported unless an op inside it already
 * reported why (one failure, one message). */
static int user_failed(unsigned long serial_before, const char *which, int rc, const char *fn)
{
    if (mc_error_serial() == serial_before)
        mc_error("[%s] The custom %s function failed (it returned %d).", fn, which, rc);
    return rc;
}

static int rules_vjp(void *ctx, mc_array *const *primals, int np, mc_array *const *cots, mc_array *const *outs,
                     int nout, mc_array **vjps, const char *fn)
{
    custom_fn *cf = ctx;
    if (!cf->vjp) {
        /* the function's own vjp, run again on the primals */
        int *argnums = mc_xmalloc((size_t)(np ? np : 1) * sizeof *argnums);
        if (!argnums)
            return mc_error_oom(fn, (size_t)np * sizeof *argnums);
        for (int i = 0; i < np; i++)
            argnums[i] = i;
        mc_closure_run run = {cf->fun, fn, false};
        mc_array **fouts;
        int fnout;
        int rc = mc_vjp(fn, mc_run_closure, &run, primals, np, cots, nout, argnums, np, &fouts, &fnout, vjps);
        mc_xfree(argnums);
        if (!rc)
            mc_ad_release_all(fouts, fnout);
        return rc;
    }
    /* each list is made only once the one before exists: one failure, one message */
    const mlx_vector_array none = {NULL};
    mlx_vector_array p = mc_vec_from(fn, primals, (size_t)np);
    mlx_vector_array c = p.ctx ? mc_vec_from(fn, cots, (size_t)nout) : none;
    mlx_vector_array o = c.ctx ? mc_vec_from(fn, outs, (size_t)nout) : none;
    mlx_vector_array res = o.ctx ? mlx_vector_array_new() : none;
    int rc = 1;
    if (res.ctx) {
        mc_fnbox *b = cf->vjp;
        unsigned long serial = mc_error_serial();
        rc = b->with_payload ? ((custom_vjp_fun_payload)b->fun)(&res, p, c, o, b->payload)
                             : ((custom_vjp_fun)b->fun)(&res, p, c, o);
        rc = rc ? user_failed(serial, "vjp", rc, fn) : take_arrays(res, vjps, np, "custom vjp function", fn);
    }
    mlx_vector_array bufs[4] = {p, c, o, res};
    for (int i = 0; i < 4; i++)
        mlx_vector_array_free(bufs[i]);
    return rc;
}

static int rules_jvp(void *ctx, mc_array *const *primals, int np, mc_array *const *tans, const int *argnums, int na,
                     mc_array **jvps, int nout, const char *fn)
{
    custom_fn *cf = ctx;
    if (!cf->jvp) {
        /* the function's own jvp, with zero tangents for the other primals */
        mc_array **all = mc_xcalloc((size_t)(np ? np : 1), sizeof *all);
        if (!all)
            return mc_error_oom(fn, (size_t)np * sizeof *all);
        int rc = 0;
        for (int i = 0, k = 0; i < np && !rc; i++) {
            if (k < na && argnums[k] == i) {
                all[i] = mc_array_retain(tans[k++]);
            } else {
                mc_gb s;
                mc_gb_begin(&s, fn);
                all[i] = mc_gb_finish_ref(&s, mc_gb_zeros_like(&s, primals[i]));
                rc = all[i] ? 0 : 1;
            }
        }
        mc_closure_run run = {cf->fun, fn, false};
        mc_array **fouts, **fjvps;
        int fnout;
        if (!rc)
            rc = mc_jvp(fn, mc_run_closure, &run, primals, all, np, &fouts, &fnout, &fjvps);
        if (!rc) {
            if (fnout != nout) {
                rc = mc_error("[%s] The function returned %d outputs, %d before.", fn, fnout, nout);
            } else {
                for (int j = 0; j < nout; j++)
                    jvps[j] = mc_array_retain(fjvps[j]);
            }
            mc_ad_release_all(fjvps, fnout);
            mc_ad_release_all(fouts, fnout);
        }
        mc_ad_release_all(all, np);
        return rc;
    }
    const mlx_vector_array none = {NULL};
    mlx_vector_array p = mc_vec_from(fn, primals, (size_t)np);
    mlx_vector_array t = p.ctx ? mc_vec_from(fn, tans, (size_t)na) : none;
    mlx_vector_array res = t.ctx ? mlx_vector_array_new() : none;
    int rc = 1;
    if (res.ctx) {
        mc_fnbox *b = cf->jvp;
        unsigned long serial = mc_error_serial();
        rc = b->with_payload ? ((custom_jvp_fun_payload)b->fun)(&res, p, t, argnums, (size_t)na, b->payload)
                             : ((custom_jvp_fun)b->fun)(&res, p, t, argnums, (size_t)na);
        rc = rc ? user_failed(serial, "jvp", rc, fn) : take_arrays(res, jvps, nout, "custom jvp function", fn);
    }
    mlx_vector_array_free(p);
    mlx_vector_array_free(t);
    mlx_vector_array_free(res);
    return rc;
}

/* The caller's vmap rule (only set when one was given). */
static int rules_vmap(void *ctx, mc_array *const *primals, const int *axes, int np, mc_array **outs, int *out_axes,
                      int nout, const char *fn)
{
    custom_fn *cf = ctx;
    mlx_vector_array p = mc_vec_from(fn, primals, (size_t)np), res = mlx_vector_array_new();
    mlx_vector_int res_axes = mlx_vector_int_new();
    int rc = 1;
    if (p.ctx && res_axes.ctx) {
        mc_fnbox *b = cf->vmap;
        rc = b->with_payload ? ((custom_vmap_fun_payload)b->fun)(&res, &res_axes, p, axes, (size_t)np, b->payload)
                             : ((custom_vmap_fun)b->fun)(&res, &res_axes, p, axes, (size_t)np);
        size_t na = mlx_vector_int_size(res_axes);
        if (rc)
            rc = mc_error("[%s] The custom vmap function failed (it returned %d).", fn, rc);
        else if (na != (size_t)nout)
            rc = mc_error("[%s] The custom vmap function returned %zu axes; %d were expected.", fn, na, nout);
        else
            rc = take_arrays(res, outs, nout, "custom vmap function", fn);
        for (int j = 0; !rc && j < nout; j++) {
            int ax;
            mlx_vector_int_get(&ax, res_axes, (size_t)j);
            out_axes[j] = ax;
            if (ax < -1 || ax >= outs[j]->ndim) {
                rc = mc_error("[%s] The custom vmap function gave axis %d for an output with %d dimensions.", fn,
                              ax, outs[j]->ndim);
                for (int k = nout - 1; k >= 0; k--) {
                    mc_array_release(outs[k]);
                    outs[k] = NULL;
                }
            }
        }
    }
    mlx_vector_array_free(p);
    mlx_vector_array_free(res);
    mlx_vector_int_free(res_axes);
    return rc;
}

/* The closure's function: fun's outputs as CustomTransforms nodes. */
static int custom_apply(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    static const char fn[] = "custom_function";
    custom_fn *cf = payload;
    mlx_vector_array outs = {NULL}; /* the call gives it its list */
    if (mc_closure_call(cf->fun, &outs, in))
        return 1;
    size_t n_args = mc_vec_len(in), n_out = mc_vec_len(outs), n_in = n_args + n_out + 1;
    mc_array **inputs = mc_xcalloc(n_in, sizeof *inputs), **nodes = mc_xcalloc(n_out ? n_out : 1, sizeof *nodes);
    mlx_array holder = {NULL};
    int rc = 1;
    if (!inputs || !nodes) {
        mc_error_oom(fn, n_in * sizeof *inputs);
        goto done;
    }
    if (n_out == 0) {
        mc_error("[%s] The function returned no outputs.", fn);
        goto done;
    }
    /* the holder keeps the rules alive as long as a node needs them */
    atomic_fetch_add_explicit(&cf->refs, 1, memory_order_relaxed);
    holder = mlx_array_new_data_managed_payload(&cf->holder_byte, NULL, 0, MLX_UINT8, cf, custom_fn_release);
    if (!holder.ctx) {
        custom_fn_release(cf);
        goto done;
    }
    for (size_t i = 0; i < n_args; i++)
        inputs[i] = mc_vec_at(in, i);
    for (size_t j = 0; j < n_out; j++) {
        mc_array *o = mc_vec_at(outs, j);
        inputs[n_args + j] = mc_node_new(fn, MC_PRIM_STOP_GRADIENT, &o, 1, NULL, 0);
        if (!inputs[n_args + j])
            goto done;
    }
    inputs[n_in - 1] = holder.ctx;
    for (size_t j = 0; j < n_out; j++) {
        mc_custom_params p = {(int)n_args, (int)n_out, (int)j, &cf->rules};
        nodes[j] = mc_node_new(fn, MC_PRIM_CUSTOM, inputs, (int)n_in, &p, sizeof p);
        if (!nodes[j])
            goto done;
    }
    rc = mc_vec_assign(fn, res, nodes, n_out);
done:
    for (size_t j = n_out; nodes && j > 0; j--)
        mc_array_release(nodes[j - 1]);
    for (size_t j = n_out; inputs && j > 0; j--)
        mc_array_release(inputs[n_args + j - 1]);
    mlx_array_free(holder);
    mc_xfree(nodes);
    mc_xfree(inputs);
    mlx_vector_array_free(outs);
    return rc;
}

/* Builds the closure; `force` makes one even with no rules (checkpoint). */
static int make_custom(mlx_closure *res, mlx_closure fun, mc_fnbox *vjp, mc_fnbox *jvp, mc_fnbox *vmap, bool force,
                       const char *fn)
{
    if (!res)
        return mc_error("[%s] The result pointer is NULL.", fn);
    if (!fun.ctx)
        return mc_error("[%s] Expected a non-empty mlx_closure (the handle's ctx is NULL).", fn);
    if (!vjp && !jvp && !vmap && !force)
        return mlx_closure_set(res, fun); /* MLX returns the function itself */
    custom_fn *cf = mc_xcalloc(1, sizeof *cf);
    if (!cf)
        return mc_error_oom(fn, sizeof *cf);
    atomic_init(&cf->refs, 1);
    cf->fun = mc_closure_retain(fun.ctx);
    cf->vjp = vjp ? mc_fnbox_retain(vjp) : NULL;
    cf->jvp = jvp ? mc_fnbox_retain(jvp) : NULL;
    cf->vmap = vmap ? mc_fnbox_retain(vmap) : NULL;
    cf->rules = (mc_custom_rules){rules_vjp, rules_jvp, cf, vmap ? rules_vmap : NULL};
    mlx_closure made = mlx_closure_new_func_payload(custom_apply, cf, custom_fn_release);
    if (!made.ctx)
        return 1;
    mlx_closure_free(*res);
    *res = made;
    return 0;
}

int mlx_custom_function(mlx_closure *res, const mlx_closure fun, const mlx_closure_custom fun_vjp,
                        const mlx_closure_custom_jvp fun_jvp, const mlx_closure_custom_vmap fun_vmap)
{
    return make_custom(res, fun, fun_vjp.ctx, fun_jvp.ctx, fun_vmap.ctx, false, "custom_function");
}

int mlx_custom_vjp(mlx_closure *res, const mlx_closure fun, const mlx_closure_custom fun_vjp)
{
    if (!fun_vjp.ctx)
        return mc_error("[custom_vjp] Expected a non-empty mlx_closure_custom (the handle's ctx is NULL).");
    return make_custom(res, fun, fun_vjp.ctx, NULL, NULL, false, "custom_vjp");
}

int mlx_checkpoint(mlx_closure *res, const mlx_closure fun)
{
    /* no rules: the vjp runs the function again (MLX's checkpoint) */
    return make_custom(res, fun, NULL, NULL, NULL, true, "checkpoint");
}
