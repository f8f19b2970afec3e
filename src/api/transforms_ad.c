/* Owns mlx-c's autodiff entry points: mlx_vjp, mlx_jvp and
 * mlx_value_and_grad (with the closure it returns). The work is
 * src/transforms/; this file turns handles into arrays and back, and runs
 * the user's closure for the transforms. */
#include <stdlib.h>
#include <string.h>

#include "handles/fnbox.h"
#include "api/closure_run.h"
#include "graph/build.h"
#include "handles/closure.h"
#include "handles/vector.h"
#include "mlx/c/transforms.h"
#include "runtime/alloc.h"
#include "runtime/error.h"
#include "transforms/autodiff.h"

/* ---- running a closure for a transform ---- */

int mc_run_closure(void *ctx, mc_array *const *in, int n, mc_array ***outs, int *nout)
{
    mc_closure_run *r = ctx;
    mlx_vector_array args = mc_vec_from(r->fn, in, (size_t)n);
    if (!args.ctx)
        return 1;
    mlx_vector_array res = mlx_vector_array_new();
    if (!res.ctx) { /* reported: calling on would report a second time */
        mlx_vector_array_free(args);
        return 1;
    }
    int rc = mc_closure_call(r->c, &res, args);
    mlx_vector_array_free(args);
    size_t k = rc ? 0 : mc_vec_len(res);
    mc_array **o = rc ? NULL : mc_xmalloc((k ? k : 1) * sizeof *o);
    if (!rc && !o)
        rc = mc_error_oom(r->fn, k * sizeof *o);
    for (size_t i = 0; i < k && !rc; i++) {
        mc_array *a = mc_vec_at(res, i);
        o[i] = i > 0 && r->stop_rest ? mc_node_new(r->fn, MC_PRIM_STOP_GRADIENT, &a, 1, NULL, 0)
                                     : mc_array_retain(a);
        if (!o[i]) {
            mc_ad_release_all(o, (int)i);
            o = NULL;
            rc = 1;
        }
    }
    mlx_vector_array_free(res);
    if (rc)
        return 1;
    *outs = o;
    *nout = (int)k;
    return 0;
}

/* ---- handles ---- */

/* The arrays of a vector handle (borrowed), or NULL with an error; *n gets
 * their number. An empty list gives a non-NULL pointer. */
static mc_array *const *arrays_of(mlx_vector_array v, size_t *n, const char *fn)
{
    mc_vec *vec = mc_vec_checked(v, fn);
    if (!vec)
        return NULL;
    *n = vec->len;
    static mc_array *const none[1] = {NULL};
    return vec->len ? mc_vec_arrays(vec) : none;
}

/* Stores n arrays (references handed over, released in any case) into a
 * result vector handle. */
static int store_arrays(mlx_vector_array *res, mc_array **arrs, int n, const char *fn)
{
    mlx_vector_array v = mc_vec_from(fn, arrs, (size_t)n);
    mc_ad_release_all(arrs, n);
    if (!v.ctx)
        return 1;
    mc_vec_move(res, v);
    return 0;
}

static int check_results(const void *r0, const void *r1, const char *fn)
{
    return r0 && r1 ? 0 : mc_error("[%s] A result pointer is NULL.", fn);
}

static mc_closure *closure_of(mlx_closure fun, const char *fn)
{
    if (!fun.ctx)
        mc_error("[%s] Expected a non-empty mlx_closure (the handle's ctx is NULL).", fn);
    return fun.ctx;
}

/* Stores the outputs and the derivatives of a transform into the two
 * result handles; takes over both arrays of references. */
static int store_pair(mlx_vector_array *res_0, mlx_vector_array *res_1, mc_array **outs, int nout,
                      mc_array **ders, int nder, const char *fn)
{
    if (store_arrays(res_0, outs, nout, fn)) {
        mc_ad_release_all(ders, nder);
        return 1;
    }
    return store_arrays(res_1, ders, nder, fn);
}

int mlx_vjp(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun,
            const mlx_vector_array primals, const mlx_vector_array cotangents)
{
    static const char fn[] = "vjp";
    size_t np, nc;
    mc_array *const *p, *const *c;
    mc_closure *cl = NULL;
    if (check_results(res_0, res_1, fn) || !(cl = closure_of(fun, fn)) || !(p = arrays_of(primals, &np, fn)) ||
        !(c = arrays_of(cotangents, &nc, fn)))
        return 1;
    int *argnums = mc_xmalloc((np ? np : 1) * sizeof *argnums);
    mc_array **vjps = mc_xmalloc((np ? np : 1) * sizeof *vjps);
    mc_closure_run run = {cl, fn, false};
    mc_array **outs;
    int nout, rc = 1;
    if (!argnums || !vjps) {
        mc_error_oom(fn, np * sizeof *vjps);
    } else {
        for (size_t i = 0; i < np; i++)
            argnums[i] = (int)i;
        if (!mc_vjp(fn, mc_run_closure, &run, p, (int)np, c, (int)nc, argnums, (int)np, &outs, &nout, vjps)) {
            rc = store_pair(res_0, res_1, outs, nout, vjps, (int)np, fn);
            vjps = NULL; /* handed over */
        }
    }
    mc_xfree(argnums);
    mc_xfree(vjps);
    return rc;
}

