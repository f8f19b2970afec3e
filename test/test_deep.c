/* The deep suite: inputs at the library's size limits. A lazy chain of a
 * million nodes evaluates and frees on a small stack; a compiled tape ten
 * thousand ops deep traces and replays; shapes whose element counts pass
 * 2^31 are sized, strided and sliced with 64-bit arithmetic, and shapes
 * whose bytes cannot be addressed or allocated are refused with a message
 * instead of wrapping around. (The million-node chain takes about 1 s
 * natively, 7 s under qemu-aarch64 and 20 s under valgrind.) */
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#define S tu_stream()

enum { CHAIN = 1000000, TAPE = 10000 };

/* Runs fn(arg) on a thread with a 512 KiB stack. A walk that recursed once
 * per node would need tens of MiB for these graphs and crash here. */
static void run_on_small_stack(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t th;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, 512 * 1024), 0);
    assert_int_equal(pthread_create(&th, &attr, fn, arg), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    pthread_attr_destroy(&attr);
}

/* ---- a million-node lazy chain ---- */

typedef struct chain_job {
    int n;
    bool eval; /* evaluate before freeing */
    int rc;
    double value;
} chain_job;

/* x = [0, 0]; then n ops (n a multiple of 5), one node each, in turn: add
 * a scalar 1, add a (1,2) row of ones (broadcast to (1,2)), reshape back to
 * (2,), subtract -1, add with the scalar first. So the chain mixes
 * primitives, views and broadcasting, and each element ends at 4n/5.
 * Everything happens on the calling (small-stack) thread, the building
 * too: an op must not walk its inputs' graph. */
static void *chain_job_run(void *p)
{
    chain_job *j = p;
    const int two = 2, one_two[2] = {1, 2};
    mlx_array x = mlx_array_new(), one = mlx_array_new_float64(1),
              minus_one = mlx_array_new_float64(-1), row = mlx_array_new();
    j->rc = mlx_zeros(&x, &two, 1, MLX_FLOAT64, S) || mlx_full(&row, one_two, 2, one, MLX_FLOAT64, S);
    for (int i = 0; i < j->n && j->rc == 0; i++) {
        switch (i % 5) {
        case 0: j->rc = mlx_add(&x, x, one, S); break;
        case 1: j->rc = mlx_add(&x, x, row, S); break;
        case 2: j->rc = mlx_reshape(&x, x, &two, 1, S); break;
        case 3: j->rc = mlx_subtract(&x, x, minus_one, S); break;
        default: j->rc = mlx_add(&x, one, x, S); break;
        }
    }
    if (j->rc == 0 && j->eval) {
        j->rc = mlx_array_eval(x);
        if (j->rc == 0) {
            mlx_array first = mlx_array_new();
            const int start = 1, stop = 2, step = 1;
            j->rc = mlx_slice(&first, x, &start, 1, &stop, 1, &step, 1, S) ||
                    mlx_reshape(&first, first, NULL, 0, S) ||
                    mlx_array_item_float64(&j->value, first);
            mlx_array_free(first);
        }
    }
    /* unevaluated, this releases the whole chain: iteratively or not at all */
    mlx_array_free(x);
    TU_FREE(one, minus_one, row);
    return NULL;
}

static void test_million_node_chain_evaluates_on_a_small_stack(void **state)
{
    (void)state;
    size_t before = 0, after = 0;
    assert_int_equal(mlx_get_active_memory(&before), 0);
    chain_job j = {CHAIN, true, -1, 0};
    run_on_small_stack(chain_job_run, &j);
    assert_int_equal(j.rc, 0);
    assert_true(j.value == (double)j.n / 5 * 4);
    /* nothing of the chain is left once its handle is freed */
    assert_int_equal(mlx_get_active_memory(&after), 0);
    assert_true(after <= before + 4096);
}

