/* Sorting and selection of one strided row (simd/sort_k.c), in MLX's
 * order (mlx/backend/cpu/sort.cpp, MLX 0.31.1). Pointers, lengths and
 * element strides only; dtypes are simd/dtype.h's codes.
 *
 * Sort is stable: equal elements keep their order. NaN (of float16,
 * bfloat16, float32, float64, and a complex64 whose real part is NaN) sorts
 * after every number, all NaNs equal; -0.0 equals 0.0; complex64 orders by
 * real part, then imaginary part. Indices are uint32.
 *
 * Partition is MLX's std::nth_element with MLX's comparators, step for step
 * (introselect: median-of-three pivot, Hoare partition, insertion sort
 * below four elements, heap select past 2*floor(log2 n) rounds), so every
 * element lands where MLX puts it, not only the kth. Its scans are bounded,
 * so comparators that MLX leaves inconsistent (NaN in float16, bfloat16,
 * and in complex64 for indices) cannot step outside the row. */
#ifndef MC_SIMD_SORT_H
#define MC_SIMD_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "simd/dtype.h"

/* Bytes of scratch a row of n elements of dtype needs for sort and
 * partition (values or indices). */
size_t mc_sort_scratch_bytes(int dtype, size_t n);

/* Sorts the n elements at src (element stride sstride, in elements) and
 * writes the sorted values (indices == false, dtype elements) or the
 * uint32 indices that sort them (indices == true) at dst, element stride
 * dstride. src and dst do not overlap. scratch: mc_sort_scratch_bytes
 * bytes, 16-byte aligned. */
void mc_sort_row(int dtype, bool indices, const void *src, int64_t sstride, void *dst, int64_t dstride, size_t n,
                 void *scratch);

/* As mc_sort_row, but only places the kth element (kth < n) as MLX's
 * partition does: smaller ones before it, larger ones after. For values,
 * src may be dst itself (same stride): the row is partitioned again in
 * place. */
void mc_partition_row(int dtype, bool indices, const void *src, int64_t sstride, void *dst, int64_t dstride,
                      size_t n, size_t kth, void *scratch);

#endif
