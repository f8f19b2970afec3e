/* Attention's register-blocked product (simd/fast.h's attn_gemm), built
 * generically and, on x86_64, with AVX2 and FMA and with AVX-512
 * (MC_AK_VARIANT), each build defining mc_attn_gemm_<variant>. Built with
 * -ffp-contract=fast: its multiply-adds are meant to fuse, while the
 * other kernels of fast_k.c keep ISO C's separate roundings.
 *
 * b is packed by the caller (mc_fast_pack_f32): NR values per step, read
 * as whole vectors. a's MR values of a step are broadcast one by one, so
 * they may lie anywhere: element (step t, row i) at a[t * ast + i * asi],
 * which lets K and V be read in place. The MR x NR block of c stays in
 * registers. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "simd/attn_shape.h"

#ifndef MC_AK_VARIANT
#define MC_AK_VARIANT generic
#endif
#define AK_CAT2(a, b) a##_##b
#define AK_CAT(a, b) AK_CAT2(a, b)

enum { MR = MC_ATTN_MR, NR = MC_ATTN_NR, VL = MC_ATTN_VL, NV = NR / VL };
/* native-width vectors: a wider vector type would not stay in registers */
typedef float ak_v __attribute__((vector_size(VL * sizeof(float))));

void AK_CAT(mc_attn_gemm, MC_AK_VARIANT)(size_t k, const float *a, ptrdiff_t ast, ptrdiff_t asi, const float *b,
                                         float *c, bool add);

void AK_CAT(mc_attn_gemm, MC_AK_VARIANT)(size_t k, const float *a, ptrdiff_t ast, ptrdiff_t asi, const float *b,
                                         float *c, bool add)
{
    ak_v acc[MR][NV];
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < NV; v++) {
            if (add)
                memcpy(&acc[i][v], c + i * NR + v * VL, sizeof acc[i][v]);
            else
                acc[i][v] = (ak_v){0};
        }
    /* a's rows are read where they are (each value is broadcast, so they
     * need not be contiguous): one pointer per row, stepped by ast */
    const float *row[MR];
    for (int i = 0; i < MR; i++)
        row[i] = a + i * asi;
    for (size_t t = 0; t < k; t++) {
        ak_v bv[NV];
        for (int v = 0; v < NV; v++)
            memcpy(&bv[v], b + t * NR + v * VL, sizeof bv[v]);
        for (int i = 0; i < MR; i++) {
            float x = row[i][(ptrdiff_t)t * ast];
            for (int v = 0; v < NV; v++)
                acc[i][v] += x * bv[v];
        }
    }
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < NV; v++)
            memcpy(c + i * NR + v * VL, &acc[i][v], sizeof acc[i][v]);
}
