/* Shared by the exporters (mlxfn_export*.c), not beyond src/io: MLX's
 * ops written as tape records (mlxfn_export_ops.c) and the exporters of
 * the primitive families kept in files of their own, which the dispatch
 * in mlxfn_export.c names.
 *
 * A record helper takes the input ids and metas, writes what MLX's op of
 * that name writes (no record where MLX's op writes none, e.g. a reshape
 * to the same shape) and returns the result's id; those that can fail
 * return 0 with an error reported. */
#ifndef MC_IO_MLXFN_EXPORT_H
#define MC_IO_MLXFN_EXPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "io/mlxfn_prims.h"

/* MLX's BitwiseBinary::Op values. */
enum { BW_AND = 0, BW_LEFT_SHIFT = 3, BW_RIGHT_SHIFT = 4 };

/* Reports "[fn] Unable to export primitive NAME: why." and returns 1. */
int mc_xp_unsupported(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const char *why);

mc_meta mc_xp_meta_with(mlx_dtype dtype, int ndim, const int *shape);
bool mc_xp_same_shape(const mc_meta *a, int ndim, const int *shape);

/* broadcast_to, reshape, astype (m updated), as MLX writes them. */
uint64_t mc_xp_bcast(mc_mlxfn_exp *x, uint64_t id, const mc_meta *m, int ndim, const int *shape);
uint64_t mc_xp_reshape(mc_mlxfn_exp *x, uint64_t id, const mc_meta *m, int ndim, const int *shape);
uint64_t mc_xp_to_dtype(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, mlx_dtype dtype);
/* broadcast_arrays of ids[0..n) to out's shape, in place (shapeless: as
 * MLX's dynamic tracing, through StopGradient of the others). */
void mc_xp_bcast_n(mc_mlxfn_exp *x, uint64_t *ids, const mc_meta *m, int n, const mc_meta *out);
/* name(a, b) both broadcast to out; a name(...) v with v a 0-d constant
 * of a's dtype (0 on failure). */
uint64_t mc_xp_binop(mc_mlxfn_exp *x, const char *name, uint64_t a, const mc_meta *ma, uint64_t b,
                     const mc_meta *mb, const mc_meta *out);
uint64_t mc_xp_scalar_op(mc_mlxfn_exp *x, const char *name, uint64_t a, const mc_meta *m, double v);
uint64_t mc_xp_bitwise_rec(mc_mlxfn_exp *x, int op, uint64_t a, const mc_meta *ma, uint64_t b, const mc_meta *mb,
                           const mc_meta *out);

/* arange, slice, concatenate, one-axis ExpandDims/Squeeze (name), expand
 * (m updated), unflatten of one axis into (a, b) (m updated). */
uint64_t mc_xp_arange_rec(mc_mlxfn_exp *x, int start, int stop, int step, mlx_dtype dtype);
uint64_t mc_xp_slice_rec(mc_mlxfn_exp *x, uint64_t a, const mc_meta *m, const int *start, const int *stop,
                         const int *strides, mc_meta *out);
uint64_t mc_xp_concat_rec(mc_mlxfn_exp *x, const uint64_t *ids, const mc_meta *m, int n, int axis, mc_meta *out);
uint64_t mc_xp_axes_rec(mc_mlxfn_exp *x, const char *name, uint64_t a, int axis, const mc_meta *out);
uint64_t mc_xp_expand_rec(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, int axis);
uint64_t mc_xp_unflatten_rec(mc_mlxfn_exp *x, uint64_t id, mc_meta *m, int axis, int a, int b);

/* MLX's matmul op; *out gets the result's meta. */
uint64_t mc_xp_matmul_op(mc_mlxfn_exp *x, uint64_t ia, mc_meta a, uint64_t ib, mc_meta b, mc_meta *out);
/* 1 / (the product of a's sizes on axes) as MLX's NumberOfElements. */
uint64_t mc_xp_inv_count(mc_mlxfn_exp *x, uint64_t a, int n, const int *axes, mlx_dtype dtype);

/* ---- exporters of families in files of their own (mc_mlxfn_export_fn) ---- */

/* fast.h as MLX's CPU fallbacks (mlxfn_export_fast.c) */
int mc_xp_norm(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im, uint64_t *id);
int mc_xp_rope(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im, uint64_t *id);
int mc_xp_sdpa(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im, uint64_t *id);
/* quantization (mlxfn_export_quant.c) */
int mc_xp_quantized_matmul(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im,
                           uint64_t *id);
int mc_xp_quantize(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im, uint64_t *id);
int mc_xp_dequantize(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im, uint64_t *id);
/* random draws (mlxfn_export_random.c) */
int mc_xp_random_bits(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im,
                      uint64_t *id);
int mc_xp_random_dist(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im,
                      uint64_t *id);
int mc_xp_random_permutation(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im,
                             uint64_t *id);
/* factorizations (mlxfn_export_linalg.c) */
int mc_xp_linalg(mc_mlxfn_exp *x, const mc_mlxfn_node *n, const uint64_t *in, const mc_meta *im, uint64_t *id);

#endif
