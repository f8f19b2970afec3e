/* argmax and argmin of one ISA (compiled once per ISA), with MLX's rule:
 * the best so far starts at the first element and is replaced only by a
 * strictly greater (smaller) one. So the answer is the first index of the
 * largest non-NaN element, except that a NaN first element stays (index
 * 0). Rows keep a best value and its index per lane; NaN lanes restart at
 * the next element, and the lanes are merged smallest index first on ties.
 * Columns run the rule itself lane-wise over whole rows. Types narrower
 * than their compare lanes (bool, 8/16-bit integers, halves) are staged
 * through blocks of int32 or float32. complex64 is in reduce_complex.c. */
#include "simd/reduce_impl.h"

#define GT(a, b) ((a) > (b))
#define LT(a, b) ((a) < (b))

/* name_core(x, n, &val): the first index of the best non-NaN element of
 * x[0..n) and that element in *val; *val is NaN (or 0 for integers) and
 * the index 0 if there is none. C: compare type, VC its vector, I / VI
 * index lanes of C's width, M the mask. */
#define MC_ARG_CORE(name, C, VC, I, VI, M, CMP)                                        \
    static size_t name##_core(const C *x, size_t n, C *val)                            \
    {                                                                                  \
        enum { W = sizeof(VC) / sizeof(C) };                                           \
        size_t i = 0, bi = 0;                                                          \
        C bv = 0;                                                                      \
        int have = 0;                                                                  \
        if (n >= W) {                                                                  \
            VC best;                                                                   \
            VI idx = {0}, cur;                                                         \
            memcpy(&best, x, sizeof best);                                             \
            for (size_t k = 0; k < W; k++)                                             \
                idx[k] = (I)k;                                                         \
            cur = idx;                                                                 \
            for (i = W; i + W <= n; i += W) {                                          \
                VC v;                                                                  \
                memcpy(&v, x + i, sizeof v);                                           \
                cur += (I)W;                                                           \
                M m = (M)(CMP(v, best)) | (M)(best != best);                           \
                best = MC_VSEL(VC, M, m, v, best);                                     \
                idx = MC_VSEL(VI, M, m, cur, idx);                                     \
            }                                                                          \
            for (size_t k = 0; k < W; k++) {                                           \
                C b = best[k];                                                         \
                size_t bk = (size_t)idx[k];                                            \
                if (b != b)                                                            \
                    continue;                                                          \
                if (!have || CMP(b, bv) || (b == bv && bk < bi)) {                     \
                    bv = b;                                                            \
                    bi = bk;                                                           \
                    have = 1;                                                          \
                }                                                                      \
            }                                                                          \
        }                                                                              \
        for (; i < n; i++) {                                                           \
            C v = x[i];                                                                \
            if (v != v)                                                                \
                continue;                                                              \
            if (!have || CMP(v, bv)) {                                                 \
                bv = v;                                                                \
                bi = i;                                                                \
                have = 1;                                                              \
            }                                                                          \
        }                                                                              \
        if (!have) {                                                                   \
            *val = x[0]; /* NaN: every element is */                                   \
            return 0;                                                                  \
        }                                                                              \
        *val = bv;                                                                     \
        return bi;                                                                     \
    }

/* Column form: lane-wise best and index over whole rows of a chunk. */
#define MC_ARG_COLCORE(name, C, VC, I, VI, M, CMP)                                     \
    static void name##_colcore(const C *const *rowp, size_t i, size_t cw, VC *best,    \
                               VI *idx)                                                \
    {                                                                                  \
        enum { W = sizeof(VC) / sizeof(C) };                                           \
        if (cw < W) { /* fewer columns than lanes: scalars */                          \
            for (size_t k = 0; k < cw; k++) {                                          \
                C t = (*rowp)[k];                                                      \
                if (i == 0 || CMP(t, best[0][k])) {                                    \
                    best[0][k] = t;                                                    \
                    idx[0][k] = (I)i;                                                  \
                }                                                                      \
            }                                                                          \
            return;                                                                    \
        }                                                                              \
        size_t nv = (cw + W - 1) / W;                                                  \
        VI cur = MC_SPLAT(VI, (I)i);                                                   \
        for (size_t v = 0; v < nv; v++) {                                              \
            VC t = best[v];                                                            \
            size_t cnt = cw - v * W < W ? cw - v * W : W;                              \
            memcpy(&t, *rowp + v * W, cnt * sizeof(C));                                \
            if (i == 0) {                                                              \
                best[v] = t;                                                           \
                idx[v] = cur;                                                          \
                continue;                                                              \
            }                                                                          \
            M m = (M)(CMP(t, best[v]));                                                \
            best[v] = MC_VSEL(VC, M, m, t, best[v]);                                   \
            idx[v] = MC_VSEL(VI, M, m, cur, idx[v]);                                   \
        }                                                                              \
    }

