/* The array suite: every constructor, setter, query and accessor of mlx-c's
 * array.h, the lifetime of managed data, and layout flags. Internals are
 * looked at (refcounts, buffers) only where the public API cannot show a
 * property. */
#include <complex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "array/array.h"
#include "test_util.h"

#define S tu_stream()
#define N_DTYPES 14

static const mlx_dtype all_dtypes[N_DTYPES] = {
    MLX_BOOL, MLX_UINT8, MLX_UINT16, MLX_UINT32, MLX_UINT64, MLX_INT8, MLX_INT16,
    MLX_INT32, MLX_INT64, MLX_FLOAT16, MLX_FLOAT32, MLX_FLOAT64, MLX_BFLOAT16, MLX_COMPLEX64,
};
static const size_t all_sizes[N_DTYPES] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8};

/* data_* of the accessor matching dtype. */
static const void *data_of(mlx_array a, mlx_dtype d)
{
    switch (d) {
    case MLX_BOOL: return mlx_array_data_bool(a);
    case MLX_UINT8: return mlx_array_data_uint8(a);
    case MLX_UINT16: return mlx_array_data_uint16(a);
    case MLX_UINT32: return mlx_array_data_uint32(a);
    case MLX_UINT64: return mlx_array_data_uint64(a);
    case MLX_INT8: return mlx_array_data_int8(a);
    case MLX_INT16: return mlx_array_data_int16(a);
    case MLX_INT32: return mlx_array_data_int32(a);
    case MLX_INT64: return mlx_array_data_int64(a);
    case MLX_FLOAT16: return mlx_array_data_float16(a);
    case MLX_FLOAT32: return mlx_array_data_float32(a);
    case MLX_FLOAT64: return mlx_array_data_float64(a);
    case MLX_BFLOAT16: return mlx_array_data_bfloat16(a);
    case MLX_COMPLEX64: return mlx_array_data_complex64(a);
    }
    return NULL;
}

/* item_* of the accessor matching dtype, into out (8 bytes at most). */
static int item_of(mlx_array a, mlx_dtype d, void *out)
{
    switch (d) {
    case MLX_BOOL: return mlx_array_item_bool(out, a);
    case MLX_UINT8: return mlx_array_item_uint8(out, a);
    case MLX_UINT16: return mlx_array_item_uint16(out, a);
    case MLX_UINT32: return mlx_array_item_uint32(out, a);
    case MLX_UINT64: return mlx_array_item_uint64(out, a);
    case MLX_INT8: return mlx_array_item_int8(out, a);
    case MLX_INT16: return mlx_array_item_int16(out, a);
    case MLX_INT32: return mlx_array_item_int32(out, a);
    case MLX_INT64: return mlx_array_item_int64(out, a);
    case MLX_FLOAT16: return mlx_array_item_float16(out, a);
    case MLX_FLOAT32: return mlx_array_item_float32(out, a);
    case MLX_FLOAT64: return mlx_array_item_float64(out, a);
    case MLX_BFLOAT16: return mlx_array_item_bfloat16(out, a);
    case MLX_COMPLEX64: return mlx_array_item_complex64(out, a);
    }
    return -1;
}

/* Distinct, valid element bytes for dtype d: small integers stored in the
 * type (so bool gets 0/1 and floats are ordinary numbers, never NaN). */
static void fill_values(mlx_dtype d, void *dst, int n)
{
    for (int i = 0; i < n; i++) {
        int v = (i * 7 + 3) % 11 - 4; /* -4..6, varied */
        char *p = (char *)dst + (size_t)i * all_sizes[d];
        switch (d) {
        case MLX_BOOL: *(bool *)p = v & 1; break;
        case MLX_UINT8: *(uint8_t *)p = (uint8_t)(200 + v); break;
        case MLX_UINT16: *(uint16_t *)p = (uint16_t)(60000 + v); break;
        case MLX_UINT32: *(uint32_t *)p = 4000000000u + (uint32_t)(v + 4); break;
        case MLX_UINT64: *(uint64_t *)p = 18000000000000000000ull + (uint64_t)(v + 4); break;
        case MLX_INT8: *(int8_t *)p = (int8_t)(-120 + v); break;
        case MLX_INT16: *(int16_t *)p = (int16_t)(-32000 + v); break;
        case MLX_INT32: *(int32_t *)p = -2000000000 + v; break;
        case MLX_INT64: *(int64_t *)p = -9000000000000000000ll + v; break;
        case MLX_FLOAT16: {
            uint16_t b = tu_f16_bits((float)v + 0.5f);
            memcpy(p, &b, 2);
            break;
        }
        case MLX_FLOAT32: *(float *)p = (float)v * 0.25f; break;
        case MLX_FLOAT64: *(double *)p = (double)v / 3.0; break;
        case MLX_BFLOAT16: {
            uint16_t b = tu_bf16_bits((float)v * 0.5f);
            memcpy(p, &b, 2);
            break;
        }
        case MLX_COMPLEX64: {
            float c[2] = {(float)v, (float)-v * 2};
            memcpy(p, c, 8);
            break;
        }
        }
    }
}

