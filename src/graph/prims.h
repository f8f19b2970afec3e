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

#endif

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
