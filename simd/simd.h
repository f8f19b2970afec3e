/* The kernel interface: elementwise kernels over raw pointers and lengths,
 * chosen once per process for the best ISA this CPU has. Nothing here
 * knows arrays or graphs; dtypes are simd/dtype.h's codes (equal to
 * mlx-c's enum values), used as indices. */
#ifndef MC_SIMD_SIMD_H
#define MC_SIMD_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "simd/dtype.h"

/* Unary functions. The output dtype is the input's, except where noted. */
typedef enum mc_unary_op {
    MC_U_ABS,        /* complex64 -> float32 */
    MC_U_NEGATIVE,
    MC_U_SIGN,
    MC_U_SQUARE,
    MC_U_SQRT,
    MC_U_RSQRT,
    MC_U_RECIPROCAL,
    MC_U_EXP,
    MC_U_EXPM1,
    MC_U_LOG,
    MC_U_LOG1P,
    MC_U_LOG2,
    MC_U_LOG10,
    MC_U_SIN,
    MC_U_COS,
    MC_U_TAN,
    MC_U_ARCSIN,
    MC_U_ARCCOS,
    MC_U_ARCTAN,
    MC_U_SINH,
    MC_U_COSH,
    MC_U_TANH,
    MC_U_ARCSINH,
    MC_U_ARCCOSH,
    MC_U_ARCTANH,
    MC_U_SIGMOID,
    MC_U_ERF,
    MC_U_ERFINV,
    MC_U_FLOOR,
    MC_U_CEIL,
    MC_U_ROUND,       /* half to even, as MLX */
    MC_U_LOGICAL_NOT, /* bool -> bool */
    MC_U_ISNAN,       /* -> bool */
    MC_U_ISINF,       /* -> bool */
    MC_U_ISFINITE,    /* -> bool */
    MC_U_ISPOSINF,    /* -> bool */
    MC_U_ISNEGINF,    /* -> bool */
    MC_U_BITWISE_INVERT,
    MC_U_CONJUGATE,
    MC_U_REAL,        /* complex64 -> float32 */
    MC_U_IMAG,        /* complex64 -> float32 */
    MC_U_COUNT
} mc_unary_op;

/* Binary functions; both inputs have the same dtype. The output dtype is
 * the inputs', except comparisons and logical ops, which give bool. */
typedef enum mc_binary_op {
    MC_B_ADD,
    MC_B_SUBTRACT,
    MC_B_MULTIPLY,
    MC_B_DIVIDE,
    MC_B_FLOOR_DIVIDE,
    MC_B_REMAINDER,
    MC_B_POWER,
    MC_B_MAXIMUM,
    MC_B_MINIMUM,
    MC_B_ARCTAN2,
    MC_B_LOGADDEXP,
    MC_B_EQUAL,         /* -> bool */
    MC_B_NOT_EQUAL,     /* -> bool */
    MC_B_LESS,          /* -> bool */
    MC_B_LESS_EQUAL,    /* -> bool */
    MC_B_GREATER,       /* -> bool */
    MC_B_GREATER_EQUAL, /* -> bool */
    MC_B_LOGICAL_AND,   /* bool inputs -> bool */
    MC_B_LOGICAL_OR,    /* bool inputs -> bool */
    MC_B_BITWISE_AND,
    MC_B_BITWISE_OR,
    MC_B_BITWISE_XOR,
    MC_B_LEFT_SHIFT,
    MC_B_RIGHT_SHIFT,
    MC_B_EQUAL_NAN,     /* -> bool: equal, with NaN == NaN (array_equal's equal_nan) */
    MC_B_COUNT
} mc_binary_op;

/* Input classes of a binary kernel (as MLX's binary.h): both vectors, a
 * scalar (one element) on the left, or a scalar on the right. */
typedef enum mc_binary_class { MC_VV, MC_SV, MC_VS, MC_BINARY_CLASSES } mc_binary_class;

/* y[i] = f(x[i]) for i < n; x and y contiguous (y may equal x). */
typedef void (*mc_unary_kernel)(const void *x, void *y, size_t n);
/* y[i] = f(a[i or 0], b[i or 0]) for i < n, per class; y may equal a or b. */
typedef void (*mc_binary_kernel)(const void *a, const void *b, void *y, size_t n);
/* y[i] = (out dtype)x[i]: MLX's astype (float->int truncates, to bool is
 * x != 0, to float16/bfloat16 rounds to nearest even). */
typedef void (*mc_convert_kernel)(const void *x, void *y, size_t n);

