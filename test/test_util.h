/* Helpers shared by the cmocka suites: an error handler that records what
 * the library reports (instead of the default, which exits), a default
 * stream, small array builders, and half-precision bit conversions written
 * independently of the library's (so tests do not check the library
 * against itself). */
#ifndef MC_TEST_UTIL_H
#define MC_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mlx/c/cpu.h"
#include "mlx/c/mlx.h"

/* The library exports the float16/bfloat16 accessors on every target, but
 * mlx-c's header declares them only where the compiler has the type. Where
 * it does not, the tests reach them through these two-byte declarations. */
#ifndef HAS_FLOAT16
int mlx_array_item_float16(uint16_t *res, const mlx_array arr);
const uint16_t *mlx_array_data_float16(const mlx_array arr);
#endif
#ifndef HAS_BFLOAT16
int mlx_array_item_bfloat16(uint16_t *res, const mlx_array arr);
const uint16_t *mlx_array_data_bfloat16(const mlx_array arr);
#endif

/* ---- error recording ---- */

/* Installs the recording handler (and forgets what was recorded). */
void tu_install_recorder(void);
/* Messages reported since the last tu_reset_errors(). */
int tu_error_count(void);
/* The last message reported ("" if none). */
const char *tu_last_error(void);
void tu_reset_errors(void);

/* Asserts exactly one message was reported since the last reset and that
 * it starts with `prefix` (e.g. "[reshape]"); then resets. */
#define tu_expect_error(prefix) tu_expect_error_at((prefix), __FILE__, __LINE__)
void tu_expect_error_at(const char *prefix, const char *file, int line);
/* Asserts nothing was reported since the last reset. */
#define tu_expect_no_error() tu_expect_no_error_at(__FILE__, __LINE__)
void tu_expect_no_error_at(const char *file, int line);
/* True if the last message contains `needle`. */
bool tu_last_error_has(const char *needle);

/* cmocka group setup/teardown: installs the recorder and a default stream;
 * per-test teardown asserting that no unexpected message was reported. */
int tu_group_setup(void **state);
int tu_group_teardown(void **state);
int tu_test_teardown(void **state);

/* A scratch directory for a suite's files, written into dir (size
 * bytes): the directory named by the environment variable keep_env when
 * it is set (then kept, to look at), else a new /tmp/mc_test_NAME_XXXXXX.
 * tu_scratch_dir_remove removes the latter. Both return 0 on success. */
int tu_scratch_dir_make(char *dir, size_t size, const char *keep_env, const char *name);
int tu_scratch_dir_remove(const char *dir, const char *keep_env);

/* The default CPU stream (valid between group setup and teardown). */
mlx_stream tu_stream(void);

/* ---- arrays ---- */

/* Row-major arrays from values (copies). */
mlx_array tu_f32(const float *v, const int *shape, int ndim);
mlx_array tu_i32(const int32_t *v, const int *shape, int ndim);
mlx_array tu_f64(const double *v, const int *shape, int ndim);

/* A row-major array of dtype d from doubles, each converted as C converts
 * (bool: v != 0; float16/bfloat16: v must be exact in the type). */
mlx_array tu_array_of(mlx_dtype d, const double *vals, const int *shape, int ndim);

/* Shape equality with an expected list. */
bool tu_shape_is(mlx_array a, int ndim, const int *shape);

/* Reads element i (row-major logical index, strides honoured) of an
 * evaluated array of any real dtype, converted to double. Evaluates. */
double tu_get(mlx_array a, size_t i);

/* mlx_get_active_memory, asserted to succeed: the bytes of live array data. */
size_t tu_active_memory(void);

/* ---- half precision, on bit patterns ---- */

/* Bits of a float16 / bfloat16 value that is exactly representable
 * (small integers, halves...); aborts the test otherwise. */
uint16_t tu_f16_bits(float exact);
uint16_t tu_bf16_bits(float exact);
/* Exact values of float16 / bfloat16 bit patterns. */
float tu_f16_value(uint16_t bits);
float tu_bf16_value(uint16_t bits);

/* A complex64 value from its parts (CMPLXF is not in every toolchain). */
mlx_complex64_t tu_c64(float re, float im);

/* Bits of a float and back. */
uint32_t tu_f32_to_bits(float f);
float tu_bits_to_f32(uint32_t u);

/* The inputs of the generated reduction and scan cases (the formula of
 * test/reduce_cases.py): the logical (a, b, c) array of dtype d whose
 * element i is a fixed function of i and d, laid out as layout says: 0
 * contiguous, 1 the transpose of a (c, b, a) array, 2 [:, :, ::2] of an
 * (a, b, 2c) array, 3 a (1, b, c) array broadcast. */
mlx_array tu_case_input(mlx_dtype d, int layout, int a, int b, int c);

/* Frees several handles. */
void tu_free_n(mlx_array *a, size_t n);
#define TU_FREE(...)                                                        \
    do {                                                                    \
        mlx_array tu_tmp_[] = {__VA_ARGS__};                                \
        tu_free_n(tu_tmp_, sizeof tu_tmp_ / sizeof tu_tmp_[0]);             \
    } while (0)

#endif
