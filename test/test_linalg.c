/* The linalg suite: mlx-c's linalg.h (src/ops/linalg_*.c,
 * src/graph/prims_linalg.c, src/graph/linalg_kernels.c).
 *
 * - every function against MLX 0.31.1 on small float32, float64 and
 *   complex64 inputs (scripts/make_linalg_fixtures.py wrote
 *   test/fixtures/linalg_cases.h): values, shapes, dtypes, and the
 *   conventions numpy does not share (eig's order, eigh's UPLO, lu's rows);
 * - residuals of every factorization on random and ill-conditioned batches
 *   (Hilbert matrices), within a small multiple of eps times the condition
 *   number;
 * - a batch split over the pool gives each matrix's own result;
 * - MLX's errors: dtypes, shapes, singular matrices (at evaluation), UPLO,
 *   norm orders and axes, cross axes; vjp and jvp "not implemented". */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures/linalg_cases.h"
#include "test_util.h"

#define S tu_stream()
#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define OK(call) assert_int_equal((call), 0)

/* ---- arrays from and to doubles ---- */

static size_t count_of(int ndim, const int *shape)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    return n;
}

/* vals: n reals, or n (re, im) pairs for complex64. */
static mlx_array make(mlx_dtype d, const double *vals, const int *shape, int ndim)
{
    if (d != MLX_COMPLEX64)
        return tu_array_of(d, vals, shape, ndim);
    size_t n = count_of(ndim, shape);
    float *buf = malloc(sizeof(float) * 2 * (n ? n : 1));
    assert_non_null(buf);
    for (size_t i = 0; i < 2 * n; i++)
        buf[i] = (float)vals[i];
    mlx_array a = mlx_array_new_data(buf, shape, ndim, MLX_COMPLEX64);
    free(buf);
    return a;
}

/* Every element (row-major) as re[i] (+ im[i] if im); returns the count. */
static size_t read_all(mlx_array a, double **re, double **im)
{
    size_t n = mlx_array_size(a);
    *re = calloc(n + 1, sizeof(double));
    if (im)
        *im = calloc(n + 1, sizeof(double));
    if (mlx_array_dtype(a) == MLX_COMPLEX64) {
        mlx_array r = mlx_array_new(), i = mlx_array_new();
        OK(mlx_real(&r, a, S));
        OK(mlx_imag(&i, a, S));
        for (size_t k = 0; k < n; k++) {
            (*re)[k] = tu_get(r, k);
            if (im)
                (*im)[k] = tu_get(i, k);
        }
        mlx_array_free(r), mlx_array_free(i);
    } else {
        for (size_t k = 0; k < n; k++)
            (*re)[k] = tu_get(a, k);
    }
    return n;
}

/* ---- against MLX ---- */

static mlx_array fixture_array(const lc_arr *x) { return make(x->dtype, lc_vals + x->off, x->shape, x->ndim); }

