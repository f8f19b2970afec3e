/* Shared by the kernel sources: the macros that instantiate a kernel for
 * one dtype from a lane-wise function over the vectors of vec.h, the
 * float16/bfloat16 staging through float32, and the names of the table
 * fillers. Per-ISA sources are compiled once per ISA (simd/meson.build), so
 * every function they define is static except the fillers, whose names
 * carry the ISA (MC_ISA_FN(mc_fill_arith) is mc_fill_arith_avx2, ...). */
#ifndef MC_SIMD_KERN_H
#define MC_SIMD_KERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "simd/simd.h"

/* Fillers of the ISA-independent kernels (complex64, integer division and
 * power), built once with generic flags and put in every table. */
void mc_fill_common(mc_kernel_table *t);

/* The dtype's element size in bytes (bool is one byte). */
size_t mc_simd_dtype_size(int dtype);

#ifdef MC_VBYTES
#include "simd/vec.h"

#define MC_ISA_CAT_(a, b) a##_##b
#define MC_ISA_CAT(a, b) MC_ISA_CAT_(a, b)
#define MC_ISA_FN(name) MC_ISA_CAT(name, MC_ISA)

void MC_ISA_FN(mc_fill_arith)(mc_kernel_table *t);
void MC_ISA_FN(mc_fill_math)(mc_kernel_table *t);
void MC_ISA_FN(mc_fill_cmp)(mc_kernel_table *t);
void MC_ISA_FN(mc_fill_convert)(mc_kernel_table *t);

/* name(x, y, n): y[i] = F(x[i]) with x of T in vectors V, y of TO in
 * vectors VO (same lane count). Partial blocks (the tail, and the head
 * before an aligned address when streaming) run through a zero-padded
 * vector, so every element, wherever it sits, gets the same lane-wise code. */
#define MC_UNARY_PART(T, V, TO, VO, F, at, cnt)                                \
    do {                                                                       \
        V v_ = {0};                                                            \
        memcpy(&v_, x + (at), (cnt) * sizeof(T));                              \
        VO r_ = F(v_);                                                         \
        memcpy(y + (at), &r_, (cnt) * sizeof(TO));                             \
    } while (0)
#define MC_UNARY(name, T, V, TO, VO, F)                                        \
    static void name(const void *xv, void *yv, size_t n)                       \
    {                                                                          \
        const T *x = xv;                                                       \
        TO *y = yv;                                                            \
        const size_t w = sizeof(V) / sizeof(T);                                \
        size_t i = 0;                                                          \
        if (mc_streamable(y, n * sizeof(TO), sizeof(VO), sizeof(TO))) {        \
            i = mc_stream_head(y, sizeof(TO));                                 \
            if (i > 0)                                                         \
                MC_UNARY_PART(T, V, TO, VO, F, 0, i);                          \
            for (; i + w <= n; i += w) {                                       \
                V v;                                                           \
                memcpy(&v, x + i, sizeof v);                                   \
                VO r = F(v);                                                   \
                mc_stream(y + i, &r);                                          \
            }                                                                  \
            mc_stream_fence();                                                 \
        }                                                                      \
        for (; i + w <= n; i += w) {                                           \
            V v;                                                               \
            memcpy(&v, x + i, sizeof v);                                       \
            VO r = F(v);                                                       \
            memcpy(y + i, &r, sizeof r);                                       \
        }                                                                      \
        if (i < n)                                                             \
            MC_UNARY_PART(T, V, TO, VO, F, i, n - i);                          \
    }

/* One class of a binary kernel: AV / BV say whether operand a / b is a
 * vector (1) or a scalar broadcast to every lane (0). */
#define MC_BINARY_PART(T, V, TO, VO, F, AV, BV, at, cnt)                       \
    do {                                                                       \
        V va_ = sa, vb_ = sb;                                                  \
        if (AV) {                                                              \
            va_ = (V){0};                                                      \
            memcpy(&va_, a + (at), (cnt) * sizeof(T));                         \
        }                                                                      \
        if (BV) {                                                              \
            vb_ = (V){0};                                                      \
            memcpy(&vb_, b + (at), (cnt) * sizeof(T));                         \
        }                                                                      \
        VO r_ = F(va_, vb_);                                                   \
        memcpy(y + (at), &r_, (cnt) * sizeof(TO));                             \
    } while (0)
