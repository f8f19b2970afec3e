/* Owns the Arange primitive. */
#include <math.h>
#include <string.h>

#include "graph/prims_create.h"
#include "graph/vmap_rules.h"
#include "runtime/error.h"
#include "simd/half_convert.h"

static int arange_infer(mc_meta *out, mc_array *const *in, int n, const void *params, const char *fn)
{
    (void)in;
    (void)n;
    (void)fn;
    const mc_arange_params *p = params;
    out->dtype = p->dtype;
    out->ndim = 1;
    out->shape[0] = p->count;
    return 0;
}

/* MLX's Arange: the first value and the step are converted to the output
 * type (the step as (T)(start + step) - (T)start), then the value is
 * accumulated in that type, so results match MLX bit for bit (including
 * float32 rounding drift and integer truncation of fractional steps). */
/* double -> int64 without undefined behaviour for out-of-range values */
static int64_t arange_i64(double d)
{
    if (!(d > -9.2233720368547758e18))
        return INT64_MIN;
    if (d >= 9.2233720368547758e18)
        return INT64_MAX;
    return (int64_t)d;
}

#define MC_ARANGE_INT(ctype, utype)                                                   \
    do {                                                                              \
        ctype *o = out->data;                                                         \
        utype v = (utype)arange_i64(p->start);                                        \
        utype step = (utype)arange_i64(p->start + p->step) - v;                       \
        for (size_t i = 0; i < count; i++, v += step)                                 \
            o[i] = (ctype)v;                                                          \
    } while (0)

#define MC_ARANGE_FLOAT(ctype)                                                        \
    do {                                                                              \
        ctype *o = out->data;                                                         \
        ctype v = (ctype)p->start;                                                    \
        ctype step = (ctype)(p->start + p->step) - v;                                 \
        for (size_t i = 0; i < count; i++, v += step)                                 \
            o[i] = v;                                                                 \
    } while (0)

/* float16 / bfloat16: every step rounds to the half type, as MLX's half
 * arithmetic does */
static void arange_half(uint16_t *o, size_t count, double start, double step, bool bf16)
{
    float (*to_f)(uint16_t) = bf16 ? mc_bf16_to_f32 : mc_f16_to_f32;
    uint16_t (*from_f)(float) = bf16 ? mc_f32_to_bf16 : mc_f32_to_f16;
    uint16_t v = from_f((float)start);
    float s = to_f(from_f((float)(start + step))) - to_f(v);
    uint16_t hs = from_f(s);
    for (size_t i = 0; i < count; i++) {
        o[i] = v;
        v = from_f(to_f(v) + to_f(hs));
    }
}

static int arange_eval(mc_array *out, mc_array *const *in, int n, const void *params)
{
    (void)in;
    (void)n;
    const mc_arange_params *p = params;
    if (mc_array_alloc_data(out, "arange"))
        return 1;
    size_t count = out->size;
    switch (out->dtype) {
    case MLX_UINT8: MC_ARANGE_INT(uint8_t, uint8_t); break;
    case MLX_UINT16: MC_ARANGE_INT(uint16_t, uint16_t); break;
    case MLX_UINT32: MC_ARANGE_INT(uint32_t, uint32_t); break;
    case MLX_UINT64: MC_ARANGE_INT(uint64_t, uint64_t); break;
    case MLX_INT8: MC_ARANGE_INT(int8_t, uint8_t); break;
    case MLX_INT16: MC_ARANGE_INT(int16_t, uint16_t); break;
    case MLX_INT32: MC_ARANGE_INT(int32_t, uint32_t); break;
    case MLX_INT64: MC_ARANGE_INT(int64_t, uint64_t); break;
    case MLX_FLOAT32: MC_ARANGE_FLOAT(float); break;
    case MLX_FLOAT64: MC_ARANGE_FLOAT(double); break;
    case MLX_FLOAT16: arange_half(out->data, count, p->start, p->step, false); break;
    case MLX_BFLOAT16: arange_half(out->data, count, p->start, p->step, true); break;
    default:
        return mc_error("[arange] %s not supported for arange.", mc_dtype_name(out->dtype));
    }
    return 0;
}

const mc_prim_info mc_prim_arange = {
    .name = "Arange",
    .arity = 0,
    .infer = arange_infer,
    .eval = arange_eval,
    .vmap = mc_vmap_unsupported,
};
