/* Owns the shared test helpers declared in test_util.h. */
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The handler may be called from any thread (tests of per-thread state),
 * so the record is guarded. */
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static int rec_count;
static char rec_last[2048];

static void recorder(const char *msg, void *data)
{
    (void)data;
    pthread_mutex_lock(&rec_lock);
    rec_count++;
    snprintf(rec_last, sizeof rec_last, "%s", msg);
    pthread_mutex_unlock(&rec_lock);
}

void tu_install_recorder(void)
{
    mlx_set_error_handler(recorder, NULL, NULL);
    tu_reset_errors();
}

int tu_error_count(void)
{
    pthread_mutex_lock(&rec_lock);
    int n = rec_count;
    pthread_mutex_unlock(&rec_lock);
    return n;
}

const char *tu_last_error(void) { return rec_last; }

void tu_reset_errors(void)
{
    pthread_mutex_lock(&rec_lock);
    rec_count = 0;
    rec_last[0] = '\0';
    pthread_mutex_unlock(&rec_lock);
}

bool tu_last_error_has(const char *needle) { return strstr(rec_last, needle) != NULL; }

void tu_expect_error_at(const char *prefix, const char *file, int line)
{
    int n = tu_error_count();
    if (n != 1 || strncmp(rec_last, prefix, strlen(prefix)) != 0) {
        print_error("%s:%d: expected one error starting with \"%s\"; got %d, last \"%s\"\n", file, line,
                    prefix, n, rec_last);
        tu_reset_errors();
        fail();
    }
    tu_reset_errors();
}

void tu_expect_no_error_at(const char *file, int line)
{
    int n = tu_error_count();
    if (n != 0) {
        print_error("%s:%d: expected no error; got %d, last \"%s\"\n", file, line, n, rec_last);
        tu_reset_errors();
        fail();
    }
}

static mlx_stream stream;

mlx_stream tu_stream(void) { return stream; }

int tu_group_setup(void **state)
{
    (void)state;
    tu_install_recorder();
    stream = mlx_default_cpu_stream_new();
    return stream.ctx ? 0 : -1;
}

int tu_group_teardown(void **state)
{
    (void)state;
    mlx_stream_free(stream);
    stream.ctx = NULL;
    /* buffers kept for reuse would look like leaks to valgrind */
    mlx_clear_cache();
    return 0;
}

int tu_scratch_dir_make(char *dir, size_t size, const char *keep_env, const char *name)
{
    const char *keep = getenv(keep_env);
    if (keep && *keep)
        return snprintf(dir, size, "%s", keep) < (int)size ? 0 : -1;
    if (snprintf(dir, size, "/tmp/mc_test_%s_XXXXXX", name) >= (int)size)
        return -1;
    return mkdtemp(dir) ? 0 : -1;
}

int tu_scratch_dir_remove(const char *dir, const char *keep_env)
{
    const char *keep = getenv(keep_env);
    if (keep && *keep)
        return 0;
    char cmd[600];
    if (snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir) >= (int)sizeof cmd)
        return -1;
    return system(cmd) == 0 ? 0 : -1;
}

int tu_test_teardown(void **state)
{
    (void)state;
    int n = tu_error_count();
    if (n) {
        print_error("unexpected error messages (%d), last: %s\n", n, rec_last);
        tu_reset_errors();
        return -1;
    }
    return 0;
}

mlx_array tu_f32(const float *v, const int *shape, int ndim) { return mlx_array_new_data(v, shape, ndim, MLX_FLOAT32); }
mlx_array tu_i32(const int32_t *v, const int *shape, int ndim) { return mlx_array_new_data(v, shape, ndim, MLX_INT32); }
mlx_array tu_f64(const double *v, const int *shape, int ndim) { return mlx_array_new_data(v, shape, ndim, MLX_FLOAT64); }

