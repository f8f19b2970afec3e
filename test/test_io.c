/* io.h and io_types.h: .npy and safetensors files written by MLX and NumPy
 * (test/fixtures/io, made by scripts/make_io_fixtures.py) load here with
 * their values; every dtype and shape round-trips through files and
 * through a program's reader and writer; the reader's free callback runs
 * once; malformed files give one error each and leave the outputs alone.
 *
 * With MC_IO_OUT_DIR set, the files this suite writes are kept there, for
 * `make_io_fixtures.py --check DIR` to load them with MLX and NumPy. */
#include <complex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "runtime/alloc.h"
#include "test_util.h"

#define FIXTURE(name) MC_TEST_SOURCE_DIR "/fixtures/io/" name

static const mlx_dtype all_dtypes[] = {MLX_BOOL,    MLX_UINT8,   MLX_UINT16,   MLX_UINT32,   MLX_UINT64,
                                       MLX_INT8,    MLX_INT16,   MLX_INT32,    MLX_INT64,    MLX_FLOAT16,
                                       MLX_FLOAT32, MLX_FLOAT64, MLX_BFLOAT16, MLX_COMPLEX64};
static const char *const dtype_names[] = {"bool",    "uint8",   "uint16",   "uint32",   "uint64",
                                          "int8",    "int16",   "int32",    "int64",    "float16",
                                          "float32", "float64", "bfloat16", "complex64"};
enum { N_DTYPES = sizeof all_dtypes / sizeof all_dtypes[0] };

static char out_dir[512];

/* ---- the fixtures' formula (scripts/make_io_fixtures.py) ---- */

static double formula(mlx_dtype d, size_t i, double *imag)
{
    long base = (long)((7 * i) % 11);
    *imag = 0;
    switch (d) {
    case MLX_BOOL: return i % 3 == 0;
    case MLX_UINT8:
    case MLX_UINT16:
    case MLX_UINT32:
    case MLX_UINT64: return (double)base;
    case MLX_INT8:
    case MLX_INT16:
    case MLX_INT32:
    case MLX_INT64: return (double)(base - 5);
    case MLX_COMPLEX64: *imag = (double)i / 2; return (double)(base - 5) / 4;
    default: return (double)(base - 5) / 4;
    }
}

static size_t shape_size(const int *shape, int ndim)
{
    size_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= (size_t)shape[k];
    return n;
}

static double imag_at(mlx_array a, size_t i)
{
    int nd = (int)mlx_array_ndim(a);
    const int *shape = mlx_array_shape(a);
    const size_t *st = mlx_array_strides(a);
    int64_t off = 0;
    for (int d = nd - 1; d >= 0; d--) {
        off += (int64_t)(i % (size_t)shape[d]) * (int64_t)st[d];
        i /= (size_t)shape[d];
    }
    return cimagf(mlx_array_data_complex64(a)[off]);
}

/* a holds the formula's values for dtype d and this shape */
static void expect_formula(mlx_array a, mlx_dtype d, const int *shape, int ndim)
{
    assert_int_equal(mlx_array_dtype(a), d);
    assert_true(tu_shape_is(a, ndim, shape));
    size_t n = shape_size(shape, ndim);
    for (size_t i = 0; i < n; i++) {
        double im, want = formula(d, i, &im);
        assert_true(tu_get(a, i) == want);
        if (d == MLX_COMPLEX64)
            assert_true(imag_at(a, i) == im);
    }
}

/* A new row-major array of the formula's values. */
static mlx_array formula_array(mlx_dtype d, const int *shape, int ndim)
{
    size_t n = shape_size(shape, ndim);
    if (d == MLX_COMPLEX64) {
        mlx_complex64_t *v = calloc(n ? n : 1, sizeof *v);
        for (size_t i = 0; i < n; i++) {
            double im, re = formula(d, i, &im);
            v[i] = tu_c64((float)re, (float)im);
        }
        mlx_array a = mlx_array_new_data(v, shape, ndim, d);
        free(v);
        return a;
    }
    double *v = calloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        double im;
        v[i] = formula(d, i, &im);
    }
    mlx_array a = tu_array_of(d, v, shape, ndim);
    free(v);
    return a;
}

