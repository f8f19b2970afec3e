/* Owns every LAPACK call of the library: one function per factorization
 * over a range of row-major matrices (linalg_kernels.h). LAPACK is
 * column-major, so each routine either reads the row-major buffer as the
 * transpose (inverse, cholesky, svd, eig, eigh, exactly as MLX's CPU backend
 * does, which fixes MLX's conventions: eigh's UPLO names the triangle of the
 * transpose, eig's vectors come from the transpose's left vectors) or first
 * copies the matrix transposed (qrf, luf, as MLX does). Workspace sizes are
 * queried once per range. */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph/lapack.h"
#include "graph/linalg_kernels.h"

static size_t elem_size(mlx_dtype t) { return t == MLX_FLOAT32 ? 4 : 8; }
static int min_int(int a, int b) { return a < b ? a : b; }
static int max1(int a) { return a > 1 ? a : 1; }

mlx_dtype mc_la_out_dtype(const mc_la_job *j)
{
    if (j->kind == MC_LA_EIG)
        return MLX_COMPLEX64;
    if ((j->kind == MC_LA_SVD || j->kind == MC_LA_EIGH) && !j->vectors && j->dtype == MLX_COMPLEX64)
        return MLX_FLOAT32;
    return j->dtype;
}

size_t mc_la_out_per(const mc_la_job *j)
{
    size_t m = (size_t)j->m, n = (size_t)j->n, k = m < n ? m : n;
    switch (j->kind) {
    case MC_LA_INVERSE:
    case MC_LA_CHOLESKY: return m * n;
    case MC_LA_QRF: return m * k + k * n;
    case MC_LA_SVD: return j->vectors ? m * m + k + n * n : k;
    case MC_LA_EIG:
    case MC_LA_EIGH: return j->vectors ? n + n * n : n;
    case MC_LA_LUF: return m * n + k + m;
    }
    return 0;
}

/* A workspace size LAPACK wrote into its first work element. */
static int query_size(mlx_dtype t, const void *q)
{
    double v = t == MLX_FLOAT64 ? *(const double *)q : (double)*(const float *)q;
    return max1((int)v + 1);
}

static int fail_at(mc_la_fail *f, size_t index, int info, mc_la_stage stage)
{
    f->index = index;
    f->info = info;
    f->stage = stage;
    return 1;
}

/* Zeros the triangle of a row-major n x n matrix that a triangular result
 * leaves unset: below the diagonal if upper, above it otherwise. */
static void zero_other_triangle(char *a, int n, size_t es, bool upper)
{
    for (int r = 0; r < n; r++) {
        char *row = a + (size_t)r * (size_t)n * es;
        if (upper)
            memset(row, 0, (size_t)r * es);
        else
            memset(row + (size_t)(r + 1) * es, 0, (size_t)(n - r - 1) * es);
    }
}

/* Row-major m x n <-> column-major (m rows): one transpose, by element size
 * so that the small matrices of a batch do not pay a memcpy per element. */
static void transpose_copy(char *dst, const char *src, int rows, int cols, size_t es)
{
    const size_t R = (size_t)rows, C = (size_t)cols;
    if (es == 8) {
        for (size_t r = 0; r < R; r++)
            for (size_t c = 0; c < C; c++)
                ((double *)dst)[r + c * R] = ((const double *)src)[r * C + c];
    } else if (es == 4) {
        for (size_t r = 0; r < R; r++)
            for (size_t c = 0; c < C; c++)
                ((float *)dst)[r + c * R] = ((const float *)src)[r * C + c];
    } else {
        for (size_t r = 0; r < R; r++)
            for (size_t c = 0; c < C; c++)
                memcpy(dst + (r + c * R) * es, src + (r * C + c) * es, es);
    }
}

/* dst (column-major, m rows) = src (row-major m x n). */
static void to_col_major(char *dst, const char *src, int m, int n, size_t es)
{
    transpose_copy(dst, src, m, n, es);
}

/* dst (row-major m x n) = src (column-major, m rows): the transpose of src
 * read as row-major n x m. */
static void from_col_major(char *dst, const char *src, int m, int n, size_t es)
{
    transpose_copy(dst, src, n, m, es);
}

/* -- Inverse and Cholesky: in place on a copy of the row-major buffer ---- */

