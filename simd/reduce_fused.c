/* The fused row kernels of one ISA (compiled once per ISA): variance and
 * standard deviation, logsumexp and softmax over contiguous rows of
 * float32 and float64, and of float16 / bfloat16 staged through float32
 * blocks (so the half types always compute in float32: MLX's `precise`
 * results). exp is vec_math.h's (our own float32 exp; libm in the scalar
 * reference); the final log is libm's, in float64.
 *
 * Variance is two-pass: the mean (blocked sum), then the sums of d = x - c
 * and d^2 for c the mean rounded to the element type, corrected as
 * sum(d^2) - sum(d)^2 / n (the corrected two-pass algorithm), so that a
 * large mean does not cost the variance its digits. */
#include "simd/reduce_impl.h"
#include "simd/vec_math.h"

/* ---- float32 building blocks, over contiguous runs ---- */

/* The largest element (NaN if any is NaN; -inf for n == 0). */
static float max_run_f32(const float *x, size_t n)
{
    const size_t w = MC_LANES(float);
    mc_vf32 a0 = MC_SPLAT(mc_vf32, -INFINITY), a1 = a0;
    size_t i = 0;
    for (; i + 2 * w <= n; i += 2 * w) {
        mc_vf32 v0, v1;
        memcpy(&v0, x + i, sizeof v0);
        memcpy(&v1, x + i + w, sizeof v1);
        a0 = mc_max_f32(v0, a0);
        a1 = mc_max_f32(v1, a1);
    }
    for (; i < n; i += w) {
        mc_vf32 v = MC_SPLAT(mc_vf32, -INFINITY);
        memcpy(&v, x + i, (n - i < w ? n - i : w) * sizeof(float));
        a0 = mc_max_f32(v, a0);
    }
    a0 = mc_max_f32(a0, a1);
    float m = -INFINITY;
    for (size_t k = 0; k < w; k++)
        m = MC_SMAX(m, a0[k]);
    return m;
}

/* *acc += sum(exp(x - c)) lane-wise; also stores the exponentials in y
 * unless y is NULL. */
static void expsum_run_f32(const float *x, float *y, size_t n, float c, mc_r_f64x32 *acc)
{
    const size_t w = MC_LANES(float);
    mc_vf32 vc = MC_SPLAT(mc_vf32, c);
    for (size_t i = 0; i < n; i += MC_SUM_BLOCK_F32) {
        size_t m = n - i < MC_SUM_BLOCK_F32 ? n - i : MC_SUM_BLOCK_F32;
        mc_vf32 a = {0};
        size_t j = 0;
        for (; j + w <= m; j += w) {
            mc_vf32 v;
            memcpy(&v, x + i + j, sizeof v);
            v = mc_exp_f32(v - vc);
            if (y)
                memcpy(y + i + j, &v, sizeof v);
            a += v;
        }
        if (j < m) {
            mc_vf32 v = MC_SPLAT(mc_vf32, -INFINITY);
            memcpy(&v, x + i + j, (m - j) * sizeof(float));
            v = mc_exp_f32(v - vc);
            if (y)
                memcpy(y + i + j, &v, (m - j) * sizeof(float));
            a += v;
        }
        *acc += __builtin_convertvector(a, mc_r_f64x32);
    }
}

/* y[i] = exp(x[i] - c) * s (y may be x). */
static void expscale_run_f32(const float *x, float *y, size_t n, float c, float s)
{
    const size_t w = MC_LANES(float);
    mc_vf32 vc = MC_SPLAT(mc_vf32, c);
    size_t i = 0;
    for (; i + w <= n; i += w) {
        mc_vf32 v;
        memcpy(&v, x + i, sizeof v);
        v = mc_exp_f32(v - vc) * s;
        memcpy(y + i, &v, sizeof v);
    }
    if (i < n) {
        mc_vf32 v = {0};
        memcpy(&v, x + i, (n - i) * sizeof(float));
        v = mc_exp_f32(v - vc) * s;
        memcpy(y + i, &v, (n - i) * sizeof(float));
    }
}