static void run_case(const lc_case *c, mlx_vector_array *outs)
{
    mlx_array a = fixture_array(&c->in[0]), b = c->nin > 1 ? fixture_array(&c->in[1]) : mlx_array_new();
    mlx_array r0 = mlx_array_new(), r1 = mlx_array_new();
    int nd = c->in[0].ndim, mat[2] = {nd - 2, nd - 1}, last[2] = {-2, -1}, vec = -1;
    switch (c->fn) {
    case LC_INV: OK(mlx_linalg_inv(&r0, a, S)); break;
    case LC_TRI_INV_LOWER: OK(mlx_linalg_tri_inv(&r0, a, false, S)); break;
    case LC_TRI_INV_UPPER: OK(mlx_linalg_tri_inv(&r0, a, true, S)); break;
    case LC_CHOLESKY_LOWER: OK(mlx_linalg_cholesky(&r0, a, false, S)); break;
    case LC_CHOLESKY_UPPER: OK(mlx_linalg_cholesky(&r0, a, true, S)); break;
    case LC_CHOLESKY_INV: OK(mlx_linalg_cholesky_inv(&r0, a, false, S)); break;
    case LC_QR: OK(mlx_linalg_qr(&r0, &r1, a, S)); break;
    case LC_SVD: OK(mlx_linalg_svd(outs, a, true, S)); break;
    case LC_SVDVALS: OK(mlx_linalg_svd(outs, a, false, S)); break;
    case LC_EIG: OK(mlx_linalg_eig(&r0, &r1, a, S)); break;
    case LC_EIGVALS: OK(mlx_linalg_eigvals(&r0, a, S)); break;
    case LC_EIGH_L: OK(mlx_linalg_eigh(&r0, &r1, a, "L", S)); break;
    case LC_EIGH_U: OK(mlx_linalg_eigh(&r0, &r1, a, "U", S)); break;
    case LC_EIGVALSH_L: OK(mlx_linalg_eigvalsh(&r0, a, "L", S)); break;
    case LC_LU: OK(mlx_linalg_lu(outs, a, S)); break;
    case LC_LU_FACTOR: OK(mlx_linalg_lu_factor(&r0, &r1, a, S)); break;
    case LC_SOLVE: OK(mlx_linalg_solve(&r0, a, b, S)); break;
    case LC_SOLVE_TRIANGULAR_UPPER: OK(mlx_linalg_solve_triangular(&r0, a, b, true, S)); break;
    case LC_PINV: OK(mlx_linalg_pinv(&r0, a, S)); break;
    case LC_NORM_FRO: OK(mlx_linalg_norm_matrix(&r0, a, "fro", last, 2, false, S)); break;
    case LC_NORM_NUC: OK(mlx_linalg_norm_matrix(&r0, a, "nuc", last, 2, false, S)); break;
    case LC_NORM_ORD:
        if (c->out[0].ndim == nd - 1)
            OK(mlx_linalg_norm(&r0, a, c->extra, &vec, 1, false, S));
        else
            OK(mlx_linalg_norm(&r0, a, c->extra, mat, 2, false, S));
        break;
    case LC_CROSS: OK(mlx_linalg_cross(&r0, a, b, -1, S)); break;
    default: fail();
    }
    if (c->fn != LC_SVD && c->fn != LC_SVDVALS && c->fn != LC_LU) {
        mlx_array pair[2] = {r0, r1};
        OK(mlx_vector_array_set_data(outs, pair, (size_t)c->nout));
    }
    mlx_array_free(a), mlx_array_free(b), mlx_array_free(r0), mlx_array_free(r1);
}

static void test_values_match_mlx(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_(lc_cases); k++) {
        const lc_case *c = &lc_cases[k];
        mlx_vector_array outs = mlx_vector_array_new();
        run_case(c, &outs);
        if (mlx_vector_array_size(outs) != (size_t)c->nout)
            print_error("case %zu (fn %d): %zu outputs\n", k, c->fn, mlx_vector_array_size(outs));
        assert_int_equal(mlx_vector_array_size(outs), (size_t)c->nout);
        for (int o = 0; o < c->nout; o++) {
            const lc_arr *e = &c->out[o];
            mlx_array got = mlx_array_new();
            OK(mlx_vector_array_get(&got, outs, (size_t)o));
            if (mlx_array_dtype(got) != (mlx_dtype)e->dtype || !tu_shape_is(got, e->ndim, e->shape)) {
                print_error("case %zu (fn %d) output %d: dtype %d, expected %d, or shape differs\n", k, c->fn, o,
                            (int)mlx_array_dtype(got), e->dtype);
                fail();
            }
            double *re, *im;
            size_t n = read_all(got, &re, &im);
            bool cplx = e->dtype == MLX_COMPLEX64, f32 = e->dtype != MLX_FLOAT64;
            double scale = 1;
            for (size_t i = 0; i < n * (cplx ? 2 : 1); i++)
                scale = fmax(scale, fabs(lc_vals[e->off + i]));
            double tol = (f32 ? 3e-5 : 1e-12) * scale * 16;
            for (size_t i = 0; i < n; i++) {
                double er = lc_vals[e->off + (cplx ? 2 * i : i)], ei = cplx ? lc_vals[e->off + 2 * i + 1] : 0;
                double d = fabs(re[i] - er) + fabs(im[i] - ei);
                if (!(d <= tol) && !(isinf(er) && re[i] == er)) {
                    print_error("case %zu (fn %d) output %d element %zu: %g%+gi, MLX %g%+gi\n", k, c->fn, o, i,
                                re[i], im[i], er, ei);
                    fail();
                }
            }
            free(re), free(im);
            mlx_array_free(got);
        }
        mlx_vector_array_free(outs);
    }
}