static int run_inverse(const mc_la_job *j, const char *in, char *out, size_t b0, size_t b1, mc_la_fail *f)
{
    const int n = j->n, ld = max1(n);
    const bool f32 = j->dtype == MLX_FLOAT32;
    const size_t es = elem_size(j->dtype), per = (size_t)n * (size_t)n * es;
    int info = 0, lwork = -1;
    if (n == 0)
        return 0;
    int *ipiv = NULL;
    void *work = NULL;
    if (!j->tri) {
        double q[2] = {0, 0};
        ipiv = malloc(sizeof(int) * (size_t)max1(n));
        if (f32)
            sgetri_(&n, NULL, &ld, NULL, (float *)q, &lwork, &info);
        else
            dgetri_(&n, NULL, &ld, NULL, q, &lwork, &info);
        lwork = query_size(j->dtype, q);
        work = malloc(es * (size_t)lwork);
        if (!ipiv || !work) {
            free(ipiv), free(work);
            return fail_at(f, b0, 0, MC_LA_NO_MEMORY);
        }
    }
    /* the transpose's opposite triangle is the one asked for */
    const char uplo = j->upper ? 'L' : 'U', diag = 'N';
    int rc = 0;
    for (size_t b = b0; b < b1 && !rc; b++) {
        char *a = out + b * per;
        memcpy(a, in + b * per, per);
        if (j->tri) {
            if (f32)
                strtri_(&uplo, &diag, &n, (float *)a, &ld, &info, 1, 1);
            else
                dtrtri_(&uplo, &diag, &n, (double *)a, &ld, &info, 1, 1);
            zero_other_triangle(a, n, es, j->upper);
            if (info != 0)
                rc = fail_at(f, b, info, MC_LA_STEP_INVERT);
            continue;
        }
        if (f32)
            sgetrf_(&n, &n, (float *)a, &ld, ipiv, &info);
        else
            dgetrf_(&n, &n, (double *)a, &ld, ipiv, &info);
        if (info != 0) {
            rc = fail_at(f, b, info, MC_LA_STEP_FACTOR);
            break;
        }
        if (f32)
            sgetri_(&n, (float *)a, &ld, ipiv, work, &lwork, &info);
        else
            dgetri_(&n, (double *)a, &ld, ipiv, work, &lwork, &info);
        if (info != 0)
            rc = fail_at(f, b, info, MC_LA_STEP_INVERT);
    }
    free(ipiv), free(work);
    return rc;
}

static int run_cholesky(const mc_la_job *j, const char *in, char *out, size_t b0, size_t b1, mc_la_fail *f)
{
    const int n = j->n, ld = max1(n);
    const size_t es = elem_size(j->dtype), per = (size_t)n * (size_t)n * es;
    const char uplo = j->upper ? 'L' : 'U';
    for (size_t b = b0; b < b1; b++) {
        char *a = out + b * per;
        int info = 0;
        memcpy(a, in + b * per, per);
        if (j->dtype == MLX_FLOAT32)
            spotrf_(&uplo, &n, (float *)a, &ld, &info, 1);
        else
            dpotrf_(&uplo, &n, (double *)a, &ld, &info, 1);
        /* as MLX: a matrix that is not positive definite (info > 0) keeps
         * LAPACK's partial factor; only a bad argument is an error */
        if (info < 0)
            return fail_at(f, b, info, MC_LA_STEP_FACTOR);
        zero_other_triangle(a, n, es, j->upper);
    }
    return 0;
}

/* -- QR: on a column-major copy ------------------------------------------- */

