/* The table filler of one ISA (compiled once per ISA, exported as
 * mc_kernels_fill_<isa>): every per-ISA kernel file's part, then the
 * ISA-independent kernels of common.c. */
#include "simd/kern.h"

#define MC_STR_(x) #x
#define MC_STR(x) MC_STR_(x)

void MC_ISA_FN(mc_kernels_fill)(mc_kernel_table *t)
{
    memset(t, 0, sizeof *t);
    t->isa = MC_STR(MC_ISA);
    MC_ISA_FN(mc_fill_arith)(t);
    MC_ISA_FN(mc_fill_math)(t);
    MC_ISA_FN(mc_fill_cmp)(t);
    MC_ISA_FN(mc_fill_convert)(t);
    mc_fill_common(t);
}
