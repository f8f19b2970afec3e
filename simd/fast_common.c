/* The parts of simd/fast.h that are not worth a build per ISA: choosing
 * fast_k.c's build, rope's angles, and attention's tile loads, masks and
 * final stores (linear in the tile, dwarfed by the products around them). */
#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <string.h>

#include "simd/dtype.h"
#include "simd/fast.h"
#include "simd/half_convert.h"
#include "simd/simd.h"

extern const mc_fast_kernels mc_fast_kernels_generic;
#if defined(__x86_64__)
extern const mc_fast_kernels mc_fast_kernels_avx2;
extern const mc_fast_kernels mc_fast_kernels_avx512;
#endif

static pthread_once_t pick_once = PTHREAD_ONCE_INIT;
static const mc_fast_kernels *picked = &mc_fast_kernels_generic;

static void pick(void)
{
#if defined(__x86_64__)
    const char *isa = mc_kernels()->isa;
    if (strcmp(isa, "avx512") == 0)
        picked = &mc_fast_kernels_avx512;
    else if (strcmp(isa, "avx2") == 0)
        picked = &mc_fast_kernels_avx2;
#endif
}

const mc_fast_kernels *mc_fast_kernels_get(void)
{
    pthread_once(&pick_once, pick);
    return picked;
}

static inline double ldd(int dt, const void *p, int64_t i)
{
    switch (dt) {
    case MC_SIMD_FLOAT16: return mc_f16_to_f32(((const uint16_t *)p)[i]);
    case MC_SIMD_BFLOAT16: return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    case MC_SIMD_FLOAT64: return ((const double *)p)[i];
    case MC_SIMD_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return ((const float *)p)[i];
    }
}

static inline float round_to(int dt, float v)
{
    if (dt == MC_SIMD_FLOAT16)
        return mc_f16_to_f32(mc_f32_to_f16(v));
    if (dt == MC_SIMD_BFLOAT16)
        return mc_bf16_to_f32(mc_f32_to_bf16(v));
    return v;
}

void mc_fast_rope_angles(int dt, float pos, const float *inv_freq, size_t half, float *cs, float *sn)
{
    for (size_t i = 0; i < half; i++) {
        float t = pos * inv_freq[i];
        cs[i] = round_to(dt, cosf(t));
        sn[i] = round_to(dt, sinf(t));
    }
}

void mc_fast_load_tile_f32(int dt, const void *src, int64_t rs, int64_t cs, size_t rows, size_t cols, float *dst,
                           size_t ldd_, float mul)
{
    for (size_t i = 0; i < rows; i++) {
        float *d = dst + i * ldd_;
        if (dt == MC_SIMD_FLOAT32 && cs == 1) {
            const float *s = (const float *)src + (int64_t)i * rs;
            for (size_t j = 0; j < cols; j++)
                d[j] = s[j] * mul;
        } else {
            for (size_t j = 0; j < cols; j++)
                d[j] = (float)ldd(dt, src, (int64_t)i * rs + (int64_t)j * cs) * mul;
        }
    }
}

void mc_fast_load_tile_f64(int dt, const void *src, int64_t rs, int64_t cs, size_t rows, size_t cols, double *dst,
                           size_t ldd_, double mul)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            dst[i * ldd_ + j] = ldd(dt, src, (int64_t)i * rs + (int64_t)j * cs) * mul;
}

/* Whether a panel can take mc_fast_pack_f32's float32 paths: all w rows
 * present (a partial panel goes element by element). */
static inline bool whole_f32(int dt, size_t p, size_t w, size_t rows)
{
    return dt == MC_SIMD_FLOAT32 && (p + 1) * w <= rows;
}

