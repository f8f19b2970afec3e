/* Parameters of the linear algebra primitives of LAPACK (prims_linalg.c):
 * MLX's Inverse, Cholesky, QRF, SVD, Eig, Eigh and LUF. Each is one node
 * whose output packs all of MLX's outputs of one matrix along a last axis
 * (linalg_kernels.h gives the order); the linalg ops slice the parts out,
 * so a factorization runs once however many of its outputs are used. A
 * primitive with a single MLX output (Inverse, Cholesky, and SVD, Eig,
 * Eigh without vectors) has MLX's shape directly. */
#ifndef MC_GRAPH_PRIMS_LINALG_H
#define MC_GRAPH_PRIMS_LINALG_H

/* Ints only, so params compare with memcmp. */
typedef struct mc_linalg_params {
    int tri;     /* Inverse: triangular */
    int upper;   /* Inverse (tri), Cholesky: the triangle used */
    int vectors; /* SVD (compute_uv), Eig, Eigh */
    int uplo;    /* Eigh: the character passed to LAPACK ('L', 'U', ...) */
} mc_linalg_params;

#endif
