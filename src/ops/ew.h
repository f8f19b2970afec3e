/* The ops-level parts of building elementwise ops in a scope (the scope
 * and its node constructors are graph/build.h's mc_gb): reading an op's
 * arguments into a scope, storing its result into a handle, and the
 * compositions several ops share. */
#ifndef MC_OPS_EW_H
#define MC_OPS_EW_H

#include "ops/op_util.h"

/* Stores r (held by the scope, may be NULL) into *res with a reference of
 * its own, then ends the scope. Returns 0, or 1 if r is NULL. */
int mc_ew_finish(mc_gb *s, mlx_array *res, mc_array *r);

/* isnan/isinf/isfinite/isposinf/isneginf (op) of x. Integer and bool
 * arrays hold no NaN or infinity: MLX answers with a constant of x's shape
 * (true for isfinite) without reading x. */
mc_array *mc_ew_float_class(mc_gb *s, mc_unary_op op, mc_array *x);

/* The argument of an op, or NULL with "[fn] ... empty array handle" reported. */
mc_array *mc_ew_arg(mc_gb *s, mlx_array a, const char *name);

/* Begins the scope of op fn and reads its arguments: checks res, then a
 * (and b). Returns 0, or 1 with one error reported (the scope then holds
 * nothing and needs no end). */
int mc_ew_args1(mc_gb *s, const char *fn, const void *res, mlx_array a, mc_array **x);
int mc_ew_args2(mc_gb *s, const char *fn, const void *res, mlx_array a, mlx_array b, mc_array **x,
                mc_array **y);

/* MLX's "integer or bool" category test (issubdtype(t, integer) || t == bool). */
static inline bool mc_ew_is_int_or_bool(mlx_dtype t)
{
    return t == MLX_BOOL || mc_dtype_is_integer(t);
}

#endif
