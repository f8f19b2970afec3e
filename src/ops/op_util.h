/* Helpers shared by the op constructors: reading arguments, storing the
 * result handle, axis normalisation, promotion and broadcasting. Every
 * helper reports errors naming `fn`, the mlx-c function being called. */
#ifndef MC_OPS_OP_UTIL_H
#define MC_OPS_OP_UTIL_H

#include "graph/build.h"
#include "graph/primitive.h"
#include "handles/stream.h"
#include "simd/simd.h"
#include "mlx/c/mlx.h"

/* The descriptor behind a handle argument, or NULL with an error naming
 * the argument if the handle is empty. */
mc_array *mc_op_arg(mlx_array a, const char *fn, const char *name);

/* Stores `out` (a reference taken over) into *res, dropping what *res held.
 * With out == NULL (a failed build) returns 1 and leaves *res unchanged. */
int mc_op_store(mlx_array *res, mc_array *out, const char *fn);

/* Checks the result pointer of an op; reports and returns 1 if NULL. */
int mc_op_check_res(const void *res, const char *fn);




/* A binary elementwise op on two handles with MLX's promotion: both are
 * converted to promote(a, b) (or to at least float when `to_float`, as
 * divide does), then combined; shapes broadcast. Result into *res. */
int mc_op_binary(mlx_array *res, mlx_array a, mlx_array b, mc_binary_op op, bool to_float, const char *fn);

/* The smallest floating type that holds d (MLX's at_least_float):
 * d itself if inexact, else float32. */
mlx_dtype mc_at_least_float(mlx_dtype d);

/* Normalises axis (negative counts from the end) for ndim dims, or reports
 * "[fn] Axis a is out of bounds for array with n dimensions." */
int mc_op_axis(int axis, int ndim, int *out, const char *fn);

/* Checks a shape argument (pointer, count, non-negative dims). */
int mc_op_check_shape(const int *shape, size_t num, const char *fn);

/* Checks a dtype argument is one of mlx-c's. */
int mc_op_check_dtype(int dtype, const char *fn);

#endif
