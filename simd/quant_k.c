/* The products' kernels of simd/quant.h: unpacking a packed row to float32
 * and the decode product (a few rows of x against every row of W). Built
 * three times on x86_64 (generic, AVX2+FMA, AVX-512: MC_QK_VARIANT names
 * the build, quant_pick.c chooses), once elsewhere; the source is written
 * once on 8-lane float vectors, which each build maps to its registers.
 *
 * The decode product streams W once: for bits 2, 4 and 8 eight codes at a
 * time are shifted out of their words into an integer vector, converted
 * and multiplied into per-group accumulators that are scaled once per
 * group; the bias term is bias * sum(x over the group), with the group
 * sums of x computed once per call. So per code: a shift, a mask, a
 * convert and one multiply-add per row of x. The AVX-512 build does more
 * per instruction, so that a core unpacks about twice as many bytes a
 * second (14 against 7 GB/s on a Zen 4 core): for bits 4 and 2 sixteen bytes
 * widen into sixteen lanes and each lane's code, shifted down, indexes the
 * group's sixteen dequantized values (scale * code + bias) with one
 * permute, against x reordered once per call to the order the codes come
 * out in; for bits 8 sixteen bytes widen and convert at a time. Two rows
 * of W per pass share the loads of x. The bits 3, 5, 6 take eight codes
 * from their whole bytes at a time into a row of floats, then a dot.
 *
 * The fp4 modes (mxfp4, nvfp4) decode eight e2m1 codes of a word with one
 * table lookup across the lanes (AVX2's permute on the three magnitude
 * bits, the sign bit moved into place) and have no bias term. The AVX-512
 * build decodes two words at once: both broadcast into sixteen lanes,
 * alternating, each lane shifted to its nibble and looked up in the whole
 * sixteen-entry table by one permute; x is interleaved once per call to
 * match, so per sixteen codes: a load, a shift, a permute and a
 * multiply-add. mxfp8's e4m3 bytes widen through F16C (eight at a time,
 * exact). */
#include <stdbool.h>
#include <string.h>

#include "simd/dtype.h"
#include "simd/fp8.h"
#include "simd/half_convert.h"
#include "simd/quant.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#ifndef MC_QK_VARIANT
#define MC_QK_VARIANT generic
#endif
#define QK_CAT2(a, b) a##_##b
#define QK_CAT(a, b) QK_CAT2(a, b)
#define QK_NAME(f) QK_CAT(f, MC_QK_VARIANT)

/* the vector helpers are static and inlined: no call passes a vector, so
 * GCC's note that AVX vectors change the ABI without AVX does not apply */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));
typedef uint32_t v8u __attribute__((vector_size(32)));

/* Rows of x one pass over a W row serves. */
enum { QK_MB = 4 };

static inline float scale_at(const void *p, int dtype, size_t i)
{
    switch (dtype) {
#if defined(__AVX2__) && defined(__F16C__)
    /* one instruction, where the portable conversion branches: the decode
     * kernels read two of these per group */
    case MC_SIMD_FLOAT16: return _cvtsh_ss(((const uint16_t *)p)[i]);
#else
    case MC_SIMD_FLOAT16: return mc_f16_to_f32(((const uint16_t *)p)[i]);
#endif
    case MC_SIMD_BFLOAT16: return mc_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static inline v8f load8(const float *p)
{
    v8f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void store8(float *p, v8f v) { memcpy(p, &v, sizeof v); }

static inline float hsum8(v8f v) { return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7])); }

