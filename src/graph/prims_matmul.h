/* The Matmul and AddMM primitives (prims_matmul.c, BLAS in blas.c).
 * Inputs a (..., m, k) or (k), b (..., k, n) or (k), of one inexact dtype;
 * batch dims broadcast. A 1-D a or b has no m or n dim in the output.
 * AddMM takes a third input c (same dtype, real floating) that broadcasts
 * to the output, and computes alpha * a @ b + beta * c. */
#ifndef MC_GRAPH_PRIMS_MATMUL_H
#define MC_GRAPH_PRIMS_MATMUL_H

#include "graph/primitive.h"

typedef struct mc_addmm_params {
    float alpha, beta;
} mc_addmm_params;

/* The checks MLX makes first, with its messages: no 0-d operand, and the
 * inner dims agree. Returns 0 or reports naming fn. */
int mc_matmul_check_shapes(const mc_array *a, const mc_array *b, const char *fn);

/* How BLAS reads an r x c matrix whose rows are rs and columns cs
 * elements apart: row-major (*trans false) or column-major (*trans true)
 * with leading dimension *ld. False when neither fits (a copy is needed).
 * For the other matrix products (prims_mm_ext.c). */
bool mc_matmul_layout(int r, int c, int64_t rs, int64_t cs, bool *trans, int64_t *ld);

#endif
