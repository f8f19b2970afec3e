/* The Hadamard transform along contiguous rows (hadamard_k.c). */
#ifndef MC_SIMD_HADAMARD_H
#define MC_SIMD_HADAMARD_H

#include <stddef.h>

/* Transforms, in place, each of the rows of x (n * m floats each, n a
 * power of two, m 1, 12, 20 or 28) by the Hadamard matrix of that size
 * that MLX uses (Sylvester's for 2^k, Sloane's for 12, 20 and 28,
 * combined as MLX combines them), times scale. */
void mc_hadamard_rows(float *x, size_t rows, int n, int m, float scale);

#endif
