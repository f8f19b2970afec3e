/* Building blocks of the elementwise ops: one-node unary and binary
 * constructors, and a scope for ops that MLX composes from several nodes
 * (round with decimals, isclose, nan_to_num, divmod...).
 *
 * A scope holds a reference to every node built in it, so a composed op
 * writes its steps one after another without a cleanup ladder per step:
 * once a step has failed (and reported), every later step returns NULL
 * without doing or reporting anything, and mc_ew_end releases everything.
 * So an op reports one message, whichever step fails. */
#ifndef MC_OPS_EW_H
#define MC_OPS_EW_H

#include "ops/op_util.h"

/* isclose, the largest composition, builds about 40 nodes */
enum { MC_EW_MAX_HELD = 96 };

typedef struct mc_ew {
    const char *fn; /* the mlx-c op being built, for messages */
    bool failed;    /* a step failed and reported: later steps do nothing */
    int n;
    mc_array *held[MC_EW_MAX_HELD];
} mc_ew;

void mc_ew_begin(mc_ew *s, const char *fn);
/* Releases every node the scope holds. */
void mc_ew_end(mc_ew *s);
/* Stores r (held by the scope, may be NULL) into *res with a reference of
 * its own, then ends the scope. Returns 0, or 1 if r is NULL. */
int mc_ew_finish(mc_ew *s, mlx_array *res, mc_array *r);

/* Every constructor below returns an array the scope holds (the caller
 * does not release it), or NULL: an error was reported, or an input was
 * NULL (then nothing more is reported). */

/* Takes over one reference of a (NULL passes through). */
mc_array *mc_ew_hold(mc_ew *s, mc_array *a);
/* a converted to dtype (a itself if it has it). */
mc_array *mc_ew_astype(mc_ew *s, mc_array *a, mlx_dtype dtype);
/* A Unary node of function op on a, as is (no conversion). */
mc_array *mc_ew_unary(mc_ew *s, mc_unary_op op, mc_array *a);
/* A Binary node of function op on a and b converted to dtype. */
mc_array *mc_ew_binary(mc_ew *s, mc_binary_op op, mc_array *a, mc_array *b, mlx_dtype dtype);
/* As mc_ew_binary with dtype = promote(a, b) (at least float if to_float). */
mc_array *mc_ew_promoted(mc_ew *s, mc_binary_op op, mc_array *a, mc_array *b, bool to_float);
/* A 0-d array of dtype holding v converted as astype converts a float64. */
mc_array *mc_ew_scalar(mc_ew *s, double v, mlx_dtype dtype);
/* v of dtype broadcast to like's shape (a view of one element: like is
 * neither read nor evaluated). */
mc_array *mc_ew_full_like(mc_ew *s, double v, mlx_dtype dtype, const mc_array *like);
/* where(cond, x, y): cond bool, x and y of one dtype; shapes broadcast. */
mc_array *mc_ew_where(mc_ew *s, mc_array *cond, mc_array *x, mc_array *y);

/* isnan/isinf/isfinite/isposinf/isneginf (op) of x. Integer and bool
 * arrays hold no NaN or infinity: MLX answers with a constant of x's shape
 * (true for isfinite) without reading x. */
mc_array *mc_ew_float_class(mc_ew *s, mc_unary_op op, mc_array *x);

/* The argument of an op, or NULL with "[fn] ... empty array handle" reported. */
mc_array *mc_ew_arg(mc_ew *s, mlx_array a, const char *name);

/* Begins the scope of op fn and reads its arguments: checks res, then a
 * (and b). Returns 0, or 1 with one error reported (the scope then holds
 * nothing and needs no end). */
int mc_ew_args1(mc_ew *s, const char *fn, const void *res, mlx_array a, mc_array **x);
int mc_ew_args2(mc_ew *s, const char *fn, const void *res, mlx_array a, mlx_array b, mc_array **x,
                mc_array **y);

/* MLX's "integer or bool" category test (issubdtype(t, integer) || t == bool). */
static inline bool mc_ew_is_int_or_bool(mlx_dtype t)
{
    return t == MLX_BOOL || mc_dtype_is_integer(t);
}

#endif
