/* Array operations: the part of mlx-c's ops.h that this library implements
 * (docs/api.md lists it, and what is missing). An op not declared here is
 * missing, so a program calling it fails to compile or link instead of
 * misbehaving.
 *
 * Every op follows the same contract:
 * - It is lazy. It checks its arguments, works out the result's shape and
 *   dtype, and writes a new unevaluated array to *res (replacing the
 *   reference *res held); the values are computed when the result is
 *   evaluated. The caller frees every array and vector it receives.
 * - It returns 0, or 1 with one error reported, in which case *res is left
 *   as it was.
 * - s is the stream to run on (for example from
 *   mlx_default_cpu_stream_new()). Every stream runs on the CPU, so an
 *   empty stream handle is taken as the default stream.
 * - Axes may be negative, counting from the end; arrays given by pointer
 *   and count (shape, axes...) are read only during the call.
 * - Dtypes follow MLX: binary ops promote, and floating functions turn
 *   integer and bool inputs into float32. */
#ifndef MLX_OPS_H
#define MLX_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/optional.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* ---- Arithmetic and math, elementwise on one array ----------------------- */

/* abs, negative, sign and square keep a's dtype. abs of a complex array is its
 * float32 magnitude; negative of a bool array fails. */
int mlx_abs(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_negative(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_sign(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_square(mlx_array* res, const mlx_array a, const mlx_stream s);

/* These give floating results: integer and bool inputs become float32,
 * floating inputs keep their dtype (complex too, where MLX supports it). */
int mlx_sqrt(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_rsqrt(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_reciprocal(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_exp(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_expm1(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_log(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_log1p(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_log2(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_log10(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_sin(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_cos(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_tan(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arcsin(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arccos(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arctan(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_sinh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_cosh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_tanh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arcsinh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arccosh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_arctanh(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_sigmoid(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_erf(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_erfinv(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_degrees(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_radians(mlx_array* res, const mlx_array a, const mlx_stream s);

/* floor and ceil keep a's dtype (integer values are unchanged) and fail on
 * complex arrays. */
int mlx_floor(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_ceil(mlx_array* res, const mlx_array a, const mlx_stream s);

/* Rounds to decimals decimal places (negative: to tens, hundreds...), with
 * halves going to the even neighbour; the result keeps a's dtype. */
int mlx_round(
    mlx_array* res,
    const mlx_array a,
    int decimals,
    const mlx_stream s);

/* These give bool results. logical_not is true where a is zero; for integer
 * and bool arrays isfinite is true everywhere and the other tests false. */
int mlx_logical_not(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isnan(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isinf(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isfinite(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isposinf(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_isneginf(mlx_array* res, const mlx_array a, const mlx_stream s);

/* Replaces NaN by nan, +inf by posinf and -inf by neginf in a floating array;
 * an absent posinf or neginf means the dtype's largest or lowest finite value.
 * Integer and bool arrays are returned unchanged. */
int mlx_nan_to_num(
    mlx_array* res,
    const mlx_array a,
    float nan,
    mlx_optional_float posinf,
    mlx_optional_float neginf,
    const mlx_stream s);

/* Flips every bit; fails unless a is an integer or bool array. */
int mlx_bitwise_invert(mlx_array* res, const mlx_array a, const mlx_stream s);

/* Both return a's values. stop_gradient marks the result as constant for
 * autodiff; copy makes a distinct array. */
int mlx_stop_gradient(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_copy(mlx_array* res, const mlx_array a, const mlx_stream s);

/* These take complex parts. For a complex array real and imag are float32; for
 * any other array conjugate and real return it unchanged and imag returns
 * zeros of its dtype. */
int mlx_conjugate(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_real(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_imag(mlx_array* res, const mlx_array a, const mlx_stream s);

/* ---- Elementwise on two arrays ------------------------------------------- */

/* a and b broadcast against each other (NumPy rules) and their dtypes are
 * promoted to a common one, as in MLX. divide, arctan2 and logaddexp give
 * floating results. As in MLX, floor_divide is floor(a / b) for floats but
 * truncates toward zero for integers (C's division), while remainder takes
 * b's sign (as Python's %) and divmod floors its quotient. */
int mlx_add(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_subtract(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_multiply(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_divide(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_floor_divide(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_remainder(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_power(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_maximum(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_minimum(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_arctan2(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_logaddexp(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* Writes two arrays to *res (a vector the caller frees): the floor_divide and
 * the remainder of a and b. Fails for complex inputs. */
int mlx_divmod(
    mlx_vector_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* Comparisons give bool results, after broadcasting and promotion. */
int mlx_equal(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_not_equal(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_less(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_less_equal(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_greater(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_greater_equal(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* These give the logical and/or of a and b (non-zero is true) as bool. */
int mlx_logical_and(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_logical_or(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* Bitwise operations and shifts fail unless the arrays are integer or bool. */
int mlx_bitwise_and(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_bitwise_or(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_bitwise_xor(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_left_shift(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_right_shift(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* ---- Selection ----------------------------------------------------------- */

/* Picks x where condition is true, else y; all three broadcast together and
 * the result has the promoted dtype of x and y. */
int mlx_where(
    mlx_array* res,
    const mlx_array condition,
    const mlx_array x,
    const mlx_array y,
    const mlx_stream s);

/* Limits a to [a_min, a_max]. Either bound may be an empty handle (no limit on
 * that side), not both. */
int mlx_clip(
    mlx_array* res,
    const mlx_array a,
    const mlx_array a_min,
    const mlx_array a_max,
    const mlx_stream s);

/* ---- Reductions ---------------------------------------------------------- */

/* sum, mean, prod, max, min, all and any reduce over every axis, over axis, or
 * over the axes_num listed axes (each at most once; negative counts from the
 * end). keepdims keeps the reduced axes with size 1. sum and prod accumulate
 * bool and integers of 32 bits or less as int32 (uint32 for unsigned); mean
 * gives a floating result; all and any give bool. */
int mlx_sum(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_sum_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_sum_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);
int mlx_mean(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_mean_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_mean_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);
int mlx_prod(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_prod_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_prod_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);
int mlx_max(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_max_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_max_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);
int mlx_min(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_min_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_min_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);
int mlx_all(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_all_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_all_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);
int mlx_any(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_any_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_any_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);

/* The uint32 index of the first largest or smallest element, over the
 * flattened array or along axis. Fails for an array with no elements. */
int mlx_argmax(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_argmax_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_argmin(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_argmin_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);

/* These compute log(sum(exp(a))) without overflow, in the reduction forms
 * above. */
int mlx_logsumexp(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    const mlx_stream s);
int mlx_logsumexp_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    const mlx_stream s);
int mlx_logsumexp_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);

/* These compute the variance and the standard deviation, dividing by N - ddof;
 * the results are floating. */
int mlx_var(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    int ddof,
    const mlx_stream s);
int mlx_var_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    int ddof,
    const mlx_stream s);
int mlx_var_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    int ddof,
    const mlx_stream s);
int mlx_std(
    mlx_array* res,
    const mlx_array a,
    bool keepdims,
    int ddof,
    const mlx_stream s);
int mlx_std_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool keepdims,
    int ddof,
    const mlx_stream s);
int mlx_std_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    int ddof,
    const mlx_stream s);

/* These normalise exp(a) to sum to 1 over every axis, axis or axes; the result
 * is floating. precise computes float16 and bfloat16 inputs in float32. */
int mlx_softmax(
    mlx_array* res,
    const mlx_array a,
    bool precise,
    const mlx_stream s);
int mlx_softmax_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool precise,
    const mlx_stream s);
int mlx_softmax_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool precise,
    const mlx_stream s);

/* ---- Scans --------------------------------------------------------------- */

/* These compute the running sum, product, maximum, minimum and log-sum-exp
 * along axis. reverse scans from the end; inclusive includes the current
 * element (when false, the first output is the operation's identity). */
int mlx_cumsum(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool reverse,
    bool inclusive,
    const mlx_stream s);
int mlx_cumprod(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool reverse,
    bool inclusive,
    const mlx_stream s);
int mlx_cummax(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool reverse,
    bool inclusive,
    const mlx_stream s);
int mlx_cummin(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool reverse,
    bool inclusive,
    const mlx_stream s);
int mlx_logcumsumexp(
    mlx_array* res,
    const mlx_array a,
    int axis,
    bool reverse,
    bool inclusive,
    const mlx_stream s);

/* ---- Sorting and selection ---------------------------------------------- */

/* Sorting is stable along axis (the _axis forms) or over the flattened array
 * (the others, whose result has shape (size,)). NaN sorts after every
 * number, -0.0 equals 0.0, complex64 orders by real then imaginary part.
 * The arg forms return uint32 indices. Every result is a new array the
 * caller frees. They fail for an axis outside [-ndim, ndim). */
int mlx_sort_axis(mlx_array* res, const mlx_array a, int axis, const mlx_stream s);
int mlx_sort(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_argsort_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    const mlx_stream s);
int mlx_argsort(mlx_array* res, const mlx_array a, const mlx_stream s);

/* A copy (or the indices of one) in which the element at position kth is
 * the one a sort would put there, the smaller ones before it and the
 * larger ones after it, each placed as MLX places it. kth may be negative
 * (counting from the end) and fails outside [-n, n) for an axis of n. */
int mlx_partition_axis(
    mlx_array* res,
    const mlx_array a,
    int kth,
    int axis,
    const mlx_stream s);
int mlx_partition(mlx_array* res, const mlx_array a, int kth, const mlx_stream s);
int mlx_argpartition_axis(
    mlx_array* res,
    const mlx_array a,
    int kth,
    int axis,
    const mlx_stream s);
int mlx_argpartition(
    mlx_array* res,
    const mlx_array a,
    int kth,
    const mlx_stream s);

/* The k largest elements along axis (or of the flattened array), in MLX's
 * order (that of partition at n - k, not sorted). Fails for k outside
 * [0, n]; k == n returns a itself. */
int mlx_topk_axis(
    mlx_array* res,
    const mlx_array a,
    int k,
    int axis,
    const mlx_stream s);
int mlx_topk(mlx_array* res, const mlx_array a, int k, const mlx_stream s);

/* The median over the given distinct axes (at least one unless a is 0-d),
 * as a float type (integers and bool give float32); keepdims keeps them as
 * size-1 axes. An even count averages the two middle elements. Fails for an
 * axis out of range, a repeated axis, or axes holding no element. */
int mlx_median(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool keepdims,
    const mlx_stream s);

/* ---- Shape and layout ---------------------------------------------------- */

/* Returns a with a new shape of the same size; one entry may be -1 (then
 * inferred). Shares a's data when it can. */
int mlx_reshape(
    mlx_array* res,
    const mlx_array a,
    const int* shape,
    size_t shape_num,
    const mlx_stream s);

/* Merges axes start_axis..end_axis (inclusive, negative allowed) into one. */
int mlx_flatten(
    mlx_array* res,
    const mlx_array a,
    int start_axis,
    int end_axis,
    const mlx_stream s);

/* Splits axis into the shape_num axes of shape (one may be -1). */
int mlx_unflatten(
    mlx_array* res,
    const mlx_array a,
    int axis,
    const int* shape,
    size_t shape_num,
    const mlx_stream s);

/* Permutes axes: transpose reverses them, transpose_axes uses the given order
 * (a permutation of 0..ndim-1). */
int mlx_transpose(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_transpose_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);

/* Exchanges two axes, or moves one axis to a new position. */
int mlx_swapaxes(
    mlx_array* res,
    const mlx_array a,
    int axis1,
    int axis2,
    const mlx_stream s);
int mlx_moveaxis(
    mlx_array* res,
    const mlx_array a,
    int source,
    int destination,
    const mlx_stream s);

/* Inserts size-1 axes at axis or at each listed axis (positions in the
 * result). */
int mlx_expand_dims(
    mlx_array* res,
    const mlx_array a,
    int axis,
    const mlx_stream s);
int mlx_expand_dims_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);

/* Removes all size-1 axes, or the given ones (which must have size 1). */
int mlx_squeeze(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_squeeze_axis(
    mlx_array* res,
    const mlx_array a,
    int axis,
    const mlx_stream s);
int mlx_squeeze_axes(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);

/* Broadcasts a to shape (NumPy rules), without copying. */
int mlx_broadcast_to(
    mlx_array* res,
    const mlx_array a,
    const int* shape,
    size_t shape_num,
    const mlx_stream s);

/* Writes to *res (a vector the caller frees) the inputs broadcast to their
 * common shape. */
int mlx_broadcast_arrays(
    mlx_vector_array* res,
    const mlx_vector_array inputs,
    const mlx_stream s);

/* Joins arrays along an existing axis; concatenate without an axis flattens
 * them first. The dtype is the promotion of all inputs. */
int mlx_concatenate(
    mlx_array* res,
    const mlx_vector_array arrays,
    const mlx_stream s);
int mlx_concatenate_axis(
    mlx_array* res,
    const mlx_vector_array arrays,
    int axis,
    const mlx_stream s);

/* Joins equal-shaped arrays along a new axis (0 for stack). */
int mlx_stack(
    mlx_array* res,
    const mlx_vector_array arrays,
    const mlx_stream s);
int mlx_stack_axis(
    mlx_array* res,
    const mlx_vector_array arrays,
    int axis,
    const mlx_stream s);

/* Writes to *res (a vector the caller frees) the pieces of a along axis:
 * num_splits equal pieces (fails if the axis does not divide evenly), or the
 * pieces between the indices_num split indices. */
int mlx_split(
    mlx_vector_array* res,
    const mlx_array a,
    int num_splits,
    int axis,
    const mlx_stream s);
int mlx_split_sections(
    mlx_vector_array* res,
    const mlx_array a,
    const int* indices,
    size_t indices_num,
    int axis,
    const mlx_stream s);

/* Takes the elements start[i] <= j < stop[i] in steps of strides[i] along each
 * axis (each array has one entry per axis; negative strides walk backwards),
 * as a view where possible. */
int mlx_slice(
    mlx_array* res,
    const mlx_array a,
    const int* start,
    size_t start_num,
    const int* stop,
    size_t stop_num,
    const int* strides,
    size_t strides_num,
    const mlx_stream s);

/* Returns a copy of src with that region replaced by update (broadcast to the
 * region's shape). */
int mlx_slice_update(
    mlx_array* res,
    const mlx_array src,
    const mlx_array update,
    const int* start,
    size_t start_num,
    const int* stop,
    size_t stop_num,
    const int* strides,
    size_t strides_num,
    const mlx_stream s);

/* These take the elements at the positions in indices (negative counts from
 * the end): from the flattened a, along axis, or along axis with indices
 * broadcast against a (take_along_axis). indices must be integers; an index
 * outside the axis gives an unspecified value but never reads outside a. */
int mlx_take(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_stream s);
int mlx_take_axis(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    int axis,
    const mlx_stream s);
int mlx_take_along_axis(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    int axis,
    const mlx_stream s);

/* These return a copy of a with values written along axis at indices, the
 * inverse of take_along_axis: put_along_axis replaces elements (where an
 * index repeats along the axis, the last value wins), scatter_add_axis adds
 * to them (every repeat adds). indices must be integers and have a's ndim;
 * values are cast to a's dtype, lose leading size-1 axes beyond that ndim
 * and broadcast with indices; a, indices and values broadcast on every axis
 * but axis (so the result may be larger than a). Negative indices count
 * from the end; an index still outside the axis is clamped to its nearest
 * end (MLX writes outside the array), matching what take reads. An empty a
 * is returned as it is. */
int mlx_put_along_axis(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_array values,
    int axis,
    const mlx_stream s);
int mlx_scatter_add_axis(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_array values,
    int axis,
    const mlx_stream s);

/* gather reads, for every position of the indices (broadcast together and
 * cast to their common integer type), a block of slice_sizes (one per axis
 * of a) starting at the indexed positions on axes and at 0 elsewhere: the
 * result has the indices' shape followed by slice_sizes. gather_single
 * takes one index array and one axis. axes are not normalised (as MLX: a
 * negative axis is an error). A negative index counts from the end once;
 * a block start still outside [0, shape - slice size] is clamped into it
 * (MLX reads outside the array), so no index reads outside a. */
int mlx_gather(
    mlx_array* res,
    const mlx_array a,
    const mlx_vector_array indices,
    const int* axes,
    size_t axes_num,
    const int* slice_sizes,
    size_t slice_sizes_num,
    const mlx_stream s);
int mlx_gather_single(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    int axis,
    const int* slice_sizes,
    size_t slice_sizes_num,
    const mlx_stream s);

/* These return a copy of a with blocks of updates written at the indices
 * (placed as gather places them, including the clamp): updates have the
 * indices' broadcast shape followed by a block no larger than a on each
 * axis, and are cast to a's dtype. scatter replaces (for a repeated index
 * the last update in row-major order wins, as MLX's CPU loop), scatter_add
 * adds every update, scatter_prod multiplies, scatter_max and scatter_min
 * keep the larger or smaller (MLX's y > x ? y : x, so NaN handling depends
 * on the order). The _single forms take one index array and one axis. */
int mlx_scatter(
    mlx_array* res,
    const mlx_array a,
    const mlx_vector_array indices,
    const mlx_array updates,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);
int mlx_scatter_single(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_array updates,
    int axis,
    const mlx_stream s);
int mlx_scatter_add(
    mlx_array* res,
    const mlx_array a,
    const mlx_vector_array indices,
    const mlx_array updates,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);
int mlx_scatter_add_single(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_array updates,
    int axis,
    const mlx_stream s);
int mlx_scatter_prod(
    mlx_array* res,
    const mlx_array a,
    const mlx_vector_array indices,
    const mlx_array updates,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);
int mlx_scatter_prod_single(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_array updates,
    int axis,
    const mlx_stream s);
int mlx_scatter_max(
    mlx_array* res,
    const mlx_array a,
    const mlx_vector_array indices,
    const mlx_array updates,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);
int mlx_scatter_max_single(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_array updates,
    int axis,
    const mlx_stream s);
int mlx_scatter_min(
    mlx_array* res,
    const mlx_array a,
    const mlx_vector_array indices,
    const mlx_array updates,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);
int mlx_scatter_min_single(
    mlx_array* res,
    const mlx_array a,
    const mlx_array indices,
    const mlx_array updates,
    int axis,
    const mlx_stream s);

/* Returns a copy of a where each true element of mask (a's leading
 * shape) takes the next element of src (or next row of a's trailing
 * shape), in row-major order, as MLX's masked_scatter. Where src runs
 * short, MLX raises at evaluation; here the remaining masked positions
 * repeat src's last element (zero for an empty src). */
int mlx_masked_scatter(
    mlx_array* res,
    const mlx_array a,
    const mlx_array mask,
    const mlx_array src,
    const mlx_stream s);

/* slice_dynamic reads a block of slice_size starting at the 0-d or 1-d
 * integer array start on axes (0 on the other axes); slice_update_dynamic
 * returns a copy of src with update (cast, broadcast as MLX does) written
 * at start. A negative start counts from the end once, and a start is
 * clamped so the block stays inside the array (MLX does not check). */
int mlx_slice_dynamic(
    mlx_array* res,
    const mlx_array a,
    const mlx_array start,
    const int* axes,
    size_t axes_num,
    const int* slice_size,
    size_t slice_size_num,
    const mlx_stream s);
int mlx_slice_update_dynamic(
    mlx_array* res,
    const mlx_array src,
    const mlx_array update,
    const mlx_array start,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);

/* Pads the listed axes with low_pad_size[i] and high_pad_size[i] elements.
 * mode is "constant" (pad_value, cast to a's dtype), "edge", "reflect" or
 * "symmetric". */
int mlx_pad(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    const int* low_pad_size,
    size_t low_pad_size_num,
    const int* high_pad_size,
    size_t high_pad_size_num,
    const mlx_array pad_value,
    const char* mode,
    const mlx_stream s);

/* Repeats the whole array reps[i] times along each axis. */
int mlx_tile(
    mlx_array* res,
    const mlx_array arr,
    const int* reps,
    size_t reps_num,
    const mlx_stream s);

/* Repeats each element repeats times, over the flattened array or along
 * axis. */
int mlx_repeat(
    mlx_array* res,
    const mlx_array arr,
    int repeats,
    const mlx_stream s);
int mlx_repeat_axis(
    mlx_array* res,
    const mlx_array arr,
    int repeats,
    int axis,
    const mlx_stream s);

/* Shifts the flattened array by the sum of the shifts (elements leaving one
 * end come back at the other), keeping a's shape. */
int mlx_roll(
    mlx_array* res,
    const mlx_array a,
    const int* shift,
    size_t shift_num,
    const mlx_stream s);
/* Rolls along one axis by the sum of the shifts. */
int mlx_roll_axis(
    mlx_array* res,
    const mlx_array a,
    const int* shift,
    size_t shift_num,
    int axis,
    const mlx_stream s);
/* Rolls along each of axes by the matching shift (at least one shift per
 * axis is required). */
int mlx_roll_axes(
    mlx_array* res,
    const mlx_array a,
    const int* shift,
    size_t shift_num,
    const int* axes,
    size_t axes_num,
    const mlx_stream s);

/* Returns a's values in a contiguous row-major layout (column-major also
 * accepted when allow_col_major is true); nothing is copied if a already has
 * one. */
int mlx_contiguous(
    mlx_array* res,
    const mlx_array a,
    bool allow_col_major,
    const mlx_stream s);

/* Returns a view of a's data with the given shape and element strides,
 * starting offset elements in. Nothing is checked against a's extent: the
 * caller keeps the view inside it. */
int mlx_as_strided(
    mlx_array* res,
    const mlx_array a,
    const int* shape,
    size_t shape_num,
    const int64_t* strides,
    size_t strides_num,
    size_t offset,
    const mlx_stream s);

/* Adds leading (1d, 2d) or leading and trailing (3d) size-1 axes until a has
 * at least that many. */
int mlx_atleast_1d(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_atleast_2d(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_atleast_3d(mlx_array* res, const mlx_array a, const mlx_stream s);

/* diag returns the k-th diagonal of a 2-d array, or a 2-d array with the 1-d a
 * on its k-th diagonal. diagonal returns the offset diagonal over axis1 and
 * axis2 as the last axis. trace sums that diagonal, as dtype. */
int mlx_diag(mlx_array* res, const mlx_array a, int k, const mlx_stream s);
int mlx_diagonal(
    mlx_array* res,
    const mlx_array a,
    int offset,
    int axis1,
    int axis2,
    const mlx_stream s);
int mlx_trace(
    mlx_array* res,
    const mlx_array a,
    int offset,
    int axis1,
    int axis2,
    mlx_dtype dtype,
    const mlx_stream s);

/* ---- Creation ------------------------------------------------------------ */

/* These return arrays of shape filled with 0, 1 or vals (vals is broadcast to
 * shape and cast to dtype). */
int mlx_zeros(
    mlx_array* res,
    const int* shape,
    size_t shape_num,
    mlx_dtype dtype,
    const mlx_stream s);
int mlx_ones(
    mlx_array* res,
    const int* shape,
    size_t shape_num,
    mlx_dtype dtype,
    const mlx_stream s);
int mlx_full(
    mlx_array* res,
    const int* shape,
    size_t shape_num,
    const mlx_array vals,
    mlx_dtype dtype,
    const mlx_stream s);

/* These do the same with a's shape (and a's dtype for zeros_like and
 * ones_like). */
int mlx_zeros_like(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_ones_like(mlx_array* res, const mlx_array a, const mlx_stream s);
int mlx_full_like(
    mlx_array* res,
    const mlx_array a,
    const mlx_array vals,
    mlx_dtype dtype,
    const mlx_stream s);

/* Returns the values from start up to, not including, stop in steps of step;
 * fails for a zero step or a bool dtype. */
int mlx_arange(
    mlx_array* res,
    double start,
    double stop,
    double step,
    mlx_dtype dtype,
    const mlx_stream s);

/* Returns num evenly spaced values from start to stop, both included; fails
 * for a negative num. */
int mlx_linspace(
    mlx_array* res,
    double start,
    double stop,
    int num,
    mlx_dtype dtype,
    const mlx_stream s);

/* Return an n x m array with ones on the k-th diagonal and zeros elsewhere;
 * identity(n) is eye(n, n, 0). */
int mlx_eye(
    mlx_array* res,
    int n,
    int m,
    int k,
    mlx_dtype dtype,
    const mlx_stream s);
int mlx_identity(mlx_array* res, int n, mlx_dtype dtype, const mlx_stream s);

/* Returns an n x m array with ones on and below the k-th diagonal. */
int mlx_tri(
    mlx_array* res,
    int n,
    int m,
    int k,
    mlx_dtype type,
    const mlx_stream s);

/* Return x with the elements above (tril) or below (triu) the k-th diagonal of
 * its last two axes set to zero. */
int mlx_tril(mlx_array* res, const mlx_array x, int k, const mlx_stream s);
int mlx_triu(mlx_array* res, const mlx_array x, int k, const mlx_stream s);

/* Writes to *res (a vector the caller frees) one coordinate array per input
 * (each input is flattened). indexing is "xy" (Cartesian) or "ij" (matrix);
 * sparse returns broadcastable arrays instead of full ones. */
int mlx_meshgrid(
    mlx_vector_array* res,
    const mlx_vector_array arrays,
    bool sparse,
    const char* indexing,
    const mlx_stream s);

/* ---- Linear algebra ------------------------------------------------------ */

/* Computes the matrix product. Batch axes broadcast; a 1-d a or b acts as a
 * row or column vector (its axis is removed from the result). Fails when the
 * promoted dtype is integer or bool. */
int mlx_matmul(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* Computes alpha * (a @ b) + beta * c, with c broadcast to the product's
 * shape. */
int mlx_addmm(
    mlx_array* res,
    const mlx_array c,
    const mlx_array a,
    const mlx_array b,
    float alpha,
    float beta,
    const mlx_stream s);

/* inner sums products over the last axes of a and b; outer multiplies every
 * element of flattened a by every element of flattened b. */
int mlx_inner(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);
int mlx_outer(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* tensordot contracts the axes axes_a of a with the axes axes_b of b (the same
 * count, with matching sizes); tensordot_axis contracts the last axis axes of
 * a with the first axis axes of b. */
int mlx_tensordot(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const int* axes_a,
    size_t axes_a_num,
    const int* axes_b,
    size_t axes_b_num,
    const mlx_stream s);
int mlx_tensordot_axis(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    int axis,
    const mlx_stream s);

/* einsum contracts the operands as the subscripts say (MLX's rules: letters,
 * at most one "..." per term, implicit output when "->" is absent), in the
 * greedy order MLX chooses; contractions of two operands run as one matmul,
 * so those need floating operands, as in MLX. At most 52 operands. */
int mlx_einsum(
    mlx_array* res,
    const char* subscripts,
    const mlx_vector_array operands,
    const mlx_stream s);

/* The window functions of M points, float32 as in MLX (empty for M < 1,
 * [1] for M == 1). */
int mlx_bartlett(mlx_array* res, int M, const mlx_stream s);
int mlx_blackman(mlx_array* res, int M, const mlx_stream s);
int mlx_hamming(mlx_array* res, int M, const mlx_stream s);
int mlx_hanning(mlx_array* res, int M, const mlx_stream s);

/* mlx_pad with pad_width elements before and after every axis. */
int mlx_pad_symmetric(
    mlx_array* res,
    const mlx_array a,
    int pad_width,
    const mlx_array pad_value,
    const char* mode,
    const mlx_stream s);

/* Reads a's bytes as dtype, as MLX's view: the last axis shrinks or grows by
 * the ratio of the item sizes (a 0-d array only to a dtype of its size).
 * Has no gradient, as in MLX. */
int mlx_view(
    mlx_array* res,
    const mlx_array a,
    mlx_dtype dtype,
    const mlx_stream s);

/* to_fp8 rounds a floating array to float8 e4m3 bytes (uint8) as MLX does:
 * nearest even, saturating at +-448 (infinities and NaN too); from_fp8
 * widens such bytes to the floating dtype. Neither has a gradient (MLX). */
int mlx_to_fp8(mlx_array* res, const mlx_array x, const mlx_stream s);
int mlx_from_fp8(
    mlx_array* res,
    const mlx_array x,
    mlx_dtype dtype,
    const mlx_stream s);

/* The Hadamard transform along the last axis (of size m * 2^k, m 1, 12,
 * 20 or 28), times scale (default 1/sqrt(size)); a fast Walsh-Hadamard
 * transform as MLX's. float32, float16, bfloat16 (integers become float32). */
int mlx_hadamard_transform(
    mlx_array* res,
    const mlx_array a,
    mlx_optional_float scale,
    const mlx_stream s);

/* Computes the Kronecker product of a and b. */
int mlx_kron(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_stream s);

/* a @ b computed only where the block masks let it (block_size 32 or 64):
 * mask_out (batch, ceil(M/bs), ceil(N/bs)) masks the output's blocks,
 * mask_lhs (.., ceil(M/bs), ceil(K/bs)) and mask_rhs (.., ceil(K/bs),
 * ceil(N/bs)) the operands' blocks; masks broadcast over the batch. A bool
 * mask zeroes its false blocks, a numeric one multiplies its blocks; a
 * block row the out or lhs mask removes entirely is not computed. Without
 * masks, mlx_matmul. Real floating types only. */
int mlx_block_masked_mm(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    int block_size,
    const mlx_array mask_out /* may be null */,
    const mlx_array mask_lhs /* may be null */,
    const mlx_array mask_rhs /* may be null */,
    const mlx_stream s);

/* The products of the matrices of a that lhs_indices names with those of b
 * that rhs_indices names (a matrix number counts a's or b's batch dims
 * row-major), pair by pair over the indices' broadcast shape I: result
 * I + (M, N). An absent index array names every matrix in order; with
 * neither, mlx_matmul. Indices are converted to uint32 (as MLX converts
 * them), and an index past the last matrix reads the last one (MLX's is
 * undefined). sorted_indices is MLX's hint; it changes no value. Products
 * sharing one matrix of b run as one BLAS product. Real floating types. */
int mlx_gather_mm(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_array lhs_indices /* may be null */,
    const mlx_array rhs_indices /* may be null */,
    bool sorted_indices,
    const mlx_stream s);

/* For each (start, stop) pair of segments (shape (..., 2), integral),
 * a[:, start:stop] @ b[start:stop, :]: result (..., M, N), zeros where
 * stop <= start. a (M, K) and b (K, N) are 2-d; bounds past K read as K
 * (MLX reads outside the arrays there). Real floating types only. */
int mlx_segmented_mm(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    const mlx_array segments,
    const mlx_stream s);

/* ---- Convolutions -------------------------------------------------------- */

/* Convolutions in MLX's channels-last layouts: input (N, spatial..., C_in),
 * weight (C_out, kernel..., C_in / groups), result (N, out..., C_out), one
 * to three spatial dims. The input must be floating; the weight is
 * promoted with it. groups must divide C_in and C_out (groups != 1 only
 * for 1-d and 2-d). conv1d/2d/3d pad both sides of each spatial dim by
 * padding and dilate the kernel by dilation. Each returns 0, or non-zero
 * with MLX's "[conv] ..." message reported and *res unchanged. */
int mlx_conv1d(
    mlx_array* res,
    const mlx_array input,
    const mlx_array weight,
    int stride,
    int padding,
    int dilation,
    int groups,
    const mlx_stream s);
int mlx_conv2d(
    mlx_array* res,
    const mlx_array input,
    const mlx_array weight,
    int stride_0,
    int stride_1,
    int padding_0,
    int padding_1,
    int dilation_0,
    int dilation_1,
    int groups,
    const mlx_stream s);
int mlx_conv3d(
    mlx_array* res,
    const mlx_array input,
    const mlx_array weight,
    int stride_0,
    int stride_1,
    int stride_2,
    int padding_0,
    int padding_1,
    int padding_2,
    int dilation_0,
    int dilation_1,
    int dilation_2,
    int groups,
    const mlx_stream s);
/* The general form: per-dim vectors (an empty one takes the default, a
 * one-element one applies to every dim) of strides, low and high padding
 * (a negative padding crops the input), kernel dilation and input
 * dilation (zeros between input elements); flip reverses the kernel in
 * every spatial dim (a true convolution rather than a correlation). */
int mlx_conv_general(
    mlx_array* res,
    const mlx_array input,
    const mlx_array weight,
    const int* stride,
    size_t stride_num,
    const int* padding_lo,
    size_t padding_lo_num,
    const int* padding_hi,
    size_t padding_hi_num,
    const int* kernel_dilation,
    size_t kernel_dilation_num,
    const int* input_dilation,
    size_t input_dilation_num,
    int groups,
    bool flip,
    const mlx_stream s);
/* Transposed convolutions (the gradient of a convolution with respect to
 * its input), as MLX computes them: conv_general with input dilation
 * stride, a flipped kernel and padding dilation * (k - 1) - padding low,
 * plus output_padding high. The weight is (C_out, kernel..., C_in / groups). */
int mlx_conv_transpose1d(
    mlx_array* res,
    const mlx_array input,
    const mlx_array weight,
    int stride,
    int padding,
    int dilation,
    int output_padding,
    int groups,
    const mlx_stream s);
int mlx_conv_transpose2d(
    mlx_array* res,
    const mlx_array input,
    const mlx_array weight,
    int stride_0,
    int stride_1,
    int padding_0,
    int padding_1,
    int dilation_0,
    int dilation_1,
    int output_padding_0,
    int output_padding_1,
    int groups,
    const mlx_stream s);
int mlx_conv_transpose3d(
    mlx_array* res,
    const mlx_array input,
    const mlx_array weight,
    int stride_0,
    int stride_1,
    int stride_2,
    int padding_0,
    int padding_1,
    int padding_2,
    int dilation_0,
    int dilation_1,
    int dilation_2,
    int output_padding_0,
    int output_padding_1,
    int output_padding_2,
    int groups,
    const mlx_stream s);

/* ---- Quantization --------------------------------------------------------- */

/* Quantizes the last axis of w (floating, at least 2-D) in groups, packed
 * into uint32 as MLX packs them. mode "affine": group_size 32, 64 or 128
 * (default 64), bits 2, 3, 4, 5, 6 or 8 (default 4); *res becomes {packed
 * w, scales, biases} (scales and biases of w's dtype). "mxfp4" (group 32,
 * 4 bits), "mxfp8" (32, 8) and "nvfp4" (16, 4): *res becomes {packed w,
 * uint8 scales}. global_scale (a float32 scalar) only with "nvfp4". */
int mlx_quantize(
    mlx_vector_array* res,
    const mlx_array w,
    mlx_optional_int group_size,
    mlx_optional_int bits,
    const char* mode,
    const mlx_array global_scale /* may be null */,
    const mlx_stream s);

/* The inverse of mlx_quantize: scales * code + biases per group ("affine":
 * biases required; of the scales' dtype), or scale * code (the fp modes:
 * no biases; bfloat16, or float32 with nvfp4's global_scale), or of dtype
 * when given. */
int mlx_dequantize(
    mlx_array* res,
    const mlx_array w,
    const mlx_array scales,
    const mlx_array biases /* may be null */,
    mlx_optional_int group_size,
    mlx_optional_int bits,
    const char* mode,
    const mlx_array global_scale /* may be null */,
    mlx_optional_dtype dtype,
    const mlx_stream s);

/* x @ W^T (transpose) or x @ W, W the dequantized w, without forming W:
 * the output has x's shape with the last dim W's outer dim, and the dtype
 * promoted from x, scales and biases ("affine") or x's (the fp modes). */
int mlx_quantized_matmul(
    mlx_array* res,
    const mlx_array x,
    const mlx_array w,
    const mlx_array scales,
    const mlx_array biases /* may be null */,
    bool transpose,
    mlx_optional_int group_size,
    mlx_optional_int bits,
    const char* mode,
    const mlx_stream s);

/* quantized_matmul of the batches of x that lhs_indices selects with the
 * batches of w (scales, biases) that rhs_indices selects, pair by pair
 * over the indices' broadcast shape (an absent index array selects every
 * batch in order); with neither, quantized_matmul. */
int mlx_gather_qmm(
    mlx_array* res,
    const mlx_array x,
    const mlx_array w,
    const mlx_array scales,
    const mlx_array biases /* may be null */,
    const mlx_array lhs_indices /* may be null */,
    const mlx_array rhs_indices /* may be null */,
    bool transpose,
    mlx_optional_int group_size,
    mlx_optional_int bits,
    const char* mode,
    bool sorted_indices,
    const mlx_stream s);

/* x @ W^T with both operands quantized and dequantized by rows in mode
 * "nvfp4" (default) or "mxfp8" first: w is either floating (N, K) with
 * w_scales empty, or packed by mlx_quantize in that mode with its
 * w_scales. x is 1-D, 2-D, or more (flattened against a 2-D w); the
 * result has x's dtype. The global scales (float32 scalars, nvfp4 only,
 * both or neither) are checked and not used, as on MLX's CPU. */
int mlx_qqmm(
    mlx_array* res,
    const mlx_array x,
    const mlx_array w,
    const mlx_array w_scales /* may be null */,
    mlx_optional_int group_size,
    mlx_optional_int bits,
    const char* mode,
    const mlx_array global_scale_x /* may be null */,
    const mlx_array global_scale_w /* may be null */,
    const mlx_stream s);

/* ---- Miscellaneous ------------------------------------------------------- */

/* Arrays equal to inputs (views of them, not copies), one per input, whose
 * evaluation first evaluates every array of dependencies. Needs at least
 * one input. The dependencies get zero gradients; there is no jvp, as in
 * MLX. */
int mlx_depends(
    mlx_vector_array* res,
    const mlx_vector_array inputs,
    const mlx_vector_array dependencies);

/* Converts a to dtype (a itself if it already has that dtype). */
int mlx_astype(
    mlx_array* res,
    const mlx_array a,
    mlx_dtype dtype,
    const mlx_stream s);

/* Returns a bool scalar: whether |a - b| <= atol + rtol * |b| everywhere
 * (after broadcasting). NaNs compare equal only with equal_nan. */
int mlx_allclose(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    double rtol,
    double atol,
    bool equal_nan,
    const mlx_stream s);

/* Applies the same test elementwise, giving a bool array of the broadcast
 * shape. */
int mlx_isclose(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    double rtol,
    double atol,
    bool equal_nan,
    const mlx_stream s);

/* Returns a bool scalar, true if a and b have the same shape and equal values
 * (dtypes may differ). */
int mlx_array_equal(
    mlx_array* res,
    const mlx_array a,
    const mlx_array b,
    bool equal_nan,
    const mlx_stream s);

/* Returns a scalar of dtype: the product of the sizes of the listed axes, or
 * its reciprocal if inverted. */
int mlx_number_of_elements(
    mlx_array* res,
    const mlx_array a,
    const int* axes,
    size_t axes_num,
    bool inverted,
    mlx_dtype dtype,
    const mlx_stream s);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
