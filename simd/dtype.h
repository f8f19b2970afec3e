/* The element types simd/ kernels switch on and index their tables by. The
 * values equal mlx-c's mlx_dtype (src/array/dtype.c asserts it at build
 * time), so a layer above may hand an array's dtype straight to a table,
 * while simd/ itself never sees the public API. */
#ifndef MC_SIMD_DTYPE_H
#define MC_SIMD_DTYPE_H

typedef enum mc_simd_dtype {
    MC_SIMD_BOOL,
    MC_SIMD_UINT8,
    MC_SIMD_UINT16,
    MC_SIMD_UINT32,
    MC_SIMD_UINT64,
    MC_SIMD_INT8,
    MC_SIMD_INT16,
    MC_SIMD_INT32,
    MC_SIMD_INT64,
    MC_SIMD_FLOAT16,
    MC_SIMD_FLOAT32,
    MC_SIMD_FLOAT64,
    MC_SIMD_BFLOAT16,
    MC_SIMD_COMPLEX64,
    MC_SIMD_NUM_DTYPES
} mc_simd_dtype;

#endif