mlx_array tu_array_of(mlx_dtype d, const double *vals, const int *shape, int ndim)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    unsigned char *buf = malloc(n * 8 + 8);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++) {
        double v = vals[i];
        unsigned char *p = buf + i * mlx_dtype_size(d);
        switch (d) {
        case MLX_BOOL: *(bool *)p = v != 0; break;
        case MLX_UINT8: *(uint8_t *)p = (uint8_t)(int64_t)v; break;
        case MLX_UINT16: *(uint16_t *)p = (uint16_t)(int64_t)v; break;
        case MLX_UINT32: *(uint32_t *)p = (uint32_t)(int64_t)v; break;
        case MLX_UINT64: *(uint64_t *)p = v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v; break;
        case MLX_INT8: *(int8_t *)p = (int8_t)v; break;
        case MLX_INT16: *(int16_t *)p = (int16_t)v; break;
        case MLX_INT32: *(int32_t *)p = (int32_t)v; break;
        case MLX_INT64: *(int64_t *)p = (int64_t)v; break;
        case MLX_FLOAT16: {
            uint16_t h = tu_f16_bits((float)v);
            memcpy(p, &h, 2);
            break;
        }
        case MLX_FLOAT32: {
            float f = (float)v;
            memcpy(p, &f, 4);
            break;
        }
        case MLX_FLOAT64: memcpy(p, &v, 8); break;
        case MLX_BFLOAT16: {
            uint16_t h = tu_bf16_bits((float)v);
            memcpy(p, &h, 2);
            break;
        }
        case MLX_COMPLEX64: {
            float c[2] = {(float)v, 0};
            memcpy(p, c, 8);
            break;
        }
        }
    }
    mlx_array a = mlx_array_new_data(buf, shape, ndim, d);
    free(buf);
    return a;
}

bool tu_shape_is(mlx_array a, int ndim, const int *shape)
{
    if ((int)mlx_array_ndim(a) != ndim)
        return false;
    const int *s = mlx_array_shape(a);
    for (int i = 0; i < ndim; i++)
        if (s[i] != shape[i])
            return false;
    return true;
}

double tu_get(mlx_array a, size_t i)
{
    assert_int_equal(mlx_array_eval(a), 0);
    int nd = (int)mlx_array_ndim(a);
    const int *shape = mlx_array_shape(a);
    const size_t *st = mlx_array_strides(a);
    /* logical row-major index -> element offset through the strides */
    int64_t off = 0;
    size_t rem = i;
    for (int d = nd - 1; d >= 0; d--) {
        size_t k = rem % (size_t)shape[d];
        rem /= (size_t)shape[d];
        off += (int64_t)k * (int64_t)st[d];
    }
    switch (mlx_array_dtype(a)) {
    case MLX_BOOL: return mlx_array_data_bool(a)[off];
    case MLX_UINT8: return mlx_array_data_uint8(a)[off];
    case MLX_UINT16: return mlx_array_data_uint16(a)[off];
    case MLX_UINT32: return mlx_array_data_uint32(a)[off];
    case MLX_UINT64: return (double)mlx_array_data_uint64(a)[off];
    case MLX_INT8: return mlx_array_data_int8(a)[off];
    case MLX_INT16: return mlx_array_data_int16(a)[off];
    case MLX_INT32: return mlx_array_data_int32(a)[off];
    case MLX_INT64: return (double)mlx_array_data_int64(a)[off];
    case MLX_FLOAT32: return mlx_array_data_float32(a)[off];
    case MLX_FLOAT64: return mlx_array_data_float64(a)[off];
    case MLX_COMPLEX64: return crealf(mlx_array_data_complex64(a)[off]);
    case MLX_FLOAT16: {
        uint16_t b;
        memcpy(&b, (const char *)mlx_array_data_float16(a) + 2 * off, 2);
        return tu_f16_value(b);
    }
    case MLX_BFLOAT16: {
        uint16_t b;
        memcpy(&b, (const char *)mlx_array_data_bfloat16(a) + 2 * off, 2);
        return tu_bf16_value(b);
    }
    }
    fail_msg("unknown dtype %d", (int)mlx_array_dtype(a));
    return 0;
}