int mlx_jvp(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun,
            const mlx_vector_array primals, const mlx_vector_array tangents)
{
    static const char fn[] = "jvp";
    size_t np, nt;
    mc_array *const *p, *const *t;
    mc_closure *cl = NULL;
    if (check_results(res_0, res_1, fn) || !(cl = closure_of(fun, fn)) || !(p = arrays_of(primals, &np, fn)) ||
        !(t = arrays_of(tangents, &nt, fn)))
        return 1;
    if (np != nt)
        return mc_error("[%s] Number of inputs (%zu) does not match number of tangents (%zu).", fn, np, nt);
    mc_closure_run run = {cl, fn, false};
    mc_array **outs, **jvps;
    int nout;
    if (mc_jvp(fn, mc_run_closure, &run, p, t, (int)np, &outs, &nout, &jvps))
        return 1;
    return store_pair(res_0, res_1, outs, nout, jvps, nout, fn);
}

/* ---- value_and_grad ---- */

/* What mlx_value_and_grad's closure holds. */
typedef struct value_and_grad {
    mc_closure *fun;
    size_t n;
    int argnums[]; /* as given; normalised per call, as MLX */
} value_and_grad;

static void value_and_grad_free(void *p)
{
    value_and_grad *vg = p;
    mc_closure_release(vg->fun);
    mc_xfree(vg);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* MLX's argnums rules, checked against the inputs of this call: negative
 * numbers count from the end, no repeats, each in range. Sorted into out. */
static int normalise_argnums(const value_and_grad *vg, size_t nin, int *out, const char *fn)
{
    for (size_t i = 0; i < vg->n; i++)
        out[i] = vg->argnums[i] < 0 ? vg->argnums[i] + (int)nin : vg->argnums[i];
    qsort(out, vg->n, sizeof *out, cmp_int);
    for (size_t i = 1; i < vg->n; i++)
        if (out[i] == out[i - 1])
            return mc_error("[%s] Repeat argument number not allowed in grad.", fn);
    if (out[0] < 0 || out[vg->n - 1] >= (int)nin)
        return mc_error("[%s] Invalid argument number for function with %zu inputs.", fn, nin);
    return 0;
}

static int value_and_grad_apply(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_vector_array input,
                                void *payload)
{
    static const char fn[] = "grad";
    value_and_grad *vg = payload;
    size_t np;
    mc_array *const *p = arrays_of(input, &np, fn);
    if (!p)
        return 1;
    int *argnums = mc_xmalloc(vg->n * sizeof *argnums);
    mc_array **grads = mc_xmalloc(vg->n * sizeof *grads);
    /* the incoming gradient is a float32 1; vjp casts it to the output's
     * dtype, as MLX */
    float one_f = 1.0f;
    mc_array *one = mc_array_scalar(fn, MLX_FLOAT32, &one_f);
    mc_closure_run run = {vg->fun, fn, true};
    mc_array **outs;
    int nout, rc = 1;
    if (!argnums || !grads || !one) {
        if (one)
            mc_error_oom(fn, vg->n * sizeof *grads);
    } else if (!normalise_argnums(vg, np, argnums, fn) &&
               !mc_vjp(fn, mc_run_closure, &run, p, (int)np, &one, 1, argnums, (int)vg->n, &outs, &nout, grads)) {
        rc = store_pair(res_0, res_1, outs, nout, grads, (int)vg->n, fn);
        grads = NULL; /* handed over */
    }
    mc_array_release(one);
    mc_xfree(argnums);
    mc_xfree(grads);
    return rc;
}

int mlx_value_and_grad(mlx_closure_value_and_grad *res, const mlx_closure fun, const int *argnums,
                       size_t argnums_num)
{
    static const char fn[] = "grad";
    if (!res)
        return mc_error("[%s] The result pointer is NULL.", fn);
    mc_closure *cl = closure_of(fun, fn);
    if (!cl)
        return 1;
    if (argnums_num == 0)
        return mc_error("[%s] Must specify at least one argument.", fn);
    if (!argnums)
        return mc_error("[%s] The argnums pointer is NULL for %zu arguments.", fn, argnums_num);
    value_and_grad *vg = mc_xmalloc(sizeof *vg + argnums_num * sizeof(int));
    if (!vg)
        return mc_error_oom(fn, sizeof *vg + argnums_num * sizeof(int));
    vg->fun = mc_closure_retain(cl);
    vg->n = argnums_num;
    memcpy(vg->argnums, argnums, argnums_num * sizeof(int));
    mlx_closure_value_and_grad made = mlx_closure_value_and_grad_new_func_payload(
        value_and_grad_apply, vg, value_and_grad_free);
    if (!made.ctx)
        return 1;
    mlx_closure_value_and_grad_free(*res);
    *res = made;
    return 0;
}
