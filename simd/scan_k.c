/* Cumulative sum, product, max, min and logaddexp of one ISA (compiled
 * once per ISA), forward or reverse, inclusive or exclusive, for every
 * real dtype. Along a contiguous axis (rows) a scan is a sequential loop;
 * along a strided axis (columns) the running values of a chunk of columns
 * are vectors updated by whole rows. The output is read before it is
 * written at each position, so y may be x.
 *
 * Semantics (MLX's Scan): integers wrap in their own width (bool sums in
 * int32); float16 / bfloat16 carry in float32 and round each output, and
 * float32 sums and products carry in float64 (MLX carries every type in
 * itself; ours are the same values or closer to exact);
 * cummax / cummin propagate NaN; exclusive scans start at the identity
 * (0, 1, the type's lowest / highest value or -inf / +inf). logcumsumexp
 * of integers and bool: MLX's step truncates log1p(exp(min - max)), which
 * is below 1, to 0, so the result is the running maximum; so is ours.
 * An inclusive sum starts from -0.0 so that a -0.0 first element is kept,
 * as MLX copies it. complex64 is in reduce_complex.c. */
#include "simd/reduce_impl.h"

static inline float lae_f32(float a, float b)
{
    float hi = MC_SMAX(a, b), lo = MC_SMIN(a, b);
    if (lo == -INFINITY || hi == INFINITY)
        return hi;
    return hi + log1pf(expf(lo - hi));
}

static inline double lae_f64(double a, double b)
{
    double hi = MC_SMAX(a, b), lo = MC_SMIN(a, b);
    if (lo == -(double)INFINITY || hi == (double)INFINITY)
        return hi;
    return hi + log1p(exp(lo - hi));
}

#define ADD(a, b) ((a) + (b))
/* 1u first: uint16 operands would otherwise be promoted to int, whose
 * product can overflow (UB); unsigned int wraps, as the result does */
#define MUL(a, b) ((a) * 1u * (b))
#define SMAX(a, b) MC_SMAX(a, b)
#define SMIN(a, b) MC_SMIN(a, b)

/* ---- rows: sequential loops ---- */

