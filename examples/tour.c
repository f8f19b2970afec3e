/* A short tour of mlx-cpu through the mlx-c API: build arrays, combine
 * them lazily, wrap a computation in a closure, evaluate and print.
 * Build it against an installed mlx-cpu with
 *   cc tour.c $(pkg-config --cflags --libs mlx-cpu) -o tour */
#include <stdio.h>

#include "mlx/c/mlx.h"

/* y = x * x + 1, as a closure body: reads one input, writes one output. */
static int square_plus_one(mlx_vector_array *res, const mlx_vector_array in)
{
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_array x = mlx_array_new(), y = mlx_array_new(), one = mlx_array_new_float(1.0f);
    int rc = mlx_vector_array_get(&x, in, 0) || mlx_multiply(&y, x, x, s) || mlx_add(&y, y, one, s) ||
             mlx_vector_array_set_value(res, y);
    mlx_array_free(x);
    mlx_array_free(y);
    mlx_array_free(one);
    mlx_stream_free(s);
    return rc;
}

static void print_array(const char *label, mlx_array a)
{
    mlx_string str = mlx_string_new();
    if (mlx_array_tostring(&str, a) == 0)
        printf("%s =\n%s\n\n", label, mlx_string_data(str));
    mlx_string_free(str);
}

int main(void)
{
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_string version = mlx_string_new();
    mlx_version(&version);
    printf("mlx-cpu, tracking MLX %s\n\n", mlx_string_data(version));
    mlx_string_free(version);

    /* arrays from host data, and from creation ops */
    float data[6] = {1, 2, 3, 4, 5, 6};
    int shape[2] = {2, 3};
    mlx_array a = mlx_array_new_data(data, shape, 2, MLX_FLOAT32);
    mlx_array b = mlx_array_new();
    mlx_arange(&b, 0, 3, 1, MLX_FLOAT32, s);
    print_array("a", a);
    print_array("b = arange(3)", b);

    /* ops are lazy: nothing runs until the result is needed */
    mlx_array c = mlx_array_new();
    mlx_add(&c, a, b, s); /* broadcasts (2,3) + (3,) */
    mlx_array_eval(c);
    print_array("a + b", c);

    /* a closure wraps a computation; applying it gives lazy outputs */
    mlx_closure f = mlx_closure_new_func(square_plus_one);
    mlx_vector_array args = mlx_vector_array_new_value(a);
    mlx_vector_array outs = mlx_vector_array_new();
    if (mlx_closure_apply(&outs, f, args) == 0) {
        mlx_eval(outs);
        mlx_array y = mlx_array_new();
        mlx_vector_array_get(&y, outs, 0);
        print_array("f(a) = a * a + 1", y);
        mlx_array_free(y);
    }

    /* dtypes follow MLX's promotion rules */
    mlx_array i = mlx_array_new_int(7), two = mlx_array_new_int(2), h = mlx_array_new();
    mlx_divide(&h, i, two, s); /* integers divide to float32 */
    print_array("7 / 2", h);

    mlx_array_free(i);
    mlx_array_free(two);
    mlx_array_free(h);
    mlx_vector_array_free(args);
    mlx_vector_array_free(outs);
    mlx_closure_free(f);
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(c);
    mlx_stream_free(s);
    return 0;
}
