/* Sum, product, max, min, all and any of one ISA (compiled once per ISA):
 * row kernels (contiguous runs, four vector accumulators) and column
 * kernels (a strided axis: whole rows of a chunk of columns accumulate
 * into vectors), for every real dtype. Integers accumulate in unsigned
 * lanes (the wrap-around of MLX's 32/64-bit accumulators, without signed
 * overflow); float sums use the blocked float64 sums of reduce_impl.h;
 * float16 and bfloat16 are staged through float32. complex64 is in
 * reduce_complex.c. */
#include "simd/reduce_impl.h"

/* name(x, n, rows, ld, out): out[r] = FINAL(op over row r). VT holds as
 * many T as VA holds A; LOAD widens a VT to a VA and SLOAD one T to an A.
 * The tail is padded with PAD, an element that does not change the
 * result. Rows shorter than a vector run as scalar loops: setting up and
 * folding vectors would cost more than the row. */
#define MC_RED_ROW(name, T, VT, A, VA, LOAD, SLOAD, VOP, SOP, INIT, PAD, OUT_T, FINAL) \
    static void name(const void *xv, size_t n, size_t rows, size_t ld, void *outv)     \
    {                                                                                  \
        const T *base = xv;                                                            \
        OUT_T *out = outv;                                                             \
        const size_t w = sizeof(VA) / sizeof(A);                                       \
        if (n < w) {                                                                   \
            for (size_t r = 0; r < rows; r++) {                                        \
                A s = (A)(INIT);                                                       \
                for (size_t i = 0; i < n; i++)                                         \
                    s = SOP(s, SLOAD(base[r * ld + i]));                               \
                out[r] = FINAL(s);                                                     \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        for (size_t r = 0; r < rows; r++) {                                            \
            const T *x = base + r * ld;                                                \
            VA a0 = MC_SPLAT(VA, (A)(INIT)), a1 = a0, a2 = a0, a3 = a0;                \
            size_t i = 0;                                                              \
            for (; i + 4 * w <= n; i += 4 * w) {                                       \
                VT t0, t1, t2, t3;                                                     \
                memcpy(&t0, x + i, sizeof t0);                                         \
                memcpy(&t1, x + i + w, sizeof t1);                                     \
                memcpy(&t2, x + i + 2 * w, sizeof t2);                                 \
                memcpy(&t3, x + i + 3 * w, sizeof t3);                                 \
                a0 = VOP(a0, LOAD(t0));                                                \
                a1 = VOP(a1, LOAD(t1));                                                \
                a2 = VOP(a2, LOAD(t2));                                                \
                a3 = VOP(a3, LOAD(t3));                                                \
            }                                                                          \
            for (; i + w <= n; i += w) {                                               \
                VT t;                                                                  \
                memcpy(&t, x + i, sizeof t);                                           \
                a0 = VOP(a0, LOAD(t));                                                 \
            }                                                                          \
            if (i < n) {                                                               \
                VT t = MC_SPLAT(VT, (T)(PAD));                                         \
                memcpy(&t, x + i, (n - i) * sizeof(T));                                \
                a1 = VOP(a1, LOAD(t));                                                 \
            }                                                                          \
            a0 = VOP(VOP(a0, a1), VOP(a2, a3));                                        \
            A s = (A)(INIT);                                                           \
            for (size_t k = 0; k < w; k++)                                             \
                s = SOP(s, a0[k]);                                                     \
            out[r] = FINAL(s);                                                         \
        }                                                                              \
    }

/* name(x, n, m, ld, out): out[j] = FINAL(op over column j of n rows).
 * Fewer columns than a vector's lanes run as scalar loops. */
#define MC_RED_COL(name, T, VT, A, VA, LOAD, SLOAD, VOP, SOP, INIT, PAD, OUT_T, FINAL) \
    static void name(const void *xv, size_t n, size_t m, size_t ld, void *outv)        \
    {                                                                                  \
        const T *x = xv;                                                               \
        OUT_T *out = outv;                                                             \
        enum { W = sizeof(VA) / sizeof(A) };                                           \
        VA acc[MC_COL_CHUNK / W];                                                      \
        A lanes[MC_COL_CHUNK];                                                         \
        if (m < W) {                                                                   \
            for (size_t k = 0; k < m; k++)                                             \
                lanes[k] = (A)(INIT);                                                  \
            for (size_t i = 0; i < n; i++)                                             \
                for (size_t k = 0; k < m; k++)                                         \
                    lanes[k] = SOP(lanes[k], SLOAD(x[i * ld + k]));                    \
            for (size_t k = 0; k < m; k++)                                             \
                out[k] = FINAL(lanes[k]);                                              \
            return;                                                                    \
        }                                                                              \
        for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {                              \
            size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;                 \
            size_t nv = cw / W, rem = cw % W;                                          \
            for (size_t v = 0; v < nv + (rem != 0); v++)                               \
                acc[v] = MC_SPLAT(VA, (A)(INIT));                                      \
            for (size_t i = 0; i < n; i++) {                                           \
                const T *p = x + i * ld + j0;                                          \
                for (size_t v = 0; v < nv; v++) {                                      \
                    VT t;                                                              \
                    memcpy(&t, p + v * W, sizeof t);                                   \
                    acc[v] = VOP(acc[v], LOAD(t));                                     \
                }                                                                      \
                if (rem) {                                                             \
                    VT t = MC_SPLAT(VT, (T)(PAD));                                     \
                    memcpy(&t, p + nv * W, rem * sizeof(T));                           \
                    acc[nv] = VOP(acc[nv], LOAD(t));                                   \
                }                                                                      \
            }                                                                          \
            memcpy(lanes, acc, cw * sizeof(A));                                        \
            for (size_t k = 0; k < cw; k++)                                            \
                out[j0 + k] = FINAL(lanes[k]);                                         \
        }                                                                              \
    }

#define MC_RED_BOTH(name, T, VT, A, VA, LOAD, SLOAD, VOP, SOP, INIT, PAD, OUT_T, FINAL) \
    MC_RED_ROW(name##_row, T, VT, A, VA, LOAD, SLOAD, VOP, SOP, INIT, PAD, OUT_T, FINAL) \
    MC_RED_COL(name##_col, T, VT, A, VA, LOAD, SLOAD, VOP, SOP, INIT, PAD, OUT_T, FINAL)

#define ID(x) (x)
#define ADD(a, b) ((a) + (b))
#define MUL(a, b) ((a) * (b))
#define AND(a, b) ((a) & (b))
#define OR(a, b) ((a) | (b))
#define NZ(x) ((uint8_t)((x) != 0))

/* ---- sums and products of bool and integers (unsigned lanes) ---- */

#define W32_U8(t) __builtin_convertvector(t, mc_vu32)
#define W32_I8(t) ((mc_vu32)__builtin_convertvector(t, mc_vi32))
#define AS_U32(t) ((mc_vu32)(t))
#define AS_U64(t) ((mc_vu64)(t))

/* a negative integer converts to unsigned as its two's complement */
#define MC_INT_SUMPROD(sfx, T, VT, A, VA, LOAD)                                        \
    MC_RED_BOTH(sum_##sfx, T, VT, A, VA, LOAD, (A), ADD, ADD, 0, 0, A, ID)              \
    MC_RED_BOTH(prod_##sfx, T, VT, A, VA, LOAD, (A), MUL, MUL, 1, 1, A, ID)

MC_INT_SUMPROD(u8, uint8_t, mc_r_u8x32, uint32_t, mc_vu32, W32_U8)
MC_INT_SUMPROD(u16, uint16_t, mc_r_u16x32, uint32_t, mc_vu32, W32_U8)
MC_INT_SUMPROD(u32, uint32_t, mc_vu32, uint32_t, mc_vu32, ID)
MC_INT_SUMPROD(u64, uint64_t, mc_vu64, uint64_t, mc_vu64, ID)
MC_INT_SUMPROD(i8, int8_t, mc_r_i8x32, uint32_t, mc_vu32, W32_I8)
MC_INT_SUMPROD(i16, int16_t, mc_r_i16x32, uint32_t, mc_vu32, W32_I8)
MC_INT_SUMPROD(i32, int32_t, mc_vi32, uint32_t, mc_vu32, AS_U32)
MC_INT_SUMPROD(i64, int64_t, mc_vi64, uint64_t, mc_vu64, AS_U64)

/* ---- max and min (the dtype's own lanes) ---- */

#define SMAX(a, b) MC_SMAX(a, b)
#define SMIN(a, b) MC_SMIN(a, b)

#define MC_MINMAX(sfx, T, V, LO, HI)                                                   \
    MC_RED_BOTH(max_##sfx, T, V, T, V, ID, ID, mc_vmax_##sfx, SMAX, LO, LO, T, ID)      \
    MC_RED_BOTH(min_##sfx, T, V, T, V, ID, ID, mc_vmin_##sfx, SMIN, HI, HI, T, ID)

/* bool is bytes 0/1, so uint8's max and min are its or and and. */
MC_MINMAX(u8, uint8_t, mc_vu8, 0, UINT8_MAX)
MC_MINMAX(u16, uint16_t, mc_vu16, 0, UINT16_MAX)
MC_MINMAX(u32, uint32_t, mc_vu32, 0, UINT32_MAX)
MC_MINMAX(u64, uint64_t, mc_vu64, 0, UINT64_MAX)
MC_MINMAX(i8, int8_t, mc_vi8, INT8_MIN, INT8_MAX)
MC_MINMAX(i16, int16_t, mc_vi16, INT16_MIN, INT16_MAX)
MC_MINMAX(i32, int32_t, mc_vi32, INT32_MIN, INT32_MAX)
MC_MINMAX(i64, int64_t, mc_vi64, INT64_MIN, INT64_MAX)
MC_MINMAX(f32, float, mc_vf32, -INFINITY, INFINITY)
MC_MINMAX(f64, double, mc_vf64, -(double)INFINITY, (double)INFINITY)

/* ---- all and any: lane masks of the element width ---- */

#define NZ_I8(t) ((mc_vi8)((t) != 0))
#define NZ_I16(t) ((mc_vi16)((t) != 0))
#define NZ_I32(t) ((mc_vi32)((t) != 0))
#define NZ_I64(t) ((mc_vi64)((t) != 0))
/* a half is zero when all but its sign bit are */
#define NZ_HALF(t) ((mc_vi16)(((t) & 0x7fff) != 0))
/* one element as a mask lane: -1 if non-zero */
#define SNZ(x) (-((x) != 0))
#define SNZ_HALF(x) (-(((x) & 0x7fff) != 0))

#define MC_ALLANY(sfx, T, VT, A, VA, LOAD, SLOAD)                                      \
    MC_RED_BOTH(all_##sfx, T, VT, A, VA, LOAD, SLOAD, AND, AND, -1, 1, uint8_t, NZ)     \
    MC_RED_BOTH(any_##sfx, T, VT, A, VA, LOAD, SLOAD, OR, OR, 0, 0, uint8_t, NZ)

MC_ALLANY(u8, uint8_t, mc_vu8, int8_t, mc_vi8, NZ_I8, SNZ)
MC_ALLANY(u16, uint16_t, mc_vu16, int16_t, mc_vi16, NZ_I16, SNZ)
MC_ALLANY(u32, uint32_t, mc_vu32, int32_t, mc_vi32, NZ_I32, SNZ)
MC_ALLANY(u64, uint64_t, mc_vu64, int64_t, mc_vi64, NZ_I64, SNZ)
MC_ALLANY(half, uint16_t, mc_vu16, int16_t, mc_vi16, NZ_HALF, SNZ_HALF)
MC_ALLANY(f32, float, mc_vf32, int32_t, mc_vi32, NZ_I32, SNZ)
MC_ALLANY(f64, double, mc_vf64, int64_t, mc_vi64, NZ_I64, SNZ)

/* ---- float products (plain lanes) and sums (blocked, reduce_impl.h) ---- */

MC_RED_BOTH(prod_f32, float, mc_vf32, float, mc_vf32, ID, ID, MUL, MUL, 1, 1, float, ID)
MC_RED_BOTH(prod_f64, double, mc_vf64, double, mc_vf64, ID, ID, MUL, MUL, 1, 1, double, ID)

static void sum_f32_row(const void *xv, size_t n, size_t rows, size_t ld, void *outv)
{
    const float *x = xv;
    float *out = outv;
    for (size_t r = 0; r < rows; r++)
        out[r] = (float)mc_sum_f32(x + r * ld, n);
}

static void sum_f64_row(const void *xv, size_t n, size_t rows, size_t ld, void *outv)
{
    const double *x = xv;
    double *out = outv;
    for (size_t r = 0; r < rows; r++)
        out[r] = mc_sum_f64(x + r * ld, n);
}

/* Rows per float32 block of a column sum: each lane adds this many
 * elements before its block sum moves to float64. */
enum { COL_SUM_ROWS = 8 };

/* acc[v] = the sum over rows [i0, i1) of the cw columns at x + j0, one
 * vector of columns per v (a last partial vector zero-padded). */
#define MC_DEF_COL_BLOCK(sfx, T, V)                                           \
    static void col_block_##sfx(const T *x, size_t ld, size_t j0, size_t cw, size_t i0, \
                                size_t i1, V *acc)                            \
    {                                                                         \
        const size_t w = MC_LANES(T), full = cw / w, nv = (cw + w - 1) / w;   \
        for (size_t v = 0; v < nv; v++)                                       \
            acc[v] = (V){0};                                                  \
        for (size_t i = i0; i < i1; i++) {                                    \
            const T *p = x + i * ld + j0;                                     \
            for (size_t v = 0; v < full; v++) {                               \
                V t;                                                          \
                memcpy(&t, p + v * w, sizeof t);                              \
                acc[v] += t;                                                  \
            }                                                                 \
            if (full < nv) {                                                  \
                V t = {0};                                                    \
                memcpy(&t, p + full * w, (cw - full * w) * sizeof(T));        \
                acc[full] += t;                                               \
            }                                                                 \
        }                                                                     \
    }
MC_DEF_COL_BLOCK(f32, float, mc_vf32)
MC_DEF_COL_BLOCK(f64, double, mc_vf64)
#undef MC_DEF_COL_BLOCK

static void sum_f32_col(const void *xv, size_t n, size_t m, size_t ld, void *outv)
{
    const float *x = xv;
    float *out = outv;
    enum { W = MC_LANES(float) };
    mc_vf32 facc[MC_COL_CHUNK / W];
    mc_r_f64x32 dacc[MC_COL_CHUNK / W];
    double lanes[MC_COL_CHUNK];
    if (m < W) { /* few columns: float64 scalars */
        for (size_t k = 0; k < m; k++)
            lanes[k] = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < m; k++)
                lanes[k] += x[i * ld + k];
        for (size_t k = 0; k < m; k++)
            out[k] = (float)lanes[k];
        return;
    }
    for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {
        size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;
        size_t nv = (cw + W - 1) / W;
        for (size_t v = 0; v < nv; v++)
            dacc[v] = (mc_r_f64x32){0};
        for (size_t i0 = 0; i0 < n; i0 += COL_SUM_ROWS) {
            size_t i1 = n - i0 < COL_SUM_ROWS ? n : i0 + COL_SUM_ROWS;
            col_block_f32(x, ld, j0, cw, i0, i1, facc);
            for (size_t v = 0; v < nv; v++)
                dacc[v] += __builtin_convertvector(facc[v], mc_r_f64x32);
        }
        memcpy(lanes, dacc, cw * sizeof(double));
        for (size_t k = 0; k < cw; k++)
            out[j0 + k] = (float)lanes[k];
    }
}

static void sum_f64_col(const void *xv, size_t n, size_t m, size_t ld, void *outv)
{
    const double *x = xv;
    double *out = outv;
    enum { W = MC_LANES(double) };
    mc_vf64 blk[MC_COL_CHUNK / W], s[MC_COL_CHUNK / W], c[MC_COL_CHUNK / W];
    double ls[MC_COL_CHUNK], lc[MC_COL_CHUNK];
    if (m < W) { /* few columns: compensated scalars */
        for (size_t k = 0; k < m; k++)
            ls[k] = lc[k] = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < m; k++)
                mc_neumaier(&ls[k], &lc[k], x[i * ld + k]);
        for (size_t k = 0; k < m; k++)
            out[k] = ls[k] + lc[k];
        return;
    }
    for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {
        size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;
        size_t nv = (cw + W - 1) / W;
        for (size_t v = 0; v < nv; v++)
            s[v] = c[v] = (mc_vf64){0};
        for (size_t i0 = 0; i0 < n; i0 += COL_SUM_ROWS) {
            size_t i1 = n - i0 < COL_SUM_ROWS ? n : i0 + COL_SUM_ROWS;
            col_block_f64(x, ld, j0, cw, i0, i1, blk);
            for (size_t v = 0; v < nv; v++)
                mc_neumaier_v(&s[v], &c[v], blk[v]);
        }
        memcpy(ls, s, cw * sizeof(double));
        memcpy(lc, c, cw * sizeof(double));
        for (size_t k = 0; k < cw; k++)
            out[j0 + k] = ls[k] + lc[k];
    }
}

/* ---- float16 / bfloat16: float32 blocks through the float32 kernels ---- */

static const mc_reduce_row_fn f32_row[4] = {sum_f32_row, prod_f32_row, max_f32_row, min_f32_row};
static const mc_reduce_col_fn f32_col[4] = {sum_f32_col, prod_f32_col, max_f32_col, min_f32_col};

static float combine_f32(mc_reduce_op op, float a, float b)
{
    switch (op) {
    case MC_R_PROD:
        return a * b;
    case MC_R_MAX:
        return MC_SMAX(a, b);
    case MC_R_MIN:
        return MC_SMIN(a, b);
    default:
        return a + b;
    }
}

static float init_f32(mc_reduce_op op)
{
    return op == MC_R_PROD ? 1.0f : op == MC_R_MAX ? -INFINITY : op == MC_R_MIN ? INFINITY : 0.0f;
}

static void half_row(int bf, mc_reduce_op op, const void *xv, size_t n, size_t rows, size_t ld, void *outv)
{
    const uint16_t *base = xv;
    float *out = outv;
    float buf[MC_RED_STAGE];
    for (size_t r = 0; r < rows; r++) {
        const uint16_t *x = base + r * ld;
        if (n < MC_LANES(float)) { /* short rows: scalars */
            double s = op == MC_R_SUM ? 0.0 : init_f32(op);
            for (size_t i = 0; i < n; i++) {
                float v = bf ? mc_bf16_to_f32(x[i]) : mc_f16_to_f32(x[i]);
                s = op == MC_R_SUM ? s + v : combine_f32(op, (float)s, v);
            }
            out[r] = (float)s;
            continue;
        }
        if (op == MC_R_SUM) {
            out[r] = (float)mc_sum_half(bf, x, n);
            continue;
        }
        float s = init_f32(op);
        for (size_t i = 0; i < n; i += MC_RED_STAGE) {
            size_t m = n - i < MC_RED_STAGE ? n - i : MC_RED_STAGE;
            float p;
            mc_half_in(bf, x + i, buf, m);
            f32_row[op](buf, m, 1, m, &p);
            s = combine_f32(op, s, p);
        }
        out[r] = s;
    }
}

/* Rows of half data converted per step of a column reduction. */
enum { HALF_COL_ROWS = 8 };

static void half_col(int bf, mc_reduce_op op, const void *xv, size_t n, size_t m, size_t ld, void *outv)
{
    const uint16_t *x = xv;
    float *out = outv;
    float buf[HALF_COL_ROWS * MC_COL_CHUNK], part[MC_COL_CHUNK], acc[MC_COL_CHUNK];
    double dacc[MC_COL_CHUNK];
    for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {
        size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;
        for (size_t k = 0; k < cw; k++) {
            acc[k] = init_f32(op);
            dacc[k] = 0;
        }
        for (size_t i0 = 0; i0 < n; i0 += HALF_COL_ROWS) {
            size_t rb = n - i0 < HALF_COL_ROWS ? n - i0 : HALF_COL_ROWS;
            for (size_t q = 0; q < rb; q++)
                mc_half_in(bf, x + (i0 + q) * ld + j0, buf + q * cw, cw);
            f32_col[op](buf, rb, cw, cw, part);
            for (size_t k = 0; k < cw; k++) {
                if (op == MC_R_SUM)
                    dacc[k] += part[k];
                else
                    acc[k] = combine_f32(op, acc[k], part[k]);
            }
        }
        for (size_t k = 0; k < cw; k++)
            out[j0 + k] = op == MC_R_SUM ? (float)dacc[k] : acc[k];
    }
}

#define MC_HALF_RED(name, bf, op)                                                      \
    static void name##_row(const void *x, size_t n, size_t rows, size_t ld, void *out) \
    {                                                                                  \
        half_row(bf, op, x, n, rows, ld, out);                                         \
    }                                                                                  \
    static void name##_col(const void *x, size_t n, size_t m, size_t ld, void *out)    \
    {                                                                                  \
        half_col(bf, op, x, n, m, ld, out);                                            \
    }
MC_HALF_RED(sum_f16, 0, MC_R_SUM)
MC_HALF_RED(prod_f16, 0, MC_R_PROD)
MC_HALF_RED(max_f16, 0, MC_R_MAX)
MC_HALF_RED(min_f16, 0, MC_R_MIN)
MC_HALF_RED(sum_bf16, 1, MC_R_SUM)
MC_HALF_RED(prod_bf16, 1, MC_R_PROD)
MC_HALF_RED(max_bf16, 1, MC_R_MAX)
MC_HALF_RED(min_bf16, 1, MC_R_MIN)

/* ---- the table ---- */

#define SET(t, op, dt, name)                                                           \
    do {                                                                               \
        (t)->row[op][dt] = name##_row;                                                 \
        (t)->col[op][dt] = name##_col;                                                 \
    } while (0)

void MC_ISA_FN(mc_reduce_fill_basic)(mc_reduce_table *t)
{
    SET(t, MC_R_SUM, MC_SIMD_BOOL, sum_u8);
    SET(t, MC_R_SUM, MC_SIMD_UINT8, sum_u8);
    SET(t, MC_R_SUM, MC_SIMD_UINT16, sum_u16);
    SET(t, MC_R_SUM, MC_SIMD_UINT32, sum_u32);
    SET(t, MC_R_SUM, MC_SIMD_UINT64, sum_u64);
    SET(t, MC_R_SUM, MC_SIMD_INT8, sum_i8);
    SET(t, MC_R_SUM, MC_SIMD_INT16, sum_i16);
    SET(t, MC_R_SUM, MC_SIMD_INT32, sum_i32);
    SET(t, MC_R_SUM, MC_SIMD_INT64, sum_i64);
    SET(t, MC_R_SUM, MC_SIMD_FLOAT16, sum_f16);
    SET(t, MC_R_SUM, MC_SIMD_BFLOAT16, sum_bf16);
    SET(t, MC_R_SUM, MC_SIMD_FLOAT32, sum_f32);
    SET(t, MC_R_SUM, MC_SIMD_FLOAT64, sum_f64);

    SET(t, MC_R_PROD, MC_SIMD_BOOL, prod_u8);
    SET(t, MC_R_PROD, MC_SIMD_UINT8, prod_u8);
    SET(t, MC_R_PROD, MC_SIMD_UINT16, prod_u16);
    SET(t, MC_R_PROD, MC_SIMD_UINT32, prod_u32);
    SET(t, MC_R_PROD, MC_SIMD_UINT64, prod_u64);
    SET(t, MC_R_PROD, MC_SIMD_INT8, prod_i8);
    SET(t, MC_R_PROD, MC_SIMD_INT16, prod_i16);
    SET(t, MC_R_PROD, MC_SIMD_INT32, prod_i32);
    SET(t, MC_R_PROD, MC_SIMD_INT64, prod_i64);
    SET(t, MC_R_PROD, MC_SIMD_FLOAT16, prod_f16);
    SET(t, MC_R_PROD, MC_SIMD_BFLOAT16, prod_bf16);
    SET(t, MC_R_PROD, MC_SIMD_FLOAT32, prod_f32);
    SET(t, MC_R_PROD, MC_SIMD_FLOAT64, prod_f64);

    SET(t, MC_R_MAX, MC_SIMD_BOOL, max_u8);
    SET(t, MC_R_MAX, MC_SIMD_UINT8, max_u8);
    SET(t, MC_R_MAX, MC_SIMD_UINT16, max_u16);
    SET(t, MC_R_MAX, MC_SIMD_UINT32, max_u32);
    SET(t, MC_R_MAX, MC_SIMD_UINT64, max_u64);
    SET(t, MC_R_MAX, MC_SIMD_INT8, max_i8);
    SET(t, MC_R_MAX, MC_SIMD_INT16, max_i16);
    SET(t, MC_R_MAX, MC_SIMD_INT32, max_i32);
    SET(t, MC_R_MAX, MC_SIMD_INT64, max_i64);
    SET(t, MC_R_MAX, MC_SIMD_FLOAT16, max_f16);
    SET(t, MC_R_MAX, MC_SIMD_BFLOAT16, max_bf16);
    SET(t, MC_R_MAX, MC_SIMD_FLOAT32, max_f32);
    SET(t, MC_R_MAX, MC_SIMD_FLOAT64, max_f64);

    SET(t, MC_R_MIN, MC_SIMD_BOOL, min_u8);
    SET(t, MC_R_MIN, MC_SIMD_UINT8, min_u8);
    SET(t, MC_R_MIN, MC_SIMD_UINT16, min_u16);
    SET(t, MC_R_MIN, MC_SIMD_UINT32, min_u32);
    SET(t, MC_R_MIN, MC_SIMD_UINT64, min_u64);
    SET(t, MC_R_MIN, MC_SIMD_INT8, min_i8);
    SET(t, MC_R_MIN, MC_SIMD_INT16, min_i16);
    SET(t, MC_R_MIN, MC_SIMD_INT32, min_i32);
    SET(t, MC_R_MIN, MC_SIMD_INT64, min_i64);
    SET(t, MC_R_MIN, MC_SIMD_FLOAT16, min_f16);
    SET(t, MC_R_MIN, MC_SIMD_BFLOAT16, min_bf16);
    SET(t, MC_R_MIN, MC_SIMD_FLOAT32, min_f32);
    SET(t, MC_R_MIN, MC_SIMD_FLOAT64, min_f64);

    /* all / any look at bits only where that is exact: integers of one
     * width share a kernel, floats compare as floats (-0.0 is zero). */
    static const struct {
        int dt;
        mc_reduce_row_fn all_row, any_row;
        mc_reduce_col_fn all_col, any_col;
    } logic[] = {
        {MC_SIMD_BOOL, all_u8_row, any_u8_row, all_u8_col, any_u8_col},
        {MC_SIMD_UINT8, all_u8_row, any_u8_row, all_u8_col, any_u8_col},
        {MC_SIMD_INT8, all_u8_row, any_u8_row, all_u8_col, any_u8_col},
        {MC_SIMD_UINT16, all_u16_row, any_u16_row, all_u16_col, any_u16_col},
        {MC_SIMD_INT16, all_u16_row, any_u16_row, all_u16_col, any_u16_col},
        {MC_SIMD_UINT32, all_u32_row, any_u32_row, all_u32_col, any_u32_col},
        {MC_SIMD_INT32, all_u32_row, any_u32_row, all_u32_col, any_u32_col},
        {MC_SIMD_UINT64, all_u64_row, any_u64_row, all_u64_col, any_u64_col},
        {MC_SIMD_INT64, all_u64_row, any_u64_row, all_u64_col, any_u64_col},
        {MC_SIMD_FLOAT16, all_half_row, any_half_row, all_half_col, any_half_col},
        {MC_SIMD_BFLOAT16, all_half_row, any_half_row, all_half_col, any_half_col},
        {MC_SIMD_FLOAT32, all_f32_row, any_f32_row, all_f32_col, any_f32_col},
        {MC_SIMD_FLOAT64, all_f64_row, any_f64_row, all_f64_col, any_f64_col},
    };
    for (size_t i = 0; i < sizeof logic / sizeof logic[0]; i++) {
        t->row[MC_R_AND][logic[i].dt] = logic[i].all_row;
        t->row[MC_R_OR][logic[i].dt] = logic[i].any_row;
        t->col[MC_R_AND][logic[i].dt] = logic[i].all_col;
        t->col[MC_R_OR][logic[i].dt] = logic[i].any_col;
    }
}