#define MC_BINARY_BLOCK(T, V, VO, F, AV, BV, STORE)                            \
    do {                                                                       \
        V va = sa, vb = sb;                                                    \
        if (AV)                                                                \
            memcpy(&va, a + i, sizeof va);                                     \
        if (BV)                                                                \
            memcpy(&vb, b + i, sizeof vb);                                     \
        VO r = F(va, vb);                                                      \
        STORE;                                                                 \
    } while (0)
#define MC_BINARY_CLASS(fname, T, V, TO, VO, F, AV, BV)                        \
    static void fname(const void *av, const void *bv, void *yv, size_t n)      \
    {                                                                          \
        const T *a = av, *b = bv;                                              \
        TO *y = yv;                                                            \
        const size_t w = sizeof(V) / sizeof(T);                                \
        V sa = {0}, sb = {0};                                                  \
        if (!(AV) && n > 0)                                                    \
            sa = MC_SPLAT(V, a[0]);                                            \
        if (!(BV) && n > 0)                                                    \
            sb = MC_SPLAT(V, b[0]);                                            \
        size_t i = 0;                                                          \
        if (mc_streamable(y, n * sizeof(TO), sizeof(VO), sizeof(TO))) {        \
            i = mc_stream_head(y, sizeof(TO));                                 \
            if (i > 0)                                                         \
                MC_BINARY_PART(T, V, TO, VO, F, AV, BV, 0, i);                 \
            for (; i + w <= n; i += w)                                         \
                MC_BINARY_BLOCK(T, V, VO, F, AV, BV, mc_stream(y + i, &r));    \
            mc_stream_fence();                                                 \
        }                                                                      \
        for (; i + w <= n; i += w)                                             \
            MC_BINARY_BLOCK(T, V, VO, F, AV, BV, memcpy(y + i, &r, sizeof r)); \
        if (i < n)                                                             \
            MC_BINARY_PART(T, V, TO, VO, F, AV, BV, i, n - i);                 \
    }