/* Codes e..e+7 of a row (e a multiple of 8) for bits 2, 4 or 8, as floats. */
static inline __attribute__((always_inline)) v8f unpack8(const uint32_t *w, int e, int bits)
{
    v8u v;
    if (bits == 4) {
        uint32_t a = w[e >> 3];
        v = ((v8u){a, a, a, a, a, a, a, a} >> (v8u){0, 4, 8, 12, 16, 20, 24, 28}) & 15u;
    } else if (bits == 8) {
#if defined(__AVX2__)
        /* the portable form below compiled to a slow sequence here (AVX2
         * 8-bit decode ran at half the generic build's speed) */
        __m128i b8 = _mm_loadl_epi64((const __m128i *)((const uint8_t *)w + e));
        return (v8f)_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(b8));
#else
        uint32_t a = w[e >> 2], b = w[(e >> 2) + 1];
        v = ((v8u){a, a, a, a, b, b, b, b} >> (v8u){0, 8, 16, 24, 0, 8, 16, 24}) & 255u;
#endif
    } else {
        uint32_t a = w[e >> 4] >> ((e & 15) * 2);
        v = ((v8u){a, a, a, a, a, a, a, a} >> (v8u){0, 2, 4, 6, 8, 10, 12, 14}) & 3u;
    }
    return __builtin_convertvector((v8i)v, v8f);
}

/* n codes of any bits from p (a multiple of 8 codes, starting on a byte)
 * as scale * code + bias, for a bits value known at compile time after
 * inlining. Eight codes fill `bits` whole bytes: gathered into one integer
 * byte by byte (whatever the host's byte order), then shifted out. */
static inline __attribute__((always_inline)) void unpack_odd(const uint8_t *p, int bits, int n, float s, float b,
                                                             float *o)
{
    const uint64_t mask = (1u << bits) - 1u;
    for (int j = 0; j < n; j += 8, p += bits) {
        uint64_t u = 0;
        for (int k = 0; k < bits; k++)
            u |= (uint64_t)p[k] << (8 * k);
        for (int i = 0; i < 8; i++)
            o[j + i] = (float)(uint32_t)((u >> (i * bits)) & mask) * s + b;
    }
}

/* The kernels' unpacking in registers: affine bits 2, 4, 8, and the fp
 * modes. */
static inline bool fast_path(const mc_qmat *q) { return q->fp || q->bits == 2 || q->bits == 4 || q->bits == 8; }

/* An fp mode's scale: e4m3 for groups of 16, else e8m0 (2^(s - 127), the
 * bfloat16 MLX builds from it). */
static inline float fp_scale(const mc_qmat *q, size_t i)
{
    uint8_t b = ((const uint8_t *)q->scales)[i];
    if (q->gs == 16) {
        float v;
        mc_fp8_to_f32(&b, &v, 1);
        return v;
    }
    return mc_bf16_to_f32(b == 0 ? 0x40 : (uint16_t)(b << 7));
}

/* The eight e2m1 codes of a word (element 8j + i in nibble i). */
static inline __attribute__((always_inline)) v8f fp4x8(uint32_t a)
{
#if defined(__AVX2__)
    __m256i v = _mm256_set1_epi32((int)a);
    __m256i idx = _mm256_srlv_epi32(v, _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
    __m256 mag = _mm256_permutevar8x32_ps(_mm256_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f), idx);
    __m256i sign = _mm256_and_si256(_mm256_sllv_epi32(v, _mm256_setr_epi32(28, 24, 20, 16, 12, 8, 4, 0)),
                                    _mm256_set1_epi32((int)0x80000000u));
    return (v8f)_mm256_xor_ps(mag, _mm256_castsi256_ps(sign));
#else
    static const float lut[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                                  -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
    v8f r;
    for (int i = 0; i < 8; i++)
        r[i] = lut[(a >> (4 * i)) & 15u];
    return r;
#endif
}

/* Eight e4m3 codes from p as float32, as mc_fp8_to_f32 widens them: the
 * byte's low seven bits placed as a half's exponent and mantissa read the
 * value 2^8 too small, which F16C converts exactly, subnormals included. */
static inline __attribute__((always_inline)) v8f fp8x8(const uint8_t *p)
{
#if defined(__F16C__)
    uint64_t b8;
    memcpy(&b8, p, sizeof b8);
    __m128i v = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long)b8));
    __m128i h = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x7F)), 7),
                             _mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x80)), 8));
    v8f r = (v8f)_mm256_cvtph_ps(h);
    return r * 256.0f;
