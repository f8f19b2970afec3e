/* The reduction table filler of one ISA (compiled once per ISA, exported
 * as mc_reduce_fill_<isa>): every per-ISA reduction and scan file's part,
 * then the complex64 kernels, which are the same on every ISA. */
#include "simd/reduce_impl.h"

#define MC_STR_(x) #x
#define MC_STR(x) MC_STR_(x)

void MC_ISA_FN(mc_reduce_fill)(mc_reduce_table *t)
{
    memset(t, 0, sizeof *t);
    t->isa = MC_STR(MC_ISA);
    MC_ISA_FN(mc_reduce_fill_basic)(t);
    MC_ISA_FN(mc_reduce_fill_arg)(t);
    MC_ISA_FN(mc_reduce_fill_fused)(t);
    MC_ISA_FN(mc_scan_fill)(t);
    mc_reduce_fill_complex(t);
}