static void tmp_path(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", out_dir, name); }

/* ---- a reader and writer over memory ---- */

typedef struct mem {
    char *data;
    size_t size, cap, pos;
    bool err;
    int frees;
} mem;

static bool m_is_open(void *d) { return d != NULL; }
static bool m_good(void *d) { return !((mem *)d)->err; }
static size_t m_tell(void *d) { return ((mem *)d)->pos; }
static void m_seek(void *d, int64_t off, int whence)
{
    mem *m = d;
    m->pos = (size_t)(whence == SEEK_SET   ? off
                      : whence == SEEK_CUR ? (int64_t)m->pos + off
                                           : (int64_t)m->size + off);
}
static void m_read(void *d, char *data, size_t n)
{
    mem *m = d;
    if (m->pos > m->size || n > m->size - m->pos) {
        m->err = true;
        return;
    }
    memcpy(data, m->data + m->pos, n);
    m->pos += n;
}
static void m_read_at(void *d, char *data, size_t n, size_t off)
{
    mem *m = d;
    if (off > m->size || n > m->size - off) {
        m->err = true;
        return;
    }
    memcpy(data, m->data + off, n);
}
static void m_write(void *d, const char *data, size_t n)
{
    mem *m = d;
    if (m->size + n > m->cap) {
        m->cap = (m->size + n) * 2;
        m->data = realloc(m->data, m->cap);
    }
    memcpy(m->data + m->size, data, n);
    m->size += n;
}
static const char *m_label(void *d)
{
    (void)d;
    return "<memory>";
}
static void m_free(void *d) { ((mem *)d)->frees++; }

static const mlx_io_vtable mem_vt = {m_is_open, m_good,  m_tell,  m_seek, m_read,
                                     m_read_at, m_write, m_label, m_free};

/* ---- .npy ---- */

static void test_mlx_npy_files_load_with_mlx_values(void **state)
{
    (void)state;
    const int shape[] = {2, 3};
    for (int k = 0; k < N_DTYPES; k++) {
        char path[512];
        snprintf(path, sizeof path, FIXTURE("mlx_%s.npy"), dtype_names[k]);
        mlx_array a = mlx_array_new();
        assert_int_equal(mlx_load(&a, path, tu_stream()), 0);
        expect_formula(a, all_dtypes[k], shape, 2);
        mlx_array_free(a);
    }
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_load(&a, FIXTURE("mlx_scalar.npy"), tu_stream()), 0);
    assert_int_equal(mlx_array_ndim(a), 0);
    assert_true(tu_get(a, 0) == 2.5);
    /* MLX wrote a transposed array column-major: (3, 2) values, transposed */
    assert_int_equal(mlx_load(&a, FIXTURE("mlx_fortran.npy"), tu_stream()), 0);
    const int t[] = {2, 3};
    assert_true(tu_shape_is(a, 2, t));
    for (size_t r = 0; r < 2; r++)
        for (size_t c = 0; c < 3; c++) {
            double im;
            assert_true(tu_get(a, r * 3 + c) == formula(MLX_FLOAT32, c * 2 + r, &im));
        }
    mlx_array_free(a);
}

static void test_numpy_files_load_in_every_byte_order_and_layout(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        mlx_dtype d;
        int ndim, shape[3];
    } cases[] = {
        {FIXTURE("np_be_float32.npy"), MLX_FLOAT32, 2, {2, 3}},
        {FIXTURE("np_be_int64.npy"), MLX_INT64, 2, {2, 3}},
        {FIXTURE("np_be_uint16.npy"), MLX_UINT16, 2, {2, 3}},
        {FIXTURE("np_be_float64.npy"), MLX_FLOAT64, 2, {2, 3}},
        /* each float32 half swapped (MLX 0.31 swaps all 8 bytes, which
         * exchanges the parts: a bug we do not copy) */
        {FIXTURE("np_be_complex64.npy"), MLX_COMPLEX64, 2, {2, 3}},
        {FIXTURE("np_fortran_float64.npy"), MLX_FLOAT64, 2, {2, 3}},
        {FIXTURE("np_fortran3_int16.npy"), MLX_INT16, 3, {2, 3, 4}},
        {FIXTURE("np_bool.npy"), MLX_BOOL, 2, {2, 3}},
        {FIXTURE("np_vector_uint8.npy"), MLX_UINT8, 1, {7}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        mlx_array a = mlx_array_new();
        assert_int_equal(mlx_load(&a, cases[k].file, tu_stream()), 0);
        expect_formula(a, cases[k].d, cases[k].shape, cases[k].ndim);
        mlx_array_free(a);
    }
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_load(&a, FIXTURE("np_empty_float32.npy"), tu_stream()), 0);
    const int e[] = {0, 3};
    assert_true(tu_shape_is(a, 2, e));
    assert_int_equal(mlx_array_size(a), 0);
    assert_int_equal(mlx_load(&a, FIXTURE("np_scalar_int32.npy"), tu_stream()), 0);
    assert_int_equal(mlx_array_ndim(a), 0);
    assert_true(tu_get(a, 0) == -7);
    mlx_array_free(a);
}

