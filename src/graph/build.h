/* Building lazy nodes from descriptors: the constructors that op
 * constructors (src/ops) and the primitives' own derivative rules share.
 * Nothing here checks user arguments: callers pass valid axes, shapes and
 * dtypes, and `fn` names the mlx-c function being run, for messages.
 *
 * Two forms:
 *   mc_node_*  return a new reference (or the input itself, retained, when
 *              the node would be a no-op, as MLX returns its input), or
 *              NULL with one error reported;
 *   mc_gb_*    build inside a scope (mc_gb) that holds every node made in
 *              it, so a rule or a composed op writes its steps one after
 *              another: once a step has failed (and reported), every later
 *              step returns NULL without doing or reporting anything, and
 *              mc_gb_end releases everything. The scope reports one message
 *              whichever step fails. */
#ifndef MC_GRAPH_BUILD_H
#define MC_GRAPH_BUILD_H

#include <stdbool.h>

#include "graph/primitive.h"
#include "simd/simd.h"

/* ---- single nodes ---- */

/* a converted to dtype. */
mc_array *mc_node_astype(mc_array *a, mlx_dtype dtype, const char *fn);
/* A shape-view node (Reshape, Transpose, Broadcast) with dims as params. */
mc_array *mc_node_dims(int prim, mc_array *a, int ndim, const int *dims, const char *fn);
/* a broadcast to shape (a valid broadcast of a's shape). */
mc_array *mc_node_broadcast(mc_array *a, int ndim, const int *shape, const char *fn);
/* a reshaped to shape (no -1); reports a size mismatch. */
mc_array *mc_node_reshape(mc_array *a, int ndim, const int *shape, const char *fn);
/* a transposed by perm (a permutation of a's axes). */
mc_array *mc_node_transpose(mc_array *a, const int *perm, const char *fn);
/* Size-1 axes inserted at (squeezed from) the sorted, normalised axes of
 * the result (of a). */
mc_array *mc_node_expand_dims(mc_array *a, const int *axes, int n, const char *fn);
mc_array *mc_node_squeeze(mc_array *a, const int *axes, int n, const char *fn);
/* A Reduce node of kind (mc_reduce_kind) over the sorted axes, reduced
 * dims kept with size 1. */
mc_array *mc_node_reduce(mc_array *a, int kind, int ddof, const int *sorted, int n, const char *fn);

/* A node of `node`'s primitive and params on other inputs (n of them). */
mc_array *mc_node_like(const mc_array *node, mc_array *const *inputs, int n, const char *fn);

/* ---- rules shared by primitives ---- */

/* The jvp of a primitive linear in its one input (views, slices, copies):
 * the primitive itself applied to the tangent. */
mc_array *mc_jvp_linear(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn);
/* The vjp of a primitive that only changes its input's shape (Reshape,
 * Flatten, Unflatten, ExpandDims, Squeeze): the cotangent reshaped back. */
int mc_vjp_reshape_back(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs,
                        const char *fn);

/* Zeros for every input asked for (vjp) or for the output (jvp): the rules
 * of primitives whose output does not vary smoothly with their inputs
 * (ArgReduce, NumberOfElements) and of StopGradient. */
int mc_vjp_zeros(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn);
mc_array *mc_jvp_zeros(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn);

/* The rules of a primitive MLX gives no derivative (its Primitive::vjp
 * and ::jvp defaults, and the few it has not written yet): report MLX's
 * "[Primitive::vjp] Not implemented for NAME." (::jvp for the jvp) with
 * the node's primitive name and fail. */
int mc_vjp_none(mc_array **vjps, mc_array *node, mc_array *cot, const int *argnums, int nargs, const char *fn);
mc_array *mc_jvp_none(mc_array *node, mc_array *const *tans, const int *argnums, int nargs, const char *fn);

/* ---- a scope of nodes ---- */

/* MLX's isclose, the largest composition, builds about 40 nodes. */
enum { MC_GB_MAX_HELD = 96 };