static void scale_run_f32(float *y, size_t n, float s)
{
    const size_t w = MC_LANES(float);
    size_t i = 0;
    for (; i + w <= n; i += w) {
        mc_vf32 v;
        memcpy(&v, y + i, sizeof v);
        v *= s;
        memcpy(y + i, &v, sizeof v);
    }
    for (; i < n; i++)
        y[i] *= s;
}

/* *sd += sum(x - c), *sdd += sum((x - c)^2), lane-wise in float64 blocks. */
static void dev_run_f32(const float *x, size_t n, float c, mc_r_f64x32 *sd, mc_r_f64x32 *sdd)
{
    const size_t w = MC_LANES(float);
    mc_vf32 vc = MC_SPLAT(mc_vf32, c);
    for (size_t i = 0; i < n; i += MC_SUM_BLOCK_F32) {
        size_t m = n - i < MC_SUM_BLOCK_F32 ? n - i : MC_SUM_BLOCK_F32;
        mc_vf32 a = {0}, b = {0};
        size_t j = 0;
        for (; j + w <= m; j += w) {
            mc_vf32 v;
            memcpy(&v, x + i + j, sizeof v);
            v -= vc;
            a += v;
            b += v * v;
        }
        if (j < m) {
            mc_vf32 v = vc;
            memcpy(&v, x + i + j, (m - j) * sizeof(float));
            v -= vc;
            a += v;
            b += v * v;
        }
        *sd += __builtin_convertvector(a, mc_r_f64x32);
        *sdd += __builtin_convertvector(b, mc_r_f64x32);
    }
}

/* The variance from the corrected two-pass sums, with MLX's divisor. */
static double var_finish(double sd, double sdd, size_t n, int ddof, int take_sqrt)
{
    double ss = sdd - (n ? sd * sd / (double)n : 0.0);
    if (ss < 0)
        ss = 0;
    double v;
    if (ddof == 0) {
        v = ss * (1.0 / (double)n); /* n == 0: 0 * inf = NaN, as MLX */
    } else {
        double d = (double)n - ddof;
        v = ss / (d > 0 ? d : 0.0);
    }
    return take_sqrt ? sqrt(v) : v;
}

/* ---- float32 and half rows ---- */

/* A row of float32 values, or of half values staged through blocks. */
typedef struct row_src {
    const void *x;
    int half; /* 0: float32, 1: float16, 2: bfloat16 */
} row_src;

static float row_max(row_src s, size_t n)
{
    if (!s.half)
        return max_run_f32(s.x, n);
    float buf[MC_RED_STAGE], m = -INFINITY;
    for (size_t i = 0; i < n; i += MC_RED_STAGE) {
        size_t k = n - i < MC_RED_STAGE ? n - i : MC_RED_STAGE;
        mc_half_in(s.half == 2, (const uint16_t *)s.x + i, buf, k);
        float b = max_run_f32(buf, k);
        m = MC_SMAX(m, b);
    }
    return m;
}

static double row_expsum(row_src s, size_t n, float c, float *y)
{
    mc_r_f64x32 acc = {0};
    if (!s.half) {
        expsum_run_f32(s.x, y, n, c, &acc);
    } else {
        float buf[MC_RED_STAGE];
        for (size_t i = 0; i < n; i += MC_RED_STAGE) {
            size_t k = n - i < MC_RED_STAGE ? n - i : MC_RED_STAGE;
            mc_half_in(s.half == 2, (const uint16_t *)s.x + i, buf, k);
            expsum_run_f32(buf, NULL, k, c, &acc);
        }
    }
    return mc_hsum_f64x32(&acc);
}

static double row_var(row_src s, size_t n, int ddof, int take_sqrt)
{
    mc_r_f64x32 sd = {0}, sdd = {0};
    double mean;
    if (!s.half) {
        mean = mc_sum_f32(s.x, n) / (double)n;
        dev_run_f32(s.x, n, (float)mean, &sd, &sdd);
    } else {
        float buf[MC_RED_STAGE];
        mean = mc_sum_half(s.half == 2, s.x, n) / (double)n;
        for (size_t i = 0; i < n; i += MC_RED_STAGE) {
            size_t k = n - i < MC_RED_STAGE ? n - i : MC_RED_STAGE;
            mc_half_in(s.half == 2, (const uint16_t *)s.x + i, buf, k);
            dev_run_f32(buf, k, (float)mean, &sd, &sdd);
        }
    }
    if (mean != mean || isinf(mean)) /* NaN or inf data, or n == 0 */
        return NAN;
    return var_finish(mc_hsum_f64x32(&sd), mc_hsum_f64x32(&sdd), n, ddof, take_sqrt);
}