mlx_complex64_t tu_c64(float re, float im)
{
    float parts[2] = {re, im};
    mlx_complex64_t z;
    memcpy(&z, parts, sizeof z);
    return z;
}

uint32_t tu_f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

float tu_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float tu_f16_value(uint16_t bits)
{
    int sign = bits >> 15, exp = (bits >> 10) & 31, man = bits & 1023;
    float v;
    if (exp == 31)
        v = man ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexpf((float)man, -24);
    else
        v = ldexpf((float)(man + 1024), exp - 25);
    return sign ? -v : v;
}

uint16_t tu_f16_bits(float exact)
{
    uint16_t sign = signbit(exact) ? 0x8000u : 0;
    float m = fabsf(exact);
    if (m == 0)
        return sign;
    if (isinf(m))
        return sign | 0x7c00u;
    int e;
    float frac = frexpf(m, &e); /* m = frac * 2^e, frac in [0.5, 1) */
    int biased = e + 14;
    if (biased >= 1 && biased <= 30) {
        float man = (frac * 2 - 1) * 1024;
        if (man == floorf(man))
            return sign | (uint16_t)(biased << 10) | (uint16_t)man;
    } else if (biased < 1) {
        float man = ldexpf(m, 24);
        if (man == floorf(man) && man < 1024)
            return sign | (uint16_t)man;
    }
    fail_msg("%g is not exactly a float16", (double)exact);
    return 0;
}

float tu_bf16_value(uint16_t bits) { return tu_bits_to_f32((uint32_t)bits << 16); }

uint16_t tu_bf16_bits(float exact)
{
    uint32_t u = tu_f32_to_bits(exact);
    if (u & 0xffffu)
        fail_msg("%g is not exactly a bfloat16", (double)exact);
    return (uint16_t)(u >> 16);
}

void tu_free_n(mlx_array *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        mlx_array_free(a[i]);
}

/* ---- generated reduction and scan cases ---- */

static double case_value(size_t i, mlx_dtype d)
{
    int k = (int)((i * 37) % 23);
    switch (d) {
    case MLX_BOOL:
        return k % 3 != 0;
    case MLX_UINT8:
    case MLX_UINT16:
    case MLX_UINT32:
    case MLX_UINT64:
        return k;
    case MLX_INT8:
    case MLX_INT16:
    case MLX_INT32:
    case MLX_INT64:
        return k - 11;
    default:
        return (k - 11) / 4.0;
    }
}

static mlx_array case_base(mlx_dtype d, const int *shape, int ndim)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)shape[i];
    double *v = malloc(sizeof(double) * (n ? n : 1));
    assert_non_null(v);
    for (size_t i = 0; i < n; i++)
        v[i] = case_value(i, d);
    mlx_array a = tu_array_of(d, v, shape, ndim);
    free(v);
    return a;
}

mlx_array tu_case_input(mlx_dtype d, int layout, int a, int b, int c)
{
    mlx_array base, out = mlx_array_new();
    switch (layout) {
    case 1:
        base = case_base(d, (const int[]){c, b, a}, 3);
        assert_int_equal(mlx_transpose(&out, base, tu_stream()), 0);
        break;
    case 2:
        base = case_base(d, (const int[]){a, b, 2 * c}, 3);
        assert_int_equal(mlx_slice(&out, base, (const int[]){0, 0, 0}, 3,
                                   (const int[]){a, b, 2 * c}, 3, (const int[]){1, 1, 2}, 3,
                                   tu_stream()),
                         0);
        break;
    case 3:
        base = case_base(d, (const int[]){1, b, c}, 3);
        assert_int_equal(mlx_broadcast_to(&out, base, (const int[]){a, b, c}, 3, tu_stream()), 0);
        break;
    default:
        mlx_array_free(out);
        return case_base(d, (const int[]){a, b, c}, 3);
    }
    mlx_array_free(base);
    return out;
}

size_t tu_active_memory(void)
{
    size_t n = 0;
    assert_int_equal(mlx_get_active_memory(&n), 0);
    return n;
}
