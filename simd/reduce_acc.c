/* The dtype rules of reductions and scans (which dtype a reduction
 * accumulates in, which a scan produces) and the conversion that finishes
 * a reduction into its output dtype. The same on every ISA; built with
 * generic flags. (The reduction tables themselves are filled and chosen
 * with the elementwise ones, in dispatch.c.) */
#include <string.h>

#include "simd/half_convert.h"
#include "simd/reduce_impl.h"

int mc_reduce_acc_dtype(mc_reduce_op op, int d)
{
    if (op == MC_R_AND || op == MC_R_OR)
        return MC_SIMD_BOOL;
    switch (d) {
    case MC_SIMD_FLOAT16:
    case MC_SIMD_BFLOAT16:
        return MC_SIMD_FLOAT32;
    case MC_SIMD_BOOL:
        return op == MC_R_SUM || op == MC_R_PROD ? MC_SIMD_INT32 : MC_SIMD_BOOL;
    case MC_SIMD_UINT8:
    case MC_SIMD_UINT16:
        return op == MC_R_SUM || op == MC_R_PROD ? MC_SIMD_UINT32 : d;
    case MC_SIMD_INT8:
    case MC_SIMD_INT16:
        return op == MC_R_SUM || op == MC_R_PROD ? MC_SIMD_INT32 : d;
    default:
        return d;
    }
}

int mc_scan_out_dtype(mc_scan_op op, int d)
{
    return op == MC_S_SUM && d == MC_SIMD_BOOL ? MC_SIMD_INT32 : d;
}

/* ---- finishing: acc -> out with a scale ---- */

static double read_real(int dt, const void *p, size_t i)
{
    switch (dt) {
    case MC_SIMD_BOOL:
    case MC_SIMD_UINT8:
        return ((const uint8_t *)p)[i];
    case MC_SIMD_UINT16:
        return ((const uint16_t *)p)[i];
    case MC_SIMD_UINT32:
        return ((const uint32_t *)p)[i];
    case MC_SIMD_UINT64:
        return (double)((const uint64_t *)p)[i];
    case MC_SIMD_INT8:
        return ((const int8_t *)p)[i];
    case MC_SIMD_INT16:
        return ((const int16_t *)p)[i];
    case MC_SIMD_INT32:
        return ((const int32_t *)p)[i];
    case MC_SIMD_INT64:
        return (double)((const int64_t *)p)[i];
    case MC_SIMD_FLOAT16:
        return mc_f16_to_f32(((const uint16_t *)p)[i]);
    case MC_SIMD_BFLOAT16:
        return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    case MC_SIMD_FLOAT32:
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
    case MC_SIMD_FLOAT16:
        ((uint16_t *)p)[i] = mc_f32_to_f16((float)v);
        break;
    case MC_SIMD_BFLOAT16:
        ((uint16_t *)p)[i] = mc_f32_to_bf16((float)v);
        break;
    case MC_SIMD_FLOAT32:
        ((float *)p)[i] = (float)v;
        break;
    case MC_SIMD_COMPLEX64:
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
    if (acc_dtype == MC_SIMD_COMPLEX64) {
        const float *a = acc;
        float *o = out;
        for (size_t i = 0; i < n; i++) {
            o[2 * i] = (float)(a[2 * i] * scale);
            o[2 * i + 1] = (float)(a[2 * i + 1] * scale);
        }
        return;
    }
    if (acc_dtype == MC_SIMD_FLOAT32 && out_dtype == MC_SIMD_FLOAT32) {
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
