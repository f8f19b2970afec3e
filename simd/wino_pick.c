/* Chooses the build of simd/wino_k.c for the level simd/dispatch.c chose
 * (so MLX_CPU_ISA, which forces a lower level, reaches these too). */
#include <pthread.h>
#include <string.h>

#include "simd/simd.h"
#include "simd/wino.h"

extern const mc_wino_kernels mc_wino_kernels_generic_build;
#if defined(__x86_64__)
extern const mc_wino_kernels mc_wino_kernels_avx2;
extern const mc_wino_kernels mc_wino_kernels_avx512;
#endif

static pthread_once_t pick_once = PTHREAD_ONCE_INIT;
static const mc_wino_kernels *picked = &mc_wino_kernels_generic_build;

static void pick(void)
{
#if defined(__x86_64__)
    const char *isa = mc_kernels()->isa;
    if (strcmp(isa, "avx512") == 0)
        picked = &mc_wino_kernels_avx512;
    else if (strcmp(isa, "avx2") == 0)
        picked = &mc_wino_kernels_avx2;
#endif
}

const mc_wino_kernels *mc_wino_kernels_get(void)
{
    pthread_once(&pick_once, pick);
    return picked;
}

const mc_wino_kernels *mc_wino_kernels_generic(void) { return &mc_wino_kernels_generic_build; }
