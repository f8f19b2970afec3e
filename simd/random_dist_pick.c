/* Chooses simd/random_dist.c's AVX2+FMA build when the kernel table in use
 * (simd/dispatch.c: the CPU's best level, or the one MLX_CPU_ISA forces) is
 * AVX2 or AVX-512, else its generic build. Both give the same bits. */
#include <string.h>

#include "simd/random_dist.h"
#include "simd/simd.h"

void mc_rdist_range_generic(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out);
#if defined(__x86_64__)
void mc_rdist_range_avx2(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out);
#endif

int mc_rdist_supports(mc_rdist_kind kind, mc_rdist_type type)
{
    if (type != MC_RT_F64)
        return 1;
    return kind == MC_RD_NORMAL || kind == MC_RD_LAPLACE;
}

void mc_rdist_range(const mc_rdist *d, const uint32_t key[2], size_t n, size_t j0, size_t j1, void *out)
{
#if defined(__x86_64__)
    const char *isa = mc_kernels()->isa;
    if (strcmp(isa, "avx2") == 0 || strcmp(isa, "avx512") == 0) {
        mc_rdist_range_avx2(d, key, n, j0, j1, out);
        return;
    }
#endif
    mc_rdist_range_generic(d, key, n, j0, j1, out);
}
