/* The one filler of an ISA's tables (compiled once per ISA, exported as
 * mc_simd_fill_<isa> for dispatch.c): every per-ISA kernel file's part of
 * the elementwise and the reduction table, then the kernels that are the
 * same on every ISA (common.c, reduce_complex.c). dispatch.c names the
 * tables; this file only fills their kernels. */
#include "simd/reduce_impl.h"

void MC_ISA_FN(mc_simd_fill)(mc_kernel_table *k, mc_reduce_table *r)
{
    memset(k, 0, sizeof *k);
    MC_ISA_FN(mc_fill_arith)(k);
    MC_ISA_FN(mc_fill_math)(k);
    MC_ISA_FN(mc_fill_cmp)(k);
    MC_ISA_FN(mc_fill_convert)(k);
    mc_fill_common(k);

    memset(r, 0, sizeof *r);
    MC_ISA_FN(mc_reduce_fill_basic)(r);
    MC_ISA_FN(mc_reduce_fill_arg)(r);
    MC_ISA_FN(mc_reduce_fill_fused)(r);
    MC_ISA_FN(mc_scan_fill)(r);
    mc_reduce_fill_complex(r);
}