#else
    v8f r;
    float t[8];
    mc_fp8_to_f32(p, t, 8);
    memcpy(&r, t, sizeof r);
    return r;
#endif
}

/* One row of an fp mode's codes, group by group, as float32. */
static void fp_dequant_row(const mc_qmat *q, int row, int e0, int count, float *out)
{
    const uint32_t *w = q->w + (size_t)row * q->wld;
    size_t sbase = (size_t)row * q->sld;
    for (int g = e0 / q->gs; g < (e0 + count) / q->gs; g++) {
        float s = fp_scale(q, sbase + (size_t)g);
        float *o = out + (g * q->gs - e0);
        int e = g * q->gs;
        if (q->bits == 4) {
            v8f vs = {s, s, s, s, s, s, s, s};
            for (int j = 0; j < q->gs; j += 8)
                store8(o + j, fp4x8(w[(e + j) >> 3]) * vs);
        } else {
            mc_fp8_to_f32((const uint8_t *)w + e, o, (size_t)q->gs);
            for (int j = 0; j < q->gs; j++)
                o[j] *= s;
        }
    }
}

void QK_NAME(mc_qdequant_f32)(const mc_qmat *q, int row, int e0, int count, float *out)
{
    if (q->fp) {
        fp_dequant_row(q, row, e0, count, out);
        return;
    }
    const uint32_t *w = q->w + (size_t)row * q->wld;
    size_t sbase = (size_t)row * q->sld;
    for (int g = e0 / q->gs; g < (e0 + count) / q->gs; g++) {
        float s = scale_at(q->scales, q->sdtype, sbase + (size_t)g);
        float b = scale_at(q->biases, q->sdtype, sbase + (size_t)g);
        float *o = out + (g * q->gs - e0);
        int e = g * q->gs;
        if (fast_path(q)) {
            v8f vs = {s, s, s, s, s, s, s, s}, vb = {b, b, b, b, b, b, b, b};
            for (int j = 0; j < q->gs; j += 8)
                store8(o + j, unpack8(w, e + j, q->bits) * vs + vb);
        } else {
            const uint8_t *p = (const uint8_t *)w + (size_t)e * (size_t)q->bits / 8;
            switch (q->bits) {
            case 3: unpack_odd(p, 3, q->gs, s, b, o); break;
            case 5: unpack_odd(p, 5, q->gs, s, b, o); break;
            case 6: unpack_odd(p, 6, q->gs, s, b, o); break;
            default: unpack_odd(p, q->bits, q->gs, s, b, o); break;
            }
        }
    }
}

/* Rows [n0, n1) against up to QK_MB rows of x, for a bits value known at
 * compile time after inlining. */
static inline __attribute__((always_inline)) void gemv_block(const mc_qmat *q, int bits, int K, const float *x,
                                                             int mb, size_t ldx, const float *xsum, int ng,
                                                             float *out, size_t ldo, int n0, int n1)
{
    const int gs = q->gs;
    for (int n = n0; n < n1; n++) {
        const uint32_t *w = q->w + (size_t)n * q->wld;
        size_t sbase = (size_t)n * q->sld;
        v8f acc[QK_MB] = {{0}};
        float bsum[QK_MB] = {0};
        for (int g = 0; g < ng; g++) {
            float s = scale_at(q->scales, q->sdtype, sbase + (size_t)g);
            float b = scale_at(q->biases, q->sdtype, sbase + (size_t)g);
            v8f ga[QK_MB] = {{0}};
            int e0 = g * gs;
            for (int e = e0; e < e0 + gs; e += 8) {
                v8f wf = unpack8(w, e, bits);
                for (int m = 0; m < mb; m++)
                    ga[m] += wf * load8(x + (size_t)m * ldx + (size_t)e);
            }
            v8f vs = {s, s, s, s, s, s, s, s};
            for (int m = 0; m < mb; m++) {
                acc[m] += ga[m] * vs;
                bsum[m] += b * xsum[(size_t)m * (size_t)ng + (size_t)g];
            }
        }
        for (int m = 0; m < mb; m++)
            out[(size_t)m * ldo + (size_t)n] = hsum8(acc[m]) + bsum[m];
    }
    (void)K;
}

