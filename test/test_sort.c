/* The sorting suite: sort, argsort, partition, argpartition, topk and
 * median (src/ops/sort.c, src/graph/prims_sort.c, simd/sort_k.c).
 *
 * - every dtype along positive and negative axes and flattened, on
 *   contiguous, transposed, strided and broadcast inputs, with ties, -0.0,
 *   infinities and NaN, equal element for element to MLX 0.31.1
 *   (scripts/make_sort_fixtures.py wrote test/fixtures/sort_cases.h),
 *   partitions included, and empty arrays giving the empty result;
 * - MLX's messages for bad axes, kth and k, and median's;
 * - NaN last where MLX's own order is undefined (float16, bfloat16 sort,
 *   complex64 argsort), which the fixtures leave out;
 * - large and threaded sorts against qsort, stability on many ties, topk
 *   against a full sort, partitions of adversarial rows. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/alloc.h"
#include "test_util.h"

#define S tu_stream()
#define N_(a) (sizeof(a) / sizeof((a)[0]))
#define OK(call) assert_int_equal((call), 0)

enum { OP_SORT, OP_ARGSORT, OP_PARTITION, OP_ARGPARTITION, OP_TOPK, OP_MEDIAN };

typedef struct sort_case {
    int op, dtype, ndim, shape[4], layout, flat, axis, kth, naxes, axes[4], keepdims;
    int in_off, in_n;
    int out_dtype, out_ndim, out_shape[4], out_off, out_n;
} sort_case;

typedef struct sort_error_case {
    int op, ndim, shape[4], axis, kth;
    const char *msg;
} sort_error_case;

#include "fixtures/sort_cases.h"

/* The base array of a case: float64 values cast to the dtype (exact for
 * every value the script draws), complex64 from (re, im) pairs. */
static mlx_array base_of(const sort_case *c)
{
    const double *v = sort_in + c->in_off;
    mlx_array r = mlx_array_new();
    if (c->dtype == MLX_COMPLEX64) {
        size_t n = (size_t)c->in_n / 2;
        float *p = malloc(2 * n * sizeof(float) + 8);
        for (size_t i = 0; i < 2 * n; i++)
            p[i] = (float)v[i];
        r = mlx_array_new_data(p, c->shape, c->ndim, MLX_COMPLEX64);
        free(p);
        return r;
    }
    mlx_array f = tu_f64(v, c->shape, c->ndim);
    OK(mlx_astype(&r, f, (mlx_dtype)c->dtype, S));
    mlx_array_free(f);
    return r;
}

static mlx_array layout_of(mlx_array b, int layout)
{
    mlx_array r = mlx_array_new();
    int nd = (int)mlx_array_ndim(b);
    const int *sh = mlx_array_shape(b);
    if (layout == 1) {
        OK(mlx_transpose(&r, b, S));
    } else if (layout == 2) {
        int start[4] = {0}, stop[4], step[4];
        for (int d = 0; d < nd; d++) {
            stop[d] = sh[d];
            step[d] = d == nd - 1 ? 2 : 1;
        }
        OK(mlx_slice(&r, b, start, (size_t)nd, stop, (size_t)nd, step, (size_t)nd, S));
    } else if (layout == 3) {
        int to[4];
        memcpy(to, sh, sizeof(int) * (size_t)nd);
        to[0] = 3;
        OK(mlx_broadcast_to(&r, b, to, (size_t)nd, S));
    } else {
        OK(mlx_array_set(&r, b));
    }
    return r;
}

static int run_case(mlx_array *r, const sort_case *c, mlx_array x)
{
    switch (c->op) {
    case OP_SORT: return c->flat ? mlx_sort(r, x, S) : mlx_sort_axis(r, x, c->axis, S);
    case OP_ARGSORT: return c->flat ? mlx_argsort(r, x, S) : mlx_argsort_axis(r, x, c->axis, S);
    case OP_PARTITION:
        return c->flat ? mlx_partition(r, x, c->kth, S) : mlx_partition_axis(r, x, c->kth, c->axis, S);
    case OP_ARGPARTITION:
        return c->flat ? mlx_argpartition(r, x, c->kth, S) : mlx_argpartition_axis(r, x, c->kth, c->axis, S);
    case OP_TOPK: return c->flat ? mlx_topk(r, x, c->kth, S) : mlx_topk_axis(r, x, c->kth, c->axis, S);
    default: return mlx_median(r, x, c->axes, (size_t)c->naxes, c->keepdims, S);
    }
}