static int run_qrf(const mc_la_job *j, const char *in, char *out, size_t b0, size_t b1, mc_la_fail *f)
{
    const int m = j->m, n = j->n, k = min_int(m, n), lda = max1(m);
    const bool f32 = j->dtype == MLX_FLOAT32;
    const size_t es = elem_size(j->dtype), per_in = (size_t)m * (size_t)n * es;
    const size_t per_out = mc_la_out_per(j) * es;
    if (k == 0)
        return 0;
    double q1[2] = {0, 0}, q2[2] = {0, 0};
    int info = 0, lwork = -1;
    if (f32) {
        sgeqrf_(&m, &n, NULL, &lda, NULL, (float *)q1, &lwork, &info);
        sorgqr_(&m, &k, &k, NULL, &lda, NULL, (float *)q2, &lwork, &info);
    } else {
        dgeqrf_(&m, &n, NULL, &lda, NULL, q1, &lwork, &info);
        dorgqr_(&m, &k, &k, NULL, &lda, NULL, q2, &lwork, &info);
    }
    int l1 = query_size(j->dtype, q1), l2 = query_size(j->dtype, q2);
    lwork = l1 > l2 ? l1 : l2;
    char *w = malloc(per_in + es * (size_t)k + es * (size_t)lwork);
    if (!w)
        return fail_at(f, b0, 0, MC_LA_NO_MEMORY);
    char *tau = w + per_in, *work = tau + es * (size_t)k;
    for (size_t b = b0; b < b1; b++) {
        char *q = out + b * per_out, *r = q + (size_t)m * (size_t)k * es;
        to_col_major(w, in + b * per_in, m, n, es);
        if (f32)
            sgeqrf_(&m, &n, (float *)w, &lda, (float *)tau, (float *)work, &lwork, &info);
        else
            dgeqrf_(&m, &n, (double *)w, &lda, (double *)tau, (double *)work, &lwork, &info);
        for (int row = 0; row < k; row++)
            for (int c = 0; c < n; c++) {
                char *dst = r + ((size_t)row * (size_t)n + (size_t)c) * es;
                if (c < row)
                    memset(dst, 0, es);
                else
                    memcpy(dst, w + ((size_t)row + (size_t)c * (size_t)m) * es, es);
            }
        if (f32)
            sorgqr_(&m, &k, &k, (float *)w, &lda, (float *)tau, (float *)work, &lwork, &info);
        else
            dorgqr_(&m, &k, &k, (double *)w, &lda, (double *)tau, (double *)work, &lwork, &info);
        for (int row = 0; row < m; row++)
            for (int c = 0; c < k; c++)
                memcpy(q + ((size_t)row * (size_t)k + (size_t)c) * es,
                       w + ((size_t)row + (size_t)c * (size_t)m) * es, es);
    }
    free(w);
    return 0;
}

/* -- SVD: gesdd on the transpose, so its U is our Vt and its Vt our U ---- */

static void identity(char *a, int n, mlx_dtype t)
{
    size_t es = t == MLX_FLOAT32 ? 4 : 8;
    memset(a, 0, (size_t)n * (size_t)n * es);
    for (int i = 0; i < n; i++) {
        char *d = a + ((size_t)i * (size_t)n + (size_t)i) * es;
        if (t == MLX_FLOAT64)
            *(double *)d = 1;
        else
            *(float *)d = 1;
    }
}