/* Any bits: each W row unpacked to float32 once, then dotted with each
 * row of x. */
static void gemv_slow(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *out, size_t ldo, int n0,
                      int n1, float *row)
{
    for (int n = n0; n < n1; n++) {
        QK_NAME(mc_qdequant_f32)(q, n, 0, K, row);
        for (int m = 0; m < M; m++) {
            const float *xm = x + (size_t)m * ldx;
            v8f acc = {0};
            int k = 0;
            for (; k + 8 <= K; k += 8)
                acc += load8(row + k) * load8(xm + k);
            float t = hsum8(acc);
            for (; k < K; k++)
                t += row[k] * xm[k];
            out[(size_t)m * ldo + (size_t)n] = t;
        }
    }
}

/* fp rows [n0, n1) (e2m1 for bits 4, e4m3 for 8, bits known at compile
 * time after inlining) against up to QK_MB rows of x: per group the
 * codes' dot products, then one multiply by the group's scale. */
static inline __attribute__((always_inline)) void gemv_fp_block(const mc_qmat *q, int bits, const float *x, int mb,
                                                                size_t ldx, float *out, size_t ldo, int n0, int n1,
                                                                int ng)
{
    const int gs = q->gs;
    for (int n = n0; n < n1; n++) {
        const uint32_t *w = q->w + (size_t)n * q->wld;
        size_t sbase = (size_t)n * q->sld;
        v8f acc[QK_MB] = {{0}};
        for (int g = 0; g < ng; g++) {
            v8f ga[QK_MB] = {{0}};
            int e0 = g * gs;
            for (int e = e0; e < e0 + gs; e += 8) {
                v8f wf = bits == 4 ? fp4x8(w[e >> 3]) : fp8x8((const uint8_t *)w + e);
                for (int m = 0; m < mb; m++)
                    ga[m] += wf * load8(x + (size_t)m * ldx + (size_t)e);
            }
            float s = fp_scale(q, sbase + (size_t)g);
            v8f vs = {s, s, s, s, s, s, s, s};
            for (int m = 0; m < mb; m++)
                acc[m] += ga[m] * vs;
        }
        for (int m = 0; m < mb; m++)
            out[(size_t)m * ldo + (size_t)n] = hsum8(acc[m]);
    }
}

#if defined(__AVX512F__)
/* Groups of fp4 rows [n0, n1) against mb rows of xp (x interleaved: in
 * each run of 16, element j at 2j and element 8 + j at 2j + 1). Four
 * accumulators per row of x, taking the groups in turn, so that the
 * multiply-adds of successive groups do not wait on each other. */
static inline __attribute__((always_inline)) void gemv_fp4_512(const mc_qmat *q, const float *xp, int mb, size_t K,
                                                               float *out, size_t ldo, int n0, int n1)
{
    const __m512 lut = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f, -0.5f, -1.0f, -1.5f,
                                      -2.0f, -3.0f, -4.0f, -6.0f);
    const __m512i sh = _mm512_setr_epi32(0, 0, 4, 4, 8, 8, 12, 12, 16, 16, 20, 20, 24, 24, 28, 28);
    const int per_group = q->gs / 16, ng = (int)(K / (size_t)q->gs);
    for (int n = n0; n < n1; n++) {
        const uint32_t *w = q->w + (size_t)n * q->wld;
        size_t sbase = (size_t)n * q->sld;
        __m512 acc[QK_MB][4];
        for (int m = 0; m < mb; m++)
            for (int a = 0; a < 4; a++)
                acc[m][a] = _mm512_setzero_ps();
        for (int g = 0; g < ng; g++) {
            __m512 ga[QK_MB];
            for (int m = 0; m < mb; m++)
                ga[m] = _mm512_setzero_ps();
            for (int c = g * per_group; c < (g + 1) * per_group; c++) {
                uint64_t pair;
                memcpy(&pair, w + 2 * c, sizeof pair);
                __m512i codes = _mm512_srlv_epi32(_mm512_set1_epi64((long long)pair), sh);
                __m512 wf = _mm512_permutexvar_ps(codes, lut);
                for (int m = 0; m < mb; m++)
                    ga[m] = _mm512_fmadd_ps(wf, _mm512_loadu_ps(xp + (size_t)m * K + (size_t)c * 16), ga[m]);
            }
            __m512 vs = _mm512_set1_ps(fp_scale(q, sbase + (size_t)g));
            for (int m = 0; m < mb; m++)
                acc[m][g & 3] = _mm512_fmadd_ps(ga[m], vs, acc[m][g & 3]);
        }
        for (int m = 0; m < mb; m++)
            out[(size_t)m * ldo + (size_t)n] = _mm512_reduce_add_ps(
                _mm512_add_ps(_mm512_add_ps(acc[m][0], acc[m][1]), _mm512_add_ps(acc[m][2], acc[m][3])));
    }
}