void mc_fast_pack_f32(int dt, const void *src, int64_t rs, int64_t cs, size_t rows, size_t cols, size_t w,
                      float *dst, float mul)
{
    size_t panels = (rows + w - 1) / w;
    for (size_t p = 0; p < panels; p++) {
        float *d = dst + p * cols * w;
        const float *s = (const float *)src + (int64_t)(p * w) * rs;
        if (whole_f32(dt, p, w, rows) && rs == 1) {
            /* columns contiguous (V read as its transpose): the panel's w
             * values of a column are neighbours in the source */
            for (size_t c = 0; c < cols; c++)
                for (size_t r = 0; r < w; r++)
                    d[c * w + r] = s[(int64_t)c * cs + (int64_t)r] * mul;
        } else if (whole_f32(dt, p, w, rows) && cs == 1) {
            /* rows contiguous: w source rows read side by side, the panel
             * written in order */
            for (size_t c = 0; c < cols; c++)
                for (size_t r = 0; r < w; r++)
                    d[c * w + r] = s[(int64_t)r * rs + (int64_t)c] * mul;
        } else {
            for (size_t c = 0; c < cols; c++)
                for (size_t r = 0; r < w; r++) {
                    size_t i = p * w + r;
                    d[c * w + r] = i < rows ? (float)ldd(dt, src, (int64_t)i * rs + (int64_t)c * cs) * mul : 0.0f;
                }
        }
    }
}

#define MASK_TILE(NAME, T)                                                                                   \
    void NAME(int mdt, const void *mask, int64_t rs, int64_t cs, T *s, size_t rows, size_t cols, size_t si,   \
              size_t sj, int64_t i0, int64_t j0, int64_t diag, T lowest)                                     \
    {                                                                                                        \
        for (size_t i = 0; i < rows; i++) {                                                                  \
            T *row = s + i * si;                                                                             \
            if (!mask) {                                                                                     \
                int64_t last = i0 + (int64_t)i + diag - j0; /* last key kept, tile-relative */               \
                for (size_t j = last < 0 ? 0 : (size_t)last + 1; j < cols; j++)                              \
                    row[j * sj] = lowest;                                                                    \
            } else if (mdt == MC_SIMD_BOOL) {                                                                \
                const uint8_t *mr = (const uint8_t *)mask + (int64_t)i * rs;                                 \
                for (size_t j = 0; j < cols; j++)                                                            \
                    row[j * sj] = mr[(int64_t)j * cs] ? row[j * sj] : lowest;                                \
            } else if (mdt == MC_SIMD_FLOAT32 && cs == 1) {                                                  \
                const float *mr = (const float *)mask + (int64_t)i * rs;                                     \
                for (size_t j = 0; j < cols; j++)                                                            \
                    row[j * sj] += mr[j];                                                                    \
            } else {                                                                                         \
                for (size_t j = 0; j < cols; j++)                                                            \
                    row[j * sj] += (T)ldd(mdt, mask, (int64_t)i * rs + (int64_t)j * cs);                     \
            }                                                                                                \
        }                                                                                                    \
    }
MASK_TILE(mc_fast_mask_tile_f32, float)
MASK_TILE(mc_fast_mask_tile_f64, double)

static inline void st(int dt, void *p, int64_t i, double v)
{
    switch (dt) {
    case MC_SIMD_FLOAT16: ((uint16_t *)p)[i] = mc_f32_to_f16((float)v); break;
    case MC_SIMD_BFLOAT16: ((uint16_t *)p)[i] = mc_f32_to_bf16((float)v); break;
    case MC_SIMD_FLOAT64: ((double *)p)[i] = v; break;
    default: ((float *)p)[i] = (float)v; break;
    }
}

void mc_fast_store_rows_f32(int dt, const float *acc, size_t rows, size_t cols, size_t ars, size_t acs,
                            const float *l, void *y, int64_t ys)
{
    for (size_t i = 0; i < rows; i++) {
        float inv = 1.0f / l[i];
        const float *a = acc + i * ars;
        if (dt == MC_SIMD_FLOAT32) {
            float *yr = (float *)y + (int64_t)i * ys;
            for (size_t j = 0; j < cols; j++)
                yr[j] = a[j * acs] * inv;
        } else {
            for (size_t j = 0; j < cols; j++)
                st(dt, y, (int64_t)i * ys + (int64_t)j, a[j * acs] * inv);
        }
    }
}

void mc_fast_store_rows_f64(int dt, const double *acc, size_t rows, size_t cols, size_t ars, size_t acs,
                            const double *l, void *y, int64_t ys)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++)
            st(dt, y, (int64_t)i * ys + (int64_t)j, acc[i * ars + j * acs] / l[i]);
}