static void test_million_node_chain_frees_unevaluated_on_a_small_stack(void **state)
{
    (void)state;
    chain_job j = {CHAIN, false, -1, 0};
    run_on_small_stack(chain_job_run, &j);
    assert_int_equal(j.rc, 0);
}

/* A wide-then-deep graph: 1000 leaves summed pairwise in a tree, then a
 * long chain on top; eval must handle many inputs per level and depth. */
static void test_reduction_tree_under_a_deep_chain(void **state)
{
    (void)state;
    enum { LEAVES = 1024 };
    mlx_array level[LEAVES];
    for (int i = 0; i < LEAVES; i++)
        level[i] = mlx_array_new_float64(i);
    for (int n = LEAVES; n > 1; n /= 2)
        for (int i = 0; i < n / 2; i++) {
            mlx_array s = mlx_array_new();
            assert_int_equal(mlx_add(&s, level[2 * i], level[2 * i + 1], S), 0);
            TU_FREE(level[2 * i], level[2 * i + 1]);
            level[i] = s;
        }
    mlx_array x = level[0], half = mlx_array_new_float64(0.5);
    for (int i = 0; i < 20000; i++)
        assert_int_equal(mlx_multiply(&x, x, half, S) || mlx_add(&x, x, x, S), 0);
    double v = 0;
    assert_int_equal(mlx_array_item_float64(&v, x), 0);
    assert_true(v == (double)LEAVES * (LEAVES - 1) / 2);
    TU_FREE(x, half);
}

/* ---- a 10,000-deep compiled tape ---- */

/* out = x + 1, TAPE times */
static int add_one_tape(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), one = mlx_array_new_float(1);
    int rc = mlx_vector_array_get(&x, in, 0);
    for (int i = 0; i < TAPE && rc == 0; i++)
        rc = mlx_add(&x, x, one, S);
    if (rc == 0)
        *res = mlx_vector_array_new_value(x);
    TU_FREE(x, one);
    return rc;
}

/* out = x + y, TAPE times: y is an input, so no step folds into a
 * constant and the replayed tape stays TAPE steps long */
static int add_input_tape(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_array x = mlx_array_new(), y = mlx_array_new();
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_vector_array_get(&y, in, 1);
    for (int i = 0; i < TAPE && rc == 0; i++)
        rc = mlx_add(&x, x, y, S);
    if (rc == 0)
        *res = mlx_vector_array_new_value(x);
    TU_FREE(x, y);
    return rc;
}

typedef struct tape_job {
    mlx_closure fn;
    mlx_array in[2];
    size_t n_in;
    int rc;
    mlx_array out;
} tape_job;

static void *tape_job_run(void *p)
{
    tape_job *j = p;
    mlx_vector_array in = mlx_vector_array_new_data(j->in, j->n_in), out = mlx_vector_array_new();
    j->rc = mlx_closure_apply(&out, j->fn, in) || mlx_vector_array_get(&j->out, out, 0) ||
            mlx_array_eval(j->out);
    mlx_vector_array_free(in);
    mlx_vector_array_free(out);
    return NULL;
}

/* Calls fn on the inputs on a small stack (tracing, simplifying and
 * replaying must not recurse per step); returns the first output. */
static mlx_array call_on_small_stack(mlx_closure fn, mlx_array a, mlx_array b, size_t n_in)
{
    tape_job j = {fn, {a, b}, n_in, -1, mlx_array_new()};
    run_on_small_stack(tape_job_run, &j);
    assert_int_equal(j.rc, 0);
    return j.out;
}