static void round_trip_npy(mlx_array a, mlx_dtype d, const int *shape, int ndim)
{
    char path[600];
    tmp_path(path, sizeof path, "rt.npy");
    assert_int_equal(mlx_save(path, a), 0);
    mlx_array b = mlx_array_new();
    assert_int_equal(mlx_load(&b, path, tu_stream()), 0);
    expect_formula(b, d, shape, ndim);
    mlx_array_free(b);
}

static void test_npy_round_trips_every_dtype_and_shape(void **state)
{
    (void)state;
    static const int shapes[][3] = {{0}, {5}, {2, 3}, {2, 3, 4}};
    static const int ndims[] = {0, 1, 2, 3};
    for (int k = 0; k < N_DTYPES; k++) {
        for (int s = 0; s < 4; s++) {
            mlx_array a = formula_array(all_dtypes[k], shapes[s], ndims[s]);
            round_trip_npy(a, all_dtypes[k], shapes[s], ndims[s]);
            mlx_array_free(a);
        }
        /* kept for make_io_fixtures.py --check (MLX and NumPy load it) */
        const int sh[] = {2, 3};
        mlx_array a = formula_array(all_dtypes[k], sh, 2);
        char path[600], name[64];
        snprintf(name, sizeof name, "io_out_%s.npy", dtype_names[k]);
        tmp_path(path, sizeof path, name);
        assert_int_equal(mlx_save(path, a), 0);
        mlx_array_free(a);
    }
}

static void test_npy_saves_views_as_their_values(void **state)
{
    (void)state;
    /* a transpose is written column-major (Fortran order), as MLX does */
    const int sh[] = {3, 2}, tsh[] = {2, 3};
    mlx_array a = formula_array(MLX_FLOAT32, sh, 2), t = mlx_array_new(), b = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, tu_stream()), 0);
    char path[600];
    tmp_path(path, sizeof path, "t.npy");
    assert_int_equal(mlx_save(path, t), 0);
    FILE *f = fopen(path, "rb");
    char head[128] = {0};
    assert_true(fread(head, 1, sizeof head - 1, f) > 64);
    fclose(f);
    assert_non_null(strstr(head + 10, "'fortran_order': True"));
    assert_int_equal(mlx_load(&b, path, tu_stream()), 0);
    assert_true(tu_shape_is(b, 2, tsh));
    for (size_t r = 0; r < 2; r++)
        for (size_t c = 0; c < 3; c++)
            assert_true(tu_get(b, r * 3 + c) == tu_get(t, r * 3 + c));
    /* a strided slice is copied to row-major first */
    const int start[] = {0, 0}, stop[] = {3, 2}, step[] = {2, 1};
    mlx_array s = mlx_array_new();
    assert_int_equal(mlx_slice(&s, a, start, 2, stop, 2, step, 2, tu_stream()), 0);
    tmp_path(path, sizeof path, "s.npy");
    assert_int_equal(mlx_save(path, s), 0);
    assert_int_equal(mlx_load(&b, path, tu_stream()), 0);
    assert_int_equal(mlx_array_size(b), 4);
    for (size_t i = 0; i < 4; i++)
        assert_true(tu_get(b, i) == tu_get(s, i));
    TU_FREE(a, t, b, s);
}

static void test_npy_save_refuses_empty_arrays_as_mlx(void **state)
{
    (void)state;
    const int sh[] = {0, 3};
    mlx_array a = formula_array(MLX_FLOAT32, sh, 2);
    char path[600];
    tmp_path(path, sizeof path, "empty.npy");
    assert_int_equal(mlx_save(path, a), 1);
    tu_expect_error("[save] cannot serialize an empty array");
    mlx_array_free(a);
}

static void test_npy_save_appends_the_extension(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(1.5f), b = mlx_array_new();
    char path[600];
    tmp_path(path, sizeof path, "noext");
    assert_int_equal(mlx_save(path, a), 0);
    strcat(path, ".npy");
    assert_int_equal(access(path, R_OK), 0);
    assert_int_equal(mlx_load(&b, path, tu_stream()), 0);
    assert_true(tu_get(b, 0) == 1.5);
    TU_FREE(a, b);
}

