/* complex64 reductions, arg-reductions and scans: plain loops with C's
 * complex arithmetic, built once with generic flags and put into every
 * table. Sums accumulate in double complex. Order is MLX's: lexicographic
 * (real part, then imaginary part); max/min propagate a NaN in either
 * part; all/any test both parts (1j is non-zero). */
#include <complex.h>
#include <math.h>
#include <string.h>

#include "simd/reduce_impl.h"

typedef float _Complex c64;

static int cnan(c64 z) { return isnan(crealf(z)) || isnan(cimagf(z)); }
static int cgt(c64 a, c64 b)
{
    return crealf(a) > crealf(b) || (crealf(a) == crealf(b) && cimagf(a) > cimagf(b));
}
static int clt(c64 a, c64 b) { return cgt(b, a); }
static c64 cmax(c64 a, c64 b) { return cnan(a) || cgt(a, b) ? a : b; }
static c64 cmin(c64 a, c64 b) { return cnan(a) || clt(a, b) ? a : b; }
static int cnz(c64 z) { return crealf(z) != 0 || cimagf(z) != 0; }

static c64 cinit(mc_reduce_op op)
{
    switch (op) {
    case MC_R_PROD:
        return 1.0f;
    case MC_R_MAX:
        return -INFINITY;
    case MC_R_MIN:
        return INFINITY;
    default:
        return 0.0f;
    }
}

/* One value of a reduction: sum in double complex, others in c64. */
typedef struct cacc {
    double _Complex sum;
    c64 v;
    int flag;
} cacc;

static void cacc_init(cacc *a, mc_reduce_op op)
{
    a->sum = 0;
    a->v = cinit(op);
    a->flag = op == MC_R_AND;
}

static void cacc_add(cacc *a, mc_reduce_op op, c64 z)
{
    switch (op) {
    case MC_R_SUM:
        a->sum += z;
        break;
    case MC_R_PROD:
        a->v *= z;
        break;
    case MC_R_MAX:
        a->v = cmax(z, a->v);
        break;
    case MC_R_MIN:
        a->v = cmin(z, a->v);
        break;
    case MC_R_AND:
        a->flag &= cnz(z);
        break;
    default:
        a->flag |= cnz(z);
        break;
    }
}

static void cacc_store(const cacc *a, mc_reduce_op op, void *out, size_t i)
{
    if (op == MC_R_AND || op == MC_R_OR)
        ((uint8_t *)out)[i] = (uint8_t)a->flag;
    else
        ((c64 *)out)[i] = op == MC_R_SUM ? (c64)a->sum : a->v;
}

static void crow(mc_reduce_op op, const void *xv, size_t n, size_t rows, size_t ld, void *out)
{
    const c64 *x = xv;
    for (size_t r = 0; r < rows; r++) {
        cacc a;
        cacc_init(&a, op);
        for (size_t i = 0; i < n; i++)
            cacc_add(&a, op, x[r * ld + i]);
        cacc_store(&a, op, out, r);
    }
}

static void ccol(mc_reduce_op op, const void *xv, size_t n, size_t m, size_t ld, void *out)
{
    const c64 *x = xv;
    cacc a[64];
    for (size_t j0 = 0; j0 < m; j0 += 64) {
        size_t cw = m - j0 < 64 ? m - j0 : 64;
        for (size_t k = 0; k < cw; k++)
            cacc_init(&a[k], op);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < cw; k++)
                cacc_add(&a[k], op, x[i * ld + j0 + k]);
        for (size_t k = 0; k < cw; k++)
            cacc_store(&a[k], op, out, j0 + k);
    }
}

#define MC_CRED(name, op)                                                              \
    static void name##_row(const void *x, size_t n, size_t rows, size_t ld, void *out) \
    {                                                                                  \
        crow(op, x, n, rows, ld, out);                                                 \
    }                                                                                  \
    static void name##_col(const void *x, size_t n, size_t m, size_t ld, void *out)    \
    {                                                                                  \
        ccol(op, x, n, m, ld, out);                                                    \
    }
MC_CRED(csum, MC_R_SUM)
MC_CRED(cprod, MC_R_PROD)
MC_CRED(cmaxr, MC_R_MAX)
MC_CRED(cminr, MC_R_MIN)
MC_CRED(call, MC_R_AND)
MC_CRED(cany, MC_R_OR)

/* ---- arg-reductions: MLX's sequential rule with lexicographic order ---- */

static void carg_row(int is_max, const void *xv, size_t n, size_t rows, size_t ld, uint32_t *idx)
{
    const c64 *x = xv;
    for (size_t r = 0; r < rows; r++) {
        const c64 *p = x + r * ld;
        uint32_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (is_max ? cgt(p[i], p[best]) : clt(p[i], p[best]))
                best = (uint32_t)i;
        idx[r] = best;
    }
}