static void test_ten_thousand_step_compiled_tape_traces_and_replays(void **state)
{
    (void)state;
    mlx_closure body = mlx_closure_new_func(add_one_tape), fn = mlx_closure_new();
    assert_int_equal(mlx_compile(&fn, body, false), 0);
    const float xv[3] = {0, 1, -5};
    const int n3 = 3;
    for (int call = 0; call < 3; call++) {
        /* the first call traces, the others replay the stored tape */
        float shift = (float)call * 100;
        float v[3] = {xv[0] + shift, xv[1] + shift, xv[2] + shift};
        mlx_array x = tu_f32(v, &n3, 1);
        mlx_array y = call_on_small_stack(fn, x, x, 1);
        for (int i = 0; i < 3; i++)
            assert_true(tu_get(y, (size_t)i) == (double)(v[i] + TAPE));
        TU_FREE(x, y);
    }
    mlx_closure_free(fn);
    mlx_closure_free(body);
}

static void test_ten_thousand_step_tape_on_inputs_replays_shapeless(void **state)
{
    (void)state;
    mlx_closure body = mlx_closure_new_func(add_input_tape), fn = mlx_closure_new();
    assert_int_equal(mlx_compile(&fn, body, true), 0);
    /* traced on shape (2,), replayed on (2,) and, shapeless, on (4,) */
    static const int sizes[3] = {2, 2, 4};
    for (int call = 0; call < 3; call++) {
        int n = sizes[call];
        float xv[4] = {1, 2, 3, 4}, yv[4] = {0.5f, -1, 2, 0.25f};
        xv[0] += (float)call;
        mlx_array x = tu_f32(xv, &n, 1), y = tu_f32(yv, &n, 1);
        mlx_array out = call_on_small_stack(fn, x, y, 2);
        assert_true(tu_shape_is(out, 1, &n));
        for (int i = 0; i < n; i++)
            assert_true(tu_get(out, (size_t)i) == (double)xv[i] + (double)TAPE * yv[i]);
        TU_FREE(x, y, out);
    }
    mlx_closure_free(fn);
    mlx_closure_free(body);
}

/* ---- element counts past 2^31 ---- */

/* 65536 * 65536 * 2 = 2^33 elements: more than int32 (and uint32) hold,
 * but addressable. The lazy array reports its size, bytes and strides in
 * 64 bits; evaluating it needs 32 GiB, which the memory limit refuses
 * with a message giving the full byte count (not a wrapped one). */
static void test_int32_overflowing_shape_is_sized_in_64_bits_and_refused_at_eval(void **state)
{
    (void)state;
    const int shape[3] = {65536, 65536, 2};
    mlx_array z = mlx_array_new();
    assert_int_equal(mlx_zeros(&z, shape, 3, MLX_FLOAT32, S), 0);
    assert_true(mlx_array_size(z) == (size_t)1 << 33);
    assert_true(mlx_array_nbytes(z) == (size_t)1 << 35);
    assert_int_equal(mlx_array_dim(z, 0), 65536);
    const size_t *st = mlx_array_strides(z);
    assert_non_null(st);
    assert_true(st[0] == (size_t)131072 && st[1] == 2 && st[2] == 1);

    size_t old = 0, ignored = 0;
    assert_int_equal(mlx_set_memory_limit(&old, (size_t)1 << 30), 0);
    tu_reset_errors();
    assert_int_not_equal(mlx_array_eval(z), 0);
    assert_int_equal(tu_error_count(), 1);
    assert_true(tu_last_error_has("34359738368"));
    tu_reset_errors();
    assert_int_equal(mlx_set_memory_limit(&ignored, old), 0);
    mlx_array_free(z);
}

/* Shapes whose element or byte count does not fit a size_t are refused
 * when the array is created, naming the shape. */