/* ---- constructors ---- */

static void test_scalar_constructors_make_0d_arrays_of_their_dtype(void **state)
{
    (void)state;
    mlx_array b = mlx_array_new_bool(true), i = mlx_array_new_int(-7), f = mlx_array_new_float32(1.5f),
              f2 = mlx_array_new_float(-2.25f), d = mlx_array_new_float64(0.1), d2 = mlx_array_new_double(1e300),
              c = mlx_array_new_complex(1.0f, -2.0f);
    struct {
        mlx_array a;
        mlx_dtype dt;
    } all[] = {{b, MLX_BOOL},     {i, MLX_INT32},   {f, MLX_FLOAT32},  {f2, MLX_FLOAT32},
               {d, MLX_FLOAT64}, {d2, MLX_FLOAT64}, {c, MLX_COMPLEX64}};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        assert_non_null(all[k].a.ctx);
        assert_int_equal(mlx_array_dtype(all[k].a), all[k].dt);
        assert_int_equal(mlx_array_ndim(all[k].a), 0);
        assert_int_equal(mlx_array_size(all[k].a), 1);
    }
    bool bv = false;
    int32_t iv = 0;
    float fv = 0;
    double dv = 0;
    mlx_complex64_t cv = 0;
    assert_int_equal(mlx_array_item_bool(&bv, b), 0);
    assert_true(bv);
    assert_int_equal(mlx_array_item_int32(&iv, i), 0);
    assert_int_equal(iv, -7);
    assert_int_equal(mlx_array_item_float32(&fv, f), 0);
    assert_true(fv == 1.5f);
    assert_int_equal(mlx_array_item_float32(&fv, f2), 0);
    assert_true(fv == -2.25f);
    assert_int_equal(mlx_array_item_float64(&dv, d), 0);
    assert_true(dv == 0.1); /* not rounded through float */
    assert_int_equal(mlx_array_item_float64(&dv, d2), 0);
    assert_true(dv == 1e300);
    assert_int_equal(mlx_array_item_complex64(&cv, c), 0);
    assert_true(crealf(cv) == 1.0f && cimagf(cv) == -2.0f);
    TU_FREE(b, i, f, f2, d, d2, c);
}

static void test_new_data_copies_values_of_every_dtype(void **state)
{
    (void)state;
    for (int k = 0; k < N_DTYPES; k++) {
        mlx_dtype d = all_dtypes[k];
        unsigned char src[6 * 8], want[6 * 8];
        fill_values(d, src, 6);
        memcpy(want, src, sizeof src);
        int shape[2] = {2, 3};
        mlx_array a = mlx_array_new_data(src, shape, 2, d);
        assert_non_null(a.ctx);
        memset(src, 0x5a, sizeof src); /* the array kept its own copy */
        assert_int_equal(mlx_array_dtype(a), d);
        assert_int_equal(mlx_array_itemsize(a), all_sizes[k]);
        assert_int_equal(mlx_array_nbytes(a), 6 * all_sizes[k]);
        const void *p = data_of(a, d);
        assert_non_null(p);
        assert_memory_equal(p, want, 6 * all_sizes[k]);

        /* and one element of it, through item_* */
        mlx_array s = mlx_array_new_data(want + 4 * all_sizes[k], NULL, 0, d);
        unsigned char got[8] = {0};
        assert_int_equal(item_of(s, d, got), 0);
        assert_memory_equal(got, want + 4 * all_sizes[k], all_sizes[k]);
        TU_FREE(a, s);
    }
}

