/* The importers of MLX primitives that become several nodes of ours
 * (mlxfn_import_multi.c): those whose outputs we slice out of one packed
 * node (the factorizations), those we compose of other primitives (DivMod,
 * the dynamic slices, GatherQMM, MaskedScatter, BroadcastAxes) and those
 * with several outputs (Depends, Quantize). The table in mlxfn_import.c
 * lists them by MLX's name. */
#ifndef MC_IO_MLXFN_IMPORT_MULTI_H
#define MC_IO_MLXFN_IMPORT_MULTI_H

#include "io/mlxfn_prims.h"

/* Checks the record has lo to hi inputs; 0 or 1 (reported). Defined in
 * mlxfn_import.c. */
int mc_mlxfn_imp_need_in(mc_mlxfn_imp *c, int lo, int hi);

/* Checks what a QuantizedMatmul node trusts, reporting one "Bad file"
 * message: the group size and bits of the mode (mc_qmode), w packed
 * uint32 with scales (and affine biases, else bi is NULL) of its batch
 * shape and one per gs unpacked columns, a floating x (affine: of the
 * scales' dtype) of the unpacked inner size, and w one matrix or of x's
 * batch shape (any batch shape if batched_w: the caller gathers them). */
int mc_mlxfn_qmm_check(mc_mlxfn_imp *c, const mc_array *x, const mc_array *w, const mc_array *sc,
                       const mc_array *bi, int gs, int bits, int mode, bool transpose, bool batched_w);

int mc_mlxfn_imp_inverse(mc_mlxfn_imp *c);
int mc_mlxfn_imp_cholesky(mc_mlxfn_imp *c);
int mc_mlxfn_imp_qrf(mc_mlxfn_imp *c);
int mc_mlxfn_imp_svd(mc_mlxfn_imp *c);
int mc_mlxfn_imp_eig(mc_mlxfn_imp *c);
int mc_mlxfn_imp_eigh(mc_mlxfn_imp *c);
int mc_mlxfn_imp_divmod(mc_mlxfn_imp *c);
int mc_mlxfn_imp_dynamic_slice(mc_mlxfn_imp *c);
int mc_mlxfn_imp_dynamic_slice_update(mc_mlxfn_imp *c);
int mc_mlxfn_imp_gather_qmm(mc_mlxfn_imp *c);
int mc_mlxfn_imp_masked_scatter(mc_mlxfn_imp *c);
int mc_mlxfn_imp_broadcast_axes(mc_mlxfn_imp *c);
int mc_mlxfn_imp_depends(mc_mlxfn_imp *c);
int mc_mlxfn_imp_quantize(mc_mlxfn_imp *c);

#endif