static void test_unaddressable_shapes_are_refused_at_creation(void **state)
{
    (void)state;
    /* 2^80 elements */
    const int huge[5] = {65536, 65536, 65536, 65536, 65536};
    /* (2^31-1)^2 * 4 elements fit in 64 bits; their bytes do not */
    const int wide[3] = {INT_MAX, INT_MAX, 4};
    mlx_array z = mlx_array_new();
    tu_reset_errors();
    assert_int_not_equal(mlx_zeros(&z, huge, 5, MLX_FLOAT32, S), 0);
    assert_null(z.ctx);
    assert_int_equal(tu_error_count(), 1);
    assert_true(tu_last_error_has("(65536,65536,65536,65536,65536)"));
    tu_reset_errors();
    assert_int_not_equal(mlx_ones(&z, wide, 3, MLX_FLOAT64, S), 0);
    assert_null(z.ctx);
    assert_int_equal(tu_error_count(), 1);
    assert_true(tu_last_error_has("2147483647"));
    tu_reset_errors();

    /* a broadcast to such a shape is refused the same way */
    mlx_array s = mlx_array_new_float(1);
    assert_int_not_equal(mlx_broadcast_to(&z, s, huge, 5, S), 0);
    assert_null(z.ctx);
    assert_int_equal(tu_error_count(), 1);
    tu_reset_errors();
    mlx_array_free(s);
}

/* A broadcast of a (65536,) row to (65536, 65536) holds 2^32 elements
 * without allocating them; its strides are (0, 1), its size 2^32, and
 * slicing elements deep inside it (flat index past 2^31 and the very last)
 * reads the right values. */
static void test_broadcast_view_past_2_31_elements_slices_correctly(void **state)
{
    (void)state;
    const int big[2] = {65536, 65536};
    mlx_array row = mlx_array_new(), b = mlx_array_new();
    assert_int_equal(mlx_arange(&row, 0, 65536, 1, MLX_INT32, S), 0);
    assert_int_equal(mlx_broadcast_to(&b, row, big, 2, S), 0);
    assert_true(mlx_array_size(b) == (size_t)1 << 32);
    assert_int_equal(mlx_array_eval(b), 0);
    const size_t *st = mlx_array_strides(b);
    assert_true(st[0] == 0 && st[1] == 1);

    static const int ones[2] = {1, 1};
    static const int picks[3][2] = {{65535, 65535}, {40000, 12345}, {32768, 0}};
    for (int k = 0; k < 3; k++) {
        int start[2] = {picks[k][0], picks[k][1]}, stop[2] = {start[0] + 1, start[1] + 1};
        mlx_array e = mlx_array_new();
        assert_int_equal(mlx_slice(&e, b, start, 2, stop, 2, ones, 2, S), 0);
        int32_t v = -1;
        assert_int_equal(mlx_reshape(&e, e, NULL, 0, S), 0);
        assert_int_equal(mlx_array_item_int32(&v, e), 0);
        assert_int_equal(v, picks[k][1]);
        mlx_array_free(e);
    }

    /* a scalar broadcast the same way, sliced at its last element */
    mlx_array s = mlx_array_new_float(2.5f), sb = mlx_array_new(), last = mlx_array_new();
    const int lo[2] = {65535, 65535}, hi[2] = {65536, 65536};
    assert_int_equal(mlx_broadcast_to(&sb, s, big, 2, S), 0);
    assert_true(mlx_array_size(sb) == (size_t)1 << 32);
    assert_int_equal(mlx_slice(&last, sb, lo, 2, hi, 2, ones, 2, S), 0);
    assert_true(tu_get(last, 0) == 2.5);
    TU_FREE(row, b, s, sb, last);
}

#define T(f) cmocka_unit_test_setup_teardown(f, NULL, tu_test_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_million_node_chain_evaluates_on_a_small_stack),
        T(test_million_node_chain_frees_unevaluated_on_a_small_stack),
        T(test_reduction_tree_under_a_deep_chain),
        T(test_ten_thousand_step_compiled_tape_traces_and_replays),
        T(test_ten_thousand_step_tape_on_inputs_replays_shapeless),
        T(test_int32_overflowing_shape_is_sized_in_64_bits_and_refused_at_eval),
        T(test_unaddressable_shapes_are_refused_at_creation),
        T(test_broadcast_view_past_2_31_elements_slices_correctly),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