static void test_new_data_0d_takes_no_shape(void **state)
{
    (void)state;
    int64_t v = -5;
    mlx_array a = mlx_array_new_data(&v, NULL, 0, MLX_INT64);
    assert_non_null(a.ctx);
    assert_int_equal(mlx_array_ndim(a), 0);
    assert_int_equal(mlx_array_size(a), 1);
    assert_int_equal(mlx_array_nbytes(a), 8);
    int64_t got = 0;
    assert_int_equal(mlx_array_item_int64(&got, a), 0);
    assert_int_equal(got, -5);
    mlx_array_free(a);
}

static void test_new_data_empty_shapes_have_size_zero(void **state)
{
    (void)state;
    int s1[1] = {0}, s3[3] = {2, 0, 3};
    mlx_array a = mlx_array_new_data(NULL, s1, 1, MLX_FLOAT32); /* no data needed */
    mlx_array b = mlx_array_new_data(NULL, s3, 3, MLX_INT16);
    assert_non_null(a.ctx);
    assert_non_null(b.ctx);
    assert_int_equal(mlx_array_size(a), 0);
    assert_int_equal(mlx_array_nbytes(a), 0);
    assert_int_equal(mlx_array_ndim(b), 3);
    assert_true(tu_shape_is(b, 3, s3));
    assert_int_equal(mlx_array_size(b), 0);
    assert_int_equal(mlx_array_nbytes(b), 0);
    assert_int_equal(mlx_array_eval(b), 0);
    (void)mlx_array_data_int16(b); /* allowed; nothing to read */
    tu_expect_no_error();
    TU_FREE(a, b);
}

/* MLX's row-major strides multiply through a 0 dim as through any other:
 * every stride left of it is 0, lazy or evaluated, and a lazy op's output
 * of an empty shape gets the same. */
static void test_empty_array_strides_are_zero_left_of_a_zero_dim_as_mlx(void **state)
{
    (void)state;
    int s4[4] = {2, 0, 3, 4};
    const size_t want[4] = {0, 12, 4, 1};
    mlx_array a = mlx_array_new_data(NULL, s4, 4, MLX_FLOAT32);
    mlx_array z = mlx_array_new();
    assert_int_equal(mlx_zeros(&z, s4, 4, MLX_INT32, S), 0);
    for (int pass = 0; pass < 2; pass++) {
        const size_t *sa = mlx_array_strides(a), *sz = mlx_array_strides(z);
        assert_non_null(sa);
        assert_non_null(sz);
        for (int i = 0; i < 4; i++) {
            assert_int_equal(sa[i], want[i]);
            assert_int_equal(sz[i], want[i]);
        }
        assert_int_equal(mlx_array_eval(z), 0);
    }
    TU_FREE(a, z);
}

static void test_free_of_empty_handle_is_allowed(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new();
    assert_null(a.ctx);
    assert_null(mlx_array_empty.ctx);
    assert_int_equal(mlx_array_free(a), 0);
    assert_int_equal(mlx_array_free(mlx_array_empty), 0);
}

/* ---- managed data ---- */

static int dtor_calls;
static void *dtor_last_arg;
static void count_dtor(void *p)
{
    dtor_calls++;
    dtor_last_arg = p;
}

static void test_managed_data_is_used_in_place(void **state)
{
    (void)state;
    dtor_calls = 0;
    float buf[6] = {1, 2, 3, 4, 5, 6};
    int shape[2] = {3, 2};
    mlx_array a = mlx_array_new_data_managed(buf, shape, 2, MLX_FLOAT32, count_dtor);
    assert_non_null(a.ctx);
    assert_ptr_equal(mlx_array_data_float32(a), buf);
    buf[4] = 50; /* the array sees the caller's memory */
    assert_true(tu_get(a, 4) == 50);
    assert_int_equal(dtor_calls, 0);
    mlx_array_free(a);
    assert_int_equal(dtor_calls, 1);
    assert_ptr_equal(dtor_last_arg, buf);
}

