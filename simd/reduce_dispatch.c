/* The reduction tables (one per ISA, each filled once with pthread_once)
 * and the choice among them, which follows mc_kernels(): the elementwise
 * and reduction layers always run the same ISA, including when
 * MLX_CPU_ISA forces a lower one. Also the ISA-independent helpers: the
 * accumulator and scan dtype rules and the finishing conversion. Built
 * with generic flags. */
#include <pthread.h>
#include <string.h>

#include "simd/half_convert.h"
#include "simd/reduce_impl.h"

void mc_reduce_fill_scalar(mc_reduce_table *t);
#if defined(__x86_64__)
void mc_reduce_fill_avx2(mc_reduce_table *t);
void mc_reduce_fill_avx512(mc_reduce_table *t);
#elif defined(__aarch64__)
void mc_reduce_fill_neon(mc_reduce_table *t);
#endif

enum { R_SCALAR, R_AVX2, R_AVX512, R_NEON, R_COUNT };
static const char *const isa_names[R_COUNT] = {"scalar", "avx2", "avx512", "neon"};

static mc_reduce_table tables[R_COUNT];
static pthread_once_t once[R_COUNT] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
                                       PTHREAD_ONCE_INIT};

static void fill_scalar(void) { mc_reduce_fill_scalar(&tables[R_SCALAR]); }
#if defined(__x86_64__)
static void fill_avx2(void) { mc_reduce_fill_avx2(&tables[R_AVX2]); }
static void fill_avx512(void) { mc_reduce_fill_avx512(&tables[R_AVX512]); }
#elif defined(__aarch64__)
static void fill_neon(void) { mc_reduce_fill_neon(&tables[R_NEON]); }
#endif

/* The table of ISA i, which the caller has checked this CPU runs. */
static const mc_reduce_table *table_of(int i)
{
    switch (i) {
    case R_SCALAR:
        pthread_once(&once[i], fill_scalar);
        break;
#if defined(__x86_64__)
    case R_AVX2:
        pthread_once(&once[i], fill_avx2);
        break;
    case R_AVX512:
        pthread_once(&once[i], fill_avx512);
        break;
#elif defined(__aarch64__)
    case R_NEON:
        pthread_once(&once[i], fill_neon);
        break;
#endif
    default:
        return NULL;
    }
    return &tables[i];
}

const mc_reduce_table *mc_reduce_kernels_for(const char *isa)
{
    /* mc_kernels_for knows which ISAs this CPU and build have */
    if (isa == NULL || mc_kernels_for(isa) == NULL)
        return NULL;
    for (int i = 0; i < R_COUNT; i++)
        if (strcmp(isa, isa_names[i]) == 0)
            return table_of(i);
    return NULL;
}

static pthread_once_t chosen_once = PTHREAD_ONCE_INIT;
static const mc_reduce_table *chosen;

static void choose(void)
{
    chosen = mc_reduce_kernels_for(mc_kernels()->isa);
    if (chosen == NULL)
        chosen = table_of(R_SCALAR);
}

const mc_reduce_table *mc_reduce_kernels(void)
{
    pthread_once(&chosen_once, choose);
    return chosen;
}

int mc_reduce_acc_dtype(mc_reduce_op op, int d)
{
    if (op == MC_R_AND || op == MC_R_OR)
        return MLX_BOOL;
    switch (d) {
    case MLX_FLOAT16:
    case MLX_BFLOAT16:
        return MLX_FLOAT32;
    case MLX_BOOL:
        return op == MC_R_SUM || op == MC_R_PROD ? MLX_INT32 : MLX_BOOL;
    case MLX_UINT8:
    case MLX_UINT16:
        return op == MC_R_SUM || op == MC_R_PROD ? MLX_UINT32 : d;
    case MLX_INT8:
    case MLX_INT16:
        return op == MC_R_SUM || op == MC_R_PROD ? MLX_INT32 : d;
    default:
        return d;
    }
}

int mc_scan_out_dtype(mc_scan_op op, int d)
{
    return op == MC_S_SUM && d == MLX_BOOL ? MLX_INT32 : d;
}

/* ---- finishing: acc -> out with a scale ---- */

static double read_real(int dt, const void *p, size_t i)
{
    switch (dt) {
    case MLX_BOOL:
    case MLX_UINT8:
        return ((const uint8_t *)p)[i];
    case MLX_UINT16:
        return ((const uint16_t *)p)[i];
    case MLX_UINT32:
        return ((const uint32_t *)p)[i];
    case MLX_UINT64:
        return (double)((const uint64_t *)p)[i];
    case MLX_INT8:
        return ((const int8_t *)p)[i];
    case MLX_INT16:
        return ((const int16_t *)p)[i];
    case MLX_INT32:
        return ((const int32_t *)p)[i];
    case MLX_INT64:
        return (double)((const int64_t *)p)[i];
    case MLX_FLOAT16:
        return mc_f16_to_f32(((const uint16_t *)p)[i]);
    case MLX_BFLOAT16:
        return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    case MLX_FLOAT32:
        return ((const float *)p)[i];
    default:
        return ((const double *)p)[i];
    }
}

/* Floating outputs only: reductions finish into float16, bfloat16,
 * float32, float64 or complex64. */
static void write_real(int dt, void *p, size_t i, double v)
{
    switch (dt) {
    case MLX_FLOAT16:
        ((uint16_t *)p)[i] = mc_f32_to_f16((float)v);
        break;
    case MLX_BFLOAT16:
        ((uint16_t *)p)[i] = mc_f32_to_bf16((float)v);
        break;
    case MLX_FLOAT32:
        ((float *)p)[i] = (float)v;
        break;
    case MLX_COMPLEX64:
        ((float *)p)[2 * i] = (float)v;
        ((float *)p)[2 * i + 1] = 0.0f;
        break;
    default:
        ((double *)p)[i] = v;
        break;
    }
}

void mc_reduce_finish(int acc_dtype, int out_dtype, double scale, const void *acc, void *out, size_t n)
{
    if (acc_dtype == out_dtype && scale == 1.0) {
        if (acc != out)
            memmove(out, acc, n * mc_simd_dtype_size(acc_dtype));
        return;
    }
    if (acc_dtype == MLX_COMPLEX64) {
        const float *a = acc;
        float *o = out;
        for (size_t i = 0; i < n; i++) {
            o[2 * i] = (float)(a[2 * i] * scale);
            o[2 * i + 1] = (float)(a[2 * i + 1] * scale);
        }
        return;
    }
    if (acc_dtype == MLX_FLOAT32 && out_dtype == MLX_FLOAT32) {
        const float *a = acc;
        float *o = out;
        float s = (float)scale;
        for (size_t i = 0; i < n; i++)
            o[i] = a[i] * s;
        return;
    }
    /* A narrowing pass may run in place: element i is read before it is
     * written, and is never before an unread element of wider type. */
    if (mc_simd_dtype_size(out_dtype) > mc_simd_dtype_size(acc_dtype)) {
        for (size_t i = n; i-- > 0;)
            write_real(out_dtype, out, i, read_real(acc_dtype, acc, i) * scale);
    } else {
        for (size_t i = 0; i < n; i++)
            write_real(out_dtype, out, i, read_real(acc_dtype, acc, i) * scale);
    }
}
