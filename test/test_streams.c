/* The streams suite: every public function that takes an mlx_stream
 * refuses an empty stream handle, as mlx-c does (its functions throw
 * "expected a non-empty mlx_stream"), instead of quietly taking it for the
 * default stream. The cases are generated from the public headers at build
 * time (test/gen_stream_cases.py), so a function added later is covered. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_util.h"

#include "stream_cases.h"

/* Each function fails, reports exactly one message, and that message is
 * about the stream and names the function (without mlx-c's "mlx_"). */
static void every_stream_taking_function_refuses_an_empty_stream(void **state)
{
    (void)state;
    float one = 1.0f;
    mlx_array scalar = tu_f32(&one, NULL, 0);
    mlx_vector_array vec = mlx_vector_array_new();
    size_t n = sizeof stream_cases / sizeof stream_cases[0];
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        tu_reset_errors();
        int rc = stream_cases[i].call(scalar, vec);
        char want[160];
        snprintf(want, sizeof want, "[%s]", stream_cases[i].name + 4);
        if (rc == 0 || tu_error_count() != 1 || !tu_last_error_has("mlx_stream") ||
            strncmp(tu_last_error(), want, strlen(want)) != 0) {
            print_error("%s: rc %d, %d message(s), last \"%s\"\n", stream_cases[i].name, rc,
                        tu_error_count(), tu_last_error());
            failures++;
        }
    }
    tu_reset_errors();
    mlx_array_free(scalar);
    mlx_vector_array_free(vec);
    assert_int_equal(failures, 0);
    assert_true(n > 250); /* the headers' stream-taking functions were all found */
}

/* The same calls with the default stream are not refused for the stream:
 * guards against a check that fails on every handle. */
static void a_real_stream_passes_the_check(void **state)
{
    (void)state;
    float v[2] = {1.0f, 2.0f};
    int shape[1] = {2};
    mlx_array a = tu_f32(v, shape, 1), r = mlx_array_new();
    assert_int_equal(mlx_add(&r, a, a, tu_stream()), 0);
    tu_expect_no_error();
    assert_true(tu_get(r, 1) == 4.0);
    mlx_array_free(a);
    mlx_array_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(every_stream_taking_function_refuses_an_empty_stream,
                                  tu_test_teardown),
        cmocka_unit_test_teardown(a_real_stream_passes_the_check, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