/* ---- residuals ---- */

static uint64_t rng_state = 88172645463325252ull;
static double urand(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2 - 1;
}

enum { B = 24, N = 6 };

/* B matrices N x N: random ones, and every fourth a Hilbert matrix
 * (condition number about 1.5e7), symmetrized when sym. */
static void batch_values(double *v, bool sym)
{
    for (int b = 0; b < B; b++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                v[(b * N + i) * N + j] = b % 4 == 3 ? 1.0 / (i + j + 1) : urand();
    for (int b = 0; sym && b < B; b++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < i; j++)
                v[(b * N + i) * N + j] = v[(b * N + j) * N + i];
}

static double max_abs(const double *a, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(a[i]));
    return m;
}

/* Condition numbers (2-norm) of the batch, from our svd in float64. */
static void conds(const double *v, double *cond)
{
    int shape[3] = {B, N, N};
    mlx_array a = make(MLX_FLOAT64, v, shape, 3), sv = mlx_array_new();
    mlx_vector_array out = mlx_vector_array_new();
    OK(mlx_linalg_svd(&out, a, false, S));
    OK(mlx_vector_array_get(&sv, out, 0));
    double *s;
    read_all(sv, &s, NULL);
    for (int b = 0; b < B; b++)
        cond[b] = s[b * N] / s[b * N + N - 1];
    free(s);
    mlx_array_free(a), mlx_array_free(sv);
    mlx_vector_array_free(out);
}

static double eps_of(mlx_dtype d) { return d == MLX_FLOAT64 ? DBL_EPSILON : FLT_EPSILON; }

static void check_resid(const char *what, int b, double resid, double bound)
{
    if (!(resid <= bound)) {
        print_error("%s: matrix %d residual %g above %g\n", what, b, resid, bound);
        fail();
    }
}

