/* Chooses the builds of simd/wino_k.c and simd/wino4_k.c for the level
 * simd/dispatch.c chose (so MLX_CPU_ISA, which forces a lower level,
 * reaches these too). */
#include <pthread.h>
#include <string.h>

#include "simd/simd.h"
#include "simd/wino.h"

extern const mc_wino_kernels mc_wino23_generic_build, mc_wino43_generic_build;
#if defined(__x86_64__)
extern const mc_wino_kernels mc_wino23_avx2, mc_wino43_avx2;
extern const mc_wino_kernels mc_wino23_avx512, mc_wino43_avx512;
#endif

static pthread_once_t pick_once = PTHREAD_ONCE_INIT;
static const mc_wino_kernels *picked23 = &mc_wino23_generic_build, *picked43 = &mc_wino43_generic_build;

static void pick(void)
{
#if defined(__x86_64__)
    const char *isa = mc_kernels()->isa;
    if (strcmp(isa, "avx512") == 0) {
        picked23 = &mc_wino23_avx512;
        picked43 = &mc_wino43_avx512;
    } else if (strcmp(isa, "avx2") == 0) {
        picked23 = &mc_wino23_avx2;
        picked43 = &mc_wino43_avx2;
    }
#endif
}

const mc_wino_kernels *mc_wino_kernels_get(int m)
{
    pthread_once(&pick_once, pick);
    return m == 2 ? picked23 : m == 4 ? picked43 : NULL;
}

const mc_wino_kernels *mc_wino_kernels_generic(int m)
{
    return m == 2 ? &mc_wino23_generic_build : m == 4 ? &mc_wino43_generic_build : NULL;
}