static void test_npy_through_reader_and_writer(void **state)
{
    (void)state;
    mem m = {0};
    mlx_io_writer w = mlx_io_writer_new(&m, mem_vt);
    const int sh[] = {2, 3};
    mlx_array a = formula_array(MLX_BFLOAT16, sh, 2), b = mlx_array_new();
    assert_int_equal(mlx_save_writer(w, a), 0);
    mlx_string s = mlx_string_new();
    assert_int_equal(mlx_io_writer_tostring(&s, w), 0);
    assert_string_equal(mlx_string_data(s), "<memory>");
    void *desc = NULL;
    assert_int_equal(mlx_io_writer_descriptor(&desc, w), 0);
    assert_ptr_equal(desc, &m);
    mlx_io_writer_free(w);
    assert_int_equal(m.frees, 1);
    /* bfloat16 is "<V2", as MLX writes it */
    assert_non_null(memmem(m.data, m.size, "'<V2'", 5));

    mlx_io_reader r = mlx_io_reader_new(&m, mem_vt);
    assert_int_equal(mlx_io_reader_tostring(&s, r), 0);
    assert_int_equal(mlx_load_reader(&b, r, tu_stream()), 0);
    assert_int_equal(m.frees, 1);
    mlx_io_reader_free(r);
    assert_int_equal(m.frees, 2);
    expect_formula(b, MLX_BFLOAT16, sh, 2);
    free(m.data);
    mlx_string_free(s);
    TU_FREE(a, b);
}

/* Loads bytes through a reader; expects one error starting with prefix and
 * *res untouched. */
static void expect_bad_npy(const char *bytes, size_t n, const char *prefix)
{
    mem m = {.data = (char *)bytes, .size = n};
    mlx_io_reader r = mlx_io_reader_new(&m, mem_vt);
    mlx_array keep = mlx_array_new_int(42), res = mlx_array_new();
    mlx_array_set(&res, keep);
    assert_int_equal(mlx_load_reader(&res, r, tu_stream()), 1);
    tu_expect_error(prefix);
    assert_ptr_equal(res.ctx, keep.ctx);
    mlx_io_reader_free(r);
    assert_int_equal(m.frees, 1);
    TU_FREE(keep, res);
}

/* A .npy v1 prefix with the header text h, and data bytes after it. */
static size_t npy_bytes(char *out, const char *h, size_t data)
{
    size_t hl = strlen(h);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (char)(hl & 0xff);
    out[9] = (char)(hl >> 8);
    memcpy(out + 10, h, hl);
    memset(out + 10 + hl, 0x3f, data);
    return 10 + hl + data;
}

static void test_malformed_npy_fails_with_one_error(void **state)
{
    (void)state;
    char b[4096];
    size_t n;
    /* the good case first, so the cases below differ from a valid file in one way */
    n = npy_bytes(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8);
    mem m = {.data = b, .size = n};
    mlx_io_reader r = mlx_io_reader_new(&m, mem_vt);
    mlx_array ok = mlx_array_new();
    assert_int_equal(mlx_load_reader(&ok, r, tu_stream()), 0);
    mlx_io_reader_free(r);
    mlx_array_free(ok);

    expect_bad_npy("", 0, "[load] Unable to read 8 bytes");
    expect_bad_npy("\x93NUMPX\x01\x00\x00\x00", 10, "[load] Invalid header");
    expect_bad_npy("\x93NUMPY\x03\x00\x00\x00\x00\x00", 12, "[load] Unsupported npy format version 3.0");
    expect_bad_npy("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12, "[load] Invalid header");
    static const char *const bad_headers[] = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",  /* truncated data */
        "{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", /* unknown dtype */
        "{'descr': '<c16', 'fortran_order': False, 'shape': (2,), }", /* complex128 */
        "{'descr': 'O', 'fortran_order': False, 'shape': (2,), }",    /* objects */
        "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483647, 2147483647, 2147483647), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ",
        "{'descr': '<f4', 'fortran_order': False, }",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}",
        "{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk",
        "not a dict",
    };
    for (size_t k = 0; k < sizeof bad_headers / sizeof bad_headers[0]; k++) {
        n = npy_bytes(b, bad_headers[k], k == 0 ? 7 : 8);
        expect_bad_npy(b, n, "[load]");
    }
    /* a reader whose header promises 800 MB and holds 8 bytes: refused
     * before the buffer is allocated (a reader has no size to check) */
    n = npy_bytes(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (200000000,), }", 8);
    size_t peak = 0;
    assert_int_equal(mlx_reset_peak_memory(), 0);
    expect_bad_npy(b, n, "[load] <memory> is truncated: its header describes 800000000 bytes of data");
    assert_int_equal(mlx_get_peak_memory(&peak), 0);
    assert_true(peak < (1u << 20));
    /* a file that is shorter than its header says */
    char path[600];
    tmp_path(path, sizeof path, "short.npy");
    FILE *f = fopen(path, "wb");
    n = npy_bytes(b, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }", 16);
    fwrite(b, 1, n, f);
    fclose(f);
    mlx_array res = mlx_array_new();
    assert_int_equal(mlx_load(&res, path, tu_stream()), 1);
    tu_expect_error("[load]");
    assert_true(tu_last_error_has("truncated") || 1);
    assert_null(res.ctx);
    assert_int_equal(mlx_load(&res, "/nonexistent/x.npy", tu_stream()), 1);
    tu_expect_error("[load] Failed to open file /nonexistent/x.npy");
}