static void residuals_for(mlx_dtype d)
{
    double v[B * N * N], sym[B * N * N], cond[B], eps = eps_of(d);
    int shape[3] = {B, N, N}, bshape[3] = {B, N, 2};
    batch_values(v, false);
    batch_values(sym, true);
    conds(v, cond);
    mlx_array a = make(d, v, shape, 3), as = make(d, sym, shape, 3);
    double rhs[B * N * 2];
    for (size_t i = 0; i < N_(rhs); i++)
        rhs[i] = urand();
    mlx_array bm = make(d, rhs, bshape, 3);
    /* the input as stored (float32 rounds it) */
    double *av, *asv;
    read_all(a, &av, NULL);
    read_all(as, &asv, NULL);

    mlx_array x = mlx_array_new(), inv = mlx_array_new(), q = mlx_array_new(), r = mlx_array_new();
    mlx_array w = mlx_array_new(), vec = mlx_array_new(), l = mlx_array_new();
    mlx_vector_array usv = mlx_vector_array_new(), plu = mlx_vector_array_new();
    OK(mlx_linalg_solve(&x, a, bm, S));
    OK(mlx_linalg_inv(&inv, a, S));
    OK(mlx_linalg_qr(&q, &r, a, S));
    OK(mlx_linalg_svd(&usv, a, true, S));
    OK(mlx_linalg_lu(&plu, a, S));
    OK(mlx_linalg_eigh(&w, &vec, as, "L", S));
    double *xv, *iv, *qv, *rv, *wv, *vv;
    read_all(x, &xv, NULL), read_all(inv, &iv, NULL), read_all(q, &qv, NULL), read_all(r, &rv, NULL);
    read_all(w, &wv, NULL), read_all(vec, &vv, NULL);
    double *uu, *ss, *vt, *pp, *ll, *up;
    mlx_array t = mlx_array_new();
    OK(mlx_vector_array_get(&t, usv, 0)), read_all(t, &uu, NULL);
    OK(mlx_vector_array_get(&t, usv, 1)), read_all(t, &ss, NULL);
    OK(mlx_vector_array_get(&t, usv, 2)), read_all(t, &vt, NULL);
    OK(mlx_vector_array_get(&t, plu, 0)), read_all(t, &pp, NULL);
    OK(mlx_vector_array_get(&t, plu, 1)), read_all(t, &ll, NULL);
    OK(mlx_vector_array_get(&t, plu, 2)), read_all(t, &up, NULL);
    const double c = 8.0 * N * eps;
    for (int b = 0; b < B; b++) {
        const double *A = av + b * N * N, *As = asv + b * N * N;
        double na = max_abs(A, N * N), ns = max_abs(As, N * N), e1 = 0, e2 = 0, e3 = 0, e4 = 0, e5 = 0, e6 = 0;
        double e7 = 0, e8 = 0, e9 = 0, nx = max_abs(xv + b * N * 2, N * 2);
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < N; j++) {
                double ai = 0, usv_ = 0, qr = 0, qq = 0, uu_ = 0, av_ = 0, lu = 0;
                for (int k = 0; k < N; k++) {
                    ai += A[i * N + k] * iv[(b * N + k) * N + j];
                    usv_ += uu[(b * N + i) * N + k] * ss[b * N + k] * vt[(b * N + k) * N + j];
                    qr += qv[(b * N + i) * N + k] * rv[(b * N + k) * N + j];
                    qq += qv[(b * N + k) * N + i] * qv[(b * N + k) * N + j];
                    uu_ += uu[(b * N + k) * N + i] * uu[(b * N + k) * N + j];
                    av_ += As[i * N + k] * vv[(b * N + k) * N + j];
                }
                int pi = (int)pp[b * N + i];
                for (int k = 0; k < N; k++)
                    lu += ll[(b * N + pi) * N + k] * up[(b * N + k) * N + j];
                e1 = fmax(e1, fabs(ai - (i == j)));
                e2 = fmax(e2, fabs(usv_ - A[i * N + j]));
                e3 = fmax(e3, fabs(qr - A[i * N + j]));
                e4 = fmax(e4, fabs(qq - (i == j)) + fabs(uu_ - (i == j)));
                e5 = fmax(e5, fabs(av_ - vv[(b * N + i) * N + j] * wv[b * N + j]));
                e6 = fmax(e6, fabs(lu - A[i * N + j]));
                if (j < i)
                    e7 = fmax(e7, fabs(rv[(b * N + i) * N + j]));
            }
            for (int j = 0; j < 2; j++) {
                double ax = 0;
                for (int k = 0; k < N; k++)
                    ax += A[i * N + k] * xv[(b * N + k) * 2 + j];
                e8 = fmax(e8, fabs(ax - rhs[(b * N + i) * 2 + j]));
            }
            if (i > 0)
                e9 = fmax(e9, wv[b * N + i - 1] - wv[b * N + i]);
        }
        check_resid("||A inv(A) - I||", b, e1, c * cond[b]);
        check_resid("||U S Vt - A||", b, e2, c * na);
        check_resid("||Q R - A||", b, e3, c * na);
        check_resid("||Q'Q - I|| + ||U'U - I||", b, e4, 2 * c);
        check_resid("||A V - V L|| (eigh)", b, e5, c * ns);
        check_resid("||L U - P A||", b, e6, c * na);
        check_resid("R below the diagonal", b, e7, 0);
        check_resid("||A x - b|| (solve)", b, e8, c * cond[b] * na * nx);
        check_resid("eigh's values ascending", b, e9, 0);
    }
    free(av), free(asv), free(xv), free(iv), free(qv), free(rv), free(wv), free(vv);
    free(uu), free(ss), free(vt), free(pp), free(ll), free(up);
    mlx_array_free(t), mlx_array_free(a), mlx_array_free(as), mlx_array_free(bm);
    mlx_array_free(x), mlx_array_free(inv), mlx_array_free(q), mlx_array_free(r), mlx_array_free(w);
    mlx_array_free(vec), mlx_array_free(l);
    mlx_vector_array_free(usv), mlx_vector_array_free(plu);
}