static void test_managed_data_reads_back_through_ops(void **state)
{
    (void)state;
    dtor_calls = 0;
    float buf[4] = {1, 2, 3, 4};
    int shape[1] = {4};
    mlx_array a = mlx_array_new_data_managed(buf, shape, 1, MLX_FLOAT32, count_dtor);
    buf[2] = 30;
    mlx_array one = mlx_array_new_float(1), y = mlx_array_new();
    assert_int_equal(mlx_add(&y, a, one, S), 0);
    assert_true(tu_get(y, 2) == 31);
    assert_int_equal(dtor_calls, 0);
    TU_FREE(a, one, y);
    assert_int_equal(dtor_calls, 1);
}

static void test_managed_payload_dtor_receives_payload(void **state)
{
    (void)state;
    dtor_calls = 0;
    int32_t buf[3] = {7, 8, 9};
    int payload_obj;
    int shape[1] = {3};
    mlx_array a = mlx_array_new_data_managed_payload(buf, shape, 1, MLX_INT32, &payload_obj, count_dtor);
    assert_non_null(a.ctx);
    assert_ptr_equal(mlx_array_data_int32(a), buf);
    mlx_array b = mlx_array_new();
    assert_int_equal(mlx_array_set(&b, a), 0); /* a second handle on it */
    mlx_array_free(a);
    assert_int_equal(dtor_calls, 0);
    mlx_array_free(b);
    assert_int_equal(dtor_calls, 1);
    assert_ptr_equal(dtor_last_arg, &payload_obj);
}

static void test_managed_dtor_may_be_null(void **state)
{
    (void)state;
    double buf[2] = {1, 2};
    int shape[1] = {2};
    mlx_array a = mlx_array_new_data_managed(buf, shape, 1, MLX_FLOAT64, NULL);
    assert_non_null(a.ctx);
    assert_ptr_equal(mlx_array_data_float64(a), buf);
    mlx_array_free(a);
}

/* A creation refused for its arguments hands nothing over: the data (and
 * the duty to free it) stay with the caller, so dtor must not run. */
static void test_refused_managed_creation_does_not_run_dtor(void **state)
{
    (void)state;
    dtor_calls = 0;
    float buf[2] = {1, 2};
    int bad_shape[1] = {-2};
    mlx_array a = mlx_array_new_data_managed(buf, bad_shape, 1, MLX_FLOAT32, count_dtor);
    assert_null(a.ctx);
    tu_expect_error("[mlx_array_new_data_managed]");
    int payload_obj, shape[1] = {2};
    a = mlx_array_new_data_managed_payload(buf, shape, 1, (mlx_dtype)99, &payload_obj, count_dtor);
    assert_null(a.ctx);
    tu_expect_error("[mlx_array_new_data_managed_payload]");
    assert_int_equal(dtor_calls, 0);
}

enum { VIEW_RESHAPE, VIEW_TRANSPOSE, VIEW_BROADCAST, VIEW_COUNT };

static int make_view(int kind, mlx_array *out, mlx_array a)
{
    int rs[1] = {6}, bs[3] = {4, 2, 3};
    switch (kind) {
    case VIEW_RESHAPE: return mlx_reshape(out, a, rs, 1, S);
    case VIEW_TRANSPOSE: return mlx_transpose(out, a, S);
    default: return mlx_broadcast_to(out, a, bs, 3, S);
    }
}

static void test_managed_dtor_waits_for_evaluated_views(void **state)
{
    (void)state;
    for (int kind = 0; kind < VIEW_COUNT; kind++) {
        dtor_calls = 0;
        float buf[6] = {0, 1, 2, 3, 4, 5};
        int shape[2] = {2, 3};
        mlx_array a = mlx_array_new_data_managed(buf, shape, 2, MLX_FLOAT32, count_dtor);
        mlx_array v = mlx_array_new();
        assert_int_equal(make_view(kind, &v, a), 0);
        assert_int_equal(mlx_array_eval(v), 0);
        /* a view shares the caller's memory: no copy was made */
        assert_ptr_equal(mlx_array_data_float32(v), buf);
        mlx_array_free(a);
        assert_int_equal(dtor_calls, 0);
        assert_true(tu_get(v, 1) == (kind == VIEW_TRANSPOSE ? 3.0 : 1.0));
        mlx_array_free(v);
        assert_int_equal(dtor_calls, 1);
    }
}