static size_t elem_size(int half) { return half ? 2 : 4; }

static void var_rows(int half, const void *x, size_t n, size_t rows, size_t ld, int ddof, int take_sqrt,
                     void *out)
{
    for (size_t r = 0; r < rows; r++) {
        row_src s = {(const char *)x + r * ld * elem_size(half), half};
        float v = (float)row_var(s, n, ddof, take_sqrt);
        if (half)
            mc_half_out(half == 2, &v, (uint16_t *)out + r, 1);
        else
            ((float *)out)[r] = v;
    }
}

static void lse_rows(int half, const void *x, size_t n, size_t rows, size_t ld, void *out)
{
    for (size_t r = 0; r < rows; r++) {
        row_src s = {(const char *)x + r * ld * elem_size(half), half};
        float m = row_max(s, n);
        float v = isinf(m) ? m : (float)((double)m + log(row_expsum(s, n, m, NULL)));
        if (half)
            mc_half_out(half == 2, &v, (uint16_t *)out + r, 1);
        else
            ((float *)out)[r] = v;
    }
}

static void softmax_rows(int half, const void *x, void *y, size_t n, size_t rows, size_t ld)
{
    size_t es = elem_size(half);
    for (size_t r = 0; r < rows; r++) {
        row_src s = {(const char *)x + r * ld * es, half};
        void *yr = (char *)y + r * ld * es;
        float m = row_max(s, n);
        if (!half) {
            float sum = (float)row_expsum(s, n, m, yr);
            scale_run_f32(yr, n, 1.0f / sum);
            continue;
        }
        float inv = (float)(1.0 / row_expsum(s, n, m, NULL));
        float buf[MC_RED_STAGE];
        for (size_t i = 0; i < n; i += MC_RED_STAGE) {
            size_t k = n - i < MC_RED_STAGE ? n - i : MC_RED_STAGE;
            mc_half_in(half == 2, (const uint16_t *)s.x + i, buf, k);
            expscale_run_f32(buf, buf, k, m, inv);
            mc_half_out(half == 2, buf, (uint16_t *)yr + i, k);
        }
    }
}

#define MC_FUSED_F32(name, half)                                                       \
    static void var_##name(const void *x, size_t n, size_t rows, size_t ld, int ddof,  \
                           int take_sqrt, void *out)                                   \
    {                                                                                  \
        var_rows(half, x, n, rows, ld, ddof, take_sqrt, out);                          \
    }                                                                                  \
    static void lse_##name(const void *x, size_t n, size_t rows, size_t ld, void *out) \
    {                                                                                  \
        lse_rows(half, x, n, rows, ld, out);                                           \
    }                                                                                  \
    static void softmax_##name(const void *x, void *y, size_t n, size_t rows, size_t ld) \
    {                                                                                  \
        softmax_rows(half, x, y, n, rows, ld);                                         \
    }
MC_FUSED_F32(f32, 0)
MC_FUSED_F32(f16, 1)
MC_FUSED_F32(bf16, 2)

/* ---- float64 ---- */

static double max_run_f64(const double *x, size_t n)
{
    const size_t w = MC_LANES(double);
    mc_vf64 a = MC_SPLAT(mc_vf64, -(double)INFINITY);
    for (size_t i = 0; i < n; i += w) {
        mc_vf64 v = MC_SPLAT(mc_vf64, -(double)INFINITY);
        memcpy(&v, x + i, (n - i < w ? n - i : w) * sizeof(double));
        a = mc_max_f64(v, a);
    }
    double m = -(double)INFINITY;
    for (size_t k = 0; k < w; k++)
        m = MC_SMAX(m, a[k]);
    return m;
}

