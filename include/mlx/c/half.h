/* Half-precision scalar types for the float16/bfloat16 accessors.
 * As in mlx-c, HAS_FLOAT16 / HAS_BFLOAT16 are defined where the compiler
 * has the type: always on aarch64, and on x86_64 where it offers _Float16
 * (gcc 12, clang 15) and __bf16 (gcc 13, clang 17). The library exports the
 * accessors on every target, so a newer compiler can still use them. */
#ifndef MLX_HALF_H
#define MLX_HALF_H

#if defined(__ARM_FEATURE_FP16_SCALAR_ARITHMETIC) || defined(__aarch64__)
#define HAS_FLOAT16
#include <arm_fp16.h>
typedef __fp16 float16_t;
#elif defined(__FLT16_MAX__) && !defined(__cplusplus)
#define HAS_FLOAT16
__extension__ typedef _Float16 float16_t;
#endif

/* clang before 15 rejects __bf16 on aarch64 unless +bf16 is enabled */
#if defined(__ARM_FEATURE_BF16) || \
    (defined(__aarch64__) && (!defined(__clang__) || __clang_major__ >= 15))
#define HAS_BFLOAT16
#include <arm_bf16.h>
__extension__ typedef __bf16 bfloat16_t;
#elif defined(__BFLT16_MAX__) && defined(__x86_64__)
#define HAS_BFLOAT16
__extension__ typedef __bf16 bfloat16_t;
#endif

#endif