/* x's rows interleaved for gemv_fp4_512 into xp (M * K floats). */
static void interleave16(const float *x, int M, size_t ldx, size_t K, float *xp)
{
    for (int m = 0; m < M; m++)
        for (size_t c = 0; c < K; c += 16)
            for (int j = 0; j < 8; j++) {
                xp[(size_t)m * K + c + 2 * (size_t)j] = x[(size_t)m * ldx + c + (size_t)j];
                xp[(size_t)m * K + c + 2 * (size_t)j + 1] = x[(size_t)m * ldx + c + 8 + (size_t)j];
            }
}
#endif

#if defined(__AVX512F__)
/* The affine bits that gemv_lut_512 takes: 4 and 2, when a group fills
 * at least one 16-byte load (so a load never mixes two groups' tables). */
static inline bool lut_ok(const mc_qmat *q)
{
    return !q->fp && ((q->bits == 4 && q->gs >= 32) || (q->bits == 2 && q->gs >= 64));
}

/* x's rows reordered into xp (M * K floats) for gemv_lut_512: in each run
 * of 16 * cpb elements (the codes of 16 bytes, cpb to a byte), float run k
 * holds element cpb * i + k in lane i, the order in which the kernel takes
 * the codes out of the bytes. */
static void xperm_512(const float *x, int M, size_t ldx, size_t K, int cpb, float *xp)
{
    size_t run = 16 * (size_t)cpb;
    for (int m = 0; m < M; m++)
        for (size_t c = 0; c < K; c += run)
            for (int k = 0; k < cpb; k++)
                for (size_t i = 0; i < 16; i++)
                    xp[(size_t)m * K + c + 16 * (size_t)k + i] =
                        x[(size_t)m * ldx + c + (size_t)cpb * i + (size_t)k];
}

/* R (1 or 2) rows of W from row n, bits 2 or 4, against mb rows of xp.
 * Sixteen bytes widen to sixteen 32-bit lanes; the code of each lane,
 * shifted down to the low bits, indexes the group's table of sixteen
 * dequantized values (scale * i + bias, i masked to the code's bits), which
 * a permute reads whatever bits lie above: per 16 codes a shift, a permute
 * and one multiply-add per row of x. Two rows per pass share the loads of
 * x and give four independent accumulator chains. */