static int run_svd(const mc_la_job *j, const char *in, char *out, size_t b0, size_t b1, mc_la_fail *f)
{
    const int m = j->m, n = j->n, k = min_int(m, n);
    const bool cplx = j->dtype == MLX_COMPLEX64;
    const size_t es = elem_size(j->dtype), per_in = (size_t)m * (size_t)n * es;
    const size_t oes = elem_size(mc_la_out_dtype(j)), per_out = mc_la_out_per(j) * oes;
    const char jobz = j->vectors ? 'A' : 'N';
    const int lda = max1(n), ldu = max1(n), ldvt = max1(m);
    if (k == 0) {
        for (size_t b = b0; b < b1 && j->vectors; b++) {
            char *u = out + b * per_out;
            identity(u, m, j->dtype);
            identity(u + (size_t)m * (size_t)m * es, n, j->dtype);
        }
        return 0;
    }
    double q[2] = {0, 0};
    int info = 0, lwork = -1;
    size_t lrwork = j->vectors ? 5 * (size_t)k * (size_t)k + 5 * (size_t)k : 7 * (size_t)k;
    int *iwork = malloc(sizeof(int) * 8 * (size_t)k);
    float *rwork = cplx ? malloc(sizeof(float) * (lrwork > 1 ? lrwork : 1)) : NULL;
    if (!iwork || (cplx && !rwork)) {
        free(iwork), free(rwork);
        return fail_at(f, b0, 0, MC_LA_NO_MEMORY);
    }
    if (j->dtype == MLX_FLOAT32)
        sgesdd_(&jobz, &n, &m, NULL, &lda, NULL, NULL, &ldu, NULL, &ldvt, (float *)q, &lwork, iwork, &info, 1);
    else if (j->dtype == MLX_FLOAT64)
        dgesdd_(&jobz, &n, &m, NULL, &lda, NULL, NULL, &ldu, NULL, &ldvt, q, &lwork, iwork, &info, 1);
    else
        cgesdd_(&jobz, &n, &m, NULL, &lda, NULL, NULL, &ldu, NULL, &ldvt, (float *)q, &lwork, rwork, iwork, &info,
                1);
    lwork = query_size(cplx ? MLX_FLOAT32 : j->dtype, q);
    /* a copy of the matrix, the values (real) and the workspace */
    size_t res = cplx ? 4 : es;
    char *w = malloc(per_in + res * (size_t)k + es * (size_t)lwork);
    if (!w) {
        free(iwork), free(rwork);
        return fail_at(f, b0, 0, MC_LA_NO_MEMORY);
    }
    char *s = w + per_in, *work = s + res * (size_t)k;
    int rc = 0;
    for (size_t b = b0; b < b1 && !rc; b++) {
        char *o = out + b * per_out;
        char *u = j->vectors ? o : NULL, *sv = j->vectors ? o + (size_t)m * (size_t)m * es : o;
        char *vt = j->vectors ? sv + (size_t)k * es : NULL;
        char *s_dst = cplx ? s : sv;
        memcpy(w, in + b * per_in, per_in);
        if (j->dtype == MLX_FLOAT32)
            sgesdd_(&jobz, &n, &m, (float *)w, &lda, (float *)s_dst, (float *)vt, &ldu, (float *)u, &ldvt,
                    (float *)work, &lwork, iwork, &info, 1);
        else if (j->dtype == MLX_FLOAT64)
            dgesdd_(&jobz, &n, &m, (double *)w, &lda, (double *)s_dst, (double *)vt, &ldu, (double *)u, &ldvt,
                    (double *)work, &lwork, iwork, &info, 1);
        else
            cgesdd_(&jobz, &n, &m, (float *)w, &lda, (float *)s_dst, (float *)vt, &ldu, (float *)u, &ldvt,
                    (float *)work, &lwork, rwork, iwork, &info, 1);
        if (info != 0) {
            rc = fail_at(f, b, info, MC_LA_STEP_FACTOR);
        } else if (cplx && j->vectors) {
            float *d = (float *)sv;
            for (int i = 0; i < k; i++)
                d[2 * i] = ((float *)s)[i], d[2 * i + 1] = 0;
        } else if (cplx) {
            memcpy(sv, s, sizeof(float) * (size_t)k);
        }
    }
    free(w), free(iwork), free(rwork);
    return rc;
}

/* -- Eig: geev's left vectors of the transpose are the conjugates of our
 * right vectors, for real and complex input alike ------------------------ */