typedef struct mc_gb {
    const char *fn; /* the mlx-c function being run, for messages */
    bool failed;    /* a step failed and reported: later steps do nothing */
    int n;
    mc_array *held[MC_GB_MAX_HELD];
} mc_gb;

void mc_gb_begin(mc_gb *s, const char *fn);
/* Releases every node the scope holds. */
void mc_gb_end(mc_gb *s);
/* A reference of the caller's own to r (held by the scope, may be NULL),
 * then ends the scope. Returns r, or NULL if r is NULL or a step failed. */
mc_array *mc_gb_finish_ref(mc_gb *s, mc_array *r);

struct mc_gb;
/* Ends a rule's scope, storing a reference to g (held by s) as vjps[k].
 * On failure releases vjps[0..k) too and returns 1, so a vjp rule
 * looping over its argnums stores nothing unless all succeed. */
int mc_vjp_store(mc_array **vjps, int k, struct mc_gb *s, mc_array *g);

/* Every constructor below returns an array the scope holds (the caller
 * does not release it), or NULL: an error was reported, or an input was
 * NULL (then nothing more is reported). */

/* Takes over one reference of a (NULL marks the scope failed). */
mc_array *mc_gb_hold(mc_gb *s, mc_array *a);
/* a converted to dtype (a itself if it has it). */
mc_array *mc_gb_astype(mc_gb *s, mc_array *a, mlx_dtype dtype);
/* A Unary node of function op on a, as is (no conversion). */
mc_array *mc_gb_unary(mc_gb *s, mc_unary_op op, mc_array *a);
/* A Binary node of function op on a and b converted to dtype. */
mc_array *mc_gb_binary(mc_gb *s, mc_binary_op op, mc_array *a, mc_array *b, mlx_dtype dtype);
/* As mc_gb_binary with dtype = promote(a, b) (at least float if to_float). */
mc_array *mc_gb_promoted(mc_gb *s, mc_binary_op op, mc_array *a, mc_array *b, bool to_float);
/* Binary op on a and b in a's dtype: the form derivative rules use, where
 * every operand already has the primal's dtype. */
mc_array *mc_gb_op(mc_gb *s, mc_binary_op op, mc_array *a, mc_array *b);
/* A 0-d array of dtype holding v converted as astype converts a float64. */
mc_array *mc_gb_scalar(mc_gb *s, double v, mlx_dtype dtype);
/* v of dtype broadcast to like's shape (a view of one element: like is
 * neither read nor evaluated). */
mc_array *mc_gb_full_like(mc_gb *s, double v, mlx_dtype dtype, const mc_array *like);
/* Zeros of like's shape and dtype. */
mc_array *mc_gb_zeros_like(mc_gb *s, const mc_array *like);
/* where(cond, x, y): cond bool, x and y of one dtype; shapes broadcast. */
mc_array *mc_gb_where(mc_gb *s, mc_array *cond, mc_array *x, mc_array *y);
/* The mc_node_* builders, held by the scope. */
mc_array *mc_gb_broadcast(mc_gb *s, mc_array *a, int ndim, const int *shape);
mc_array *mc_gb_reshape(mc_gb *s, mc_array *a, int ndim, const int *shape);
mc_array *mc_gb_transpose(mc_gb *s, mc_array *a, const int *perm);
/* a broadcast to like's shape (like is not read). */
mc_array *mc_gb_broadcast_like(mc_gb *s, mc_array *a, const mc_array *like);
/* The complex64 scalar i (0 + 1i), for rules of complex functions. */
mc_array *mc_gb_imag_unit(mc_gb *s);
mc_array *mc_gb_squeeze(mc_gb *s, mc_array *a, const int *axes, int n);
/* A Matmul node of a and b (one inexact dtype; 1-D operands and batch
 * broadcasting as the Matmul primitive reads them). */
