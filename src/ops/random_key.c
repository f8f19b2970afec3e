/* Owns keys: mlx_random_key, the global key sequence (mlx_random_seed and
 * the calls without a key), split, bits and permutation. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "ops/op_util.h"
#include "ops/random_internal.h"
#include "runtime/error.h"
#include "simd/random.h"

/* The global sequence, as MLX's KeySequence::default_(): seeded from the
 * clock at first use. The mutex makes each next() (read, split, write
 * back) atomic, which MLX's lockless sequence does not. */
static pthread_mutex_t seq_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t seq_key[2];
static int seq_seeded;

static uint64_t clock_seed(void)
{
    /* MLX uses system_clock's count since the epoch */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int mlx_random_seed(uint64_t seed)
{
    pthread_mutex_lock(&seq_lock);
    mc_random_key(seed, seq_key);
    seq_seeded = 1;
    pthread_mutex_unlock(&seq_lock);
    return 0;
}

static void next_key(uint32_t sub[2])
{
    uint32_t both[4];
    pthread_mutex_lock(&seq_lock);
    if (!seq_seeded) {
        mc_random_key(clock_seed(), seq_key);
        seq_seeded = 1;
    }
    mc_random_split(seq_key, 2, both);
    seq_key[0] = both[0], seq_key[1] = both[1];
    pthread_mutex_unlock(&seq_lock);
    sub[0] = both[2], sub[1] = both[3];
}

static mc_array *key_array(const uint32_t k[2], const char *fn)
{
    int two = 2;
    return mc_array_from_data(fn, k, 1, &two, MLX_UINT32);
}

int mlx_random_key(mlx_array *res, uint64_t seed)
{
    static const char fn[] = "key";
    uint32_t k[2];
    if (mc_op_check_res(res, fn))
        return 1;
    mc_random_key(seed, k);
    return mc_op_store(res, key_array(k, fn), fn);
}

mc_array *mc_random_key_arg(mlx_array key, const char *fn)
{
    if (!key.ctx) {
        uint32_t k[2];
        next_key(k);
        return key_array(k, fn);
    }
    mc_array *a = mc_arr(key);
    char buf[64];
    if (a->dtype != MLX_UINT32) {
        mc_error("[%s] Expected key type uint32 but received %s.", fn, mc_dtype_name(a->dtype));
        return NULL;
    }
    if (a->ndim != 1 || a->shape[0] != 2) {
        mc_error("[%s] Expected key shape (2) but received %s.", fn,
                 mc_shape_str(buf, sizeof buf, a->ndim, a->shape));
        return NULL;
    }
    return mc_array_retain(a);
}

mc_array *mc_random_bits_node(mc_array *key, int ndim, const int *shape, int width, const char *fn)
{
    mc_random_bits_params p;
    memset(&p, 0, sizeof p);
    p.width = width;
    p.ndim = ndim;
    memcpy(p.shape, shape, sizeof(int) * (size_t)ndim);
    mc_array *in[1] = {key};
    return mc_node_new(fn, MC_PRIM_RANDOM_BITS, in, 1, &p, sizeof p);
}

int mlx_random_bits(mlx_array *res, const int *shape, size_t shape_num, int width, const mlx_array key,
                    const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "bits";
    if (mc_op_check_res(res, fn) || mc_op_check_shape(shape, shape_num, fn))
        return 1;
    if (width != 1 && width != 2 && width != 4)
        return mc_error("[%s] Bit width must be in {1, 2, 4} but got %d.", fn, width);
    mc_array *k = mc_random_key_arg(key, fn);
    if (!k)
        return 1;
    mc_array *out = mc_random_bits_node(k, (int)shape_num, shape, width, fn);
    mc_array_release(k);
    return mc_op_store(res, out, fn);
}

int mlx_random_split_num(mlx_array *res, const mlx_array key, int num, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "split";
    if (mc_op_check_res(res, fn) || !mc_op_arg(key, fn, "key"))
        return 1;
    if (num < 0)
        return mc_error("[%s] The number of keys, %d, must be non-negative.", fn, num);
    mc_array *k = mc_random_key_arg(key, fn);
    if (!k)
        return 1;
    int shape[2] = {num, 2};
    mc_array *out = mc_random_bits_node(k, 2, shape, 4, fn);
    mc_array_release(k);
    return mc_op_store(res, out, fn);
}

int mlx_random_split(mlx_array *res_0, mlx_array *res_1, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "split";
    if (mc_op_check_res(res_0, fn) || mc_op_check_res(res_1, fn))
        return 1;
    mlx_array both = mlx_array_new(), a = mlx_array_new(), b = mlx_array_new();
    const int r0[2] = {0, 0}, r1[2] = {1, 0}, e0[2] = {1, 2}, e1[2] = {2, 2}, st[2] = {1, 1}, two = 2;
    int rc = mlx_random_split_num(&both, key, 2, s) || mlx_slice(&a, both, r0, 2, e0, 2, st, 2, s) ||
             mlx_slice(&b, both, r1, 2, e1, 2, st, 2, s) || mlx_reshape(&a, a, &two, 1, s) ||
             mlx_reshape(&b, b, &two, 1, s);
    if (!rc) {
        mlx_array t = *res_0;
        *res_0 = a, a = t;
        t = *res_1;
        *res_1 = b, b = t;
    }
    mlx_array_free(both), mlx_array_free(a), mlx_array_free(b);
    return rc;
}

int mlx_random_permutation_arange(mlx_array *res, int x, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "permutation";
    if (mc_op_check_res(res, fn))
        return 1;
    if (x < 0)
        return mc_error("[%s] Negative dimensions not allowed in shape (%d).", fn, x);
    mc_array *k = mc_random_key_arg(key, fn);
    if (!k)
        return 1;
    mc_random_perm_params p = {.n = x};
    mc_array *in[1] = {k};
    mc_array *out = mc_node_new(fn, MC_PRIM_RANDOM_PERMUTATION, in, 1, &p, sizeof p);
    mc_array_release(k);
    return mc_op_store(res, out, fn);
}

int mlx_random_permutation(mlx_array *res, const mlx_array x, int axis, const mlx_array key, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "permutation";
    mc_array *xa = mc_op_arg(x, fn, "x");
    int ax;
    if (mc_op_check_res(res, fn) || !xa || mc_op_axis(axis, xa->ndim, &ax, fn))
        return 1;
    mlx_array perm = mlx_array_new();
    int rc = mlx_random_permutation_arange(&perm, xa->shape[ax], key, s) || mlx_take_axis(res, x, perm, ax, s);
    mlx_array_free(perm);
    return rc;
}
