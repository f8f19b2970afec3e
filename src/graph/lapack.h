/* The LAPACK routines the library calls, as the distribution's OpenBLAS
 * exports them: Fortran names with a trailing underscore, every argument
 * by pointer, LP64 ints, and one trailing hidden length per character
 * argument (gfortran's convention; LAPACK's own lapack.h passes them too).
 * Complex arguments are pairs of floats (re, im). Only linalg_kernels.c
 * calls these. */
#ifndef MC_GRAPH_LAPACK_H
#define MC_GRAPH_LAPACK_H

#include <stddef.h>

typedef size_t mc_flen; /* a hidden Fortran string length */

/* LU factorization, solves and inverse from it, triangular inverse, Cholesky. */
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void sgetri_(const int *n, float *a, const int *lda, const int *ipiv, float *work, const int *lwork, int *info);
void dgetri_(const int *n, double *a, const int *lda, const int *ipiv, double *work, const int *lwork, int *info);
void strtri_(const char *uplo, const char *diag, const int *n, float *a, const int *lda, int *info, mc_flen,
             mc_flen);
void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda, int *info, mc_flen,
             mc_flen);
void sgesv_(const int *n, const int *nrhs, float *a, const int *lda, int *ipiv, float *b, const int *ldb,
            int *info);
void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
            int *info);
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info, mc_flen);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, mc_flen);

/* QR: Householder factorization and the explicit Q. */
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work, const int *lwork,
             int *info);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda, const float *tau, float *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);

/* SVD by divide and conquer. */
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
             const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, int *iwork, int *info,
             mc_flen);
void dgesdd_(const char *jobz, const int *m, const int *n, double *a, const int *lda, double *s, double *u,
             const int *ldu, double *vt, const int *ldvt, double *work, const int *lwork, int *iwork, int *info,
             mc_flen);
void cgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
             const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, float *rwork, int *iwork,
             int *info, mc_flen);

/* General eigenproblem. */
void sgeev_(const char *jobvl, const char *jobvr, const int *n, float *a, const int *lda, float *wr, float *wi,
            float *vl, const int *ldvl, float *vr, const int *ldvr, float *work, const int *lwork, int *info,
            mc_flen, mc_flen);
void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda, double *wr, double *wi,
            double *vl, const int *ldvl, double *vr, const int *ldvr, double *work, const int *lwork, int *info,
            mc_flen, mc_flen);
void cgeev_(const char *jobvl, const char *jobvr, const int *n, float *a, const int *lda, float *w, float *vl,
            const int *ldvl, float *vr, const int *ldvr, float *work, const int *lwork, float *rwork, int *info,
            mc_flen, mc_flen);

/* Symmetric / Hermitian eigenproblem by divide and conquer. */
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w, float *work,
             const int *lwork, int *iwork, const int *liwork, int *info, mc_flen, mc_flen);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
             const int *lwork, int *iwork, const int *liwork, int *info, mc_flen, mc_flen);
void cheevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w, float *work,
             const int *lwork, float *rwork, const int *lrwork, int *iwork, const int *liwork, int *info, mc_flen,
             mc_flen);

#endif
