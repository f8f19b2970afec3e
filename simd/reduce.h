/* The reduction and scan kernel interface: reductions of contiguous rows
 * and of strided ("column") axes, arg-reductions, the fused row kernels of
 * var/std, logsumexp and softmax, and cumulative scans, per dtype. Like
 * simd.h it knows pointers, lengths and strides only. Each ISA build fills
 * its own table together with its elementwise table (simd/fill.c), and
 * mc_reduce_kernels() returns the reduction half of the pair mc_kernels()
 * chose (simd/dispatch.c), so both always run the same ISA.
 *
 * Accumulation (the "acc" dtype a kernel writes, see mc_reduce_acc_dtype):
 * sums and products of bool and integers of at most 4 bytes accumulate in
 * 32 bits (int32 for bool and signed, uint32 for unsigned; wrapping, as
 * MLX), 64-bit integers in their own type; float16 and bfloat16 in float32
 * (one rounding at the end instead of MLX's rounding at every step);
 * float32 sums in float32 vector lanes over blocks of a few hundred
 * elements, the block sums in float64; float64 sums in float64 blocks
 * combined with Neumaier's compensation. max/min keep the dtype (float32
 * for the half types) and propagate NaN; all/any give bool. */
#ifndef MC_SIMD_REDUCE_H
#define MC_SIMD_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "simd/simd.h"

typedef enum mc_reduce_op {
    MC_R_SUM,
    MC_R_PROD,
    MC_R_MAX,
    MC_R_MIN,
    MC_R_AND, /* all: every element non-zero (NaN is non-zero, -0.0 is zero) */
    MC_R_OR,  /* any */
    MC_R_COUNT
} mc_reduce_op;

typedef enum mc_arg_op { MC_ARG_MAX, MC_ARG_MIN, MC_ARG_COUNT } mc_arg_op;

typedef enum mc_scan_op {
    MC_S_SUM,
    MC_S_PROD,
    MC_S_MAX,
    MC_S_MIN,
    MC_S_LOGADDEXP,
    MC_S_COUNT
} mc_scan_op;

/* acc[r] = op over x[r * ld + i], i < n, for r < rows (acc in the acc
 * dtype). n == 0 gives the op's identity (0, 1, true, false; max/min of
 * nothing give -inf/+inf, or the type's limits: callers reject them). */
typedef void (*mc_reduce_row_fn)(const void *x, size_t n, size_t rows, size_t ld, void *acc);
/* acc[j] = op over x[i * ld + j], i < n, for j < m: a reduction along a
 * strided axis, accumulating whole rows so that it vectorises. */
typedef void (*mc_reduce_col_fn)(const void *x, size_t n, size_t m, size_t ld, void *acc);

/* idx[r] = MLX's arg-reduction of row r: the first index of the largest
 * (smallest) element, NaNs skipped, except that a NaN first element gives
 * 0 (MLX compares each element with the best so far using > or <). */
typedef void (*mc_arg_row_fn)(const void *x, size_t n, size_t rows, size_t ld, uint32_t *idx);
/* idx[j] = the arg-reduction of column j of an (n, m) block with row stride ld. */
typedef void (*mc_arg_col_fn)(const void *x, size_t n, size_t m, size_t ld, uint32_t *idx);

/* Row kernels over floating types; y / out have x's dtype.
 * var: out[r] = sum((x - mean)^2) / d with d = n (ddof 0) or max(n - ddof,
 * 0), two passes; its square root with take_sqrt. */
typedef void (*mc_var_row_fn)(const void *x, size_t n, size_t rows, size_t ld, int ddof, int take_sqrt,
                              void *out);
/* logsumexp: out[r] = max + log(sum(exp(x - max))), or max if it is inf. */
typedef void (*mc_lse_row_fn)(const void *x, size_t n, size_t rows, size_t ld, void *out);
/* softmax: y[r * ld + i] = exp(x - max) / sum(exp(x - max)); y may be x. */
typedef void (*mc_softmax_row_fn)(const void *x, void *y, size_t n, size_t rows, size_t ld);

/* Scans, writing the scan's output dtype (x's, or int32 for a sum of bool).
 * Exclusive scans shift by one and start from the identity (0, 1, -inf or
 * the type's minimum, ...).
 * row: along contiguous rows: y[r * n + i] from x[r * n + 0..i].
 * col: along the rows of an (n, m) block with row stride ld (elements, for
 * x and y): y[i * ld + j] from x[0..i][j], vectorised over j. */
typedef void (*mc_scan_row_fn)(const void *x, void *y, size_t n, size_t rows, int reverse, int inclusive);
typedef void (*mc_scan_col_fn)(const void *x, void *y, size_t n, size_t m, size_t ld, int reverse,
                               int inclusive);

typedef struct mc_reduce_table {
    const char *isa;
    /* NULL where a dtype has no kernel (complex64 arg-reductions of order,
     * fused kernels on non-floating types...) */
    mc_reduce_row_fn row[MC_R_COUNT][MC_SIMD_NUM_DTYPES];
    mc_reduce_col_fn col[MC_R_COUNT][MC_SIMD_NUM_DTYPES];
    mc_arg_row_fn arg_row[MC_ARG_COUNT][MC_SIMD_NUM_DTYPES];
    mc_arg_col_fn arg_col[MC_ARG_COUNT][MC_SIMD_NUM_DTYPES];
    mc_var_row_fn var_row[MC_SIMD_NUM_DTYPES];
    mc_lse_row_fn lse_row[MC_SIMD_NUM_DTYPES];
    mc_softmax_row_fn softmax_row[MC_SIMD_NUM_DTYPES];
    mc_scan_row_fn scan_row[MC_S_COUNT][MC_SIMD_NUM_DTYPES];
    mc_scan_col_fn scan_col[MC_S_COUNT][MC_SIMD_NUM_DTYPES];
} mc_reduce_table;

/* The table of the ISA mc_kernels() uses. Never NULL; any thread. */
const mc_reduce_table *mc_reduce_kernels(void);
/* The table of a named ISA, or NULL if this CPU or build lacks it. */
const mc_reduce_table *mc_reduce_kernels_for(const char *isa);

/* The dtype the row/col kernels of op write for input dtype d. */
int mc_reduce_acc_dtype(mc_reduce_op op, int d);
/* The dtype a scan of op on dtype d produces (int32 for a sum of bool). */
int mc_scan_out_dtype(mc_scan_op op, int d);

/* out[i] = (out dtype)(acc[i] * scale) for i < n: the last step of a
 * reduction whose acc dtype is not its output's (float32 sums of half
 * types) or that scales (mean). Reads integer accumulators exactly as
 * float64. acc and out may be the same memory when their element sizes
 * match. */
void mc_reduce_finish(int acc_dtype, int out_dtype, double scale, const void *acc, void *out, size_t n);

#endif