static bool same(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

/* Compares r with the case's expected values; returns the first bad
 * element's index or -1. */
static long mismatch(mlx_array r, const sort_case *c)
{
    const double *w = sort_out + c->out_off;
    if (c->out_dtype != MLX_COMPLEX64) {
        for (int i = 0; i < c->out_n; i++)
            if (!same(tu_get(r, (size_t)i), w[i]))
                return i;
        return -1;
    }
    mlx_array re = mlx_array_new(), im = mlx_array_new();
    OK(mlx_real(&re, r, S));
    OK(mlx_imag(&im, r, S));
    long bad = -1;
    for (int i = 0; bad < 0 && i < c->out_n / 2; i++)
        if (!same(tu_get(re, (size_t)i), w[2 * i]) || !same(tu_get(im, (size_t)i), w[2 * i + 1]))
            bad = i;
    mlx_array_free(re);
    mlx_array_free(im);
    return bad;
}

static void test_every_case_equals_mlx(void **state)
{
    (void)state;
    int failures = 0;
    for (size_t k = 0; k < N_(sort_cases); k++) {
        const sort_case *c = &sort_cases[k];
        mlx_array b = base_of(c), x = layout_of(b, c->layout), r = mlx_array_new();
        int rc = run_case(&r, c, x);
        const char *why = NULL;
        long at = -1;
        if (rc)
            why = "failed";
        else if (mlx_array_dtype(r) != (mlx_dtype)c->out_dtype)
            why = "dtype";
        else if (!tu_shape_is(r, c->out_ndim, c->out_shape))
            why = "shape";
        else if ((at = mismatch(r, c)) >= 0)
            why = "value";
        if (why && failures++ < 10)
            print_error("case %zu (op %d dtype %d layout %d flat %d axis %d kth %d): %s at %ld\n", k, c->op,
                        c->dtype, c->layout, c->flat, c->axis, c->kth, why, at);
        mlx_array_free(r);
        mlx_array_free(x);
        mlx_array_free(b);
    }
    assert_int_equal(failures, 0);
}

static void test_bad_axis_kth_and_k_report_mlx_messages(void **state)
{
    (void)state;
    for (size_t k = 0; k < N_(sort_errors); k++) {
        const sort_error_case *e = &sort_errors[k];
        mlx_array x = mlx_array_new(), r = mlx_array_new();
        OK(mlx_zeros(&x, e->shape, (size_t)e->ndim, MLX_FLOAT32, S));
        int rc;
        switch (e->op) {
        case OP_SORT: rc = mlx_sort_axis(&r, x, e->axis, S); break;
        case OP_ARGSORT: rc = mlx_argsort_axis(&r, x, e->axis, S); break;
        case OP_PARTITION: rc = mlx_partition_axis(&r, x, e->kth, e->axis, S); break;
        case OP_ARGPARTITION: rc = mlx_argpartition_axis(&r, x, e->kth, e->axis, S); break;
        default: rc = mlx_topk_axis(&r, x, e->kth, e->axis, S); break;
        }
        assert_int_not_equal(rc, 0);
        assert_int_equal(tu_error_count(), 1);
        assert_string_equal(tu_last_error(), e->msg);
        assert_null(r.ctx);
        tu_reset_errors();
        mlx_array_free(x);
    }
}

static void test_flattened_forms_name_axis_0_and_the_flat_shape(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new(), r = mlx_array_new();
    OK(mlx_zeros(&x, (const int[]){2, 3}, 2, MLX_FLOAT32, S));
    assert_int_not_equal(mlx_partition(&r, x, 6, S), 0);
    assert_string_equal(tu_last_error(),
                        "[partition] Received invalid kth 6along axis 0 for array with shape: (6)");
    tu_reset_errors();
    assert_int_not_equal(mlx_argpartition(&r, x, -7, S), 0);
    assert_string_equal(tu_last_error(),
                        "[argpartition] Received invalid kth -7 along axis 0 for array with shape: (6)");
    tu_reset_errors();
    assert_int_not_equal(mlx_topk(&r, x, 7, S), 0);
    assert_string_equal(tu_last_error(), "[topk] Received invalid k=7 along axis 0 for array with shape: (6)");
    tu_reset_errors();
    assert_null(r.ctx);
    /* a 0-d array sorts as shape (1); it has no axis 0 */
    mlx_array s = mlx_array_new_float(2.5f);
    OK(mlx_sort(&r, s, S));
    assert_true(tu_shape_is(r, 1, (const int[]){1}));
    assert_true(tu_get(r, 0) == 2.5);
    assert_int_not_equal(mlx_sort_axis(&r, s, 0, S), 0);
    tu_expect_error("[sort] Received invalid axis 0 for array with 0 dimensions.");
    mlx_array_free(s);
    mlx_array_free(r);
    mlx_array_free(x);
}

static void test_median_rejects_bad_repeated_empty_and_missing_axes(void **state)
{
    (void)state;
    mlx_array x = mlx_array_new(), e = mlx_array_new(), r = mlx_array_new();
    OK(mlx_zeros(&x, (const int[]){2, 3}, 2, MLX_FLOAT32, S));
    OK(mlx_zeros(&e, (const int[]){2, 0}, 2, MLX_FLOAT32, S));
    assert_int_not_equal(mlx_median(&r, x, (const int[]){2}, 1, false, S), 0);
    assert_string_equal(tu_last_error(), "[median] axis 2 is out of bounds for array with 2 dimensions.");
    tu_reset_errors();
    assert_int_not_equal(mlx_median(&r, x, (const int[]){1, -1}, 2, false, S), 0);
    assert_string_equal(tu_last_error(), "[median] Received duplicate axis.");
    tu_reset_errors();
    assert_int_not_equal(mlx_median(&r, e, (const int[]){1}, 1, false, S), 0);
    assert_string_equal(tu_last_error(), "[median] Cannot take median along empty axis.");
    tu_reset_errors();
    assert_int_not_equal(mlx_median(&r, x, NULL, 0, false, S), 0);
    tu_expect_error("[median]");
    assert_null(r.ctx);
    /* the median of a 0-d array is itself, as a float */
    mlx_array s = mlx_array_new_int(3);
    OK(mlx_median(&r, s, NULL, 0, false, S));
    assert_int_equal(mlx_array_ndim(r), 0);
    assert_int_equal(mlx_array_dtype(r), MLX_FLOAT32);
    assert_true(tu_get(r, 0) == 3.0);
    mlx_array hs[] = {x, e, r, s};
    tu_free_n(hs, N_(hs));
}

/* float16 / bfloat16 sorts and complex64 argsort put NaN last (MLX's CPU
 * order there depends on libstdc++'s merge steps: docs/api.md). */
static void test_nan_sorts_last_where_mlx_leaves_the_order_undefined(void **state)
{
    (void)state;
    const float v[6] = {3, NAN, 1, NAN, -2, 0.5f};
    const int sh[1] = {6};
    mlx_array f = tu_f32(v, sh, 1);
    for (int d = 0; d < 2; d++) {
        mlx_array h = mlx_array_new(), r = mlx_array_new(), i = mlx_array_new();
        OK(mlx_astype(&h, f, d ? MLX_BFLOAT16 : MLX_FLOAT16, S));
        OK(mlx_sort(&r, h, S));
        OK(mlx_argsort(&i, h, S));
        const double want[6] = {-2, 0.5, 1, 3, NAN, NAN};
        const double wi[6] = {4, 5, 2, 0, 1, 3};
        for (size_t k = 0; k < 6; k++) {
            assert_true(same(tu_get(r, k), want[k]));
            assert_true(tu_get(i, k) == wi[k]);
        }
        mlx_array hs[] = {h, r, i};
        tu_free_n(hs, N_(hs));
    }
    const float c[10] = {1, 2, NAN, 0, 1, 1, 0, 5, -1, 0};
    mlx_array z = mlx_array_new_data(c, (const int[]){5}, 1, MLX_COMPLEX64), i = mlx_array_new();
    OK(mlx_argsort(&i, z, S));
    const double wi[5] = {4, 3, 2, 0, 1};
    for (size_t k = 0; k < 5; k++)
        assert_true(tu_get(i, k) == wi[k]);
    mlx_array hs[] = {f, z, i};
    tu_free_n(hs, N_(hs));
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Pseudo-random floats with many repeats (ties) and some -0.0. */
static float *tie_floats(size_t n, unsigned seed)
{
    float *v = malloc(n * sizeof(float));
    uint32_t s = seed;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)((int)(s >> 20) - 2048) * 0.25f;
        if (v[i] == 0 && (s & 0x100))
            v[i] = -0.0f;
    }
    return v;
}