static inline __attribute__((always_inline)) void lut_rows(const mc_qmat *q, int bits, int R, const float *xp,
                                                           int mb, size_t K, float *out, size_t ldo, int n)
{
    const int cpb = 8 / bits, per_group = q->gs / (16 * cpb), ng = (int)(K / (size_t)q->gs);
    const __m512 iota = bits == 4 ? _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
                                  : _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const uint8_t *wr[2];
    size_t sb[2];
    __m512 acc[QK_MB][2][2];
    for (int r = 0; r < R; r++) {
        wr[r] = (const uint8_t *)(q->w + (size_t)(n + r) * q->wld);
        sb[r] = (size_t)(n + r) * q->sld;
        for (int m = 0; m < mb; m++)
            acc[m][r][0] = acc[m][r][1] = _mm512_setzero_ps();
    }
    /* the next pair of rows, read ahead while this pair computes: with the
     * kernel about as fast as memory, loads that wait are not hidden */
    const uint8_t *ahead = (const uint8_t *)(q->w + (size_t)(n + R) * q->wld);
    const size_t row_bytes = q->wld * sizeof *q->w, group_bytes = K * (size_t)bits / 8 / (size_t)ng;
    for (int g = 0; g < ng; g++) {
        __m512 lut[2];
        for (size_t off = (size_t)g * group_bytes; off < (size_t)(g + 1) * group_bytes; off += 64)
            for (int r = 0; r < R; r++)
                _mm_prefetch((const char *)(ahead + (size_t)r * row_bytes + off), _MM_HINT_T0);
        for (int r = 0; r < R; r++)
            lut[r] = _mm512_fmadd_ps(iota, _mm512_set1_ps(scale_at(q->scales, q->sdtype, sb[r] + (size_t)g)),
                                     _mm512_set1_ps(scale_at(q->biases, q->sdtype, sb[r] + (size_t)g)));
        for (int j = 0; j < per_group; j++) {
            size_t blk = (size_t)g * (size_t)per_group + (size_t)j;
            const float *xb = xp + blk * 16 * (size_t)cpb;
            __m512i v[2];
            for (int r = 0; r < R; r++)
                v[r] = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(wr[r] + blk * 16)));
            for (int k = 0; k < cpb; k++)
                for (int r = 0; r < R; r++) {
                    __m512 wf =
                        _mm512_permutexvar_ps(k ? _mm512_srli_epi32(v[r], (unsigned)(k * bits)) : v[r], lut[r]);
                    for (int m = 0; m < mb; m++)
                        acc[m][r][k & 1] = _mm512_fmadd_ps(
                            wf, _mm512_loadu_ps(xb + (size_t)m * K + 16 * (size_t)k), acc[m][r][k & 1]);
                }
        }
    }
    for (int m = 0; m < mb; m++)
        for (int r = 0; r < R; r++)
            out[(size_t)m * ldo + (size_t)(n + r)] =
                _mm512_reduce_add_ps(_mm512_add_ps(acc[m][r][0], acc[m][r][1]));
}

static inline __attribute__((always_inline)) void gemv_lut_512(const mc_qmat *q, int bits, const float *xp, int mb,
                                                               size_t K, float *out, size_t ldo, int n0, int n1)
{
    int n = n0;
    for (; n + 2 <= n1; n += 2)
        lut_rows(q, bits, 2, xp, mb, K, out, ldo, n);
    if (n < n1)
        lut_rows(q, bits, 1, xp, mb, K, out, ldo, n);
}

/* R rows of 8-bit W from row n against mb rows of x: sixteen bytes widen
 * and convert to floats, scale * code + bias, one multiply-add per row of
 * x; a group holds an even number of sixteens, taken in pairs into two
 * accumulators. */
