/* The vmap rules primitives share, and the axis moves their own rules are
 * made of (graph/primitive.h has the rule's contract). Most rules bring
 * each batched input's batch axis to the front, shift the axes in their
 * params by one and build their primitive again; the shared ones here
 * cover the primitives that need nothing of their own. */
#ifndef MC_GRAPH_VMAP_RULES_H
#define MC_GRAPH_VMAP_RULES_H

#include "graph/primitive.h"

/* ---- axis moves (new references, or NULL with an error reported) ---- */

/* a with axis `from` moved to position `to` (both in range), the other
 * axes in order. */
mc_array *mc_node_moveaxis(mc_array *a, int from, int to, const char *fn);

/* The batch size: the size of the first batched input's batch axis. */
int mc_vmap_size(mc_array *const *in, const int *axes, int n);

/* in with its batch first: the batch axis moved to 0 when axis >= 0;
 * otherwise in broadcast to a new leading axis of size b. */
mc_array *mc_vmap_front(mc_array *in, int axis, int b, const char *fn);

/* 0 if an array of ndim dimensions can take a batch axis too, else
 * non-zero with "[fn] ..." reported. */
int mc_vmap_check_ndim(int ndim, const char *fn);

/* Copies node's params into the rule's own struct of `size` bytes (zero
 * past what the node stored), to be changed and built again. */
void mc_vmap_params(void *dst, size_t size, const mc_array *node);

/* ---- pieces of rules, built in a scope (graph/build.h) ---- */

struct mc_gb;
/* mc_vmap_front, held by the scope. */
mc_array *mc_gb_vmap_front(struct mc_gb *s, mc_array *in, int axis, int b);
/* The dtype batched index arrays are given: idx's own, or int32 when idx's
 * is too narrow to count a batch of any size. */
mlx_dtype mc_vmap_index_dtype(mlx_dtype idx);
/* The index of the batch element: 0..b-1 along axis 0 of an ndim-d array
 * of shape (b, ...shape[1..]) in dtype, every other axis broadcast. A
 * gather or scatter given it as one more index array on the batch axis
 * reads (writes) each element's own slice: MLX's batching of indices. */
mc_array *mc_gb_vmap_batch_index(struct mc_gb *s, int ndim, const int *shape, mlx_dtype dtype);

/* ---- rules ---- */

/* Where MLX has no vmap for the primitive: reports MLX's
 * "[Primitive::vmap] Not implemented for <name>." */
int mc_vmap_unsupported(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                        const char *fn);

/* A one-input primitive that acts on each element alone (Unary, AsType,
 * Copy...): the primitive on the batched input, the batch where it was. */
int mc_vmap_same_axis(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                      const char *fn);

/* A primitive whose inputs broadcast together elementwise (Binary,
 * Select, compile's fused nodes): as MLX's vmap_binary_op, every input is given the same rank,
 * the batched ones their batch on one axis, the unbatched a size-1 axis
 * there; then the primitive broadcasts them. */
int mc_vmap_elementwise(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                        const char *fn);

/* A primitive that already maps over leading axes of every input (the
 * factorizations): batches to the front, unbatched inputs broadcast to the
 * batch, each made row-contiguous (as the ops hand them), the primitive
 * again. */
int mc_vmap_leading(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                    const char *fn);

/* The node's primitive once per batch element on that element's slice of
 * each batched input, the results stacked on a new axis 0: correct for
 * every primitive, for the ones whose batched form would need a new
 * kernel (gathers and scatters with batched indices, convolution, the
 * fused fast.h kernels). It builds a node per element. */
int mc_vmap_by_element(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const char *fn);

/* The batched first input with its batch first, and node's primitive
 * built on it with params (the caller's copy of node's, axes shifted
 * past the new axis 0); out axis 0. For one-input primitives. */
int mc_vmap_front_with(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                       const void *params, size_t params_size, const char *fn);

/* Every input with its batch first (an unbatched one broadcast to the
 * batch), and node's primitive on them with params (node's, changed by
 * the caller for the new axis 0); out axis 0. */
int mc_vmap_all_front_with(mc_array **out, int *out_axis, mc_array *node, mc_array *const *in, const int *axes,
                           const void *params, size_t params_size, const char *fn);

#endif