mc_array *mc_gb_matmul(mc_gb *s, mc_array *a, mc_array *b);
/* a with its last two axes swapped (a has at least 2). */
mc_array *mc_gb_swap_last(mc_gb *s, mc_array *a);
/* A node of node's primitive and params on other inputs, held. */
mc_array *mc_gb_like(mc_gb *s, const mc_array *node, mc_array *const *inputs, int n);
/* A Slice node of a with params p (mc_slice_params), and a SliceUpdate
 * node writing upd into src at p. */
mc_array *mc_gb_slice(mc_gb *s, mc_array *a, const void *p);
mc_array *mc_gb_slice_update(mc_gb *s, mc_array *src, mc_array *upd, const void *p);
/* A Scan node (op: mc_scan_op) of a along axis. */
mc_array *mc_gb_scan(mc_gb *s, mc_array *a, int op, int axis, bool reverse, bool inclusive);
/* A Reduce node of kind (mc_reduce_kind) over the sorted axes, dims kept. */
mc_array *mc_gb_reduce(mc_gb *s, mc_array *a, int kind, const int *sorted, int n);
/* The sum of a over the sorted axes (dims kept, size 1), in a's dtype. */
mc_array *mc_gb_sum(mc_gb *s, mc_array *a, const int *sorted, int n);
/* a summed down to shape: the inverse of broadcasting shape to a's shape
 * (leading axes summed away, size-1 axes summed with dims kept). */
mc_array *mc_gb_sum_to_shape(mc_gb *s, mc_array *a, int ndim, const int *shape);
/* int32 0, 1, ..., n-1 along axis of an ndim-d shape, 1 on every other
 * axis (broadcasts against an array with n elements on axis). */
mc_array *mc_gb_iota(mc_gb *s, int n, int axis, int ndim);
/* A Softmax node of floating a over the sorted axes. */
mc_array *mc_gb_softmax(mc_gb *s, mc_array *a, const int *sorted, int n, bool precise);
/* MLX's DivMod (its CPU kernel, C's operators): into out[0] the quotient
 * truncated toward zero, into out[1] the remainder with the dividend's
 * sign (fmod for floats), of x and y converted to t (not complex). Returns
 * non-zero if the scope has failed. */
int mc_gb_divmod(mc_gb *s, mc_array *x, mc_array *y, mlx_dtype t, mc_array *out[2]);
/* a padded with low zeros before and high after along axis. */
mc_array *mc_gb_pad_zeros(mc_gb *s, mc_array *a, int axis, int low, int high);

/* Zeros of the given shape and dtype (a broadcast view of one element). */
mc_array *mc_gb_zeros(mc_gb *s, int ndim, const int *shape, mlx_dtype dtype);
/* 0, 1, ..., count - 1 in dtype (an integer or floating type). */
mc_array *mc_gb_arange(mc_gb *s, int count, mlx_dtype dtype);
/* a as a row-contiguous array (a itself when evaluation finds it one). */
mc_array *mc_gb_contiguous(mc_gb *s, mc_array *a);
/* A GatherAxis node: take (along = 0) or take_along_axis (along = 1) of a
 * at idx on the normalised axis. */
mc_array *mc_gb_gather_axis(mc_gb *s, mc_array *a, mc_array *idx, int axis, int along);
/* A ScatterAxis node (reduce: mc_scatter_reduce) writing upd into a copy
 * of a at idx on the normalised axis; shapes as that primitive needs. */
mc_array *mc_gb_scatter_axis(mc_gb *s, mc_array *a, mc_array *idx, mc_array *upd, int axis, int reduce);
/* A Gather node of a at the nidx index arrays idx (one shape and integer
 * dtype) on distinct axes, blocks of slice_sizes (a's ndim entries). */
mc_array *mc_gb_gather(mc_gb *s, mc_array *a, mc_array *const *idx, int nidx, const int *axes,
                       const int *slice_sizes);
/* A Scatter node (reduce: mc_scatter_reduce) writing upd into a copy of a
 * at idx on axes; shapes as that primitive needs. */
mc_array *mc_gb_scatter(mc_gb *s, mc_array *a, mc_array *const *idx, int nidx, const int *axes, mc_array *upd,
                        int reduce);

#endif