static inline __attribute__((always_inline)) void b8_rows(const mc_qmat *q, int R, const float *x, int mb,
                                                          size_t ldx, size_t K, float *out, size_t ldo, int n)
{
    const int gs = q->gs, ng = (int)(K / (size_t)gs);
    const uint8_t *wr[2];
    size_t sb[2];
    __m512 acc[QK_MB][2][2];
    for (int r = 0; r < R; r++) {
        wr[r] = (const uint8_t *)(q->w + (size_t)(n + r) * q->wld);
        sb[r] = (size_t)(n + r) * q->sld;
        for (int m = 0; m < mb; m++)
            acc[m][r][0] = acc[m][r][1] = _mm512_setzero_ps();
    }
    /* the next pair of rows read ahead, as lut_rows does (8 copies of a
     * 4096 x 4096 W taken in turn, so read from memory: best of three 1.24
     * against 1.43 ms, alternating runs on a loaded machine) */
    const uint8_t *ahead = (const uint8_t *)(q->w + (size_t)(n + R) * q->wld);
    const size_t row_bytes = q->wld * sizeof *q->w;
    for (int g = 0; g < ng; g++) {
        __m512 vs[2], vb[2];
        for (size_t off = (size_t)g * (size_t)gs; off < (size_t)(g + 1) * (size_t)gs; off += 64)
            for (int r = 0; r < R; r++)
                _mm_prefetch((const char *)(ahead + (size_t)r * row_bytes + off), _MM_HINT_T0);
        for (int r = 0; r < R; r++) {
            vs[r] = _mm512_set1_ps(scale_at(q->scales, q->sdtype, sb[r] + (size_t)g));
            vb[r] = _mm512_set1_ps(scale_at(q->biases, q->sdtype, sb[r] + (size_t)g));
        }
        for (int e = g * gs; e < (g + 1) * gs; e += 32)
            for (int h = 0; h < 2; h++)
                for (int r = 0; r < R; r++) {
                    __m512i c = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(wr[r] + e + 16 * h)));
                    __m512 wf = _mm512_fmadd_ps(_mm512_cvtepi32_ps(c), vs[r], vb[r]);
                    for (int m = 0; m < mb; m++)
                        acc[m][r][h] = _mm512_fmadd_ps(
                            wf, _mm512_loadu_ps(x + (size_t)m * ldx + (size_t)e + 16 * (size_t)h), acc[m][r][h]);
                }
    }
    for (int m = 0; m < mb; m++)
        for (int r = 0; r < R; r++)
            out[(size_t)m * ldo + (size_t)(n + r)] =
                _mm512_reduce_add_ps(_mm512_add_ps(acc[m][r][0], acc[m][r][1]));
}

static inline __attribute__((always_inline)) void gemv_b8_512(const mc_qmat *q, const float *x, int mb, size_t ldx,
                                                              size_t K, float *out, size_t ldo, int n0, int n1)
{
    int n = n0;
    for (; n + 2 <= n1; n += 2)
        b8_rows(q, 2, x, mb, ldx, K, out, ldo, n);
    if (n < n1)
        b8_rows(q, 1, x, mb, ldx, K, out, ldo, n);
}
#endif

size_t QK_NAME(mc_qgemv_t_prep_size)(const mc_qmat *q, int M, int K)
{
    if (!fast_path(q))
        return 0;
    size_t xs = (size_t)M * (size_t)(K / q->gs);
#if defined(__AVX512F__)
    /* room for x reordered, whichever kernel takes the product */
    return (q->fp ? 0 : xs) + (size_t)M * (size_t)K;
#else
    return q->fp ? 0 : xs;
#endif
}

size_t QK_NAME(mc_qgemv_t_scratch)(const mc_qmat *q, int M, int K)
{
    return QK_NAME(mc_qgemv_t_prep_size)(q, M, K) + (fast_path(q) ? 0 : (size_t)K);
}

void QK_NAME(mc_qgemv_t_prep)(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *prep)
{
    if (!fast_path(q))
        return;
#if defined(__AVX512F__)
    if (q->fp) {
        if (q->bits == 4)
            interleave16(x, M, ldx, (size_t)K, prep);
        return;
    }
    if (lut_ok(q)) {
        xperm_512(x, M, ldx, (size_t)K, 8 / q->bits, prep);
        return;
    }
    if (q->bits == 8)
        return;
#else
    if (q->fp)
        return;
#endif
    /* group sums of x, for the bias terms */
    int ng = K / q->gs;
    for (int m = 0; m < M; m++) {
        for (int g = 0; g < ng; g++) {
            const float *xg = x + (size_t)m * ldx + (size_t)g * (size_t)q->gs;
            v8f a = {0};
            for (int j = 0; j < q->gs; j += 8)
                a += load8(xg + j);
            prep[(size_t)m * (size_t)ng + (size_t)g] = hsum8(a);
        }
    }
}

