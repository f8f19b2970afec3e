/* The register block of attention's own products (simd/attn_k.c) for the
 * ISA a file is compiled for: MC_ATTN_MR rows broadcast from one packed
 * operand times MC_ATTN_NR lanes of the other. simd/attn_k.c and
 * simd/fast_k.c are built with the same flags per variant, so both see the
 * same block; the rest of the library reads it from mc_fast_kernels. */
#ifndef MC_SIMD_ATTN_SHAPE_H
#define MC_SIMD_ATTN_SHAPE_H

#if defined(__AVX512F__)
/* 16 accumulators of 16 floats: 32 registers leave room for the operands */
#define MC_ATTN_MR 8
#define MC_ATTN_NR 32
#define MC_ATTN_VL 16
#elif defined(__AVX2__)
/* 12 accumulators of 8 floats, 2 operand vectors and a broadcast: 15 of 16 */
#define MC_ATTN_MR 6
#define MC_ATTN_NR 16
#define MC_ATTN_VL 8
#else
/* SSE2 or NEON: 8 accumulators of 4 floats */
#define MC_ATTN_MR 4
#define MC_ATTN_NR 8
#define MC_ATTN_VL 4
#endif

#endif