static void test_managed_dtor_waits_for_lazy_consumers(void **state)
{
    (void)state;
    dtor_calls = 0;
    float buf[3] = {1, 2, 3};
    int shape[1] = {3};
    mlx_array a = mlx_array_new_data_managed(buf, shape, 1, MLX_FLOAT32, count_dtor);
    mlx_array t = mlx_array_new(), y = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, S), 0);
    assert_int_equal(mlx_multiply(&y, t, t, S), 0);
    TU_FREE(a, t);
    assert_int_equal(dtor_calls, 0); /* y's graph still reads it */
    assert_true(tu_get(y, 2) == 9);
    mlx_array_free(y);
    assert_int_equal(dtor_calls, 1);
}

static void test_managed_dtor_runs_once_with_many_handles_and_views(void **state)
{
    (void)state;
    dtor_calls = 0;
    float buf[6] = {0};
    int shape[2] = {2, 3};
    mlx_array a = mlx_array_new_data_managed(buf, shape, 2, MLX_FLOAT32, count_dtor);
    mlx_array h[4] = {mlx_array_new(), mlx_array_new(), mlx_array_new(), mlx_array_new()};
    assert_int_equal(mlx_array_set(&h[0], a), 0);
    for (int kind = 0; kind < VIEW_COUNT; kind++) {
        assert_int_equal(make_view(kind, &h[kind + 1], a), 0);
        assert_int_equal(mlx_array_eval(h[kind + 1]), 0);
    }
    mlx_array_free(a);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(dtor_calls, 0);
        mlx_array_free(h[i]);
    }
    assert_int_equal(dtor_calls, 1);
}

/* ---- setters ---- */

static void test_setters_replace_the_value_and_drop_the_old_one(void **state)
{
    (void)state;
    float buf[2] = {1, 2};
    int shape[1] = {2};
    for (int k = 0; k < 8; k++) {
        dtor_calls = 0;
        mlx_array a = mlx_array_new_data_managed(buf, shape, 1, MLX_FLOAT32, count_dtor);
        bool bv;
        int32_t iv;
        float fv;
        double dv;
        mlx_complex64_t cv;
        int16_t data[3] = {-1, 2, -3};
        int ds[1] = {3};
        switch (k) {
        case 0:
            assert_int_equal(mlx_array_set_bool(&a, true), 0);
            assert_int_equal(mlx_array_item_bool(&bv, a), 0);
            assert_true(bv);
            break;
        case 1:
            assert_int_equal(mlx_array_set_int(&a, -123456), 0);
            assert_int_equal(mlx_array_item_int32(&iv, a), 0);
            assert_int_equal(iv, -123456);
            break;
        case 2:
            assert_int_equal(mlx_array_set_float32(&a, 3.5f), 0);
            assert_int_equal(mlx_array_item_float32(&fv, a), 0);
            assert_true(fv == 3.5f);
            break;
        case 3:
            assert_int_equal(mlx_array_set_float(&a, -0.75f), 0);
            assert_int_equal(mlx_array_item_float32(&fv, a), 0);
            assert_true(fv == -0.75f);
            break;
        case 4:
            assert_int_equal(mlx_array_set_float64(&a, 0.1), 0);
            assert_int_equal(mlx_array_item_float64(&dv, a), 0);
            assert_true(dv == 0.1);
            break;
        case 5:
            assert_int_equal(mlx_array_set_double(&a, -1e-300), 0);
            assert_int_equal(mlx_array_item_float64(&dv, a), 0);
            assert_true(dv == -1e-300);
            break;
        case 6:
            assert_int_equal(mlx_array_set_complex(&a, 0.5f, 4.0f), 0);
            assert_int_equal(mlx_array_item_complex64(&cv, a), 0);
            assert_true(crealf(cv) == 0.5f && cimagf(cv) == 4.0f);
            break;
        case 7:
            assert_int_equal(mlx_array_set_data(&a, data, ds, 1, MLX_INT16), 0);
            assert_int_equal(mlx_array_dtype(a), MLX_INT16);
            assert_true(tu_shape_is(a, 1, ds));
            data[1] = 99; /* copied */
            assert_int_equal(mlx_array_data_int16(a)[1], 2);
            break;
        }
        assert_int_equal(dtor_calls, 1); /* the managed array was dropped */
        mlx_array_free(a);
    }
}

