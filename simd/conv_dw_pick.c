/* Chooses the build of simd/conv_dw_k.c for the level simd/dispatch.c
 * chose (so MLX_CPU_ISA, which forces a lower level, reaches it too). */
#include <pthread.h>
#include <string.h>

#include "simd/conv.h"
#include "simd/simd.h"

typedef void (*dw_fn)(const mc_conv_geom *g, size_t esz, const void *x, const void *wt, size_t r0, int mb,
                      void *y);

void mc_conv_depthwise_generic_build(const mc_conv_geom *g, size_t esz, const void *x, const void *wt, size_t r0,
                                     int mb, void *y);
#if defined(__x86_64__)
void mc_conv_depthwise_avx2(const mc_conv_geom *g, size_t esz, const void *x, const void *wt, size_t r0, int mb,
                            void *y);
void mc_conv_depthwise_avx512(const mc_conv_geom *g, size_t esz, const void *x, const void *wt, size_t r0, int mb,
                              void *y);
#endif

static pthread_once_t pick_once = PTHREAD_ONCE_INIT;
static dw_fn picked = mc_conv_depthwise_generic_build;

static void pick(void)
{
#if defined(__x86_64__)
    const char *isa = mc_kernels()->isa;
    if (strcmp(isa, "avx512") == 0)
        picked = mc_conv_depthwise_avx512;
    else if (strcmp(isa, "avx2") == 0)
        picked = mc_conv_depthwise_avx2;
#endif
}

void mc_conv_depthwise(const mc_conv_geom *g, size_t esz, const void *x, const void *wt, size_t r0, int mb,
                       void *y)
{
    pthread_once(&pick_once, pick);
    picked(g, esz, x, wt, r0, mb, y);
}
