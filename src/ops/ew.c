/* Owns the building blocks of the elementwise ops (ew.h): the scope of
 * intermediates and the node constructors every elementwise op uses. */
#include "graph/prims_binary.h"
#include "graph/prims_unary.h"
#include "ops/ew.h"

#include "runtime/error.h"

void mc_ew_begin(mc_ew *s, const char *fn)
{
    s->fn = fn;
    s->failed = false;
    s->n = 0;
}

void mc_ew_end(mc_ew *s)
{
    /* newest first: a later node holds references on earlier ones, so this
     * order frees each at its last release without deep chains */
    while (s->n > 0)
        mc_array_release(s->held[--s->n]);
}

int mc_ew_finish(mc_ew *s, mlx_array *res, mc_array *r)
{
    if (r)
        mc_array_retain(r);
    mc_ew_end(s);
    return r ? mc_op_store(res, r, s->fn) : 1;
}

mc_array *mc_ew_hold(mc_ew *s, mc_array *a)
{
    if (!a) {
        s->failed = true;
        return NULL;
    }
    if (s->n == MC_EW_MAX_HELD) {
        mc_array_release(a);
        s->failed = true;
        mc_error("[%s] Internal: too many intermediate arrays.", s->fn);
        return NULL;
    }
    s->held[s->n++] = a;
    return a;
}

mc_array *mc_ew_arg(mc_ew *s, mlx_array a, const char *name) { return mc_op_arg(a, s->fn, name); }

int mc_ew_args1(mc_ew *s, const char *fn, const void *res, mlx_array a, mc_array **x)
{
    mc_ew_begin(s, fn);
    if (mc_op_check_res(res, fn))
        return 1;
    *x = mc_op_arg(a, fn, "a");
    return *x ? 0 : 1;
}

int mc_ew_args2(mc_ew *s, const char *fn, const void *res, mlx_array a, mlx_array b, mc_array **x,
                mc_array **y)
{
    if (mc_ew_args1(s, fn, res, a, x))
        return 1;
    *y = mc_op_arg(b, fn, "b");
    return *y ? 0 : 1;
}

mc_array *mc_ew_astype(mc_ew *s, mc_array *a, mlx_dtype dtype)
{
    /* a is held by the scope or by the caller's handle, which outlives
     * the op: no reference is needed to hand it back */
    if (s->failed || !a)
        return NULL;
    if (a->dtype == dtype)
        return a;
    return mc_ew_hold(s, mc_op_astype(a, dtype, s->fn));
}

mc_array *mc_ew_unary(mc_ew *s, mc_unary_op op, mc_array *a)
{
    if (s->failed || !a)
        return NULL;
    mc_unary_params p = {op};
    return mc_ew_hold(s, mc_node_new(s->fn, MC_PRIM_UNARY, &a, 1, &p, sizeof p));
}

mc_array *mc_ew_binary(mc_ew *s, mc_binary_op op, mc_array *a, mc_array *b, mlx_dtype dtype)
{
    mc_array *in[2] = {mc_ew_astype(s, a, dtype), NULL};
    in[1] = mc_ew_astype(s, in[0] ? b : NULL, dtype);
    if (!in[1])
        return NULL;
    mc_binary_params p = {op};
    return mc_ew_hold(s, mc_node_new(s->fn, MC_PRIM_BINARY, in, 2, &p, sizeof p));
}

mc_array *mc_ew_promoted(mc_ew *s, mc_binary_op op, mc_array *a, mc_array *b, bool to_float)
{
    if (s->failed || !a || !b)
        return NULL;
    mlx_dtype t = mc_promote(a->dtype, b->dtype);
    return mc_ew_binary(s, op, a, b, to_float ? mc_at_least_float(t) : t);
}

mc_array *mc_ew_scalar(mc_ew *s, double v, mlx_dtype dtype)
{
    /* converted by the same kernel astype uses, so a constant of a
     * float16 or bool array rounds exactly as a converted array would */
    if (s->failed)
        return NULL;
    mc_convert_kernel k = mc_kernels()->convert[MLX_FLOAT64][dtype];
    if (!k) {
        s->failed = true;
        mc_error("[%s] Cannot make a %s constant.", s->fn, mc_dtype_name(dtype));
        return NULL;
    }
    unsigned char bytes[16];
    k(&v, bytes, 1);
    return mc_ew_hold(s, mc_array_scalar(s->fn, dtype, bytes));
}

mc_array *mc_ew_full_like(mc_ew *s, double v, mlx_dtype dtype, const mc_array *like)
{
    mc_array *c = like ? mc_ew_scalar(s, v, dtype) : NULL;
    if (!c)
        return NULL;
    return mc_ew_hold(s, mc_op_broadcast(c, like->ndim, like->shape, s->fn));
}

mc_array *mc_ew_where(mc_ew *s, mc_array *cond, mc_array *x, mc_array *y)
{
    if (s->failed || !cond || !x || !y)
        return NULL;
    mc_array *in[3] = {cond, x, y};
    return mc_ew_hold(s, mc_node_new(s->fn, MC_PRIM_WHERE, in, 3, NULL, 0));
}

mc_array *mc_ew_float_class(mc_ew *s, mc_unary_op op, mc_array *x)
{
    if (x && !mc_dtype_is_inexact(x->dtype))
        return mc_ew_full_like(s, op == MC_U_ISFINITE ? 1.0 : 0.0, MLX_BOOL, x);
    return mc_ew_unary(s, op, x);
}
