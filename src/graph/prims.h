/* Declarations of every primitive's infer/eval/print functions, grouped by
 * the prims_*.c file that defines them. Parameter structs live here too,
 * since ops (src/ops) build them and compile compares them. */
#ifndef MC_GRAPH_PRIMS_H
#define MC_GRAPH_PRIMS_H

#include "graph/primitive.h"
#include "simd/simd.h"

/* prims_placeholder.c */
int mc_placeholder_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_placeholder_eval(mc_array *out, mc_array *const *in, int n, const void *params);
typedef struct mc_placeholder_params {
    mc_meta meta; /* the traced input's dtype and shape */
    int index;    /* which input of the compiled function */
} mc_placeholder_params;

/* ---- lead: data movement, views, creation, elementwise runners ---- */

/* prims_copy.c: Astype and Copy (params: the target dtype) */
typedef struct mc_astype_params {
    mlx_dtype to;
} mc_astype_params;
int mc_astype_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_astype_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_view.c: Reshape, Transpose, Broadcast. Params carry ndim then
 * ndim ints; their size is mc_dims_params_size(ndim). */
typedef struct mc_dims_params {
    int ndim;
    int dims[MC_MAX_NDIM];
} mc_dims_params;
static inline size_t mc_dims_params_size(int ndim)
{
    return sizeof(int) * (size_t)(1 + ndim);
}
int mc_reshape_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_reshape_eval(mc_array *out, mc_array *const *in, int n, const void *params);
int mc_transpose_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_transpose_eval(mc_array *out, mc_array *const *in, int n, const void *params);
int mc_broadcast_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_broadcast_eval(mc_array *out, mc_array *const *in, int n, const void *params);
void mc_dims_print(FILE *f, const void *params);

/* prims_create.c: Arange (start + i * step, computed in float64 for
 * floating outputs and int64 for integer ones, as MLX) */
typedef struct mc_arange_params {
    double start, step;
    mlx_dtype dtype;
    int count;
} mc_arange_params;
int mc_arange_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_arange_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_binary.c / prims_unary.c: one primitive per family; params name
 * the function. Inputs of a binary node share a dtype but may differ in
 * shape: the output shape is their broadcast. */
typedef struct mc_binary_params {
    mc_binary_op op;
} mc_binary_params;
typedef struct mc_unary_params {
    mc_unary_op op;
} mc_unary_params;
int mc_binary_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_binary_eval(mc_array *out, mc_array *const *in, int n, const void *params);
const char *mc_binary_name(const void *params);
/* The output dtype of a binary function on inputs of dtype d. */
mlx_dtype mc_binary_out_dtype(mc_binary_op op, mlx_dtype d);

/* elementwise.c: running kernels over arrays, threaded when large. `out`
 * must have its meta set; these give it data (donating an input's buffer
 * when possible) and fill it. */
int mc_run_unary(mc_array *out, mc_array *in, mc_unary_kernel k, const char *fn);
int mc_run_binary(mc_array *out, mc_array *a, mc_array *b, const mc_binary_kernel k[MC_BINARY_CLASSES],
                  const char *fn);
/* The broadcast of two shapes into *out (ndim, shape), or an error naming
 * fn and both shapes. */
int mc_broadcast_shapes(int an, const int *as, int bn, const int *bs, int *out_ndim, int *out_shape,
                        const char *fn);
/* Strides of `in` viewed as broadcast to the out shape (0 on broadcast dims). */
void mc_broadcast_strides(const mc_array *in, int ndim, const int *shape, int64_t *strides);

/* ---- shape and indexing helper: views, layout copies, gathers ---- */

/* prims_view2.c: ExpandDims, Squeeze (params: the sorted, normalised axes:
 * positions in the output for ExpandDims, in the input for Squeeze) */
typedef struct mc_axes_params {
    int n;
    int axes[MC_MAX_NDIM];
} mc_axes_params;
int mc_expand_dims_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_expand_dims_eval(mc_array *out, mc_array *const *in, int n, const void *params);
int mc_squeeze_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_squeeze_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_view2.c: Flatten (axes start..end merged) and Unflatten (axis split
 * into shape); both evaluate as a reshape (a view of row-contiguous data). */
typedef struct mc_flatten_params {
    int start, end;
} mc_flatten_params;
typedef struct mc_unflatten_params {
    int axis;
    int n;
    int shape[MC_MAX_NDIM];
} mc_unflatten_params;
int mc_flatten_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_unflatten_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_reshape_like_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_view2.c: Slice (a view; negative steps give negative strides).
 * Params are the caller's start/stop/strides, normalised against the
 * input's shape by infer and eval (NumPy rules, as MLX's normalize_slice). */