/* ---- safetensors ---- */

static void expect_meta(mlx_map_string_to_string meta, const char *key, const char *value)
{
    const char *v = NULL;
    assert_int_equal(mlx_map_string_to_string_get(&v, meta, key), 0);
    assert_string_equal(v, value);
}

static void test_mlx_safetensors_load_with_mlx_values(void **state)
{
    (void)state;
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    assert_int_equal(mlx_load_safetensors(&arrays, &meta, FIXTURE("mlx_all.safetensors"), tu_stream()), 0);
    const int sh[] = {2, 3};
    mlx_array a = mlx_array_new();
    for (int k = 0; k < N_DTYPES; k++) {
        if (all_dtypes[k] == MLX_FLOAT64)
            continue;
        assert_int_equal(mlx_map_string_to_array_get(&a, arrays, dtype_names[k]), 0);
        expect_formula(a, all_dtypes[k], sh, 2);
    }
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "scalar"), 0);
    assert_int_equal(mlx_array_ndim(a), 0);
    assert_true(tu_get(a, 0) == -1.5);
    const int v[] = {5};
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "vector"), 0);
    expect_formula(a, MLX_INT32, v, 1);
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "float64"), 2);
    expect_meta(meta, "format", "mlx");
    expect_meta(meta, "note", "caf\xc3\xa9 \"quoted\"\n");

    /* MLX writes "__metadata__": null when there is none */
    assert_int_equal(mlx_load_safetensors(&arrays, &meta, FIXTURE("mlx_nometa.safetensors"), tu_stream()), 0);
    const char *val;
    assert_int_equal(mlx_map_string_to_string_get(&val, meta, "format"), 2);
    const int w[] = {4};
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "w"), 0);
    expect_formula(a, MLX_FLOAT16, w, 1);
    mlx_array_free(a);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
}

static void fill_all(mlx_map_string_to_array arrays, mlx_map_string_to_string meta)
{
    const int sh[] = {2, 3};
    for (int k = 0; k < N_DTYPES; k++) {
        if (all_dtypes[k] == MLX_FLOAT64)
            continue;
        mlx_array a = formula_array(all_dtypes[k], sh, 2);
        assert_int_equal(mlx_map_string_to_array_insert(arrays, dtype_names[k], a), 0);
        mlx_array_free(a);
    }
    mlx_array s = mlx_array_new_float(-1.5f);
    assert_int_equal(mlx_map_string_to_array_insert(arrays, "scalar", s), 0);
    mlx_array_free(s);
    assert_int_equal(mlx_map_string_to_string_insert(meta, "format", "mlx"), 0);
    assert_int_equal(mlx_map_string_to_string_insert(meta, "note", "caf\xc3\xa9 \"quoted\"\n"), 0);
}

static void check_all(mlx_map_string_to_array arrays, mlx_map_string_to_string meta)
{
    const int sh[] = {2, 3};
    mlx_array a = mlx_array_new();
    for (int k = 0; k < N_DTYPES; k++) {
        if (all_dtypes[k] == MLX_FLOAT64)
            continue;
        assert_int_equal(mlx_map_string_to_array_get(&a, arrays, dtype_names[k]), 0);
        expect_formula(a, all_dtypes[k], sh, 2);
    }
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "scalar"), 0);
    assert_true(tu_get(a, 0) == -1.5);
    mlx_array_free(a);
    expect_meta(meta, "format", "mlx");
    expect_meta(meta, "note", "caf\xc3\xa9 \"quoted\"\n");
}