/* Kernels of a dtype whose elements are compared as they are (C == T). */
#define MC_ARG_DIRECT(name, C, VC, I, VI, M, CMP)                                      \
    MC_ARG_CORE(name, C, VC, I, VI, M, CMP)                                            \
    MC_ARG_COLCORE(name, C, VC, I, VI, M, CMP)                                         \
    static void name##_row(const void *xv, size_t n, size_t rows, size_t ld,           \
                           uint32_t *out)                                              \
    {                                                                                  \
        const C *base = xv;                                                            \
        for (size_t r = 0; r < rows; r++) {                                            \
            const C *x = base + r * ld;                                                \
            C v;                                                                       \
            out[r] = (n == 0 || x[0] != x[0]) ? 0 : (uint32_t)name##_core(x, n, &v);   \
        }                                                                              \
    }                                                                                  \
    static void name##_col(const void *xv, size_t n, size_t m, size_t ld,              \
                           uint32_t *out)                                              \
    {                                                                                  \
        enum { W = sizeof(VC) / sizeof(C) };                                           \
        const C *x = xv;                                                               \
        VC best[MC_COL_CHUNK / W];                                                     \
        VI idx[MC_COL_CHUNK / W];                                                      \
        I lanes[MC_COL_CHUNK];                                                         \
        for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {                              \
            size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;                 \
            memset(best, 0, sizeof best);                                              \
            memset(idx, 0, sizeof idx);                                                \
            for (size_t i = 0; i < n; i++) {                                           \
                const C *p = x + i * ld + j0;                                          \
                name##_colcore(&p, i, cw, best, idx);                                  \
            }                                                                          \
            memcpy(lanes, idx, cw * sizeof(I));                                        \
            for (size_t k = 0; k < cw; k++)                                            \
                out[j0 + k] = (uint32_t)lanes[k];                                      \
        }                                                                              \
    }

MC_ARG_DIRECT(argmax_i32, int32_t, mc_vi32, uint32_t, mc_vu32, mc_vi32, GT)
MC_ARG_DIRECT(argmin_i32, int32_t, mc_vi32, uint32_t, mc_vu32, mc_vi32, LT)
MC_ARG_DIRECT(argmax_u32, uint32_t, mc_vu32, uint32_t, mc_vu32, mc_vi32, GT)
MC_ARG_DIRECT(argmin_u32, uint32_t, mc_vu32, uint32_t, mc_vu32, mc_vi32, LT)
MC_ARG_DIRECT(argmax_i64, int64_t, mc_vi64, uint64_t, mc_vu64, mc_vi64, GT)
MC_ARG_DIRECT(argmin_i64, int64_t, mc_vi64, uint64_t, mc_vu64, mc_vi64, LT)
MC_ARG_DIRECT(argmax_u64, uint64_t, mc_vu64, uint64_t, mc_vu64, mc_vi64, GT)
MC_ARG_DIRECT(argmin_u64, uint64_t, mc_vu64, uint64_t, mc_vu64, mc_vi64, LT)
MC_ARG_DIRECT(argmax_f32, float, mc_vf32, uint32_t, mc_vu32, mc_vi32, GT)
MC_ARG_DIRECT(argmin_f32, float, mc_vf32, uint32_t, mc_vu32, mc_vi32, LT)
MC_ARG_DIRECT(argmax_f64, double, mc_vf64, uint64_t, mc_vu64, mc_vi64, GT)
MC_ARG_DIRECT(argmin_f64, double, mc_vf64, uint64_t, mc_vu64, mc_vi64, LT)

/* ---- staged types: blocks converted to int32 or float32 ---- */