static int run_eig(const mc_la_job *j, const char *in, char *out, size_t b0, size_t b1, mc_la_fail *f)
{
    const int n = j->n, ld = max1(n), one = 1;
    const bool cplx = j->dtype == MLX_COMPLEX64;
    const size_t es = elem_size(j->dtype), nn = (size_t)n * (size_t)n, per_in = nn * es;
    const size_t per_out = mc_la_out_per(j);
    const char jobl = j->vectors ? 'V' : 'N', jobr = 'N';
    const int ldvl = j->vectors ? ld : 1;
    if (n == 0)
        return 0;
    double q[2] = {0, 0};
    int info = 0, lwork = -1;
    float *rwork = cplx ? malloc(sizeof(float) * 2 * (size_t)n) : NULL;
    if (cplx && !rwork)
        return fail_at(f, b0, 0, MC_LA_NO_MEMORY);
    if (j->dtype == MLX_FLOAT32)
        sgeev_(&jobl, &jobr, &n, NULL, &ld, NULL, NULL, NULL, &ldvl, NULL, &one, (float *)q, &lwork, &info, 1, 1);
    else if (j->dtype == MLX_FLOAT64)
        dgeev_(&jobl, &jobr, &n, NULL, &ld, NULL, NULL, NULL, &ldvl, NULL, &one, q, &lwork, &info, 1, 1);
    else
        cgeev_(&jobl, &jobr, &n, NULL, &ld, NULL, NULL, &ldvl, NULL, &one, (float *)q, &lwork, rwork, &info, 1, 1);
    lwork = query_size(cplx ? MLX_FLOAT32 : j->dtype, q);
    /* copy, values (wr, wi or complex w), left vectors, workspace */
    size_t need = per_in + 2 * (size_t)n * (cplx ? 4 : es) + (j->vectors ? per_in : 0) + es * (size_t)lwork;
    char *w = malloc(need);
    if (!w) {
        free(rwork);
        return fail_at(f, b0, 0, MC_LA_NO_MEMORY);
    }
    char *vals = w + per_in, *vl = vals + 2 * (size_t)n * (cplx ? 4 : es);
    char *work = vl + (j->vectors ? per_in : 0);
    int rc = 0;
    for (size_t b = b0; b < b1 && !rc; b++) {
        float complex *ov = (float complex *)out + b * per_out, *ovec = ov + n;
        memcpy(w, in + b * per_in, per_in);
        void *vlp = j->vectors ? (void *)vl : NULL;
        if (j->dtype == MLX_FLOAT32)
            sgeev_(&jobl, &jobr, &n, (float *)w, &ld, (float *)vals, (float *)vals + n, vlp, &ldvl, NULL, &one,
                   (float *)work, &lwork, &info, 1, 1);
        else if (j->dtype == MLX_FLOAT64)
            dgeev_(&jobl, &jobr, &n, (double *)w, &ld, (double *)vals, (double *)vals + n, vlp, &ldvl, NULL, &one,
                   (double *)work, &lwork, &info, 1, 1);
        else
            cgeev_(&jobl, &jobr, &n, (float *)w, &ld, (float *)vals, vlp, &ldvl, NULL, &one, (float *)work, &lwork,
                   rwork, &info, 1, 1);
        if (info != 0) {
            rc = fail_at(f, b, info, MC_LA_STEP_FACTOR);
            break;
        }
        if (cplx) {
            const float complex *cw = (const float complex *)vals, *cv = (const float complex *)vl;
            for (int i = 0; i < n; i++)
                ov[i] = cw[i];
            for (int c = 0; c < n && j->vectors; c++)
                for (int r = 0; r < n; r++)
                    ovec[(size_t)r * (size_t)n + (size_t)c] = conjf(cv[(size_t)c * (size_t)n + (size_t)r]);
            continue;
        }
        /* real input: values as (wr, wi); a complex pair c, c + 1 has its
         * left vector's real part in column c and imaginary part in c + 1 */
        const bool f32 = j->dtype == MLX_FLOAT32;
#define EIG_AT(p, i) (f32 ? (double)((const float *)(p))[i] : ((const double *)(p))[i])
        for (int i = 0; i < n; i++)
            ov[i] = (float)EIG_AT(vals, i) + (float)EIG_AT(vals, n + i) * I;
        for (int c = 0; c < n && j->vectors; c++) {
            size_t col = (size_t)c * (size_t)n;
            if (EIG_AT(vals, n + c) != 0 && c + 1 < n) {
                for (int r = 0; r < n; r++) {
                    float re = (float)EIG_AT(vl, col + (size_t)r),
                          im = (float)EIG_AT(vl, col + (size_t)n + (size_t)r);
                    ovec[(size_t)r * (size_t)n + (size_t)c] = re - im * I;
                    ovec[(size_t)r * (size_t)n + (size_t)c + 1] = re + im * I;
                }
                c++;
            } else {
                for (int r = 0; r < n; r++)
                    ovec[(size_t)r * (size_t)n + (size_t)c] = (float)EIG_AT(vl, col + (size_t)r);
            }
        }
#undef EIG_AT
    }
    free(w), free(rwork);
    return rc;
}

/* -- Eigh: syevd / heevd on the transpose, vectors transposed back ------- */

