/* libFuzzer harness for the public API: the input bytes are decoded into a
 * small program over a handful of array slots (creations of every dtype and
 * of shapes with 0 and 1 dims, ops of every family with decoded shapes, axes
 * and dtypes, valid or not, evaluations, and compiled closures built from a
 * decoded op list and called on one or two threads), which is run and then
 * freed. Errors are expected; crashes, sanitizer reports, leaks and broken
 * error contracts are not.
 *
 * The contract checked on every eager op: it returns 0 and reports nothing,
 * or returns non-zero and reports exactly one message (DESIGN.md).
 *
 * Build and run: fuzz/run.sh (scripts/test.sh all runs it for 60 s). */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/mlx.h"

/* Arrays above this many elements are dropped instead of kept or evaluated:
 * a view can be huge without memory (broadcast_to of a scalar), and
 * reducing one would only make the fuzzer slow. */
enum { MAX_ELEMS = 1 << 16 };
enum { SLOTS = 6, MAX_CMDS = 48, MAX_STEPS = 6, MAX_AX = 4 };

/* ---- error accounting ---- */

static _Thread_local int thread_errors;
static _Thread_local char last_message[256];
static atomic_long total_errors;

static void count_error(const char *msg, void *data)
{
    (void)data;
    snprintf(last_message, sizeof last_message, "%s", msg ? msg : "(null)");
    thread_errors++;
    atomic_fetch_add_explicit(&total_errors, 1, memory_order_relaxed);
}

/* An op's result against the one-message contract; a breach aborts so the
 * fuzzer keeps the input. `before` is thread_errors before the call. */
static void check_contract(const char *what, int rc, int before)
{
    int n = thread_errors - before;
    if ((rc == 0 && n != 0) || (rc != 0 && n != 1)) {
        fprintf(stderr, "contract broken: %s returned %d after %d error message(s); last: %s\n",
                what, rc, n, n ? last_message : "-");
        abort();
    }
}