/* The table's contract: which entries are filled, and what they compute.
 * Every table (every ISA) has exactly the same non-NULL entries; a NULL
 * entry is a dtype MLX's ops layer never hands that primitive (it promotes
 * or rejects first). dtypes: b = bool, ints = the eight integer types,
 * floats = float16, float32, float64, bfloat16, c64 = complex64.
 *
 *   unary
 *   ABS, SIGN, SQUARE         all (bool, unsigned: copies for abs; bool: copy
 *                             for sign and square)
 *   NEGATIVE                  all but bool
 *   SQRT RSQRT RECIPROCAL EXP LOG LOG1P LOG2 LOG10 SIN COS TAN ARCSIN ARCCOS
 *   ARCTAN SINH COSH TANH ARCSINH ARCCOSH ARCTANH, ROUND   floats and c64
 *   EXPM1 SIGMOID ERF ERFINV  floats
 *   FLOOR CEIL                floats, and copies for bool and ints
 *   ROUND                     also copies for bool and ints
 *   ISNAN ISINF ISFINITE ISPOSINF ISNEGINF   all (constant for bool, ints)
 *   LOGICAL_NOT               bool
 *   BITWISE_INVERT            ints, bool (as logical_not, like MLX)
 *   CONJUGATE REAL IMAG       c64
 *   binary (all three classes)
 *   ADD SUBTRACT MULTIPLY DIVIDE POWER MAXIMUM MINIMUM   all
 *   FLOOR_DIVIDE REMAINDER    all but c64
 *   ARCTAN2 LOGADDEXP         floats
 *   EQUAL ... GREATER_EQUAL   all (c64 ordered by real, then imaginary part)
 *   EQUAL_NAN                 floats and c64
 *   LOGICAL_AND LOGICAL_OR    bool
 *   BITWISE_AND _OR _XOR      ints and bool
 *   LEFT_SHIFT RIGHT_SHIFT    ints (MLX's ops layer shifts bool as uint8)
 *   convert                   all 14 x 14 pairs; [d][d] is a copy
 *
 * Semantics where C or IEEE leave a choice (MLX's where MLX defines one):
 * integer arithmetic wraps; integer DIVIDE and FLOOR_DIVIDE truncate toward
 * zero (MLX's integer floor_divide is C division); REMAINDER takes the
 * divisor's sign; x / 0 and x % 0 are 0 and INT_MIN / -1 is INT_MIN;
 * integer POWER of a negative exponent is 0; shifts by a negative count or
 * one >= the width give 0 (left) or 0 / -1 (right); MAXIMUM and MINIMUM
 * return NaN if either input is; SIGN of NaN is 0; ROUND is half to even;
 * bool arithmetic is logical (add = or, subtract = xor, multiply = and).
 * float16 and bfloat16 compute in float32 and round to nearest even.
 * Conversion rules are in k_convert.c (float to int truncates, NaN gives
 * 0, out of range goes through int64; complex to real takes the real
 * part). Float accuracy per function: the table in vec_math.h. */
typedef struct mc_kernel_table {
    const char *isa; /* "scalar", "avx2", "avx512", "neon" */
    /* NULL where MLX does not define the op for that dtype */
    mc_unary_kernel unary[MC_U_COUNT][MC_SIMD_NUM_DTYPES];
    mc_binary_kernel binary[MC_B_COUNT][MC_SIMD_NUM_DTYPES][MC_BINARY_CLASSES];
    mc_convert_kernel convert[MC_SIMD_NUM_DTYPES][MC_SIMD_NUM_DTYPES]; /* [from][to] */
} mc_kernel_table;

/* The table for this CPU, chosen once at first use (simd/dispatch.c): the
 * best ISA available, or the one MLX_CPU_ISA=scalar|avx2|avx512|neon asks
 * for (falling back to scalar if this CPU lacks it). Never NULL; safe to
 * call from any thread. */
const mc_kernel_table *mc_kernels(void);
/* The table of a given ISA, or NULL if this CPU or build lacks it (tests
 * compare every available table against the scalar one). */
const mc_kernel_table *mc_kernels_for(const char *isa);
/* The name of the build's i-th ISA, lowest first ("scalar" is 0), whether
 * or not this CPU runs it; NULL past the last. Static strings. */
const char *mc_kernels_isa_name(int i);
/* The ISA name mc_kernels() picks when MLX_CPU_ISA is `request` (NULL or
 * "" for unset: the best available; an unknown or unavailable name:
 * "scalar"). Exposed so tests can check the choice without re-running. */
const char *mc_kernels_select(const char *request);

/* Strided walks over n-d views. Dims are collapsed where contiguous; the
 * innermost run is handed to the contiguous kernel, going through a small
 * stack buffer when its stride is not 1. Strides are in elements and may
 * be 0 (broadcast) or negative. The output is written through ys. */
void mc_unary_strided(mc_unary_kernel k, size_t in_itemsize, size_t out_itemsize,
                      const void *x, const int64_t *xs, void *y, const int64_t *ys,
                      int ndim, const int *shape);
/* bin[MC_VV], bin[MC_SV], bin[MC_VS]: the three class kernels of one op. */
void mc_binary_strided(const mc_binary_kernel bin[MC_BINARY_CLASSES], size_t in_itemsize,
                       size_t out_itemsize, const void *a, const int64_t *as, const void *b,
                       const int64_t *bs, void *y, const int64_t *ys, int ndim, const int *shape);

#endif