static void test_large_threaded_sorts_are_sorted_and_stable(void **state)
{
    (void)state;
    const int shapes[][2] = {{1, 1 << 20}, {64, 5000}, {300, 7}};
    for (size_t t = 0; t < N_(shapes); t++) {
        size_t rows = (size_t)shapes[t][0], n = (size_t)shapes[t][1];
        float *v = tie_floats(rows * n, 7u + (unsigned)t);
        mlx_array x = tu_f32(v, shapes[t], 2), s = mlx_array_new(), i = mlx_array_new();
        OK(mlx_sort_axis(&s, x, 1, S));
        OK(mlx_argsort_axis(&i, x, -1, S));
        OK(mlx_array_eval(s));
        OK(mlx_array_eval(i));
        const float *sd = mlx_array_data_float32(s);
        const uint32_t *id = mlx_array_data_uint32(i);
        float *ref = malloc(n * sizeof(float));
        for (size_t r = 0; r < rows; r++) {
            memcpy(ref, v + r * n, n * sizeof(float));
            qsort(ref, n, sizeof(float), cmp_float);
            for (size_t k = 0; k < n; k++) {
                assert_true(sd[r * n + k] == ref[k]);
                float a = v[r * n + id[r * n + k]];
                assert_true(a == ref[k]);
                /* stable: equal values (-0.0 == 0.0) keep index order */
                if (k && a == v[r * n + id[r * n + k - 1]])
                    assert_true(id[r * n + k] > id[r * n + k - 1]);
                /* values come from the input as they were: -0.0 stays */
                assert_true(signbit(sd[r * n + k]) == signbit(a));
            }
        }
        free(ref);
        free(v);
        mlx_array hs[] = {x, s, i};
        tu_free_n(hs, N_(hs));
    }
}