typedef struct mc_slice_params {
    int ndim;
    int start[MC_MAX_NDIM];
    int stop[MC_MAX_NDIM];
    int strides[MC_MAX_NDIM];
} mc_slice_params;
/* Normalises a slice of `shape`: clamps starts into range (out_start),
 * computes the result shape; returns non-zero with "[fn] ..." reported for
 * a zero step. *neg is set if any step is negative. */
int mc_slice_normalize(int ndim, const int *shape, const mc_slice_params *p, int *out_start, int *out_shape,
                       bool *neg, const char *fn);
int mc_slice_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_slice_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_view2.c: AsStrided (a view of the row-contiguous input with the
 * given shape, element strides and offset; infer checks the view stays
 * inside the input) */
typedef struct mc_as_strided_params {
    int ndim;
    int shape[MC_MAX_NDIM];
    int64_t strides[MC_MAX_NDIM];
    int64_t offset;
} mc_as_strided_params;
int mc_as_strided_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_as_strided_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_view2.c: Diagonal (a view: the offset diagonal of axis1/axis2 as
 * the last axis, the other axes in order) */
typedef struct mc_diagonal_params {
    int offset, axis1, axis2;
} mc_diagonal_params;
int mc_diagonal_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_diagonal_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_view2.c: Contiguous (shares the input's buffer when it is already
 * row-contiguous, or column-contiguous if allowed, else copies) */