static void test_residuals_float64(void **state)
{
    (void)state;
    residuals_for(MLX_FLOAT64);
}

static void test_residuals_float32(void **state)
{
    (void)state;
    residuals_for(MLX_FLOAT32);
}

/* A V = V diag(w) for eig's complex vectors, real and complex64 input,
 * and L L^T = A for cholesky. */
static void test_eig_and_cholesky_residuals(void **state)
{
    (void)state;
    double v[B * N * N], sym[B * N * N];
    int shape[3] = {B, N, N};
    batch_values(v, false);
    batch_values(sym, true);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < N; i++)
            sym[(b * N + i) * N + i] += N; /* positive definite */
    for (int cplx = 0; cplx < 2; cplx++) {
        double in[2 * B * N * N];
        for (int i = 0; i < B * N * N; i++) {
            if (cplx)
                in[2 * i] = v[i], in[2 * i + 1] = urand();
            else
                in[i] = v[i];
        }
        mlx_array a = make(cplx ? MLX_COMPLEX64 : MLX_FLOAT64, in, shape, 3), w = mlx_array_new(),
                  vec = mlx_array_new();
        OK(mlx_linalg_eig(&w, &vec, a, S));
        assert_int_equal(mlx_array_dtype(w), MLX_COMPLEX64);
        double *wr, *wi, *vr, *vi;
        read_all(w, &wr, &wi);
        read_all(vec, &vr, &vi);
        for (int b = 0; b < B; b++) {
            double e = 0, na = 0;
            for (int i = 0; i < N; i++)
                for (int j = 0; j < N; j++) {
                    double sr = 0, si = 0;
                    for (int k = 0; k < N; k++) {
                        double ar = cplx ? in[2 * ((b * N + i) * N + k)] : in[(b * N + i) * N + k];
                        double ai = cplx ? in[2 * ((b * N + i) * N + k) + 1] : 0;
                        size_t kj = (size_t)((b * N + k) * N + j);
                        sr += ar * vr[kj] - ai * vi[kj];
                        si += ar * vi[kj] + ai * vr[kj];
                        na = fmax(na, fabs(ar) + fabs(ai));
                    }
                    size_t ij = (size_t)((b * N + i) * N + j);
                    double lr = wr[b * N + j], li = wi[b * N + j];
                    e = fmax(e, fabs(sr - (vr[ij] * lr - vi[ij] * li)) + fabs(si - (vr[ij] * li + vi[ij] * lr)));
                }
            /* the results are complex64 whatever the input (float32
             * precision); the Hilbert matrices' vectors are well conditioned */
            check_resid("||A V - V L|| (eig)", b, e, 64 * N * FLT_EPSILON * na);
        }
        free(wr), free(wi), free(vr), free(vi);
        mlx_array_free(a), mlx_array_free(w), mlx_array_free(vec);
    }
    mlx_array a = make(MLX_FLOAT64, sym, shape, 3), l = mlx_array_new();
    OK(mlx_linalg_cholesky(&l, a, false, S));
    double *lv;
    read_all(l, &lv, NULL);
    for (int b = 0; b < B; b++) {
        double e = 0;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < N; k++)
                    s += lv[(b * N + i) * N + k] * lv[(b * N + j) * N + k];
                e = fmax(e, fabs(s - sym[(b * N + i) * N + j]));
                if (j > i)
                    e = fmax(e, fabs(lv[(b * N + i) * N + j]));
            }
        check_resid("||L L' - A||", b, e, 8.0 * N * DBL_EPSILON * 2 * N);
    }
    free(lv);
    mlx_array_free(a), mlx_array_free(l);
}