#define MC_SCAN_ROW(name, T, A, OUT_T, SOP, INIT_INCL, INIT_EXCL, TO_A, TO_OUT)        \
    static void name(const void *xv, void *yv, size_t n, size_t rows, int reverse,     \
                     int inclusive)                                                    \
    {                                                                                  \
        for (size_t r = 0; r < rows; r++) {                                            \
            const T *x = (const T *)xv + r * n;                                        \
            OUT_T *y = (OUT_T *)yv + r * n;                                            \
            A c = inclusive ? (A)(INIT_INCL) : (A)(INIT_EXCL);                         \
            for (size_t s = 0; s < n; s++) {                                           \
                size_t i = reverse ? n - 1 - s : s;                                    \
                A v = TO_A(x[i]);                                                      \
                if (inclusive) {                                                       \
                    c = SOP(c, v);                                                     \
                    y[i] = TO_OUT(c);                                                  \
                } else {                                                               \
                    y[i] = TO_OUT(c);                                                  \
                    c = SOP(c, v);                                                     \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    }

#define CAST(T) (T)
#define F16_IN(x) mc_f16_to_f32(x)
#define F16_OUT(x) mc_f32_to_f16(x)
#define BF16_IN(x) mc_bf16_to_f32(x)
#define BF16_OUT(x) mc_f32_to_bf16(x)
#define NOP(x) (x)

/* sums and products of integers in unsigned arithmetic (wrapping) */
#define MC_SCAN_ROW_INT(sfx, T, U, LO, HI)                                             \
    MC_SCAN_ROW(rsum_##sfx, T, U, T, ADD, 0, 0, CAST(U), CAST(T))                       \
    MC_SCAN_ROW(rprod_##sfx, T, U, T, MUL, 1, 1, CAST(U), CAST(T))                      \
    MC_SCAN_ROW(rmax_##sfx, T, T, T, SMAX, LO, LO, NOP, NOP)                            \
    MC_SCAN_ROW(rmin_##sfx, T, T, T, SMIN, HI, HI, NOP, NOP)
MC_SCAN_ROW_INT(u8, uint8_t, uint32_t, 0, UINT8_MAX)
MC_SCAN_ROW_INT(u16, uint16_t, uint32_t, 0, UINT16_MAX)
MC_SCAN_ROW_INT(u32, uint32_t, uint32_t, 0, UINT32_MAX)
MC_SCAN_ROW_INT(u64, uint64_t, uint64_t, 0, UINT64_MAX)
MC_SCAN_ROW_INT(i8, int8_t, uint32_t, INT8_MIN, INT8_MAX)
MC_SCAN_ROW_INT(i16, int16_t, uint32_t, INT16_MIN, INT16_MAX)
MC_SCAN_ROW_INT(i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)
MC_SCAN_ROW_INT(i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)
/* bool: sums count into int32; products, max and min are and / or / and */
MC_SCAN_ROW(rsum_b, uint8_t, uint32_t, int32_t, ADD, 0, 0, CAST(uint32_t), CAST(int32_t))
MC_SCAN_ROW(rprod_b, uint8_t, uint8_t, uint8_t, MUL, 1, 1, NOP, NOP)
MC_SCAN_ROW(rmax_b, uint8_t, uint8_t, uint8_t, SMAX, 0, 0, NOP, NOP)
MC_SCAN_ROW(rmin_b, uint8_t, uint8_t, uint8_t, SMIN, 1, 1, NOP, NOP)

/* Sums and products carry SA (float64 for float32); the rest carry A. */
#define MC_SCAN_ROW_FLOAT(sfx, T, A, SA, TO_A, TO_OUT, LAE)                            \
    MC_SCAN_ROW(rsum_##sfx, T, SA, T, ADD, -0.0, 0, TO_A, TO_OUT)                       \
    MC_SCAN_ROW(rprod_##sfx, T, SA, T, MUL, 1, 1, TO_A, TO_OUT)                         \
    MC_SCAN_ROW(rmax_##sfx, T, A, T, SMAX, -INFINITY, -INFINITY, TO_A, TO_OUT)          \
    MC_SCAN_ROW(rmin_##sfx, T, A, T, SMIN, INFINITY, INFINITY, TO_A, TO_OUT)            \
    MC_SCAN_ROW(rlae_##sfx, T, A, T, LAE, -INFINITY, -INFINITY, TO_A, TO_OUT)
MC_SCAN_ROW_FLOAT(f32, float, float, double, NOP, CAST(float), lae_f32)
MC_SCAN_ROW_FLOAT(f64, double, double, double, NOP, NOP, lae_f64)
MC_SCAN_ROW_FLOAT(f16, uint16_t, float, float, F16_IN, F16_OUT, lae_f32)
MC_SCAN_ROW_FLOAT(bf16, uint16_t, float, float, BF16_IN, BF16_OUT, lae_f32)

/* ---- columns: running vectors over whole rows ---- */

/* VA: the running values (A lanes), VT the same lane count of T; LOAD
 * turns a VT into a VA, and STORE a VA into an OV of W elements of OUT_T.
 * Fewer columns than lanes run as scalars: SOP on A, SLOAD from T and
 * SSTORE to OUT_T. */
#define MC_SCAN_COL_CONV(name, T, VT, A, VA, OUT_T, OV, LOAD, VOP, STORE, SLOAD, SOP, SSTORE, \
                         INIT_INCL, INIT_EXCL)                                         \
    static void name(const void *xv, void *yv, size_t n, size_t m, size_t ld,          \
                     int reverse, int inclusive)                                       \
    {                                                                                  \
        enum { W = sizeof(VA) / sizeof(A) };                                           \
        _Static_assert(sizeof(OV) == W * sizeof(OUT_T), "output lanes match");         \
        const T *x = xv;                                                               \
        OUT_T *y = yv;                                                                 \
        VA carry[MC_COL_CHUNK / W];                                                    \
        const A c0s = inclusive ? (A)(INIT_INCL) : (A)(INIT_EXCL);                     \
        if (m < W) {                                                                   \
            A c[W] = {0}; /* (all m used are set below; gcc 12 aarch64 warns) */  \
            for (size_t k = 0; k < m; k++)                                             \
                c[k] = c0s;                                                            \
            for (size_t s = 0; s < n; s++) {                                           \
                size_t i = reverse ? n - 1 - s : s;                                    \
                for (size_t k = 0; k < m; k++) {                                       \
                    A v = SLOAD(x[i * ld + k]);                                        \
                    if (inclusive) {                                                   \
                        c[k] = SOP(c[k], v);                                           \
                        y[i * ld + k] = SSTORE(c[k]);                                  \
                    } else {                                                           \
                        y[i * ld + k] = SSTORE(c[k]);                                  \
                        c[k] = SOP(c[k], v);                                           \
                    }                                                                  \
                }                                                                      \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        VA c0 = MC_SPLAT(VA, c0s);                                                     \
        for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {                              \
            size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;                 \
            size_t full = cw / W, rem = cw % W;                                        \
            for (size_t v = 0; v < full + (rem != 0); v++)                             \
                carry[v] = c0;                                                         \
            for (size_t s = 0; s < n; s++) {                                           \
                size_t i = reverse ? n - 1 - s : s;                                    \
                const T *p = x + i * ld + j0;                                          \
                OUT_T *q = y + i * ld + j0;                                            \
                for (size_t v = 0; v < full + (rem != 0); v++) {                       \
                    size_t k = v < full ? (size_t)W : rem;                             \
                    VT t = {0};                                                        \
                    if (k == W)                                                        \
                        memcpy(&t, p + v * W, sizeof t);                               \
                    else                                                               \
                        memcpy(&t, p + v * W, k * sizeof(T));                          \
                    VA a = LOAD(t), c;                                                 \
                    if (inclusive) {                                                   \
                        carry[v] = VOP(carry[v], a);                                   \
                        c = carry[v];                                                  \
                    } else {                                                           \
                        c = carry[v];                                                  \
                        carry[v] = VOP(carry[v], a);                                   \
                    }                                                                  \
                    OV o = STORE(c);                                                   \
                    if (k == W)                                                        \
                        memcpy(q + v * W, &o, sizeof o);                               \
                    else                                                               \
                        memcpy(q + v * W, &o, k * sizeof(OUT_T));                      \
                }                                                                      \
            }                                                                          \
        }                                                                              \
    }

/* The running values stored as they are. */
#define MC_SCAN_COL(name, T, VT, A, VA, OUT_T, LOAD, VOP, SOP, INIT_INCL, INIT_EXCL)   \
    MC_SCAN_COL_CONV(name, T, VT, A, VA, OUT_T, VA, LOAD, VOP, NOP, CAST(A), SOP, CAST(OUT_T), \
                     INIT_INCL, INIT_EXCL)

#define AS(V) (V)
#define W32_U8(t) __builtin_convertvector(t, mc_vu32)

#define MC_SCAN_COL_INT(sfx, T, V, U, VU, LO, HI)                                      \
    MC_SCAN_COL(csum_##sfx, T, V, U, VU, T, AS(VU), ADD, ADD, 0, 0)                     \
    MC_SCAN_COL(cprod_##sfx, T, V, U, VU, T, AS(VU), MUL, MUL, 1, 1)                    \
    MC_SCAN_COL(cmax_##sfx, T, V, T, V, T, NOP, mc_vmax_##sfx, SMAX, LO, LO)            \
    MC_SCAN_COL(cmin_##sfx, T, V, T, V, T, NOP, mc_vmin_##sfx, SMIN, HI, HI)
MC_SCAN_COL_INT(u8, uint8_t, mc_vu8, uint8_t, mc_vu8, 0, UINT8_MAX)
MC_SCAN_COL_INT(u16, uint16_t, mc_vu16, uint16_t, mc_vu16, 0, UINT16_MAX)
MC_SCAN_COL_INT(u32, uint32_t, mc_vu32, uint32_t, mc_vu32, 0, UINT32_MAX)
MC_SCAN_COL_INT(u64, uint64_t, mc_vu64, uint64_t, mc_vu64, 0, UINT64_MAX)
MC_SCAN_COL_INT(i8, int8_t, mc_vi8, uint8_t, mc_vu8, INT8_MIN, INT8_MAX)
MC_SCAN_COL_INT(i16, int16_t, mc_vi16, uint16_t, mc_vu16, INT16_MIN, INT16_MAX)
MC_SCAN_COL_INT(i32, int32_t, mc_vi32, uint32_t, mc_vu32, INT32_MIN, INT32_MAX)
MC_SCAN_COL_INT(i64, int64_t, mc_vi64, uint64_t, mc_vu64, INT64_MIN, INT64_MAX)
MC_SCAN_COL(csum_b, uint8_t, mc_r_u8x32, uint32_t, mc_vu32, int32_t, W32_U8, ADD, ADD, 0, 0)
MC_SCAN_COL(cprod_b, uint8_t, mc_vu8, uint8_t, mc_vu8, uint8_t, NOP, MUL, MUL, 1, 1)
MC_SCAN_COL(cmax_b, uint8_t, mc_vu8, uint8_t, mc_vu8, uint8_t, NOP, mc_vmax_u8, SMAX, 0, 0)
MC_SCAN_COL(cmin_b, uint8_t, mc_vu8, uint8_t, mc_vu8, uint8_t, NOP, mc_vmin_u8, SMIN, 1, 1)

static inline mc_vf32 vlae_f32(mc_vf32 a, mc_vf32 b) { return mc_logaddexp_f32(a, b); }
static inline mc_vf64 vlae_f64(mc_vf64 a, mc_vf64 b) { return mc_logaddexp_f64(a, b); }

/* float32 sums and products carry float64 lanes (one rounding per output) */
#define F32_WIDEN(t) __builtin_convertvector(t, mc_r_f64x32)
#define F32_NARROW(c) __builtin_convertvector(c, mc_vf32)
MC_SCAN_COL_CONV(csum_f32, float, mc_vf32, double, mc_r_f64x32, float, mc_vf32, F32_WIDEN, ADD, F32_NARROW,
                 CAST(double), ADD, CAST(float), -0.0, 0)
MC_SCAN_COL_CONV(cprod_f32, float, mc_vf32, double, mc_r_f64x32, float, mc_vf32, F32_WIDEN, MUL, F32_NARROW,
                 CAST(double), MUL, CAST(float), 1, 1)
MC_SCAN_COL(csum_f64, double, mc_vf64, double, mc_vf64, double, NOP, ADD, ADD, -0.0, 0)
MC_SCAN_COL(cprod_f64, double, mc_vf64, double, mc_vf64, double, NOP, MUL, MUL, 1, 1)

#define MC_SCAN_COL_FLOAT(sfx, T, V)                                                   \
    MC_SCAN_COL(cmax_##sfx, T, V, T, V, T, NOP, mc_vmax_##sfx, SMAX, -INFINITY, -INFINITY) \
    MC_SCAN_COL(cmin_##sfx, T, V, T, V, T, NOP, mc_vmin_##sfx, SMIN, INFINITY, INFINITY)   \
    MC_SCAN_COL(clae_##sfx, T, V, T, V, T, NOP, vlae_##sfx, lae_##sfx, -INFINITY, -INFINITY)
MC_SCAN_COL_FLOAT(f32, float, mc_vf32)
MC_SCAN_COL_FLOAT(f64, double, mc_vf64)

/* float16 / bfloat16 columns: each row's chunk converted to float32, the
 * running values kept in float32, each output row rounded back. */
static void half_col(int bf, mc_scan_op op, const void *xv, void *yv, size_t n, size_t m, size_t ld,
                     int reverse, int inclusive)
{
    enum { W = MC_LANES(float) };
    const uint16_t *x = xv;
    uint16_t *y = yv;
    float buf[MC_COL_CHUNK];
    mc_vf32 carry[MC_COL_CHUNK / W];
    float init = op == MC_S_SUM ? (inclusive ? -0.0f : 0.0f)
                 : op == MC_S_PROD ? 1.0f
                 : op == MC_S_MIN ? INFINITY
                                  : -INFINITY;
    for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {
        size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;
        size_t nv = (cw + W - 1) / W;
        for (size_t v = 0; v < nv; v++)
            carry[v] = MC_SPLAT(mc_vf32, init);
        for (size_t s = 0; s < n; s++) {
            size_t i = reverse ? n - 1 - s : s;
            mc_half_in(bf, x + i * ld + j0, buf, cw);
            for (size_t v = 0; v < nv; v++) {
                mc_vf32 a = {0}, o;
                size_t k = cw - v * W < W ? cw - v * W : W;
                memcpy(&a, buf + v * W, k * sizeof(float));
                o = carry[v];
                switch (op) {
                case MC_S_SUM: carry[v] += a; break;
                case MC_S_PROD: carry[v] *= a; break;
                case MC_S_MAX: carry[v] = mc_max_f32(carry[v], a); break;
                case MC_S_MIN: carry[v] = mc_min_f32(carry[v], a); break;
                default: carry[v] = mc_logaddexp_f32(carry[v], a); break;
                }
                if (inclusive)
                    o = carry[v];
                memcpy(buf + v * W, &o, k * sizeof(float));
            }
            mc_half_out(bf, buf, y + i * ld + j0, cw);
        }
    }
}

#define MC_HALF_SCAN(name, bf, op)                                                     \
    static void name(const void *x, void *y, size_t n, size_t m, size_t ld, int rev,   \
                     int incl)                                                         \
    {                                                                                  \
        half_col(bf, op, x, y, n, m, ld, rev, incl);                                   \
    }
MC_HALF_SCAN(csum_f16, 0, MC_S_SUM)
MC_HALF_SCAN(cprod_f16, 0, MC_S_PROD)
MC_HALF_SCAN(cmax_f16, 0, MC_S_MAX)
MC_HALF_SCAN(cmin_f16, 0, MC_S_MIN)
MC_HALF_SCAN(clae_f16, 0, MC_S_LOGADDEXP)
MC_HALF_SCAN(csum_bf16, 1, MC_S_SUM)
MC_HALF_SCAN(cprod_bf16, 1, MC_S_PROD)
MC_HALF_SCAN(cmax_bf16, 1, MC_S_MAX)
MC_HALF_SCAN(cmin_bf16, 1, MC_S_MIN)
MC_HALF_SCAN(clae_bf16, 1, MC_S_LOGADDEXP)

/* ---- the table ---- */

#define SET4(t, dt, sfx, rsfx)                                                         \
    do {                                                                               \
        (t)->scan_row[MC_S_SUM][dt] = rsum_##rsfx;                                     \
        (t)->scan_row[MC_S_PROD][dt] = rprod_##rsfx;                                   \
        (t)->scan_row[MC_S_MAX][dt] = rmax_##rsfx;                                     \
        (t)->scan_row[MC_S_MIN][dt] = rmin_##rsfx;                                     \
        (t)->scan_col[MC_S_SUM][dt] = csum_##sfx;                                      \
        (t)->scan_col[MC_S_PROD][dt] = cprod_##sfx;                                    \
        (t)->scan_col[MC_S_MAX][dt] = cmax_##sfx;                                      \
        (t)->scan_col[MC_S_MIN][dt] = cmin_##sfx;                                      \
    } while (0)

void MC_ISA_FN(mc_scan_fill)(mc_reduce_table *t)
{
    SET4(t, MC_SIMD_BOOL, b, b);
    SET4(t, MC_SIMD_UINT8, u8, u8);
    SET4(t, MC_SIMD_UINT16, u16, u16);
    SET4(t, MC_SIMD_UINT32, u32, u32);
    SET4(t, MC_SIMD_UINT64, u64, u64);
    SET4(t, MC_SIMD_INT8, i8, i8);
    SET4(t, MC_SIMD_INT16, i16, i16);
    SET4(t, MC_SIMD_INT32, i32, i32);
    SET4(t, MC_SIMD_INT64, i64, i64);
    SET4(t, MC_SIMD_FLOAT16, f16, f16);
    SET4(t, MC_SIMD_BFLOAT16, bf16, bf16);
    SET4(t, MC_SIMD_FLOAT32, f32, f32);
    SET4(t, MC_SIMD_FLOAT64, f64, f64);
    /* logcumsumexp of integers and bool is their cummax (see above) */
    for (int d = 0; d < MC_SIMD_NUM_DTYPES; d++) {
        t->scan_row[MC_S_LOGADDEXP][d] = t->scan_row[MC_S_MAX][d];
        t->scan_col[MC_S_LOGADDEXP][d] = t->scan_col[MC_S_MAX][d];
    }
    t->scan_row[MC_S_LOGADDEXP][MC_SIMD_FLOAT32] = rlae_f32;
    t->scan_row[MC_S_LOGADDEXP][MC_SIMD_FLOAT64] = rlae_f64;
    t->scan_row[MC_S_LOGADDEXP][MC_SIMD_FLOAT16] = rlae_f16;
    t->scan_row[MC_S_LOGADDEXP][MC_SIMD_BFLOAT16] = rlae_bf16;
    t->scan_col[MC_S_LOGADDEXP][MC_SIMD_FLOAT32] = clae_f32;
    t->scan_col[MC_S_LOGADDEXP][MC_SIMD_FLOAT64] = clae_f64;
    t->scan_col[MC_S_LOGADDEXP][MC_SIMD_FLOAT16] = clae_f16;
    t->scan_col[MC_S_LOGADDEXP][MC_SIMD_BFLOAT16] = clae_bf16;
}