static void test_setters_on_empty_handle_create_arrays(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_array_set_int(&a, 4), 0);
    assert_int_equal(mlx_array_dtype(a), MLX_INT32);
    mlx_array b = mlx_array_new();
    assert_int_equal(mlx_array_set(&b, a), 0);
    assert_ptr_equal(b.ctx, a.ctx); /* both refer to the same array */
    mlx_array_free(a);
    int32_t v = 0;
    assert_int_equal(mlx_array_item_int32(&v, b), 0);
    assert_int_equal(v, 4);
    mlx_array_free(b);
}

static void test_set_of_a_handle_to_itself_is_safe(void **state)
{
    (void)state;
    dtor_calls = 0;
    float buf[2] = {5, 6};
    int shape[1] = {2};
    mlx_array a = mlx_array_new_data_managed(buf, shape, 1, MLX_FLOAT32, count_dtor);
    assert_int_equal(mlx_array_set(&a, a), 0);
    assert_int_equal(dtor_calls, 0);
    assert_int_equal(mc_array_refs(mc_arr(a)), 1);
    assert_true(tu_get(a, 1) == 6);
    mlx_array_free(a);
    assert_int_equal(dtor_calls, 1);
}

/* ---- queries ---- */

static void test_queries_report_shape_size_and_bytes(void **state)
{
    (void)state;
    int shape[3] = {2, 3, 4};
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_zeros(&a, shape, 3, MLX_INT16, S), 0);
    /* queries do not evaluate */
    assert_int_equal(mlx_array_itemsize(a), 2);
    assert_int_equal(mlx_array_size(a), 24);
    assert_int_equal(mlx_array_nbytes(a), 48);
    assert_int_equal(mlx_array_ndim(a), 3);
    assert_true(tu_shape_is(a, 3, shape));
    bool avail = true;
    assert_int_equal(_mlx_array_is_available(&avail, a), 0);
    assert_false(avail);
    mlx_array_free(a);
}

static void test_dim_counts_negative_indices_from_the_end(void **state)
{
    (void)state;
    int shape[3] = {2, 3, 4};
    mlx_array a = mlx_array_new();
    assert_int_equal(mlx_ones(&a, shape, 3, MLX_FLOAT32, S), 0);
    assert_int_equal(mlx_array_dim(a, 0), 2);
    assert_int_equal(mlx_array_dim(a, 2), 4);
    assert_int_equal(mlx_array_dim(a, -1), 4);
    assert_int_equal(mlx_array_dim(a, -3), 2);
    mlx_array_free(a);
}

static void test_strides_are_row_major_then_follow_transpose(void **state)
{
    (void)state;
    float v[24] = {0};
    int shape[3] = {2, 3, 4};
    mlx_array a = tu_f32(v, shape, 3);
    const size_t *st = mlx_array_strides(a);
    assert_int_equal(st[0], 12);
    assert_int_equal(st[1], 4);
    assert_int_equal(st[2], 1);
    mlx_array t = mlx_array_new();
    assert_int_equal(mlx_transpose(&t, a, S), 0);
    assert_int_equal(mlx_array_eval(t), 0);
    int tshape[3] = {4, 3, 2};
    assert_true(tu_shape_is(t, 3, tshape));
    st = mlx_array_strides(t);
    assert_int_equal(st[0], 1);
    assert_int_equal(st[1], 4);
    assert_int_equal(st[2], 12);
    TU_FREE(a, t);
}

static void test_item_reads_a_one_element_array_of_any_rank(void **state)
{
    (void)state;
    float v = 2.5f;
    int shape[3] = {1, 1, 1};
    mlx_array a = tu_f32(&v, shape, 3);
    float got = 0;
    assert_int_equal(mlx_array_item_float32(&got, a), 0);
    assert_true(got == 2.5f);
    mlx_array_free(a);
}