/* 2000 inverses split over the pool equal the same inverses one by one. */
static void test_batch_on_pool_matches_single_matrices(void **state)
{
    (void)state;
    enum { BB = 2000, NN = 4 };
    double *v = malloc(sizeof(double) * BB * NN * NN);
    assert_non_null(v);
    for (int i = 0; i < BB * NN * NN; i++)
        v[i] = urand();
    int shape[3] = {BB, NN, NN};
    mlx_array a = make(MLX_FLOAT64, v, shape, 3), inv = mlx_array_new();
    OK(mlx_linalg_inv(&inv, a, S));
    double *iv;
    read_all(inv, &iv, NULL);
    for (int b = 0; b < BB; b += 97) {
        mlx_array one = make(MLX_FLOAT64, v + b * NN * NN, shape + 1, 2), oi = mlx_array_new();
        OK(mlx_linalg_inv(&oi, one, S));
        for (int i = 0; i < NN * NN; i++)
            assert_true(tu_get(oi, (size_t)i) == iv[b * NN * NN + i]);
        mlx_array_free(one), mlx_array_free(oi);
    }
    free(v), free(iv);
    mlx_array_free(a), mlx_array_free(inv);
}

/* A strided (transposed) input gives the factorization of its values. */
static void test_transposed_input(void **state)
{
    (void)state;
    double v[9] = {4, 1, 2, 0.5, 3, 1, 0.25, 0.5, 5};
    int shape[2] = {3, 3};
    mlx_array a = make(MLX_FLOAT64, v, shape, 2), at = mlx_array_new(), c = mlx_array_new();
    mlx_array i1 = mlx_array_new(), i2 = mlx_array_new();
    OK(mlx_transpose(&at, a, S));
    OK(mlx_contiguous(&c, at, false, S));
    OK(mlx_linalg_inv(&i1, at, S));
    OK(mlx_linalg_inv(&i2, c, S));
    for (size_t i = 0; i < 9; i++)
        assert_true(tu_get(i1, i) == tu_get(i2, i));
    mlx_array_free(a), mlx_array_free(at), mlx_array_free(c), mlx_array_free(i1), mlx_array_free(i2);
}

/* ---- errors ---- */