/* ---- input decoding ---- */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned u8(reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

/* Dims for shape arguments: mostly small, sometimes empty, negative, -1
 * (inferred by reshape) or large enough to overflow products. */
static int dim_of(unsigned b)
{
    static const int table[16] = {0, 1, 2, 3, 4, 5, 6, 8, 1, 2, 3, -1, -3, 16, 65536, INT_MAX};
    return table[b & 15];
}
/* Axes: in range for small ranks, sometimes out of range either way. */
static int axis_of(unsigned b) { return (int)(b % 11) - 5; }

static const mlx_dtype all_dtypes[14] = {
    MLX_BOOL,  MLX_UINT8,   MLX_UINT16,  MLX_UINT32,  MLX_UINT64,   MLX_INT8,     MLX_INT16,
    MLX_INT32, MLX_INT64,   MLX_FLOAT16, MLX_FLOAT32, MLX_FLOAT64,  MLX_BFLOAT16, MLX_COMPLEX64,
};
static mlx_dtype dtype_of(unsigned b) { return all_dtypes[b % 14]; }

/* One op of a program: its family, which function of the family, operand
 * registers, and its integer arguments. */
typedef struct step {
    uint8_t kind, fn;
    uint8_t a, b, c;
    uint8_t flags;
    uint8_t nax, ndims;
    int ax[MAX_AX];
    int dims[MAX_AX];
    int k;
} step;

enum {
    K_UNARY, K_BINARY, K_REDUCE_AXES, K_REDUCE_ALL, K_AXIS, K_SCAN, K_RESHAPE, K_TRANSPOSE,
    K_BROADCAST, K_EXPAND_SQUEEZE, K_AXES_PAIR, K_SLICE, K_SLICE_UPDATE, K_PAD, K_TILE_REPEAT,
    K_TAKE, K_JOIN, K_SPLIT, K_ASTYPE, K_LINALG, K_SELECT, K_DIAG, K_CREATE, K_MISC, K_COUNT
};

static void decode_step(reader *r, step *s)
{
    memset(s, 0, sizeof *s);
    s->kind = (uint8_t)(u8(r) % K_COUNT);
    s->fn = (uint8_t)u8(r);
    s->a = (uint8_t)u8(r);
    s->b = (uint8_t)u8(r);
    s->c = (uint8_t)u8(r);
    s->flags = (uint8_t)u8(r);
    s->nax = (uint8_t)(u8(r) % (MAX_AX + 1));
    for (int i = 0; i < s->nax; i++)
        s->ax[i] = axis_of(u8(r));
    s->ndims = (uint8_t)(u8(r) % (MAX_AX + 1));
    for (int i = 0; i < s->ndims; i++)
        s->dims[i] = dim_of(u8(r));
    s->k = (int)(int8_t)u8(r);
}

/* ---- function tables by signature ---- */

typedef int (*unary_fn)(mlx_array *, const mlx_array, const mlx_stream);
typedef int (*binary_fn)(mlx_array *, const mlx_array, const mlx_array, const mlx_stream);
typedef int (*axes_fn)(mlx_array *, const mlx_array, const int *, size_t, bool, const mlx_stream);
typedef int (*all_fn)(mlx_array *, const mlx_array, bool, const mlx_stream);
typedef int (*axis_fn)(mlx_array *, const mlx_array, int, bool, const mlx_stream);
typedef int (*scan_fn)(mlx_array *, const mlx_array, int, bool, bool, const mlx_stream);

static const unary_fn unary_fns[] = {
    mlx_abs, mlx_negative, mlx_sign, mlx_square, mlx_sqrt, mlx_rsqrt, mlx_reciprocal, mlx_exp,
    mlx_expm1, mlx_log, mlx_log1p, mlx_log2, mlx_log10, mlx_sin, mlx_cos, mlx_tan, mlx_arcsin,
    mlx_arccos, mlx_arctan, mlx_sinh, mlx_cosh, mlx_tanh, mlx_arcsinh, mlx_arccosh, mlx_arctanh,
    mlx_sigmoid, mlx_erf, mlx_erfinv, mlx_floor, mlx_ceil, mlx_degrees, mlx_radians,
    mlx_logical_not, mlx_isnan, mlx_isinf, mlx_isfinite, mlx_isposinf, mlx_isneginf,
    mlx_bitwise_invert, mlx_stop_gradient, mlx_copy, mlx_conjugate, mlx_real, mlx_imag,
    mlx_atleast_1d, mlx_atleast_2d, mlx_atleast_3d, mlx_zeros_like, mlx_ones_like,
};
static const binary_fn binary_fns[] = {
    mlx_add, mlx_subtract, mlx_multiply, mlx_divide, mlx_floor_divide, mlx_remainder,
    mlx_power, mlx_maximum, mlx_minimum, mlx_arctan2, mlx_logaddexp, mlx_equal, mlx_not_equal,
    mlx_less, mlx_less_equal, mlx_greater, mlx_greater_equal, mlx_logical_and, mlx_logical_or,
    mlx_bitwise_and, mlx_bitwise_or, mlx_bitwise_xor, mlx_left_shift, mlx_right_shift,
};
static const axes_fn axes_fns[] = {
    mlx_sum_axes, mlx_mean_axes, mlx_prod_axes, mlx_max_axes, mlx_min_axes,
    mlx_all_axes, mlx_any_axes, mlx_logsumexp_axes, mlx_softmax_axes,
};
static const all_fn all_fns[] = {
    mlx_sum, mlx_mean, mlx_prod, mlx_max, mlx_min, mlx_all, mlx_any,
    mlx_logsumexp, mlx_argmax, mlx_argmin, mlx_softmax, mlx_contiguous,
};
static const axis_fn axis_fns[] = {
    mlx_sum_axis, mlx_mean_axis, mlx_prod_axis, mlx_max_axis, mlx_min_axis, mlx_all_axis,
    mlx_any_axis, mlx_logsumexp_axis, mlx_argmax_axis, mlx_argmin_axis, mlx_softmax_axis,
};
static const scan_fn scan_fns[] = {
    mlx_cumsum, mlx_cumprod, mlx_cummax, mlx_cummin, mlx_logcumsumexp,
};
#define PICK(table, i) (table[(i) % (sizeof(table) / sizeof(table[0]))])

static mlx_stream the_stream;

/* ---- running one step ---- */

static bool empty(mlx_array a) { return a.ctx == NULL; }

/* Element i of a vector result, or an empty handle. */
static mlx_array vec_pick(mlx_vector_array v, unsigned i)
{
    mlx_array out = mlx_array_new();
    size_t n = mlx_vector_array_size(v);
    if (n > 0 && mlx_vector_array_get(&out, v, i % n) != 0) {
        mlx_array_free(out);
        out = mlx_array_new();
    }
    return out;
}

/* A vector of x (and y) for the joining ops. Empty handles are left out:
 * appending one is itself an error, which would be counted against the op. */
static mlx_vector_array pair(mlx_array x, mlx_array y, bool both)
{
    mlx_vector_array v = mlx_vector_array_new();
    if (!empty(x))
        mlx_vector_array_append_value(v, x);
    if (both && !empty(y))
        mlx_vector_array_append_value(v, y);
    return v;
}

/* Runs s on registers regs[0..n) into *out (which must be empty). Returns
 * the op's return code; with check, applies the one-message contract. */
static int run_step(const step *s, const mlx_array *regs, int n, mlx_array *out, bool check)
{
    mlx_array x = regs[s->a % n], y = regs[s->b % n], z = regs[s->c % n];
    const mlx_stream st = the_stream;
    bool f0 = s->flags & 1, f1 = s->flags & 2;
    size_t nax = s->nax, nd = s->ndims;
    int before = thread_errors;
    int rc = 0;
    const char *what = "?";
    switch (s->kind) {
    case K_UNARY:
        what = "unary";
        rc = PICK(unary_fns, s->fn)(out, x, st);
        break;
    case K_BINARY:
        what = "binary";
        rc = PICK(binary_fns, s->fn)(out, x, y, st);
        break;
    case K_REDUCE_AXES:
        what = "reduce_axes";
        if (s->fn % 3 == 0)
            rc = (s->fn & 8 ? mlx_var_axes : mlx_std_axes)(out, x, s->ax, nax, f0, s->k % 4, st);
        else
            rc = PICK(axes_fns, s->fn)(out, x, s->ax, nax, f0, st);
        break;
    case K_REDUCE_ALL:
        what = "reduce_all";
        rc = PICK(all_fns, s->fn)(out, x, f0, st);
        break;
    case K_AXIS:
        what = "axis";
        rc = PICK(axis_fns, s->fn)(out, x, s->ax[0], f0, st);
        break;
    case K_SCAN:
        what = "scan";
        rc = PICK(scan_fns, s->fn)(out, x, s->ax[0], f0, f1, st);
        break;
    case K_RESHAPE:
        what = "reshape";
        if (s->fn & 1)
            rc = mlx_reshape(out, x, s->dims, nd, st);
        else
            rc = mlx_unflatten(out, x, s->ax[0], s->dims, nd, st);
        break;
    case K_TRANSPOSE:
        what = "transpose";
        rc = (s->fn & 1) ? mlx_transpose_axes(out, x, s->ax, nax, st) : mlx_transpose(out, x, st);
        break;
    case K_BROADCAST:
        what = "broadcast";
        rc = mlx_broadcast_to(out, x, s->dims, nd, st);
        break;
    case K_EXPAND_SQUEEZE:
        what = "expand_squeeze";
        switch (s->fn % 4) {
        case 0: rc = mlx_expand_dims_axes(out, x, s->ax, nax, st); break;
        case 1: rc = mlx_squeeze_axes(out, x, s->ax, nax, st); break;
        case 2: rc = mlx_squeeze(out, x, st); break;
        default: rc = mlx_expand_dims(out, x, s->ax[0], st); break;
        }
        break;
    case K_AXES_PAIR:
        what = "axes_pair";
        switch (s->fn % 3) {
        case 0: rc = mlx_flatten(out, x, s->ax[0], s->ax[1], st); break;
        case 1: rc = mlx_swapaxes(out, x, s->ax[0], s->ax[1], st); break;
        default: rc = mlx_moveaxis(out, x, s->ax[0], s->ax[1], st); break;
        }
        break;
    case K_SLICE: {
        what = "slice";
        /* start from the axes list, stop from the dims list, strides from k */
        int strides[MAX_AX];
        for (int i = 0; i < MAX_AX; i++)
            strides[i] = (s->k + i) % 4 == 0 ? -1 : (s->k + i) % 3 + 1;
        rc = mlx_slice(out, x, s->ax, nax, s->dims, f0 ? nax : nd, strides, f1 ? nax : nd, st);
        break;
    }
    case K_SLICE_UPDATE: {
        what = "slice_update";
        int strides[MAX_AX] = {1, 1, 1, 1};
        if (f1)
            strides[0] = -1;
        rc = mlx_slice_update(out, x, y, s->ax, nax, s->dims, f0 ? nax : nd, strides, nax, st);
        break;
    }
    case K_PAD: {
        what = "pad";
        static const char *const modes[] = {"constant", "edge", "reflect", "symmetric", "bogus"};
        int low[MAX_AX], high[MAX_AX];
        for (int i = 0; i < MAX_AX; i++) {
            low[i] = s->dims[i] > 8 ? 1 : s->dims[i];
            high[i] = (s->k >> i) & 3;
        }
        rc = mlx_pad(out, x, s->ax, nax, low, f0 ? nax : nd, high, nax, y,
                     PICK(modes, s->fn), st);
        break;
    }
    case K_TILE_REPEAT:
        what = "tile_repeat";
        switch (s->fn % 4) {
        case 0: rc = mlx_tile(out, x, s->dims, nd, st); break;
        case 1: rc = mlx_repeat_axis(out, x, s->k % 5, s->ax[0], st); break;
        case 2: rc = mlx_repeat(out, x, s->k % 5, st); break;
        default: rc = mlx_roll(out, x, s->ax, nax, st); break;
        }
        break;
    case K_TAKE:
        what = "take";
        switch (s->fn % 3) {
        case 0: rc = mlx_take_axis(out, x, y, s->ax[0], st); break;
        case 1: rc = mlx_take_along_axis(out, x, y, s->ax[0], st); break;
        default: rc = mlx_take(out, x, y, st); break;
        }
        break;
    case K_JOIN: {
        what = "join";
        mlx_vector_array v = pair(x, y, !f1);
        switch (s->fn % 4) {
        case 0: rc = mlx_concatenate_axis(out, v, s->ax[0], st); break;
        case 1: rc = mlx_stack_axis(out, v, s->ax[0], st); break;
        case 2: rc = mlx_concatenate(out, v, st); break;
        default: {
            mlx_vector_array r = mlx_vector_array_new();
            rc = mlx_broadcast_arrays(&r, v, st);
            if (rc == 0)
                *out = vec_pick(r, (unsigned)s->k);
            mlx_vector_array_free(r);
            break;
        }
        }
        mlx_vector_array_free(v);
        break;
    }
    case K_SPLIT: {
        what = "split";
        mlx_vector_array r = mlx_vector_array_new();
        if (s->fn & 1) {
            int idx[MAX_AX];
            for (int i = 0; i < MAX_AX; i++)
                idx[i] = s->dims[i] > 8 ? s->dims[i] % 9 : s->dims[i];
            rc = mlx_split_sections(&r, x, idx, nd, s->ax[0], st);
        } else {
            rc = mlx_split(&r, x, s->k % 5, s->ax[0], st);
        }
        if (rc == 0)
            *out = vec_pick(r, s->fn >> 1);
        mlx_vector_array_free(r);
        break;
    }
    case K_ASTYPE:
        what = "astype";
        rc = mlx_astype(out, x, dtype_of(s->fn), st);
        break;
    case K_LINALG:
        what = "linalg";
        switch (s->fn % 7) {
        case 0: rc = mlx_matmul(out, x, y, st); break;
        case 1: rc = mlx_addmm(out, z, x, y, (float)s->k, f0 ? 0.5f : 0.0f, st); break;
        case 2: rc = mlx_inner(out, x, y, st); break;
        case 3: rc = mlx_outer(out, x, y, st); break;
        case 4: rc = mlx_tensordot_axis(out, x, y, s->k % 4, st); break;
        case 5: rc = mlx_kron(out, x, y, st); break;
        default:
            rc = mlx_tensordot(out, x, y, s->ax, nax, s->dims, f0 ? nax : nd, st);
            break;
        }
        break;
    case K_SELECT:
        what = "select";
        rc = (s->fn & 1) ? mlx_where(out, x, y, z, st) : mlx_clip(out, x, y, z, st);
        break;
    case K_DIAG:
        what = "diag";
        switch (s->fn % 5) {
        case 0: rc = mlx_diagonal(out, x, s->k % 4, s->ax[0], s->ax[1], st); break;
        case 1: rc = mlx_trace(out, x, s->k % 4, s->ax[0], s->ax[1], dtype_of(s->c), st); break;
        case 2: rc = mlx_tril(out, x, s->k % 4, st); break;
        case 3: rc = mlx_triu(out, x, s->k % 4, st); break;
        default: rc = mlx_diag(out, x, s->k % 4, st); break;
        }
        break;
    case K_CREATE: {
        what = "create";
        mlx_dtype d = dtype_of(s->c);
        int n0 = s->dims[0] > 64 ? 64 : s->dims[0], n1 = s->dims[1] > 64 ? 64 : s->dims[1];
        switch (s->fn % 7) {
        case 0: rc = mlx_zeros(out, s->dims, nd, d, st); break;
        case 1: rc = mlx_ones(out, s->dims, nd, d, st); break;
        case 2: rc = mlx_full(out, s->dims, nd, x, d, st); break;
        case 3: rc = mlx_arange(out, s->ax[0], s->k, (s->ax[1] == 0 ? 0.5 : s->ax[1]), d, st); break;
        case 4: rc = mlx_linspace(out, s->ax[0], s->k, n0, d, st); break;
        case 5: rc = mlx_eye(out, n0, n1, s->k % 4, d, st); break;
        default: rc = mlx_tri(out, n0, n1, s->k % 4, d, st); break;
        }
        break;
    }
    case K_MISC:
    default:
        what = "misc";
        switch (s->fn % 8) {
        case 0: rc = mlx_round(out, x, s->k % 4, st); break;
        case 1: {
            mlx_optional_float pinf = {1.0f, f0}, ninf = {-1.0f, f1};
            rc = mlx_nan_to_num(out, x, 0.0f, pinf, ninf, st);
            break;
        }
        case 2: rc = mlx_isclose(out, x, y, 1e-5, 1e-8, f0, st); break;
        case 3: rc = mlx_allclose(out, x, y, 1e-5, 1e-8, f0, st); break;
        case 4: rc = mlx_array_equal(out, x, y, f0, st); break;
        case 5:
            rc = mlx_number_of_elements(out, x, s->ax, nax, f0, dtype_of(s->c), st);
            break;
        case 6: {
            mlx_vector_array r = mlx_vector_array_new();
            rc = mlx_divmod(&r, x, y, st);
            if (rc == 0)
                *out = vec_pick(r, s->c);
            mlx_vector_array_free(r);
            break;
        }
        default: {
            mlx_vector_array v = pair(x, y, !f1), r = mlx_vector_array_new();
            rc = mlx_meshgrid(&r, v, f0, (s->c & 1) ? "xy" : "ij", st);
            if (rc == 0)
                *out = vec_pick(r, s->c >> 1);
            mlx_vector_array_free(r);
            mlx_vector_array_free(v);
            break;
        }
        }
        break;
    }
    if (check)
        check_contract(what, rc, before);
    if (rc != 0 && !empty(*out)) {
        fprintf(stderr, "contract broken: %s failed but wrote a result\n", what);
        abort();
    }
    if (rc == 0 && empty(*out) && s->kind != K_JOIN && s->kind != K_SPLIT && s->kind != K_MISC) {
        fprintf(stderr, "contract broken: %s succeeded without a result\n", what);
        abort();
    }
    return rc;
}

/* True if a is non-empty and small enough to keep and evaluate. */
static bool keepable(mlx_array a) { return !empty(a) && mlx_array_size(a) <= MAX_ELEMS; }

/* ---- compiled closures ---- */

typedef struct program {
    int nsteps;
    int nout;
    step steps[MAX_STEPS];
} program;

/* The closure body: each step reads earlier registers (inputs first) and
 * appends its result; the outputs are the last nout registers. */
static int program_body(mlx_vector_array *res, const mlx_vector_array in, void *payload)
{
    const program *p = payload;
    mlx_array regs[4 + MAX_STEPS];
    int n = 0, rc = 0;
    size_t nin = mlx_vector_array_size(in);
    for (size_t i = 0; i < nin && i < 4; i++) {
        regs[n] = mlx_array_new();
        if (mlx_vector_array_get(&regs[n], in, i) != 0) {
            rc = 1;
            goto out;
        }
        n++;
    }
    if (n == 0)
        return 1;
    for (int i = 0; i < p->nsteps; i++) {
        mlx_array r = mlx_array_new();
        if (run_step(&p->steps[i], regs, n, &r, false) != 0 || empty(r)) {
            mlx_array_free(r);
            rc = 1;
            goto out;
        }
        regs[n++] = r;
        if (!keepable(r)) {
            rc = 1;
            goto out;
        }
    }
    {
        /* *res arrives as an empty handle: the body gives it a vector */
        int first = n - p->nout < 0 ? 0 : n - p->nout;
        *res = mlx_vector_array_new_data(regs + first, (size_t)(n - first));
        if (res->ctx == NULL)
            rc = 1;
    }
out:
    for (int i = 0; i < n; i++)
        mlx_array_free(regs[i]);
    return rc;
}

typedef struct call {
    mlx_closure fn;
    mlx_vector_array inputs;
    int rc;
} call;

/* Calls a compiled closure and evaluates (and reads) what it returns. */
static void *call_compiled(void *arg)
{
    call *c = arg;
    mlx_vector_array out = mlx_vector_array_new();
    int before = thread_errors;
    c->rc = mlx_closure_apply(&out, c->fn, c->inputs);
    if ((c->rc == 0) != (thread_errors == before)) {
        fprintf(stderr, "contract broken: compiled call returned %d after %d message(s)\n", c->rc,
                thread_errors - before);
        abort();
    }
    size_t n = mlx_vector_array_size(out);
    bool small = true;
    for (size_t i = 0; i < n; i++) {
        mlx_array a = mlx_array_new();
        if (mlx_vector_array_get(&a, out, i) == 0 && !keepable(a))
            small = false;
        mlx_array_free(a);
    }
    if (small && n > 0)
        mlx_eval(out);
    mlx_vector_array_free(out);
    return NULL;
}

/* ---- the eager program over slots ---- */

typedef struct world {
    mlx_array slot[SLOTS];
} world;

static void put(world *w, unsigned i, mlx_array a)
{
    i %= SLOTS;
    mlx_array_free(w->slot[i]);
    w->slot[i] = a;
}

static void free_managed(void *p) { free(p); }

/* An array of decoded dtype and small shape whose values are input bytes. */
static void cmd_create(world *w, reader *r)
{
    mlx_dtype d = dtype_of(u8(r));
    int ndim = (int)(u8(r) % 5);
    int shape[4];
    size_t size = 1;
    for (int i = 0; i < ndim; i++) {
        static const int small[8] = {0, 1, 2, 3, 4, 5, 1, 2};
        shape[i] = small[u8(r) & 7];
        size *= (size_t)shape[i];
    }
    size_t isz = mlx_dtype_size(d);
    unsigned mode = u8(r);
    unsigned char *buf = malloc(size * isz + 1);
    if (!buf)
        return;
    for (size_t i = 0; i < size * isz; i++)
        buf[i] = (unsigned char)u8(r);
    if (d == MLX_BOOL)
        for (size_t i = 0; i < size; i++)
            buf[i] &= 1;
    mlx_array a;
    if (mode & 1) {
        /* managed: the library frees buf through the dtor once the array
         * is gone; if making the array fails, buf is still ours */
        a = mlx_array_new_data_managed_payload(buf, shape, ndim, d, buf, free_managed);
        if (a.ctx == NULL)
            free(buf);
    } else {
        a = mlx_array_new_data(buf, shape, ndim, d);
        free(buf);
    }
    put(w, mode >> 1, a);
}

static void cmd_scalar(world *w, reader *r)
{
    unsigned kind = u8(r), v = u8(r), dst = u8(r);
    float f = (float)(int8_t)v / 4.0f;
    mlx_array a;
    switch (kind % 6) {
    case 0: a = mlx_array_new_bool(v & 1); break;
    case 1: a = mlx_array_new_int((int)(int8_t)v); break;
    case 2: a = mlx_array_new_float(f); break;
    case 3: a = mlx_array_new_double(v == 255 ? 1e308 * 10 : f); break;
    case 4: a = mlx_array_new_complex(f, -f); break;
    default: {
        a = mlx_array_new();
        int before = thread_errors;
        int rc = mlx_array_set_int(&a, (int)v);
        check_contract("mlx_array_set_int", rc, before);
        break;
    }
    }
    put(w, dst, a);
}

static void cmd_step(world *w, reader *r)
{
    step s;
    decode_step(r, &s);
    unsigned dst = u8(r);
    mlx_array out = mlx_array_new();
    run_step(&s, w->slot, SLOTS, &out, true);
    if (keepable(out))
        put(w, dst, out);
    else
        mlx_array_free(out);
}

/* Evaluates and reads a slot (item of 0-d arrays, tostring). */
static void cmd_eval(world *w, reader *r)
{
    unsigned i = u8(r) % SLOTS, how = u8(r);
    mlx_array a = w->slot[i];
    if (!keepable(a))
        return;
    int before = thread_errors;
    int rc = mlx_array_eval(a);
    check_contract("mlx_array_eval", rc, before);
    if (rc != 0)
        return;
    if (how & 1) {
        mlx_string s = mlx_string_new();
        before = thread_errors;
        rc = mlx_array_tostring(&s, a);
        check_contract("mlx_array_tostring", rc, before);
        mlx_string_free(s);
    }
    if (how & 2) {
        double v;
        before = thread_errors;
        rc = mlx_array_item_float64(&v, a);
        check_contract("mlx_array_item_float64", rc, before);
    }
}

static void cmd_free(world *w, reader *r)
{
    unsigned i = u8(r) % SLOTS;
    mlx_array_free(w->slot[i]);
    w->slot[i] = mlx_array_new();
}

/* mlx_eval of several slots at once (shared subgraphs evaluate once). */
static void cmd_eval_many(world *w, reader *r)
{
    unsigned mask = u8(r);
    mlx_vector_array v = mlx_vector_array_new();
    for (int i = 0; i < SLOTS; i++)
        if ((mask >> i) & 1 && keepable(w->slot[i]))
            mlx_vector_array_append_value(v, w->slot[i]);
    int before = thread_errors;
    int rc = (mask & 0x80) ? mlx_async_eval(v) : mlx_eval(v);
    check_contract("mlx_eval", rc, before);
    mlx_vector_array_free(v);
}

/* Compiles a decoded program and calls it on one or two threads at once. */
static void cmd_compile(world *w, reader *r)
{
    program *p = calloc(1, sizeof *p);
    if (!p)
        return;
    p->nsteps = 1 + (int)(u8(r) % MAX_STEPS);
    for (int i = 0; i < p->nsteps; i++)
        decode_step(r, &p->steps[i]);
    unsigned cfg = u8(r), in0 = u8(r), in1 = u8(r), dst = u8(r);
    p->nout = 1 + (int)((cfg >> 1) & 1);
    bool shapeless = cfg & 1, two_threads = cfg & 4, two_inputs = cfg & 8;
    if (cfg & 16)
        mlx_set_compile_mode((mlx_compile_mode)((cfg >> 5) & 3));

    /* the closure owns p from here on (its destructor frees it) */
    mlx_closure body = mlx_closure_new_func_payload(program_body, p, free);
    mlx_closure fn = mlx_closure_new();
    int before = thread_errors;
    int rc = mlx_compile(&fn, body, shapeless);
    check_contract("mlx_compile", rc, before);
    mlx_closure_free(body);
    if (rc != 0)
        goto done;

    /* shared inputs must be evaluated before two threads read them */
    mlx_vector_array inputs = mlx_vector_array_new();
    bool ok = keepable(w->slot[in0 % SLOTS]) && (!two_inputs || keepable(w->slot[in1 % SLOTS]));
    if (ok) {
        mlx_vector_array_append_value(inputs, w->slot[in0 % SLOTS]);
        if (two_inputs)
            mlx_vector_array_append_value(inputs, w->slot[in1 % SLOTS]);
        before = thread_errors;
        rc = mlx_eval(inputs);
        check_contract("mlx_eval", rc, before);
        ok = rc == 0;
    }
    if (ok) {
        call main_call = {fn, inputs, 0}, side_call = {fn, inputs, 0};
        pthread_t th;
        bool started = two_threads && pthread_create(&th, NULL, call_compiled, &side_call) == 0;
        call_compiled(&main_call);
        if (started)
            pthread_join(th, NULL);
        /* a second call on this thread replays the stored trace; keep its
         * first output */
        mlx_vector_array out = mlx_vector_array_new();
        before = thread_errors;
        rc = mlx_closure_apply(&out, fn, inputs);
        if ((rc == 0) != (thread_errors == before)) {
            fprintf(stderr, "contract broken: replay returned %d after %d message(s)\n", rc,
                    thread_errors - before);
            abort();
        }
        if (rc == 0) {
            mlx_array a = vec_pick(out, 0);
            if (keepable(a))
                put(w, dst, a);
            else
                mlx_array_free(a);
        }
        mlx_vector_array_free(out);
    }
    mlx_vector_array_free(inputs);
done:
    mlx_closure_free(fn);
    mlx_set_compile_mode(MLX_COMPILE_MODE_ENABLED);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    mlx_set_error_handler(count_error, NULL, NULL);
    the_stream = mlx_default_cpu_stream_new();
    /* a bound on data memory turns runaway sizes into reported errors */
    size_t old;
    mlx_set_memory_limit(&old, (size_t)256 << 20);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    world w;
    for (int i = 0; i < SLOTS; i++)
        w.slot[i] = mlx_array_new();
    /* the first byte picks the buffer cache policy for this input */
    size_t old;
    mlx_set_cache_limit(&old, (u8(&r) & 1) ? 0 : (size_t)64 << 20);

    for (int cmd = 0; cmd < MAX_CMDS && r.n > 0; cmd++) {
        switch (u8(&r) % 12) {
        case 0: case 1: cmd_create(&w, &r); break;
        case 2: cmd_scalar(&w, &r); break;
        case 3: case 4: case 5: case 6: cmd_step(&w, &r); break;
        case 7: cmd_eval(&w, &r); break;
        case 8: cmd_eval_many(&w, &r); break;
        case 9: cmd_free(&w, &r); break;
        default: cmd_compile(&w, &r); break;
        }
    }
    /* evaluate what is left, then free everything */
    mlx_vector_array v = mlx_vector_array_new();
    for (int i = 0; i < SLOTS; i++)
        if (keepable(w.slot[i]))
            mlx_vector_array_append_value(v, w.slot[i]);
    mlx_eval(v);
    mlx_vector_array_free(v);
    for (int i = 0; i < SLOTS; i++)
        mlx_array_free(w.slot[i]);
    mlx_detail_compile_clear_cache();
    mlx_clear_cache();
    return 0;
}