static void test_topk_holds_the_k_largest_of_each_row(void **state)
{
    (void)state;
    const int rows = 16, n = 3000, k = 50;
    float *v = tie_floats((size_t)rows * n, 99);
    mlx_array x = tu_f32(v, (const int[]){rows, n}, 2), t = mlx_array_new(), c = mlx_array_new();
    OK(mlx_topk_axis(&t, x, k, 1, S));
    assert_true(tu_shape_is(t, 2, (const int[]){rows, k}));
    OK(mlx_contiguous(&c, t, false, S));
    OK(mlx_array_eval(c));
    const float *td = mlx_array_data_float32(c);
    float *ref = malloc((size_t)n * sizeof(float)), *got = malloc((size_t)k * sizeof(float));
    for (int r = 0; r < rows; r++) {
        memcpy(ref, v + (size_t)r * n, (size_t)n * sizeof(float));
        qsort(ref, (size_t)n, sizeof(float), cmp_float);
        memcpy(got, td + (size_t)r * k, (size_t)k * sizeof(float));
        qsort(got, (size_t)k, sizeof(float), cmp_float);
        for (int j = 0; j < k; j++)
            assert_true(got[j] == ref[n - k + j]);
    }
    free(ref);
    free(got);
    free(v);
    mlx_array hs[] = {x, t, c};
    tu_free_n(hs, N_(hs));
}

/* Sorted, reversed, constant, organ-pipe and sawtooth rows: the kth
 * element is in place, nothing smaller after it, nothing larger before. */