typedef void (*stage_fn)(const void *x, size_t off, void *buf, size_t n);

#define MC_STAGE_INT(sfx, T)                                                           \
    static void stage_##sfx(const void *xv, size_t off, void *bufv, size_t n)          \
    {                                                                                  \
        const T *x = (const T *)xv + off;                                              \
        int32_t *buf = bufv;                                                           \
        for (size_t k = 0; k < n; k++)                                                 \
            buf[k] = x[k];                                                             \
    }
MC_STAGE_INT(u8, uint8_t)
MC_STAGE_INT(i8, int8_t)
MC_STAGE_INT(u16, uint16_t)
MC_STAGE_INT(i16, int16_t)

static void stage_f16(const void *x, size_t off, void *buf, size_t n)
{
    mc_half_in(0, (const uint16_t *)x + off, buf, n);
}

static void stage_bf16(const void *x, size_t off, void *buf, size_t n)
{
    mc_half_in(1, (const uint16_t *)x + off, buf, n);
}

/* The staged row: per block, the core's answer; blocks merged in order
 * with the strict comparison (an earlier block wins a tie). */
#define MC_ARG_STAGED_ROW(name, core, C, CMP)                                          \
    static uint32_t name(stage_fn stage, const void *x, size_t n)                      \
    {                                                                                  \
        C buf[MC_RED_STAGE];                                                           \
        size_t bi = 0;                                                                 \
        C bv = 0;                                                                      \
        int have = 0;                                                                  \
        for (size_t i = 0; i < n; i += MC_RED_STAGE) {                                 \
            size_t m = n - i < MC_RED_STAGE ? n - i : MC_RED_STAGE;                    \
            stage(x, i, buf, m);                                                       \
            if (i == 0 && buf[0] != buf[0])                                            \
                return 0;                                                              \
            C v;                                                                       \
            size_t k = core(buf, m, &v);                                               \
            if (v != v)                                                                \
                continue;                                                              \
            if (!have || CMP(v, bv)) {                                                 \
                bv = v;                                                                \
                bi = i + k;                                                            \
                have = 1;                                                              \
            }                                                                          \
        }                                                                              \
        return (uint32_t)bi;                                                           \
    }
MC_ARG_STAGED_ROW(staged_argmax_i32, argmax_i32_core, int32_t, GT)
MC_ARG_STAGED_ROW(staged_argmin_i32, argmin_i32_core, int32_t, LT)
MC_ARG_STAGED_ROW(staged_argmax_f32, argmax_f32_core, float, GT)
MC_ARG_STAGED_ROW(staged_argmin_f32, argmin_f32_core, float, LT)

/* The staged column: each row's chunk converted, then the lane rule. */
#define MC_ARG_STAGED_COL(name, colcore, C, VC, I, VI)                                 \
    static void name(stage_fn stage, size_t isz, const void *xv, size_t n, size_t m,   \
                     size_t ld, uint32_t *out)                                         \
    {                                                                                  \
        enum { W = sizeof(VC) / sizeof(C) };                                           \
        const char *x = xv;                                                            \
        C buf[MC_COL_CHUNK];                                                           \
        VC best[MC_COL_CHUNK / W];                                                     \
        VI idx[MC_COL_CHUNK / W];                                                      \
        I lanes[MC_COL_CHUNK];                                                         \
        for (size_t j0 = 0; j0 < m; j0 += MC_COL_CHUNK) {                              \
            size_t cw = m - j0 < MC_COL_CHUNK ? m - j0 : MC_COL_CHUNK;                 \
            memset(best, 0, sizeof best);                                              \
            memset(idx, 0, sizeof idx);                                                \
            for (size_t i = 0; i < n; i++) {                                           \
                const C *p = buf;                                                      \
                stage(x + (i * ld + j0) * isz, 0, buf, cw);                            \
                colcore(&p, i, cw, best, idx);                                         \
            }                                                                          \
            memcpy(lanes, idx, cw * sizeof(I));                                        \
            for (size_t k = 0; k < cw; k++)                                            \
                out[j0 + k] = (uint32_t)lanes[k];                                      \
        }                                                                              \
    }
