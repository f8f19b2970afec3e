/* Owns the allocation-failure sweep of fault_sweep.h. */
#include "fault_sweep.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "runtime/alloc.h"
#include "test_util.h"

/* With the hook off: [1, 2] + [10, 20] is [11, 22]. */
static void assert_library_works(void)
{
    const float a[2] = {1, 2}, b[2] = {10, 20};
    const int n = 2;
    mlx_array x = tu_f32(a, &n, 1), y = tu_f32(b, &n, 1), z = mlx_array_new();
    assert_int_equal(mlx_add(&z, x, y, tu_stream()), 0);
    assert_true(tu_get(z, 0) == 11.0 && tu_get(z, 1) == 22.0);
    TU_FREE(x, y, z);
    tu_expect_no_error();
}

/* Allocations made while the hook was armed in the current run, taken
 * when it is disarmed (disarming resets the hook's counter). */
static long armed_count = -1;

void tu_sweep_disarm(void)
{
    if (armed_count < 0)
        armed_count = mc_fault_count();
    mc_fault_fail_after(-1);
}

long tu_sweep(const char *name, tu_scenario_fn f, void *ctx)
{
    long failed_runs = 0;
    size_t base = tu_active_memory();
    for (long n = 0;; n++) {
        if (n > 200000)
            fail_msg("%s: no run without a failed allocation after %ld", name, n);
        tu_reset_errors();
        armed_count = -1;
        mc_fault_fail_after(n);
        int rc = f(ctx);
        tu_sweep_disarm();
        long made = armed_count;
        if (rc == 2)
            fail_msg("%s: wrong values with allocation %ld failing", name, n);
        if (rc != 0) {
            if (tu_error_count() != 1)
                fail_msg("%s: allocation %ld failing gave %d messages (last: %s)", name, n, tu_error_count(),
                         tu_last_error());
            failed_runs++;
        } else if (tu_error_count() != 0) {
            fail_msg("%s: succeeded with allocation %ld failing but reported: %s", name, n, tu_last_error());
        }
        tu_reset_errors();
        if (tu_active_memory() != base)
            fail_msg("%s: allocation %ld failing left %zu bytes of data behind", name, n, tu_active_memory() - base);
        assert_library_works();
        if (rc == 0 && made <= n) {
            /* nothing failed: every allocation has had its turn */
            print_message("%s: %ld allocations, %ld failed runs\n", name, made, failed_runs);
            break;
        }
    }
    return failed_runs;
}