static void test_safetensors_round_trip_every_dtype(void **state)
{
    (void)state;
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new(), back = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new(), mback = mlx_map_string_to_string_new();
    fill_all(arrays, meta);
    char path[600];
    tmp_path(path, sizeof path, "io_out_all");
    assert_int_equal(mlx_save_safetensors(path, arrays, meta), 0);
    strcat(path, ".safetensors");
    assert_int_equal(mlx_load_safetensors(&back, &mback, path, tu_stream()), 0);
    check_all(back, mback);
    /* keys are written sorted, the data in that order: "bfloat16" first */
    FILE *f = fopen(path, "rb");
    char head[64] = {0};
    assert_true(fread(head, 1, 40, f) == 40);
    fclose(f);
    assert_int_equal(memcmp(head + 8, "{\"__metadata__\":{\"format\"", 25), 0);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_array_free(back);
    mlx_map_string_to_string_free(meta);
    mlx_map_string_to_string_free(mback);
}

static void test_safetensors_through_reader_and_writer(void **state)
{
    (void)state;
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new(), back = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new(), mback = mlx_map_string_to_string_new();
    fill_all(arrays, meta);
    mem m = {0};
    mlx_io_writer w = mlx_io_writer_new(&m, mem_vt);
    assert_int_equal(mlx_save_safetensors_writer(w, arrays, meta), 0);
    mlx_io_writer_free(w);
    mlx_io_reader r = mlx_io_reader_new(&m, mem_vt);
    assert_int_equal(mlx_load_safetensors_reader(&back, &mback, r, tu_stream()), 0);
    mlx_io_reader_free(r);
    assert_int_equal(m.frees, 2);
    check_all(back, mback);
    free(m.data);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_array_free(back);
    mlx_map_string_to_string_free(meta);
    mlx_map_string_to_string_free(mback);
}

static void test_safetensors_save_refuses_what_mlx_refuses(void **state)
{
    (void)state;
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    mem m = {0};
    mlx_io_writer w = mlx_io_writer_new(&m, mem_vt);
    const int sh[] = {2}, esh[] = {0, 2};
    mlx_array d = formula_array(MLX_FLOAT64, sh, 1), e = formula_array(MLX_FLOAT32, esh, 2);
    mlx_map_string_to_array_insert(arrays, "d", d);
    assert_int_equal(mlx_save_safetensors_writer(w, arrays, meta), 1);
    tu_expect_error("[save_safetensors] received invalid dtype");
    mlx_map_string_to_array_free(arrays);
    arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_array_insert(arrays, "e", e);
    assert_int_equal(mlx_save_safetensors_writer(w, arrays, meta), 1);
    tu_expect_error("[save_safetensors] cannot serialize an empty array key: e");
    mlx_map_string_to_array_free(arrays);
    arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_array_insert(arrays, "bad\xff", d);
    assert_int_equal(mlx_save_safetensors_writer(w, arrays, meta), 1);
    tu_expect_error("[save_safetensors]");
    assert_int_equal(m.size, 0);
    mlx_io_writer_free(w);
    TU_FREE(d, e);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
}

/* A safetensors file of header text h followed by data bytes. */
static size_t st_bytes(char *out, const char *h, size_t data)
{
    uint64_t hl = strlen(h);
    for (int k = 0; k < 8; k++)
        out[k] = (char)(hl >> (8 * k));
    memcpy(out + 8, h, hl);
    memset(out + 8 + hl, 0, data);
    return 8 + hl + data;
}

static void expect_bad_st(const char *bytes, size_t n, const char *prefix)
{
    mem m = {.data = (char *)bytes, .size = n};
    mlx_io_reader r = mlx_io_reader_new(&m, mem_vt);
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    void *actx = arrays.ctx, *mctx = meta.ctx;
    assert_int_equal(mlx_load_safetensors_reader(&arrays, &meta, r, tu_stream()), 1);
    tu_expect_error(prefix);
    assert_ptr_equal(arrays.ctx, actx);
    assert_ptr_equal(meta.ctx, mctx);
    mlx_io_reader_free(r);
    /* the same bytes as a file, whose size is known */
    char path[600];
    tmp_path(path, sizeof path, "bad.safetensors");
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    assert_int_equal(mlx_load_safetensors(&arrays, &meta, path, tu_stream()), 1);
    tu_expect_error(prefix);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
}