static int run_eigh(const mc_la_job *j, const char *in, char *out, size_t b0, size_t b1, mc_la_fail *f)
{
    const int n = j->n, ld = max1(n);
    const bool cplx = j->dtype == MLX_COMPLEX64;
    const size_t es = elem_size(j->dtype), nn = (size_t)n * (size_t)n, per_in = nn * es;
    const size_t res = cplx ? 4 : es, per_out = mc_la_out_per(j) * elem_size(mc_la_out_dtype(j));
    const char jobz = j->vectors ? 'V' : 'N', uplo = j->uplo;
    if (n == 0)
        return 0;
    double q[2] = {0, 0};
    float rq = 0;
    int info = 0, lwork = -1, liwork = -1, lrwork = -1, iq = 0;
    if (j->dtype == MLX_FLOAT32)
        ssyevd_(&jobz, &uplo, &n, NULL, &ld, NULL, (float *)q, &lwork, &iq, &liwork, &info, 1, 1);
    else if (j->dtype == MLX_FLOAT64)
        dsyevd_(&jobz, &uplo, &n, NULL, &ld, NULL, q, &lwork, &iq, &liwork, &info, 1, 1);
    else
        cheevd_(&jobz, &uplo, &n, NULL, &ld, NULL, (float *)q, &lwork, &rq, &lrwork, &iq, &liwork, &info, 1, 1);
    if (info != 0)
        return fail_at(f, b0, info, MC_LA_STEP_FACTOR);
    lwork = query_size(cplx ? MLX_FLOAT32 : j->dtype, q);
    liwork = max1(iq);
    lrwork = max1((int)rq + 1);
    size_t need = per_in + res * (size_t)n + es * (size_t)lwork + sizeof(float) * (cplx ? (size_t)lrwork : 0);
    char *w = malloc(need);
    int *iwork = malloc(sizeof(int) * (size_t)liwork);
    if (!w || !iwork) {
        free(w), free(iwork);
        return fail_at(f, b0, 0, MC_LA_NO_MEMORY);
    }
    char *vals = w + per_in, *work = vals + res * (size_t)n, *rwork = work + es * (size_t)lwork;
    int rc = 0;
    for (size_t b = b0; b < b1 && !rc; b++) {
        char *o = out + b * per_out;
        memcpy(w, in + b * per_in, per_in);
        if (j->dtype == MLX_FLOAT32)
            ssyevd_(&jobz, &uplo, &n, (float *)w, &ld, (float *)vals, (float *)work, &lwork, iwork, &liwork, &info,
                    1, 1);
        else if (j->dtype == MLX_FLOAT64)
            dsyevd_(&jobz, &uplo, &n, (double *)w, &ld, (double *)vals, (double *)work, &lwork, iwork, &liwork,
                    &info, 1, 1);
        else
            cheevd_(&jobz, &uplo, &n, (float *)w, &ld, (float *)vals, (float *)work, &lwork, (float *)rwork,
                    &lrwork, iwork, &liwork, &info, 1, 1);
        if (info != 0) {
            rc = fail_at(f, b, info, MC_LA_STEP_FACTOR);
            break;
        }
        if (!j->vectors) {
            memcpy(o, vals, res * (size_t)n);
            continue;
        }
        if (cplx) {
            float complex *ov = (float complex *)o, *ovec = ov + n;
            const float complex *z = (const float complex *)w;
            for (int i = 0; i < n; i++)
                ov[i] = ((const float *)vals)[i];
            /* the vectors of the transpose (the conjugate) are conjugates */
            for (int c = 0; c < n; c++)
                for (int r = 0; r < n; r++)
                    ovec[(size_t)r * (size_t)n + (size_t)c] = conjf(z[(size_t)c * (size_t)n + (size_t)r]);
            continue;
        }
        memcpy(o, vals, es * (size_t)n);
        char *ovec = o + es * (size_t)n;
        for (int c = 0; c < n; c++)
            for (int r = 0; r < n; r++)
                memcpy(ovec + ((size_t)r * (size_t)n + (size_t)c) * es,
                       w + ((size_t)c * (size_t)n + (size_t)r) * es, es);
    }
    free(w), free(iwork);
    return rc;
}

/* -- LUF: getrf on a column-major copy ------------------------------------- */