static void carg_col(int is_max, const void *xv, size_t n, size_t m, size_t ld, uint32_t *idx)
{
    const c64 *x = xv;
    for (size_t j = 0; j < m; j++) {
        uint32_t best = 0;
        for (size_t i = 1; i < n; i++)
            if (is_max ? cgt(x[i * ld + j], x[best * ld + j]) : clt(x[i * ld + j], x[best * ld + j]))
                best = (uint32_t)i;
        idx[j] = best;
    }
}

static void cargmax_row(const void *x, size_t n, size_t rows, size_t ld, uint32_t *idx)
{
    carg_row(1, x, n, rows, ld, idx);
}
static void cargmin_row(const void *x, size_t n, size_t rows, size_t ld, uint32_t *idx)
{
    carg_row(0, x, n, rows, ld, idx);
}
static void cargmax_col(const void *x, size_t n, size_t m, size_t ld, uint32_t *idx)
{
    carg_col(1, x, n, m, ld, idx);
}
static void cargmin_col(const void *x, size_t n, size_t m, size_t ld, uint32_t *idx)
{
    carg_col(0, x, n, m, ld, idx);
}

/* ---- scans (no logaddexp: MLX has none for complex) ---- */

static c64 cstep(mc_scan_op op, c64 c, c64 v)
{
    switch (op) {
    case MC_S_SUM:
        return c + v;
    case MC_S_PROD:
        return c * v;
    case MC_S_MAX:
        return cnan(c) ? c : cmax(v, c);
    default:
        return cnan(c) ? c : cmin(v, c);
    }
}

static c64 cscan_init(mc_scan_op op, int inclusive)
{
    switch (op) {
    case MC_S_SUM:
        return inclusive ? -0.0f : 0.0f;
    case MC_S_PROD:
        return 1.0f;
    case MC_S_MAX:
        return -INFINITY;
    default:
        return INFINITY;
    }
}

/* One scan of n steps: elements at x + i * step, outputs likewise. */
static void cscan_line(mc_scan_op op, const c64 *x, c64 *y, size_t n, size_t step, int reverse,
                       int inclusive)
{
    c64 c = cscan_init(op, inclusive);
    for (size_t s = 0; s < n; s++) {
        size_t i = (reverse ? n - 1 - s : s) * step;
        c64 v = x[i];
        if (inclusive) {
            c = cstep(op, c, v);
            y[i] = c;
        } else {
            y[i] = c;
            c = cstep(op, c, v);
        }
    }
}

#define MC_CSCAN(name, op)                                                             \
    static void name##_row(const void *x, void *y, size_t n, size_t rows, int rev,     \
                           int incl)                                                   \
    {                                                                                  \
        for (size_t r = 0; r < rows; r++)                                              \
            cscan_line(op, (const c64 *)x + r * n, (c64 *)y + r * n, n, 1, rev, incl); \
    }                                                                                  \
    static void name##_col(const void *x, void *y, size_t n, size_t m, size_t ld,      \
                           int rev, int incl)                                          \
    {                                                                                  \
        for (size_t j = 0; j < m; j++)                                                 \
            cscan_line(op, (const c64 *)x + j, (c64 *)y + j, n, ld, rev, incl);        \
    }
MC_CSCAN(cscan_sum, MC_S_SUM)
MC_CSCAN(cscan_prod, MC_S_PROD)
MC_CSCAN(cscan_max, MC_S_MAX)
MC_CSCAN(cscan_min, MC_S_MIN)

void mc_reduce_fill_complex(mc_reduce_table *t)
{
    const int d = MC_SIMD_COMPLEX64;
    t->row[MC_R_SUM][d] = csum_row;
    t->col[MC_R_SUM][d] = csum_col;
    t->row[MC_R_PROD][d] = cprod_row;
    t->col[MC_R_PROD][d] = cprod_col;
    t->row[MC_R_MAX][d] = cmaxr_row;
    t->col[MC_R_MAX][d] = cmaxr_col;
    t->row[MC_R_MIN][d] = cminr_row;
    t->col[MC_R_MIN][d] = cminr_col;
    t->row[MC_R_AND][d] = call_row;
    t->col[MC_R_AND][d] = call_col;
    t->row[MC_R_OR][d] = cany_row;
    t->col[MC_R_OR][d] = cany_col;
    t->arg_row[MC_ARG_MAX][d] = cargmax_row;
    t->arg_row[MC_ARG_MIN][d] = cargmin_row;
    t->arg_col[MC_ARG_MAX][d] = cargmax_col;
    t->arg_col[MC_ARG_MIN][d] = cargmin_col;
    t->scan_row[MC_S_SUM][d] = cscan_sum_row;
    t->scan_col[MC_S_SUM][d] = cscan_sum_col;
    t->scan_row[MC_S_PROD][d] = cscan_prod_row;
    t->scan_col[MC_S_PROD][d] = cscan_prod_col;
    t->scan_row[MC_S_MAX][d] = cscan_max_row;
    t->scan_col[MC_S_MAX][d] = cscan_max_col;
    t->scan_row[MC_S_MIN][d] = cscan_min_row;
    t->scan_col[MC_S_MIN][d] = cscan_min_col;
}