static void test_item_of_wrong_dtype_fails_with_a_message(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_float(1.0f);
    int32_t i = 77;
    assert_int_not_equal(mlx_array_item_int32(&i, a), 0);
    tu_expect_error("[mlx_array_item_int32]");
    assert_int_equal(i, 77); /* untouched */
    double d;
    assert_int_not_equal(mlx_array_item_float64(&d, a), 0);
    tu_expect_error("[mlx_array_item_float64]");
    mlx_array_free(a);
}

static void test_item_of_many_elements_fails_with_a_message(void **state)
{
    (void)state;
    float v[2] = {1, 2};
    int shape[1] = {2};
    mlx_array a = tu_f32(v, shape, 1);
    float f = 0;
    assert_int_not_equal(mlx_array_item_float32(&f, a), 0);
    tu_expect_error("[mlx_array_item_float32]");
    int zero[1] = {0};
    mlx_array e = tu_f32(NULL, zero, 1);
    assert_int_not_equal(mlx_array_item_float32(&f, e), 0);
    tu_expect_error("[mlx_array_item_float32]");
    TU_FREE(a, e);
}

static void test_data_of_wrong_dtype_is_null_with_a_message(void **state)
{
    (void)state;
    mlx_array a = mlx_array_new_int(3);
    assert_null(mlx_array_data_float32(a));
    tu_expect_error("[mlx_array_data_float32]");
    assert_null(mlx_array_data_uint32(a)); /* same size, other dtype */
    tu_expect_error("[mlx_array_data_uint32]");
    assert_null(mlx_array_data_float16(a));
    tu_expect_error("[mlx_array_data_float16]");
    assert_non_null(mlx_array_data_int32(a));
    mlx_array_free(a);
}

/* ---- layout ---- */

typedef struct flags3 {
    bool contig, row, col;
} flags3;

static flags3 layout_of(mlx_array a)
{
    flags3 f;
    assert_int_equal(_mlx_array_is_contiguous(&f.contig, a), 0);
    assert_int_equal(_mlx_array_is_row_contiguous(&f.row, a), 0);
    assert_int_equal(_mlx_array_is_col_contiguous(&f.col, a), 0);
    return f;
}

static void test_contiguity_of_row_major_transposed_and_broadcast(void **state)
{
    (void)state;
    float v[6] = {0, 1, 2, 3, 4, 5};
    int shape[2] = {2, 3}, bshape[3] = {4, 2, 3};
    mlx_array a = tu_f32(v, shape, 2), t = mlx_array_new(), b = mlx_array_new(), r = mlx_array_new();
    flags3 f = layout_of(a);
    assert_true(f.contig && f.row && !f.col);

    assert_int_equal(mlx_transpose(&t, a, S), 0);
    f = layout_of(t); /* evaluates */
    assert_true(f.contig && !f.row && f.col);

    assert_int_equal(mlx_broadcast_to(&b, a, bshape, 3, S), 0);
    f = layout_of(b);
    assert_true(!f.contig && !f.row && !f.col);

    int one_d[1] = {6};
    assert_int_equal(mlx_reshape(&r, a, one_d, 1, S), 0);
    f = layout_of(r);
    assert_true(f.contig && f.row && f.col); /* 1-d: both orders */
    TU_FREE(a, t, b, r);
}

static void test_is_available_turns_true_after_eval(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(2), y = mlx_array_new();
    bool av = false;
    assert_int_equal(_mlx_array_is_available(&av, x), 0);
    assert_true(av); /* data arrays are available from the start */
    assert_int_equal(mlx_add(&y, x, x, S), 0);
    assert_int_equal(_mlx_array_is_available(&av, y), 0);
    assert_false(av);
    assert_int_equal(mlx_array_eval(y), 0);
    assert_int_equal(_mlx_array_is_available(&av, y), 0);
    assert_true(av);
    TU_FREE(x, y);
}

static void test_wait_evaluates_a_pending_array(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new_float(2), y = mlx_array_new();
    assert_int_equal(mlx_multiply(&y, x, x, S), 0);
    assert_int_equal(_mlx_array_wait(y), 0);
    bool av = false;
    assert_int_equal(_mlx_array_is_available(&av, y), 0);
    assert_true(av);
    assert_true(tu_get(y, 0) == 4);
    TU_FREE(x, y);
}

/* ---- half precision ---- */