MC_ARG_STAGED_COL(staged_col_max_i32, argmax_i32_colcore, int32_t, mc_vi32, uint32_t, mc_vu32)
MC_ARG_STAGED_COL(staged_col_min_i32, argmin_i32_colcore, int32_t, mc_vi32, uint32_t, mc_vu32)
MC_ARG_STAGED_COL(staged_col_max_f32, argmax_f32_colcore, float, mc_vf32, uint32_t, mc_vu32)
MC_ARG_STAGED_COL(staged_col_min_f32, argmin_f32_colcore, float, mc_vf32, uint32_t, mc_vu32)

/* name_row / name_col of a staged dtype. */
#define MC_ARG_STAGED(name, stage, isz, rowk, colk)                                    \
    static void name##_row(const void *xv, size_t n, size_t rows, size_t ld,           \
                           uint32_t *out)                                              \
    {                                                                                  \
        for (size_t r = 0; r < rows; r++)                                              \
            out[r] = n ? rowk(stage, (const char *)xv + r * ld * (isz), n) : 0;        \
    }                                                                                  \
    static void name##_col(const void *xv, size_t n, size_t m, size_t ld,              \
                           uint32_t *out)                                              \
    {                                                                                  \
        colk(stage, isz, xv, n, m, ld, out);                                           \
    }

MC_ARG_STAGED(argmax_u8, stage_u8, 1, staged_argmax_i32, staged_col_max_i32)
MC_ARG_STAGED(argmin_u8, stage_u8, 1, staged_argmin_i32, staged_col_min_i32)
MC_ARG_STAGED(argmax_i8, stage_i8, 1, staged_argmax_i32, staged_col_max_i32)
MC_ARG_STAGED(argmin_i8, stage_i8, 1, staged_argmin_i32, staged_col_min_i32)
MC_ARG_STAGED(argmax_u16, stage_u16, 2, staged_argmax_i32, staged_col_max_i32)
MC_ARG_STAGED(argmin_u16, stage_u16, 2, staged_argmin_i32, staged_col_min_i32)
MC_ARG_STAGED(argmax_i16, stage_i16, 2, staged_argmax_i32, staged_col_max_i32)
MC_ARG_STAGED(argmin_i16, stage_i16, 2, staged_argmin_i32, staged_col_min_i32)
MC_ARG_STAGED(argmax_f16, stage_f16, 2, staged_argmax_f32, staged_col_max_f32)
MC_ARG_STAGED(argmin_f16, stage_f16, 2, staged_argmin_f32, staged_col_min_f32)
MC_ARG_STAGED(argmax_bf16, stage_bf16, 2, staged_argmax_f32, staged_col_max_f32)
MC_ARG_STAGED(argmin_bf16, stage_bf16, 2, staged_argmin_f32, staged_col_min_f32)

#define SET_ARG(t, dt, sfx)                                                            \
    do {                                                                               \
        (t)->arg_row[MC_ARG_MAX][dt] = argmax_##sfx##_row;                             \
        (t)->arg_col[MC_ARG_MAX][dt] = argmax_##sfx##_col;                             \
        (t)->arg_row[MC_ARG_MIN][dt] = argmin_##sfx##_row;                             \
        (t)->arg_col[MC_ARG_MIN][dt] = argmin_##sfx##_col;                             \
    } while (0)

void MC_ISA_FN(mc_reduce_fill_arg)(mc_reduce_table *t)
{
    SET_ARG(t, MC_SIMD_BOOL, u8);
    SET_ARG(t, MC_SIMD_UINT8, u8);
    SET_ARG(t, MC_SIMD_UINT16, u16);
    SET_ARG(t, MC_SIMD_UINT32, u32);
    SET_ARG(t, MC_SIMD_UINT64, u64);
    SET_ARG(t, MC_SIMD_INT8, i8);
    SET_ARG(t, MC_SIMD_INT16, i16);
    SET_ARG(t, MC_SIMD_INT32, i32);
    SET_ARG(t, MC_SIMD_INT64, i64);
    SET_ARG(t, MC_SIMD_FLOAT16, f16);
    SET_ARG(t, MC_SIMD_BFLOAT16, bf16);
    SET_ARG(t, MC_SIMD_FLOAT32, f32);
    SET_ARG(t, MC_SIMD_FLOAT64, f64);
}