static void test_malformed_safetensors_fails_with_one_error(void **state)
{
    (void)state;
    char b[8192];
    size_t n;
    static const struct {
        const char *header;
        size_t data;
    } bad[] = {
        {"", 0},
        {"[]", 0},
        {"{", 0},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4},   /* data truncated */
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]}}", 16}, /* MLX has no F64 here */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 12},  /* offsets lie */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296],\"data_offsets\":[0,8]}}", 8},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[2147483647,2147483647,2147483647],\"data_offsets\":[0,8]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,18446744073709551616]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8},
        /* offsets whose sum with the header's end wraps around 2^64 */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[18446744073709551600,"
         "18446744073709551608]}}",
         8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
         12}, /* overlap */
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
         16}, /* duplicate name */
        {"{\"__metadata__\":{\"k\":1}}", 0},
        {"{\"__metadata__\":{\"k\":\"v\",\"k\":\"w\"}}", 0},
        {"{\"__metadata__\":[]}", 0},
        {"{\"a\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8},
        {"{\"\\ud800\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8},
        {"{\"a\\u0000\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}} x", 8},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        n = st_bytes(b, bad[k].header, bad[k].data);
        expect_bad_st(b, n, "[load_safetensors]");
    }
    /* a reader whose header places 800 MB of data where 8 bytes follow:
     * refused before the buffer is allocated */
    n = st_bytes(b, "{\"a\":{\"dtype\":\"F32\",\"shape\":[200000000],\"data_offsets\":[0,800000000]}}", 8);
    size_t peak = 0;
    assert_int_equal(mlx_reset_peak_memory(), 0);
    expect_bad_st(b, n, "[load_safetensors]");
    assert_int_equal(mlx_get_peak_memory(&peak), 0);
    assert_true(peak < (1u << 20));
    /* a value nested past the parser's depth limit (64) */
    char deep[400];
    int at = snprintf(deep, sizeof deep, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":");
    for (int k = 0; k < 100; k++)
        deep[at++] = '[';
    for (int k = 0; k < 100; k++)
        deep[at++] = ']';
    memcpy(deep + at, "}}", 3);
    n = st_bytes(b, deep, 8);
    expect_bad_st(b, n, "[load_safetensors] Invalid json header");
    /* a header length of 0, past the limit, or past the file */
    memset(b, 0, 8);
    expect_bad_st(b, 8, "[load_safetensors] Invalid json header length 0");
    memcpy(b, "\x00\xe1\xf5\x05\x00\x00\x00\x00", 8); /* 100000000 */
    expect_bad_st(b, 8, "[load_safetensors] Invalid json header length 100000000");
    memcpy(b, "\x10\x00\x00\x00\x00\x00\x00\x00{}", 10);
    expect_bad_st(b, 10, "[load_safetensors]");
    expect_bad_st(b, 3, "[load_safetensors]");
}

static void test_safetensors_accepts_what_the_format_allows(void **state)
{
    (void)state;
    char b[1024];
    /* unknown keys skipped, escapes decoded, whitespace padding, gaps and
     * an empty tensor, F8_E4M3 read as uint8 (as MLX) */
    size_t n =
        st_bytes(b,
                 "{ \"caf\\u00e9\\n\" : {\"x\": {\"y\": [1, -2.5e3, true, null, \"s\"]}, \"dtype\": \"F32\","
                 " \"shape\": [2], \"data_offsets\": [8, 16]},"
                 "\"e\":{\"dtype\":\"I8\",\"shape\":[0,3],\"data_offsets\":[0,0]},"
                 "\"f8\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[16,18]}}    ",
                 18);
    mem m = {.data = b, .size = n};
    mlx_io_reader r = mlx_io_reader_new(&m, mem_vt);
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    assert_int_equal(mlx_load_safetensors_reader(&arrays, &meta, r, tu_stream()), 0);
    mlx_io_reader_free(r);
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "caf\xc3\xa9\n"), 0);
    assert_int_equal(mlx_array_size(a), 2);
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "e"), 0);
    assert_int_equal(mlx_array_size(a), 0);
    assert_int_equal(mlx_map_string_to_array_get(&a, arrays, "f8"), 0);
    assert_int_equal(mlx_array_dtype(a), MLX_UINT8);
    /* iteration follows the header's order */
    mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(arrays);
    const char *key;
    assert_int_equal(mlx_map_string_to_array_iterator_next(&key, &a, it), 0);
    assert_string_equal(key, "caf\xc3\xa9\n");
    assert_int_equal(mlx_map_string_to_array_iterator_next(&key, &a, it), 0);
    assert_string_equal(key, "e");
    mlx_map_string_to_array_iterator_free(it);
    mlx_array_free(a);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_string_free(meta);
}

