/* Exporting functions to .mlxfn files and calling them back (export.h),
 * with the calls of mlx-c's example-export.c: a unary function exported
 * from positional arguments and applied both positionally and by keyword,
 * and a keyword function exported and applied by keyword. The files
 * (inc_func.bin, mul_func.bin) are MLX's format: MLX can import them.
 * Exits non-zero if a result is not the expected value. */
#include <math.h>
#include <stdio.h>

#include "mlx/c/mlx.h"

static void show(const char *label, mlx_array a)
{
    mlx_string s = mlx_string_new();
    mlx_array_tostring(&s, a);
    printf("%s\n%s\n", label, mlx_string_data(s));
    mlx_string_free(s);
}

/* x + 1 */
static int increment(mlx_array *out, const mlx_array x)
{
    mlx_stream s = mlx_default_gpu_stream_new(); /* the CPU here, as every stream */
    mlx_array one = mlx_array_new_float(1.0f);
    mlx_add(out, x, one, s);
    mlx_array_free(one);
    mlx_stream_free(s);
    return 0;
}

/* kwargs["x"] * kwargs["y"] */
static int product(mlx_vector_array *out, const mlx_vector_array args, const mlx_map_string_to_array kwargs)
{
    (void)args;
    mlx_stream s = mlx_default_gpu_stream_new();
    mlx_array x = mlx_array_new(), y = mlx_array_new(), p = mlx_array_new();
    mlx_map_string_to_array_get(&x, kwargs, "x");
    mlx_map_string_to_array_get(&y, kwargs, "y");
    mlx_multiply(&p, x, y, s);
    mlx_vector_array_set_value(out, p);
    mlx_array_free(p);
    mlx_array_free(y);
    mlx_array_free(x);
    mlx_stream_free(s);
    return 0;
}

static int expect(mlx_array a, float want)
{
    float v = 0;
    if (mlx_array_item_float32(&v, a) || fabsf(v - want) > 1e-6f) {
        fprintf(stderr, "expected %g, got %g\n", want, v);
        return 1;
    }
    return 0;
}

int main(void)
{
    int bad = 0;
    mlx_array x = mlx_array_new_float(1.0f);
    show("x:", x);

    printf("exporting inc() to inc_func.bin\n");
    mlx_vector_array args = mlx_vector_array_new_value(x);
    mlx_closure inc = mlx_closure_new_unary(increment);
    bad |= mlx_export_function("inc_func.bin", inc, args, false);
    mlx_closure_free(inc);

    printf("importing inc() from inc_func.bin\n");
    mlx_imported_function inc_imported = mlx_imported_function_new("inc_func.bin");

    printf("inc(x), positionally\n");
    mlx_vector_array res = mlx_vector_array_new();
    bad |= mlx_imported_function_apply(&res, inc_imported, args);
    mlx_array y = mlx_array_new();
    mlx_vector_array_get(&y, res, 0);
    show("+1:", y);
    bad |= expect(y, 2.0f);
    mlx_array_set(&x, y);

    printf("inc(x), by keyword\n");
    mlx_vector_array no_args = mlx_vector_array_new();
    mlx_map_string_to_array kwargs = mlx_map_string_to_array_new();
    mlx_map_string_to_array_insert(kwargs, "x", x);
    bad |= mlx_imported_function_apply_kwargs(&res, inc_imported, no_args, kwargs);
    mlx_vector_array_get(&y, res, 0);
    show("+1:", y);
    bad |= expect(y, 3.0f);
    mlx_array_set(&x, y);

    printf("exporting mul() to mul_func.bin\n");
    mlx_map_string_to_array_insert(kwargs, "y", x);
    mlx_closure_kwargs mul = mlx_closure_kwargs_new_func(product);
    bad |= mlx_export_function_kwargs("mul_func.bin", mul, no_args, kwargs, false);
    mlx_closure_kwargs_free(mul);

    printf("importing mul() from mul_func.bin\n");
    mlx_imported_function mul_imported = mlx_imported_function_new("mul_func.bin");
    printf("mul(x=x, y=x)\n");
    show("x:", x);
    mlx_map_string_to_array_insert(kwargs, "x", x);
    mlx_map_string_to_array_insert(kwargs, "y", x);
    bad |= mlx_imported_function_apply_kwargs(&res, mul_imported, no_args, kwargs);
    mlx_vector_array_get(&y, res, 0);
    show("3*3:", y);
    bad |= expect(y, 9.0f);

    mlx_array_free(y);
    mlx_vector_array_free(res);
    mlx_map_string_to_array_free(kwargs);
    mlx_vector_array_free(args);
    mlx_vector_array_free(no_args);
    mlx_array_free(x);
    mlx_imported_function_free(inc_imported);
    mlx_imported_function_free(mul_imported);
    return bad ? 1 : 0;
}