/* name_vv, name_sv, name_vs: the three classes of y[i] = F(a[i], b[i]). */
#define MC_BINARY(name, T, V, TO, VO, F)                                       \
    MC_BINARY_CLASS(name##_vv, T, V, TO, VO, F, 1, 1)                          \
    MC_BINARY_CLASS(name##_sv, T, V, TO, VO, F, 0, 1)                          \
    MC_BINARY_CLASS(name##_vs, T, V, TO, VO, F, 1, 0)

#define MC_SET_BINARY(t, op, dt, name)                                         \
    do {                                                                       \
        (t)->binary[op][dt][MC_VV] = name##_vv;                                \
        (t)->binary[op][dt][MC_SV] = name##_sv;                                \
        (t)->binary[op][dt][MC_VS] = name##_vs;                                \
    } while (0)

/* float16 / bfloat16: stage blocks through float32 and run the float32
 * kernel of the same ISA. */
enum { MC_HALF_BLOCK = 256 };

static inline void mc_half_in(int bf, const uint16_t *x, float *y, size_t n)
{
    if (bf)
        mc_blk_bf16_to_f32(x, y, n);
    else
        mc_blk_f16_to_f32(x, y, n);
}

static inline void mc_half_out(int bf, const float *x, uint16_t *y, size_t n)
{
    if (bf)
        mc_blk_f32_to_bf16(x, y, n);
    else
        mc_blk_f32_to_f16(x, y, n);
}

/* out_bytes: 2 for a half result (rounded back), 1 for bool, 4 for float32. */
static inline void mc_half_unary(mc_unary_kernel k, int bf, int out_bytes, const void *x,
                                 void *y, size_t n)
{
    float fx[MC_HALF_BLOCK], fy[MC_HALF_BLOCK];
    const uint16_t *hx = x;
    for (size_t i = 0; i < n; i += MC_HALF_BLOCK) {
        size_t m = n - i < MC_HALF_BLOCK ? n - i : MC_HALF_BLOCK;
        mc_half_in(bf, hx + i, fx, m);
        if (out_bytes == 2) {
            k(fx, fy, m);
            mc_half_out(bf, fy, (uint16_t *)y + i, m);
        } else {
            k(fx, (char *)y + i * (size_t)out_bytes, m);
        }
    }
}

static inline void mc_half_binary(mc_binary_kernel k, int bf, int cls, int out_bytes,
                                  const void *a, const void *b, void *y, size_t n)
{
    float fa[MC_HALF_BLOCK], fb[MC_HALF_BLOCK], fy[MC_HALF_BLOCK];
    const uint16_t *ha = a, *hb = b;
    if (cls == MC_SV && n > 0)
        mc_half_in(bf, ha, fa, 1);
    if (cls == MC_VS && n > 0)
        mc_half_in(bf, hb, fb, 1);
    for (size_t i = 0; i < n; i += MC_HALF_BLOCK) {
        size_t m = n - i < MC_HALF_BLOCK ? n - i : MC_HALF_BLOCK;
        if (cls != MC_SV)
            mc_half_in(bf, ha + i, fa, m);
        if (cls != MC_VS)
            mc_half_in(bf, hb + i, fb, m);
        if (out_bytes == 2) {
            k(fa, fb, fy, m);
            mc_half_out(bf, fy, (uint16_t *)y + i, m);
        } else {
            k(fa, fb, (char *)y + i * (size_t)out_bytes, m);
        }
    }
}

/* Half kernels of one op for float16 (name_f16) and bfloat16 (name_bf16)
 * from the float32 kernel f32k (a unary kernel, or for binary ops the
 * prefix of its _vv/_sv/_vs trio). */
#define MC_HALF_UNARY(name, f32k, out_bytes)                                   \
    static void name##_f16(const void *x, void *y, size_t n)                   \
    {                                                                          \
        mc_half_unary(f32k, 0, out_bytes, x, y, n);                            \
    }                                                                          \
    static void name##_bf16(const void *x, void *y, size_t n)                  \
    {                                                                          \
        mc_half_unary(f32k, 1, out_bytes, x, y, n);                            \
    }

#define MC_HALF_BINARY_ONE(fname, f32k, bf, cls, out_bytes)                    \
    static void fname(const void *a, const void *b, void *y, size_t n)         \
    {                                                                          \
        mc_half_binary(f32k, bf, cls, out_bytes, a, b, y, n);                  \
    }
#define MC_HALF_BINARY(name, f32k, out_bytes)                                  \
    MC_HALF_BINARY_ONE(name##_f16_vv, f32k##_vv, 0, MC_VV, out_bytes)          \
    MC_HALF_BINARY_ONE(name##_f16_sv, f32k##_sv, 0, MC_SV, out_bytes)          \
    MC_HALF_BINARY_ONE(name##_f16_vs, f32k##_vs, 0, MC_VS, out_bytes)          \
    MC_HALF_BINARY_ONE(name##_bf16_vv, f32k##_vv, 1, MC_VV, out_bytes)         \
    MC_HALF_BINARY_ONE(name##_bf16_sv, f32k##_sv, 1, MC_SV, out_bytes)         \
    MC_HALF_BINARY_ONE(name##_bf16_vs, f32k##_vs, 1, MC_VS, out_bytes)

#endif /* MC_VBYTES */

/* Plain element loops, for kernels with no lane-wise form (integer
 * division, complex arithmetic): y[i] = f(x[i]) and y[i] = f(a[i], b[i]). */
#define MC_UNARY_LOOP(name, T, TO, f)                                          \
    static void name(const void *xv, void *yv, size_t n)                       \
    {                                                                          \
        const T *x = xv;                                                       \
        TO *y = yv;                                                            \
        for (size_t i = 0; i < n; i++)                                         \
            y[i] = f(x[i]);                                                    \
    }
#define MC_BINARY_LOOP(name, T, TO, f)                                         \
    static void name##_vv(const void *av, const void *bv, void *yv, size_t n)  \
    {                                                                          \
        const T *a = av, *b = bv;                                              \
        TO *y = yv;                                                            \
        for (size_t i = 0; i < n; i++)                                         \
            y[i] = f(a[i], b[i]);                                              \
    }                                                                          \
    static void name##_sv(const void *av, const void *bv, void *yv, size_t n)  \
    {                                                                          \
        const T *a = av, *b = bv;                                              \
        TO *y = yv;                                                            \
        for (size_t i = 0; i < n; i++)                                         \
            y[i] = f(a[0], b[i]);                                              \
    }                                                                          \
    static void name##_vs(const void *av, const void *bv, void *yv, size_t n)  \
    {                                                                          \
        const T *a = av, *b = bv;                                              \
        TO *y = yv;                                                            \
        for (size_t i = 0; i < n; i++)                                         \
            y[i] = f(a[i], b[0]);                                              \
    }

#endif