static void test_partitions_of_adversarial_rows_are_partitions(void **state)
{
    (void)state;
    enum { N = 4099 };
    int32_t *v = malloc(N * sizeof(int32_t));
    for (int pat = 0; pat < 5; pat++) {
        for (int i = 0; i < N; i++)
            v[i] = pat == 0 ? i : pat == 1 ? N - i : pat == 2 ? 7 : pat == 3 ? (i < N / 2 ? i : N - i) : i % 17;
        mlx_array x = tu_i32(v, (const int[]){N}, 1);
        const int kths[] = {0, 1, N / 3, N / 2, N - 2, N - 1};
        for (size_t q = 0; q < N_(kths); q++) {
            mlx_array p = mlx_array_new(), ip = mlx_array_new();
            OK(mlx_partition(&p, x, kths[q], S));
            OK(mlx_argpartition(&ip, x, kths[q], S));
            double kv = tu_get(p, (size_t)kths[q]);
            OK(mlx_array_eval(ip));
            const uint32_t *id = mlx_array_data_uint32(ip);
            for (int i = 0; i < N; i++) {
                double a = tu_get(p, (size_t)i), b = v[id[i]];
                assert_true(i < kths[q] ? a <= kv : a >= kv);
                assert_true(i < kths[q] ? b <= kv : b >= kv);
            }
            assert_true(v[id[kths[q]]] == kv);
            mlx_array_free(p);
            mlx_array_free(ip);
        }
        mlx_array_free(x);
    }
    free(v);
}

/* ---- libstdc++'s nth_element, written plainly, as the oracle for long
 * rows (the fixtures' rows are at most 300 long) ---- */

typedef struct ref_row {
    const float *v; /* argpartition: the values indices refer to */
    bool indices;
} ref_row;

static bool ref_less(const ref_row *r, float x, float y, uint32_t ix, uint32_t iy)
{
    if (!r->indices) /* MLX's nan_aware_less */
        return !isnan(x) && (isnan(y) || x < y);
    float a = r->v[ix], b = r->v[iy];
    if (isnan(a))
        return false;
    if (isnan(b))
        return true;
    return a < b || (a == b && ix < iy);
}

/* elements are floats (values) or indices stored in floats' place */
typedef union ref_el {
    float f;
    uint32_t i;
} ref_el;

static bool ref_lt(const ref_row *r, ref_el x, ref_el y) { return ref_less(r, x.f, y.f, x.i, y.i); }