typedef struct mc_contiguous_params {
    int allow_col_major;
} mc_contiguous_params;
int mc_contiguous_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_contiguous_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_index.c: Concatenate (inputs of one dtype, equal shapes but on axis) */
typedef struct mc_concat_params {
    int axis;
} mc_concat_params;
int mc_concat_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_concat_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_index.c: SliceUpdate (inputs: src, update of the slice's shape and
 * src's dtype; params as Slice) */
int mc_slice_update_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_slice_update_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_index.c: Pad (constant; inputs: a and a one-element value of a's
 * dtype; axes normalised and distinct) */
typedef struct mc_pad_params {
    int n;
    int axes[MC_MAX_NDIM];
    int low[MC_MAX_NDIM];
    int high[MC_MAX_NDIM];
} mc_pad_params;
int mc_pad_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_pad_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_index.c: GatherAxis. take (along = 0): out shape is
 * a.shape[:axis] + indices.shape + a.shape[axis+1:]. take_along_axis
 * (along = 1): indices broadcast against a on every axis but `axis`.
 * Negative indices count from the end; indices still outside the axis are
 * clamped into it (never read outside a). */
typedef struct mc_gather_axis_params {
    int axis;
    int along;
} mc_gather_axis_params;
int mc_gather_axis_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_gather_axis_eval(mc_array *out, mc_array *const *in, int n, const void *params);
const char *mc_gather_axis_name(const void *params);

/* prims_index.c: NumberOfElements (a scalar of dtype: the product of the
 * input's sizes on axes, or its reciprocal; reads only the input's shape) */
typedef struct mc_numel_params {
    int n;
    int axes[MC_MAX_NDIM];
    int inverted;
    mlx_dtype dtype;
} mc_numel_params;
int mc_numel_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_numel_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* prims_select.c: Select (inputs: bool condition, x, y of one dtype; the
 * three broadcast together) */
int mc_select_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_select_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* ---- linear algebra: Matmul, AddMM (prims_matmul.c, BLAS in blas.c) ----
 * Inputs a (..., m, k) or (k), b (..., k, n) or (k), of one inexact dtype;
 * batch dims broadcast. A 1-D a or b has no m or n dim in the output.
 * AddMM takes a third input c (same dtype, real floating) that broadcasts
 * to the output, and computes alpha * a @ b + beta * c. */
typedef struct mc_addmm_params {
    float alpha, beta;
} mc_addmm_params;
/* The checks MLX makes first, with its messages: no 0-d operand, and the
 * inner dims agree. Returns 0 or reports naming fn. */
int mc_matmul_check_shapes(const mc_array *a, const mc_array *b, const char *fn);
int mc_matmul_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_matmul_eval(mc_array *out, mc_array *const *in, int n, const void *params);
int mc_addmm_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_addmm_eval(mc_array *out, mc_array *const *in, int n, const void *params);
void mc_addmm_print(FILE *f, const void *params);

/* ---- elementwise ops helper: Unary family, StopGradient (prims_unary.c) ----
 * A Unary node's input has the dtype its function runs in (ops convert
 * first); infer fails if the kernel table has no entry for it. */
int mc_unary_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_unary_eval(mc_array *out, mc_array *const *in, int n, const void *params);
const char *mc_unary_name(const void *params);
/* The output dtype of a unary function on an input of dtype d: bool for
 * logical_not and the isnan family, float32 for abs/real/imag of complex64. */
mlx_dtype mc_unary_out_dtype(mc_unary_op op, mlx_dtype d);
/* StopGradient: the input's values (a view of its buffer). */
int mc_stop_gradient_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_stop_gradient_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* ---- reductions and scans (prims_reduce.c, prims_reduce_fused.c,
 * prims_scan.c; layout planning in reduce_view.c) ----
 * Reduce, ArgReduce, LogSumExp and Softmax keep the reduced dims (size 1)
 * in their output; the ops squeeze them when keepdims is false. Axes are
 * normalised and sorted; params are zeroed before they are filled. */
typedef enum mc_reduce_kind {
    MC_RK_SUM,
    MC_RK_PROD,
    MC_RK_MAX,
    MC_RK_MIN,
    MC_RK_ALL,
    MC_RK_ANY,
    MC_RK_MEAN, /* the sum times 1/count, in the output dtype */
    MC_RK_VAR,  /* floating input; ddof as MLX */
    MC_RK_STD,
    MC_RK_COUNT
} mc_reduce_kind;
typedef struct mc_reduce_params {
    int kind; /* mc_reduce_kind */
    int ddof;
    int n;
    int axes[MC_MAX_NDIM];
} mc_reduce_params;
/* MLX's output dtype of a reduction kind on input dtype d. */
mlx_dtype mc_reduce_out_dtype(int kind, mlx_dtype d);
int mc_reduce_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_reduce_eval(mc_array *out, mc_array *const *in, int n, const void *params);
const char *mc_reduce_name(const void *params);
void mc_reduce_print(FILE *f, const void *params);

/* ArgReduce: uint32 indices along one axis (op: 0 argmax, 1 argmin) */
typedef struct mc_argreduce_params {
    int op;
    int axis;
} mc_argreduce_params;
int mc_argreduce_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_argreduce_eval(mc_array *out, mc_array *const *in, int n, const void *params);
const char *mc_argreduce_name(const void *params);

/* LogSumExp (over axes, floating input) and Softmax (same shape and dtype
 * as its floating input; precise is recorded, the half types always
 * compute in float32). */
typedef struct mc_softmax_params {
    int n;
    int axes[MC_MAX_NDIM];
    int precise;
} mc_softmax_params;
int mc_logsumexp_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_logsumexp_eval(mc_array *out, mc_array *const *in, int n, const void *params);
int mc_softmax_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_softmax_eval(mc_array *out, mc_array *const *in, int n, const void *params);

/* Scan along one axis (op: mc_scan_op of simd/reduce.h) */
typedef struct mc_scan_params {
    int op;
    int axis;
    int reverse;
    int inclusive;
} mc_scan_params;
int mc_scan_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_scan_eval(mc_array *out, mc_array *const *in, int n, const void *params);
const char *mc_scan_name(const void *params);

/* ---- compile: the Compiled primitive, a fused elementwise chain
 * (src/compile/fused_prim.c; built by src/compile/fuse.c) ---- */
#ifndef MC_GRAPH_PRIMS_FUSED_BLOCK
#define MC_GRAPH_PRIMS_FUSED_BLOCK
enum { MC_FUSED_MAX_OPS = 16, MC_FUSED_MAX_INPUTS = 24 };
enum { MC_FUSED_UNARY, MC_FUSED_BINARY, MC_FUSED_ASTYPE };
/* One step: kind; op (an mc_unary_op, an mc_binary_op, or for astype the
 * target dtype); operands a and b (b only for binary), numbered inputs
 * first (0..n_in-1), then earlier steps' results (n_in + step); and the
 * result dtype. All int32, so the params have no padding and compare
 * bytewise. */
typedef struct mc_fused_op {
    int32_t kind, op, a, b, dtype;
} mc_fused_op;
/* The program: n_ops steps, the last one the node's value. Only the first
 * n_ops entries are stored: the size is mc_fused_params_size(n_ops). */
typedef struct mc_fused_params {
    int32_t n_in, n_ops;
    mc_fused_op ops[MC_FUSED_MAX_OPS];
} mc_fused_params;
size_t mc_fused_params_size(int n_ops);
int mc_fused_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn);
int mc_fused_eval(mc_array *out, mc_array *const *in, int n, const void *params);
const char *mc_fused_name(const void *params);
#endif

#endif /* MC_GRAPH_PRIMS_H: keep this last; add family blocks above */