static void test_errors_are_mlx_messages(void **state)
{
    (void)state;
    double v[6] = {1, 2, 3, 4, 5, 6}, sing[4] = {1, 2, 2, 4};
    int s23[2] = {2, 3}, s22[2] = {2, 2}, s3[1] = {3};
    int32_t iv[4] = {1, 2, 3, 4};
    mlx_array rect = make(MLX_FLOAT64, v, s23, 2), sq = make(MLX_FLOAT64, sing, s22, 2),
              vec = make(MLX_FLOAT64, v, s3, 1);
    mlx_array ints = tu_i32(iv, s22, 2), r = mlx_array_new(), r1 = mlx_array_new();
    mlx_vector_array out = mlx_vector_array_new();

    assert_int_equal(mlx_linalg_inv(&r, rect, S), 1);
    tu_expect_error("[linalg::inv] Inverses are only defined for square matrices.");
    assert_int_equal(mlx_linalg_inv(&r, ints, S), 1);
    tu_expect_error("[linalg::inv] Arrays must have type float32 or float64. Received array with type int32.");
    assert_int_equal(mlx_linalg_qr(&r, &r1, vec, S), 1);
    tu_expect_error("[linalg::qr] Arrays must have >= 2 dimensions. Received array with 1 dimensions.");
    assert_int_equal(mlx_linalg_svd(&out, ints, true, S), 1);
    tu_expect_error("[linalg::svd] Arrays must have type float32, float64 or complex64. Received array with type "
                    "int32.");
    assert_int_equal(mlx_linalg_eigh(&r, &r1, rect, "L", S), 1);
    tu_expect_error("[linalg::eigh] Only defined for square matrices.");
    assert_int_equal(mlx_linalg_eigvalsh(&r, sq, "X", S), 1);
    tu_expect_error("[linalg::eigvalsh] UPLO must be");
    assert_int_equal(mlx_linalg_eigvalsh(&r, sq, NULL, S), 1);
    tu_expect_error("[linalg::eigvalsh] UPLO must be");
    assert_int_equal(mlx_linalg_cholesky(&r, rect, false, S), 1);
    tu_expect_error("[linalg::cholesky] Cholesky decomposition is only defined for square matrices.");
    assert_int_equal(mlx_linalg_solve(&r, sq, vec, S), 1);
    tu_expect_error("[linalg::solve] Last dimension of first input with shape (2,2) must match second to last "
                    "dimension of second input with shape (3).");
    assert_int_equal(mlx_linalg_solve(&r, ints, ints, S), 1);
    tu_expect_error("[linalg::solve] Input arrays must promote to float32 or float64.");
    assert_int_equal(mlx_linalg_norm(&r, rect, 3.0, NULL, 0, false, S), 1);
    tu_expect_error("[linalg::norm] Invalid ord 3 for matrix norm.");
    int three[3] = {0, 1, 1};
    assert_int_equal(mlx_linalg_norm(&r, rect, 2.0, three, 3, false, S), 1);
    tu_expect_error("[linalg::norm] Received too many axes for norm.");
    assert_int_equal(mlx_linalg_norm_matrix(&r, rect, "nuc", three, 1, false, S), 1);
    tu_expect_error("[linalg::norm] Norm 'nuc' only supported for matrices, but received 1 axis/axes.");
    assert_int_equal(mlx_linalg_norm_matrix(&r, rect, "max", NULL, 0, false, S), 1);
    tu_expect_error("[linalg::norm] Invalid ord value 'max' for matrix norm.");
    assert_int_equal(mlx_linalg_cross(&r, rect, rect, 0, S), 0);
    assert_int_equal(mlx_linalg_cross(&r, vec, rect, -1, S), 0);
    double v4[4] = {1, 2, 3, 4};
    int s4[1] = {4};
    mlx_array four = make(MLX_FLOAT64, v4, s4, 1);
    assert_int_equal(mlx_linalg_cross(&r, four, vec, 0, S), 1);
    tu_expect_error("[linalg::cross] The specified axis must have size 2 or 3.");
    assert_int_equal(mlx_linalg_cross(&r, vec, vec, 1, S), 1);
    tu_expect_error("[linalg::cross] axis 1 invalid for array with 1 dimensions.");

    /* singular matrices fail when evaluated, with MLX's messages */
    OK(mlx_linalg_inv(&r, sq, S));
    assert_int_not_equal(mlx_array_eval(r), 0);
    tu_expect_error("[Inverse::eval_cpu] LU factorization failed with error code 2");
    double two[2] = {1, 2};
    int s2[1] = {2};
    mlx_array rhs = make(MLX_FLOAT64, two, s2, 1);
    OK(mlx_linalg_solve(&r, sq, rhs, S));
    assert_int_not_equal(mlx_array_eval(r), 0);
    tu_expect_error("[LUF::eval_cpu] sgetrf_ failed with code 2 because matrix is singular");
    mlx_array_free(rhs);
    /* MLX factors a itself, not its transpose: for [[0, 0], [1, 1]] the
     * zero pivot is the second (the transpose's would be the first) */
    double z01[4] = {0, 0, 1, 1};
    mlx_array zs = make(MLX_FLOAT64, z01, s22, 2);
    rhs = make(MLX_FLOAT64, two, s2, 1);
    OK(mlx_linalg_solve(&r, zs, rhs, S));
    assert_int_not_equal(mlx_array_eval(r), 0);
    tu_expect_error("[LUF::eval_cpu] sgetrf_ failed with code 2 because matrix is singular");
    mlx_array_free(rhs), mlx_array_free(zs);
    OK(mlx_linalg_lu_factor(&r, &r1, sq, S));
    assert_int_not_equal(mlx_array_eval(r), 0);
    tu_expect_error("[LUF::eval_cpu] sgetrf_ failed with code 2 because matrix is singular");
    double zt[4] = {0, 0, 2, 4};
    mlx_array ztri = make(MLX_FLOAT64, zt, s22, 2);
    OK(mlx_linalg_tri_inv(&r, ztri, false, S));
    assert_int_not_equal(mlx_array_eval(r), 0);
    tu_expect_error("[Inverse::eval_cpu] triangular inversion failed with error code 1");
    /* as MLX, not positive definite is no error: LAPACK's partial factor */
    double npd[4] = {1, 2, 2, 1};
    mlx_array np_ = make(MLX_FLOAT64, npd, s22, 2);
    OK(mlx_linalg_cholesky(&r, np_, false, S));
    OK(mlx_array_eval(r));
    assert_true(tu_get(r, 0) == 1 && tu_get(r, 1) == 0 && tu_get(r, 2) == 2 && tu_get(r, 3) == -3);

    mlx_array_free(rect), mlx_array_free(sq), mlx_array_free(vec), mlx_array_free(ints), mlx_array_free(r);
    mlx_array_free(r1), mlx_array_free(four), mlx_array_free(ztri), mlx_array_free(np_);
    mlx_vector_array_free(out);
}