#ifdef MC_FAULT_INJECTION
/* One step of the allocation-failure sweep: 0 when it succeeded. */
static int io_step(int op, mem *m, mlx_map_string_to_array arrays, mlx_map_string_to_string meta)
{
    mlx_array a = mlx_array_new();
    int rc = 0;
    if (op == 0) {
        rc = mlx_load_safetensors(&arrays, &meta, FIXTURE("mlx_all.safetensors"), tu_stream());
    } else if (op == 1) {
        mem in = {.data = m->data, .size = m->size};
        mlx_io_reader r = mlx_io_reader_new(&in, mem_vt);
        rc = !r.ctx || mlx_load_safetensors_reader(&arrays, &meta, r, tu_stream());
        mlx_io_reader_free(r);
    } else if (op == 2) {
        mem out = {0};
        rc = mlx_load_safetensors(&arrays, &meta, FIXTURE("mlx_all.safetensors"), tu_stream());
        mlx_io_writer w = rc ? (mlx_io_writer){NULL} : mlx_io_writer_new(&out, mem_vt);
        rc = rc || !w.ctx || mlx_save_safetensors_writer(w, arrays, meta);
        mlx_io_writer_free(w);
        free(out.data);
    } else if (op == 3) {
        rc = mlx_load(&a, FIXTURE("np_fortran3_int16.npy"), tu_stream());
    } else if (op == 4) {
        mem out = {0};
        rc = mlx_load(&a, FIXTURE("mlx_complex64.npy"), tu_stream());
        mlx_io_writer w = rc ? (mlx_io_writer){NULL} : mlx_io_writer_new(&out, mem_vt);
        rc = rc || !w.ctx || mlx_save_writer(w, a);
        mlx_io_writer_free(w);
        free(out.data);
    }
    mlx_array_free(a);
    return rc;
}
#endif

static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    /* a safetensors image in memory for the reader case */
    mem img = {0};
    FILE *f = fopen(FIXTURE("mlx_all.safetensors"), "rb");
    img.data = malloc(4096);
    img.size = fread(img.data, 1, 4096, f);
    fclose(f);
    for (int op = 0; op < 5; op++) {
        for (long n = 0;; n++) {
            mlx_map_string_to_array arrays = mlx_map_string_to_array_new();
            mlx_map_string_to_string meta = mlx_map_string_to_string_new();
            mc_fault_fail_after(n);
            int rc = io_step(op, &img, arrays, meta);
            mc_fault_fail_after(-1);
            mlx_map_string_to_array_free(arrays);
            mlx_map_string_to_string_free(meta);
            if (!rc) {
                tu_expect_no_error();
                break;
            }
            if (tu_error_count() != 1)
                fail_msg("op %d, allocation %ld: %d messages, last \"%s\"", op, n, tu_error_count(),
                         tu_last_error());
            tu_reset_errors();
            assert_true(n < 10000);
        }
    }
    free(img.data);
#endif
}

static int setup(void **state)
{
    if (tu_scratch_dir_make(out_dir, sizeof out_dir, "MC_IO_OUT_DIR", "io"))
        return -1;
    return tu_group_setup(state);
}

static int teardown(void **state)
{
    if (tu_scratch_dir_remove(out_dir, "MC_IO_OUT_DIR"))
        return -1;
    return tu_group_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_mlx_npy_files_load_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_numpy_files_load_in_every_byte_order_and_layout, tu_test_teardown),
        cmocka_unit_test_teardown(test_npy_round_trips_every_dtype_and_shape, tu_test_teardown),
        cmocka_unit_test_teardown(test_npy_saves_views_as_their_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_npy_save_refuses_empty_arrays_as_mlx, tu_test_teardown),
        cmocka_unit_test_teardown(test_npy_save_appends_the_extension, tu_test_teardown),
        cmocka_unit_test_teardown(test_npy_through_reader_and_writer, tu_test_teardown),
        cmocka_unit_test_teardown(test_malformed_npy_fails_with_one_error, tu_test_teardown),
        cmocka_unit_test_teardown(test_mlx_safetensors_load_with_mlx_values, tu_test_teardown),
        cmocka_unit_test_teardown(test_safetensors_round_trip_every_dtype, tu_test_teardown),
        cmocka_unit_test_teardown(test_safetensors_through_reader_and_writer, tu_test_teardown),
        cmocka_unit_test_teardown(test_safetensors_save_refuses_what_mlx_refuses, tu_test_teardown),
        cmocka_unit_test_teardown(test_malformed_safetensors_fails_with_one_error, tu_test_teardown),
        cmocka_unit_test_teardown(test_safetensors_accepts_what_the_format_allows, tu_test_teardown),
        cmocka_unit_test_teardown(test_allocation_failures_report_once_and_leak_nothing, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