/* sum(exp(x - c)), storing the exponentials in y unless it is NULL. */
static double expsum_run_f64(const double *x, double *y, size_t n, double c)
{
    const size_t w = MC_LANES(double);
    mc_vf64 vc = MC_SPLAT(mc_vf64, c), s = {0}, comp = {0};
    for (size_t i = 0; i < n; i += MC_SUM_BLOCK_F64) {
        size_t m = n - i < MC_SUM_BLOCK_F64 ? n - i : MC_SUM_BLOCK_F64;
        mc_vf64 a = {0};
        for (size_t j = 0; j < m; j += w) {
            size_t k = m - j < w ? m - j : w;
            mc_vf64 v = MC_SPLAT(mc_vf64, -(double)INFINITY);
            memcpy(&v, x + i + j, k * sizeof(double));
            v = mc_exp_f64(v - vc);
            if (y)
                memcpy(y + i + j, &v, k * sizeof(double));
            a += v;
        }
        mc_neumaier_v(&s, &comp, a);
    }
    return mc_hsum_neumaier(s, comp);
}

static void var_f64(const void *xv, size_t n, size_t rows, size_t ld, int ddof, int take_sqrt, void *outv)
{
    const size_t w = MC_LANES(double);
    double *out = outv;
    for (size_t r = 0; r < rows; r++) {
        const double *x = (const double *)xv + r * ld;
        double mean = mc_sum_f64(x, n) / (double)n;
        if (mean != mean || isinf(mean)) {
            out[r] = NAN;
            continue;
        }
        mc_vf64 vc = MC_SPLAT(mc_vf64, mean), sd = {0}, s = {0}, c = {0};
        for (size_t i = 0; i < n; i += MC_SUM_BLOCK_F64) {
            size_t m = n - i < MC_SUM_BLOCK_F64 ? n - i : MC_SUM_BLOCK_F64;
            mc_vf64 b = {0};
            for (size_t j = 0; j < m; j += w) {
                mc_vf64 v = vc;
                memcpy(&v, x + i + j, (m - j < w ? m - j : w) * sizeof(double));
                v -= vc;
                sd += v;
                b += v * v;
            }
            mc_neumaier_v(&s, &c, b);
        }
        double tsd = 0;
        for (size_t k = 0; k < w; k++)
            tsd += sd[k];
        out[r] = var_finish(tsd, mc_hsum_neumaier(s, c), n, ddof, take_sqrt);
    }
}

static void lse_f64(const void *xv, size_t n, size_t rows, size_t ld, void *outv)
{
    double *out = outv;
    for (size_t r = 0; r < rows; r++) {
        const double *x = (const double *)xv + r * ld;
        double m = max_run_f64(x, n);
        out[r] = isinf(m) ? m : m + log(expsum_run_f64(x, NULL, n, m));
    }
}

static void softmax_f64(const void *xv, void *yv, size_t n, size_t rows, size_t ld)
{
    const size_t w = MC_LANES(double);
    for (size_t r = 0; r < rows; r++) {
        const double *x = (const double *)xv + r * ld;
        double *y = (double *)yv + r * ld;
        double m = max_run_f64(x, n);
        double inv = 1.0 / expsum_run_f64(x, y, n, m);
        size_t i = 0;
        for (; i + w <= n; i += w) {
            mc_vf64 v;
            memcpy(&v, y + i, sizeof v);
            v *= inv;
            memcpy(y + i, &v, sizeof v);
        }
        for (; i < n; i++)
            y[i] *= inv;
    }
}

void MC_ISA_FN(mc_reduce_fill_fused)(mc_reduce_table *t)
{
    t->var_row[MC_SIMD_FLOAT32] = var_f32;
    t->var_row[MC_SIMD_FLOAT16] = var_f16;
    t->var_row[MC_SIMD_BFLOAT16] = var_bf16;
    t->var_row[MC_SIMD_FLOAT64] = var_f64;
    t->lse_row[MC_SIMD_FLOAT32] = lse_f32;
    t->lse_row[MC_SIMD_FLOAT16] = lse_f16;
    t->lse_row[MC_SIMD_BFLOAT16] = lse_bf16;
    t->lse_row[MC_SIMD_FLOAT64] = lse_f64;
    t->softmax_row[MC_SIMD_FLOAT32] = softmax_f32;
    t->softmax_row[MC_SIMD_FLOAT16] = softmax_f16;
    t->softmax_row[MC_SIMD_BFLOAT16] = softmax_bf16;
    t->softmax_row[MC_SIMD_FLOAT64] = softmax_f64;
}