void QK_NAME(mc_qgemv_t_rows)(const mc_qmat *q, int K, const float *x, int M, size_t ldx, const float *prep,
                              float *out, size_t ldo, int n0, int n1, float *work)
{
    if (!fast_path(q)) {
        gemv_slow(q, K, x, M, ldx, out, ldo, n0, n1, work);
        return;
    }
    for (int m0 = 0; m0 < M; m0 += QK_MB) {
        int mb = M - m0 < QK_MB ? M - m0 : QK_MB;
        const float *xb = x + (size_t)m0 * ldx;
        float *ob = out + (size_t)m0 * ldo;
        /* one row of x (decoding) gets its own inlined copy of each kernel */
#if defined(__AVX512F__)
        const float *pb = prep + (size_t)m0 * (size_t)K;
        if (q->fp && q->bits == 4) {
            if (mb == 1)
                gemv_fp4_512(q, pb, 1, (size_t)K, ob, ldo, n0, n1);
            else
                gemv_fp4_512(q, pb, mb, (size_t)K, ob, ldo, n0, n1);
            continue;
        }
        if (lut_ok(q)) {
            switch (q->bits * 2 + (mb == 1)) {
            case 9: gemv_lut_512(q, 4, pb, 1, (size_t)K, ob, ldo, n0, n1); break;
            case 8: gemv_lut_512(q, 4, pb, mb, (size_t)K, ob, ldo, n0, n1); break;
            case 5: gemv_lut_512(q, 2, pb, 1, (size_t)K, ob, ldo, n0, n1); break;
            default: gemv_lut_512(q, 2, pb, mb, (size_t)K, ob, ldo, n0, n1); break;
            }
            continue;
        }
        if (!q->fp && q->bits == 8) {
            if (mb == 1)
                gemv_b8_512(q, xb, 1, ldx, (size_t)K, ob, ldo, n0, n1);
            else
                gemv_b8_512(q, xb, mb, ldx, (size_t)K, ob, ldo, n0, n1);
            continue;
        }
#endif
        if (q->fp) {
            switch (q->bits * 2 + (mb == 1)) {
            case 9: gemv_fp_block(q, 4, xb, 1, ldx, ob, ldo, n0, n1, K / q->gs); break;
            case 8: gemv_fp_block(q, 4, xb, mb, ldx, ob, ldo, n0, n1, K / q->gs); break;
            case 17: gemv_fp_block(q, 8, xb, 1, ldx, ob, ldo, n0, n1, K / q->gs); break;
            default: gemv_fp_block(q, 8, xb, mb, ldx, ob, ldo, n0, n1, K / q->gs); break;
            }
            continue;
        }
        int ng = K / q->gs;
        const float *xs = prep + (size_t)m0 * (size_t)ng;
        switch (q->bits * 2 + (mb == 1)) {
        case 9: gemv_block(q, 4, K, xb, 1, ldx, xs, ng, ob, ldo, n0, n1); break;
        case 8: gemv_block(q, 4, K, xb, mb, ldx, xs, ng, ob, ldo, n0, n1); break;
        case 17: gemv_block(q, 8, K, xb, 1, ldx, xs, ng, ob, ldo, n0, n1); break;
        case 16: gemv_block(q, 8, K, xb, mb, ldx, xs, ng, ob, ldo, n0, n1); break;
        default: gemv_block(q, 2, K, xb, mb, ldx, xs, ng, ob, ldo, n0, n1); break;
        }
    }
}

void QK_NAME(mc_qgemv_t)(const mc_qmat *q, int K, const float *x, int M, size_t ldx, float *out, size_t ldo,
                         int n0, int n1, float *tmp)
{
    QK_NAME(mc_qgemv_t_prep)(q, K, x, M, ldx, tmp);
    QK_NAME(mc_qgemv_t_rows)(q, K, x, M, ldx, tmp, out, ldo, n0, n1, tmp + QK_NAME(mc_qgemv_t_prep_size)(q, M, K));
}