static int run_luf(const mc_la_job *j, const char *in, char *out, size_t b0, size_t b1, mc_la_fail *f)
{
    const int m = j->m, n = j->n, k = min_int(m, n), lda = max1(m);
    const bool f32 = j->dtype == MLX_FLOAT32;
    const size_t es = elem_size(j->dtype), per_in = (size_t)m * (size_t)n * es, per_out = mc_la_out_per(j) * es;
    char *w = malloc(per_in + 1);
    int *ipiv = malloc(sizeof(int) * (size_t)max1(k)), *rows = malloc(sizeof(int) * (size_t)max1(m));
    int rc = 0;
    if (!w || !ipiv || !rows)
        rc = fail_at(f, b0, 0, MC_LA_NO_MEMORY);
    for (size_t b = b0; b < b1 && !rc; b++) {
        char *o = out + b * per_out;
        int info = 0;
        to_col_major(w, in + b * per_in, m, n, es);
        if (k > 0) {
            if (f32)
                sgetrf_(&m, &n, (float *)w, &lda, ipiv, &info);
            else
                dgetrf_(&m, &n, (double *)w, &lda, ipiv, &info);
        }
        if (info != 0) {
            rc = fail_at(f, b, info, MC_LA_STEP_FACTOR);
            break;
        }
        from_col_major(o, w, m, n, es);
        /* MLX's row indices: the swaps applied to 0..m-1 last to first */
        for (int i = 0; i < m; i++)
            rows[i] = i;
        for (int i = k - 1; i >= 0; i--) {
            int p = ipiv[i] - 1, t = rows[p];
            rows[p] = rows[i];
            rows[i] = t;
        }
        char *piv = o + (size_t)m * (size_t)n * es, *ri = piv + (size_t)k * es;
        for (int i = 0; i < k; i++) {
            if (f32)
                ((float *)piv)[i] = (float)(ipiv[i] - 1);
            else
                ((double *)piv)[i] = ipiv[i] - 1;
        }
        for (int i = 0; i < m; i++) {
            if (f32)
                ((float *)ri)[i] = (float)rows[i];
            else
                ((double *)ri)[i] = rows[i];
        }
    }
    free(w), free(ipiv), free(rows);
    return rc;
}

/* -- solve: one gesv per matrix on column-major copies --------------------
 * One LAPACK call per system, not getrf then getrs: for the small batched
 * systems solve is used for, OpenBLAS's per-call setup (a locked workspace
 * allocation in each interface) costs as much as the 4x4 arithmetic. */

int mc_la_solve(mlx_dtype dtype, int n, int nrhs, const void *a, const void *b, void *x, size_t begin, size_t end,
                mc_la_fail *fail)
{
    const bool f32 = dtype == MLX_FLOAT32;
    const int ld = max1(n);
    const size_t es = elem_size(dtype), nn = (size_t)n * (size_t)n * es, nb = (size_t)n * (size_t)nrhs * es;
    if (n == 0 || nrhs == 0)
        return 0;
    /* the matrix column-major, the right-hand sides column-major, the pivots */
    char *w = malloc(nn + nb + sizeof(int) * (size_t)n);
    if (!w)
        return fail_at(fail, begin, 0, MC_LA_NO_MEMORY);
    char *rhs = w + nn;
    int *ipiv = (int *)(rhs + nb), rc = 0;
    for (size_t i = begin; i < end && !rc; i++) {
        int info = 0;
        const char *bi = (const char *)b + i * nb;
        char *xi = (char *)x + i * nb;
        to_col_major(w, (const char *)a + i * nn, n, n, es);
        if (nrhs == 1)
            memcpy(rhs, bi, nb);
        else
            to_col_major(rhs, bi, n, nrhs, es);
        if (f32)
            sgesv_(&n, &nrhs, (float *)w, &ld, ipiv, (float *)rhs, &ld, &info);
        else
            dgesv_(&n, &nrhs, (double *)w, &ld, ipiv, (double *)rhs, &ld, &info);
        if (info != 0) {
            rc = fail_at(fail, i, info, MC_LA_STEP_FACTOR);
            break;
        }
        if (nrhs == 1)
            memcpy(xi, rhs, nb);
        else
            from_col_major(xi, rhs, n, nrhs, es);
    }
    free(w);
    return rc;
}

int mc_la_run(const mc_la_job *j, const void *in, void *out, size_t begin, size_t end, mc_la_fail *fail)
{
    switch (j->kind) {
    case MC_LA_INVERSE: return run_inverse(j, in, out, begin, end, fail);
    case MC_LA_CHOLESKY: return run_cholesky(j, in, out, begin, end, fail);
    case MC_LA_QRF: return run_qrf(j, in, out, begin, end, fail);
    case MC_LA_SVD: return run_svd(j, in, out, begin, end, fail);
    case MC_LA_EIG: return run_eig(j, in, out, begin, end, fail);
    case MC_LA_EIGH: return run_eigh(j, in, out, begin, end, fail);
    case MC_LA_LUF: return run_luf(j, in, out, begin, end, fail);
    }
    return 0;
}