static void ref_adjust(const ref_row *r, ref_el *a, long hole, long len, ref_el v)
{
    long top = hole, child = hole;
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (ref_lt(r, a[child], a[child - 1]))
            child--;
        a[hole] = a[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        a[hole] = a[child - 1];
        hole = child - 1;
    }
    long parent = (hole - 1) / 2;
    while (hole > top && ref_lt(r, a[parent], v)) {
        a[hole] = a[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    a[hole] = v;
}

static void ref_nth(const ref_row *r, ref_el *a, long n, long nth)
{
    long first = 0, last = n, depth = 0;
    for (long m = n; m > 1; m >>= 1)
        depth += 2;
    while (last - first > 3) {
        ref_el t;
        if (depth == 0) {
            ref_el *b = a + first;
            long mid = nth + 1 - first, len = last - first;
            for (long p = (mid - 2) / 2; mid >= 2; p--) {
                ref_adjust(r, b, p, mid, b[p]);
                if (p == 0)
                    break;
            }
            for (long i = mid; i < len; i++)
                if (ref_lt(r, b[i], b[0])) {
                    ref_el v = b[i];
                    b[i] = b[0];
                    ref_adjust(r, b, 0, mid, v);
                }
            t = a[first], a[first] = a[nth], a[nth] = t;
            return;
        }
        depth--;
        long x = first + 1, y = first + (last - first) / 2, z = last - 1, m;
        if (ref_lt(r, a[x], a[y]))
            m = ref_lt(r, a[y], a[z]) ? y : ref_lt(r, a[x], a[z]) ? z : x;
        else
            m = ref_lt(r, a[x], a[z]) ? x : ref_lt(r, a[y], a[z]) ? z : y;
        t = a[first], a[first] = a[m], a[m] = t;
        long f = first + 1, l = last;
        for (;;) {
            while (ref_lt(r, a[f], a[first]))
                f++;
            l--;
            while (ref_lt(r, a[first], a[l]))
                l--;
            if (!(f < l))
                break;
            t = a[f], a[f] = a[l], a[l] = t;
            f++;
        }
        if (f <= nth)
            first = f;
        else
            last = f;
    }
    for (long i = first + 1; i < last; i++) {
        ref_el v = a[i];
        long j = i;
        if (ref_lt(r, v, a[first])) {
            for (; j > first; j--)
                a[j] = a[j - 1];
        } else {
            for (; ref_lt(r, v, a[j - 1]); j--)
                a[j] = a[j - 1];
        }
        a[j] = v;
    }
}

static void test_long_partitions_equal_libstdcxx_nth_element(void **state)
{
    (void)state;
    const int lens[] = {65, 100, 257, 1000, 4099, 20000};
    uint32_t s = 12345;
    for (size_t q = 0; q < N_(lens); q++) {
        int n = lens[q];
        float *v = malloc((size_t)n * sizeof(float));
        ref_el *e = malloc((size_t)n * sizeof(ref_el));
        for (int trial = 0; trial < 6; trial++) {
            int distinct = trial < 2 ? 5 : trial < 4 ? n : 50;
            for (int i = 0; i < n; i++) {
                s = s * 1664525u + 1013904223u;
                v[i] = (float)((s >> 8) % (uint32_t)distinct);
                if (trial & 1 && (s & 0xf0) == 0)
                    v[i] = NAN;
            }
            mlx_array x = tu_f32(v, &n, 1);
            const int kths[] = {0, n / 7, n / 2, n - 50, n - 1};
            for (size_t k = 0; k < N_(kths); k++) {
                for (int ind = 0; ind < 2; ind++) {
                    ref_row r = {v, ind == 1};
                    for (int i = 0; i < n; i++) {
                        if (ind)
                            e[i].i = (uint32_t)i;
                        else
                            e[i].f = v[i];
                    }
                    ref_nth(&r, e, n, kths[k]);
                    mlx_array p = mlx_array_new();
                    OK(ind ? mlx_argpartition(&p, x, kths[k], S) : mlx_partition(&p, x, kths[k], S));
                    for (int i = 0; i < n; i++) {
                        double got = tu_get(p, (size_t)i);
                        double want = ind ? (double)e[i].i : (double)e[i].f;
                        if (!same(got, want))
                            fail_msg("n %d trial %d kth %d %s: element %d is %g, libstdc++ gives %g", n, trial,
                                     kths[k], ind ? "argpartition" : "partition", i, got, want);
                    }
                    mlx_array_free(p);
                }
            }
            mlx_array_free(x);
        }
        free(v);
        free(e);
    }
}

static void test_allocation_failures_report_once_and_leak_nothing(void **state)
{
    (void)state;
#ifndef MC_FAULT_INJECTION
    skip();
#else
    const double v[12] = {3, 1, 2, 5, 4, 0, 9, 8, 7, 6, 11, 10};
    mlx_array b = tu_f64(v, (const int[]){3, 4}, 2), x = mlx_array_new();
    OK(mlx_transpose(&x, b, S));
    for (int op = 0; op < 6; op++) {
        for (long n = 0;; n++) {
            mlx_array y = mlx_array_new();
            int ax = 1;
            mc_fault_fail_after(n);
            int rc = op == 0   ? mlx_sort_axis(&y, x, 0, S)
                     : op == 1 ? mlx_argsort(&y, x, S)
                     : op == 2 ? mlx_partition_axis(&y, x, 1, -1, S)
                     : op == 3 ? mlx_argpartition(&y, x, 5, S)
                     : op == 4 ? mlx_topk_axis(&y, x, 2, 0, S)
                               : mlx_median(&y, x, &ax, 1, true, S);
            if (!rc)
                rc = mlx_array_eval(y);
            mc_fault_fail_after(-1);
            mlx_array_free(y);
            if (!rc) {
                tu_expect_no_error();
                break;
            }
            if (tu_error_count() != 1)
                fail_msg("op %d, allocation %ld: %d messages, last \"%s\"", op, n, tu_error_count(),
                         tu_last_error());
            tu_reset_errors();
            assert_true(n < 1000);
        }
    }
    mlx_array_free(x);
    mlx_array_free(b);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_teardown(f, tu_test_teardown)
        T(test_every_case_equals_mlx),
        T(test_bad_axis_kth_and_k_report_mlx_messages),
        T(test_flattened_forms_name_axis_0_and_the_flat_shape),
        T(test_median_rejects_bad_repeated_empty_and_missing_axes),
        T(test_nan_sorts_last_where_mlx_leaves_the_order_undefined),
        T(test_large_threaded_sorts_are_sorted_and_stable),
        T(test_topk_holds_the_k_largest_of_each_row),
        T(test_partitions_of_adversarial_rows_are_partitions),
        T(test_long_partitions_equal_libstdcxx_nth_element),
        T(test_allocation_failures_report_once_and_leak_nothing),
#undef T
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