static void test_float16_accessors_move_exact_bits(void **state)
{
    (void)state;
    /* 1.5, -2, 65504 (largest), 2^-24 (smallest subnormal), -0, inf */
    uint16_t bits[6] = {0x3e00, 0xc000, 0x7bff, 0x0001, 0x8000, 0x7c00};
    int shape[1] = {6};
    mlx_array a = mlx_array_new_data(bits, shape, 1, MLX_FLOAT16);
    const void *p = mlx_array_data_float16(a);
    assert_non_null(p);
    assert_memory_equal(p, bits, sizeof bits);
    mlx_array s = mlx_array_new_data(&bits[2], NULL, 0, MLX_FLOAT16);
#ifdef HAS_FLOAT16
    float16_t h = 0;
    assert_int_equal(mlx_array_item_float16(&h, s), 0);
    assert_true((float)h == 65504.0f);
#else
    uint16_t h = 0;
    assert_int_equal(mlx_array_item_float16(&h, s), 0);
    assert_int_equal(h, 0x7bff);
#endif
    TU_FREE(a, s);
}

static void test_bfloat16_accessors_move_exact_bits(void **state)
{
    (void)state;
    /* 1.0, -2.5, 2^-133 (subnormal), largest finite, inf */
    uint16_t bits[5] = {0x3f80, 0xc020, 0x0001, 0x7f7f, 0x7f80};
    int shape[1] = {5};
    mlx_array a = mlx_array_new_data(bits, shape, 1, MLX_BFLOAT16);
    const void *p = mlx_array_data_bfloat16(a);
    assert_non_null(p);
    assert_memory_equal(p, bits, sizeof bits);
    mlx_array s = mlx_array_new_data(&bits[1], NULL, 0, MLX_BFLOAT16);
#ifdef HAS_BFLOAT16
    /* gcc 12's aarch64 __bf16 is storage only (no conversions): compare
     * the bits */
    bfloat16_t h;
    uint16_t hb = 0;
    assert_int_equal(mlx_array_item_bfloat16(&h, s), 0);
    memcpy(&hb, &h, sizeof hb);
    assert_int_equal(hb, 0xc020);
#else
    uint16_t h = 0;
    assert_int_equal(mlx_array_item_bfloat16(&h, s), 0);
    assert_int_equal(h, 0xc020);
#endif
    TU_FREE(a, s);
}

#define T(f) cmocka_unit_test_setup_teardown(f, NULL, tu_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_scalar_constructors_make_0d_arrays_of_their_dtype),
        T(test_new_data_copies_values_of_every_dtype),
        T(test_new_data_0d_takes_no_shape),
        T(test_new_data_empty_shapes_have_size_zero),
        T(test_empty_array_strides_are_zero_left_of_a_zero_dim_as_mlx),
        T(test_free_of_empty_handle_is_allowed),
        T(test_managed_data_is_used_in_place),
        T(test_managed_data_reads_back_through_ops),
        T(test_managed_payload_dtor_receives_payload),
        T(test_managed_dtor_may_be_null),
        T(test_refused_managed_creation_does_not_run_dtor),
        T(test_managed_dtor_waits_for_evaluated_views),
        T(test_managed_dtor_waits_for_lazy_consumers),
        T(test_managed_dtor_runs_once_with_many_handles_and_views),
        T(test_setters_replace_the_value_and_drop_the_old_one),
        T(test_setters_on_empty_handle_create_arrays),
        T(test_set_of_a_handle_to_itself_is_safe),
        T(test_queries_report_shape_size_and_bytes),
        T(test_dim_counts_negative_indices_from_the_end),
        T(test_strides_are_row_major_then_follow_transpose),
        T(test_item_reads_a_one_element_array_of_any_rank),
        T(test_item_of_wrong_dtype_fails_with_a_message),
        T(test_item_of_many_elements_fails_with_a_message),
        T(test_data_of_wrong_dtype_is_null_with_a_message),
        T(test_contiguity_of_row_major_transposed_and_broadcast),
        T(test_is_available_turns_true_after_eval),
        T(test_wait_evaluates_a_pending_array),
        T(test_float16_accessors_move_exact_bits),
        T(test_bfloat16_accessors_move_exact_bits),
    };
    return cmocka_run_group_tests_name("array", tests, tu_group_setup, tu_group_teardown);
}