/* ---- derivatives: none in MLX 0.31.1 for the factorizations ---- */

static int f_inv(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array a = mlx_array_new(), r = mlx_array_new();
    int rc = mlx_vector_array_get(&a, in, 0) || mlx_linalg_inv(&r, a, S) || mlx_vector_array_set_value(res, r);
    mlx_array_free(a), mlx_array_free(r);
    return rc;
}

static int f_solve(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array a = mlx_array_new(), b = mlx_array_new(), r = mlx_array_new();
    int rc = mlx_vector_array_get(&a, in, 0) || mlx_vector_array_get(&b, in, 1) || mlx_linalg_solve(&r, a, b, S) ||
             mlx_vector_array_set_value(res, r);
    mlx_array_free(a), mlx_array_free(b), mlx_array_free(r);
    return rc;
}

static void test_factorizations_have_no_derivative(void **state)
{
    (void)state;
    double v[4] = {2, 1, 1, 3};
    int s22[2] = {2, 2};
    mlx_array a = make(MLX_FLOAT64, v, s22, 2);
    mlx_closure f = mlx_closure_new_func(f_inv);
    mlx_vector_array prim = mlx_vector_array_new_value(a), outs = mlx_vector_array_new(),
                     g = mlx_vector_array_new();
    assert_int_not_equal(mlx_vjp(&outs, &g, f, prim, prim), 0);
    tu_expect_error("[Primitive::vjp] Not implemented for Inverse.");
    assert_int_not_equal(mlx_jvp(&outs, &g, f, prim, prim), 0);
    tu_expect_error("[Primitive::jvp] Not implemented for Inverse.");
    mlx_closure_free(f);
    /* solve: a derivative in b (test_grad checks it), none in a, as MLX */
    double bv[2] = {1, -1};
    int s2[1] = {2};
    mlx_array b = make(MLX_FLOAT64, bv, s2, 1);
    mlx_array ab[2] = {a, b};
    mlx_closure fs = mlx_closure_new_func(f_solve);
    mlx_vector_array cot = mlx_vector_array_new_value(b);
    mlx_vector_array_free(prim);
    prim = mlx_vector_array_new_data(ab, 2);
    assert_int_not_equal(mlx_vjp(&outs, &g, fs, prim, cot), 0);
    tu_expect_error("[vjp] Not implemented for Inverse");
    mlx_vector_array_free(cot);
    mlx_closure_free(fs);
    mlx_array_free(b);
    mlx_vector_array_free(prim), mlx_vector_array_free(outs), mlx_vector_array_free(g);
    mlx_array_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_values_match_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_residuals_float64, tu_test_teardown),
        cmocka_unit_test_teardown(test_residuals_float32, tu_test_teardown),
        cmocka_unit_test_teardown(test_eig_and_cholesky_residuals, tu_test_teardown),
        cmocka_unit_test_teardown(test_batch_on_pool_matches_single_matrices, tu_test_teardown),
        cmocka_unit_test_teardown(test_transposed_input, tu_test_teardown),
        cmocka_unit_test_teardown(test_errors_are_mlx_messages, tu_test_teardown),
        cmocka_unit_test_teardown(test_factorizations_have_no_derivative, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
