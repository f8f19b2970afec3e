/* simd/random_k.c against MLX 0.31.1 (test/fixtures/random_cases.h, written
 * by scripts/make_random_fixtures.py): keys, splits and raw bits of widths
 * 4, 2 and 1 bit for bit, chunked generation equal to whole generation with
 * every byte written by exactly one chunk, and the formulas of
 * docs/random.md (uniform, normal, randint, bernoulli, gumbel, laplace,
 * truncated_normal, categorical, permutation) recomputed here in plain C
 * from our bits and compared with MLX's values, bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures/random_cases.h"
#include "simd/half_convert.h"
#include "simd/random.h"

/* MLX rounds after every op; keep the compiler from fusing a * b + c. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

enum { NCASES = sizeof rf_cases / sizeof rf_cases[0] };

static size_t count_cases(const char *op)
{
    size_t k = 0;
    for (size_t i = 0; i < NCASES; i++)
        k += strcmp(rf_cases[i].op, op) == 0;
    return k;
}

static uint32_t *bits32(const rf_case *c, size_t n)
{
    uint32_t *b = malloc((n ? n : 1) * sizeof *b);
    assert_non_null(b);
    mc_random_bits(c->key, n * 4, b);
    return b;
}

/* -- keys, split, bits ---------------------------------------------------- */

static void test_key_of_a_seed_is_its_high_and_low_words_as_mlx(void **state)
{
    (void)state;
    assert_int_equal(count_cases("key"), 7);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "key") != 0)
            continue;
        uint32_t k[2];
        mc_random_key(c->seed, k);
        assert_int_equal(k[0], rf_vals[c->off]);
        assert_int_equal(k[1], rf_vals[c->off + 1]);
    }
}

static void test_threefry_matches_random123_known_answers(void **state)
{
    (void)state;
    /* threefry2x32_20 answers published with Random123 (kat_vectors) */
    static const uint32_t kat[][6] = {
        {0, 0, 0, 0, 0x6b200159u, 0x99ba4efeu},
        {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x1cb996fcu, 0xbb002be7u},
        {0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u, 0xc4923a9cu, 0x483df7a0u},
    };
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        uint32_t x, y;
        mc_threefry2x32(kat[i], kat[i][2], kat[i][3], 1, &x, &y);
        assert_int_equal(x, kat[i][4]);
        assert_int_equal(y, kat[i][5]);
    }
}

static void test_split_gives_mlx_keys_for_one_to_five_parts(void **state)
{
    (void)state;
    assert_int_equal(count_cases("split"), 12);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "split") != 0)
            continue;
        size_t num = (size_t)c->p[0];
        uint32_t out[16];
        assert_int_equal(c->n, 2 * num);
        mc_random_split(c->key, num, out);
        for (size_t j = 0; j < c->n; j++)
            assert_int_equal(out[j], rf_vals[c->off + j]);
    }
}

static void test_bits_of_every_width_and_odd_count_equal_mlx(void **state)
{
    (void)state;
    assert_int_equal(count_cases("bits"), 48);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "bits") != 0)
            continue;
        size_t width = (size_t)c->p[0], nbytes = c->n * width;
        unsigned char buf[256 + 1];
        assert_true(nbytes < sizeof buf);
        buf[nbytes] = 0xa5; /* the byte past the end stays untouched */
        mc_random_bits(c->key, nbytes, buf);
        assert_int_equal(buf[nbytes], 0xa5);
        for (size_t j = 0; j < c->n; j++) {
            uint32_t v = 0;
            memcpy(&v, buf + j * width, width); /* little-endian host, as MLX */
            if (v != rf_vals[c->off + j])
                fail_msg("bits width %zu shape %s key (%u, %u): element %zu is %u, MLX %u", width, c->shape,
                         c->key[0], c->key[1], j, v, (unsigned)rf_vals[c->off + j]);
        }
    }
}

/* Runs the chunks [j, j + chunk) in reverse order, each into two buffers
 * pre-filled with different bytes: a byte equal in both was written. Every
 * byte must be written by exactly one chunk, and the result must be the
 * whole call's. */
static void check_chunking(size_t nbytes, size_t chunk)
{
    const uint32_t key[2] = {0x01234567u, 0x89abcdefu};
    unsigned char *whole = malloc(nbytes + 1), *a = malloc(nbytes + 1), *b = malloc(nbytes + 1);
    unsigned char *owners = calloc(nbytes + 1, 1), *got = malloc(nbytes + 1);
    assert_true(whole && a && b && owners && got);
    mc_random_bits(key, nbytes, whole);
    size_t jobs = mc_random_bits_jobs(nbytes);
    size_t nchunks = (jobs + chunk - 1) / chunk;
    for (size_t k = nchunks; k-- > 0;) {
        memset(a, 0x00, nbytes + 1);
        memset(b, 0xff, nbytes + 1);
        mc_random_bits_range(key, nbytes, k * chunk, k * chunk + chunk, a);
        mc_random_bits_range(key, nbytes, k * chunk, k * chunk + chunk, b);
        for (size_t i = 0; i <= nbytes; i++)
            if (a[i] == b[i]) {
                owners[i]++;
                got[i] = a[i];
            }
    }
    for (size_t i = 0; i < nbytes; i++) {
        if (owners[i] != 1)
            fail_msg("nbytes %zu chunk %zu: byte %zu written by %u chunks", nbytes, chunk, i, owners[i]);
        assert_int_equal(got[i], whole[i]);
    }
    assert_int_equal(owners[nbytes], 0);
    free(whole), free(a), free(b), free(owners), free(got);
}

static void test_chunked_bits_equal_whole_bits_for_any_split(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 15, 16, 17, 255, 256, 257, 258,
                                   511, 512, 513, 1021, 4096 + 3};
    static const size_t chunks[] = {1, 2, 3, 7, 63, 64, 65, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++)
            check_chunking(sizes[s], chunks[c]);
}

static void test_chunk_past_the_end_is_clipped(void **state)
{
    (void)state;
    const uint32_t key[2] = {3, 4};
    unsigned char whole[10], part[11];
    mc_random_bits(key, 10, whole);
    memset(part, 0x5a, sizeof part);
    mc_random_bits_range(key, 10, 0, 1000, part);
    assert_memory_equal(part, whole, 10);
    assert_int_equal(part[10], 0x5a);
    assert_int_equal(mc_random_bits_jobs(0), 0);
    assert_int_equal(mc_random_bits_jobs(4), 1);
    assert_int_equal(mc_random_bits_jobs(9), 2);  /* 3 words: one pair and the middle */
    assert_int_equal(mc_random_bits_jobs(16), 2); /* 4 words: two pairs */
}

/* -- the distributions' formulas (docs/random.md) -------------------------- */

typedef enum { F32, F16, BF16, F64 } fdt;

static fdt dtype_of(const char *name)
{
    if (strcmp(name, "float16") == 0)
        return F16;
    if (strcmp(name, "bfloat16") == 0)
        return BF16;
    if (strcmp(name, "float64") == 0)
        return F64;
    return F32;
}

/* v rounded to the dtype (held in a float); float64 results go elsewhere */
static float rnd(float v, fdt d)
{
    if (d == F16)
        return mc_f16_to_f32(mc_f32_to_f16(v));
    if (d == BF16)
        return mc_bf16_to_f32(mc_f32_to_bf16(v));
    return v;
}

static uint64_t pattern(float v, fdt d)
{
    if (d == F16)
        return mc_f32_to_f16(v);
    if (d == BF16)
        return mc_f32_to_bf16(v);
    return mc_f32_bits(v);
}

/* The largest value below 1 in the dtype, as MLX clamps the unit draw. */
static float below_one(fdt d)
{
    if (d == F16)
        return mc_f16_to_f32(0x3bffu);
    if (d == BF16)
        return mc_bf16_to_f32(0x3f7fu);
    return nextafterf(1.0f, 0.0f);
}

/* uniform(lo, hi) of one bits word, every step rounded to d as MLX does */
static float uniform1(uint32_t bits, float lo, float hi, fdt d)
{
    float lo_d = rnd(lo, d), hi_d = rnd(hi, d);
    float range = rnd(hi_d - lo_d, d);
    float u = (float)bits / 4294967295.0f;
    u = rnd(u < below_one(d) ? u : below_one(d), d);
    float p = rnd(range * u, d);
    return rnd(p + lo_d, d);
}

/* MLX's erfinv (mlx/backend/cpu/simd/math.h, on hosts without its vector
 * types): Giles' single-precision polynomials in t = log(1 - a^2), with fma. */
static float erfinv_mlx(float a)
{
    float t = logf(fmaf(a, -a, 1.0f)), p;
    if (fabsf(t) > 6.125f) {
        p = 3.03697567e-10f;
        p = fmaf(p, t, 2.93243101e-8f);
        p = fmaf(p, t, 1.22150334e-6f);
        p = fmaf(p, t, 2.84108955e-5f);
        p = fmaf(p, t, 3.93552968e-4f);
        p = fmaf(p, t, 3.02698812e-3f);
        p = fmaf(p, t, 4.83185798e-3f);
        p = fmaf(p, t, -2.64646143e-1f);
        p = fmaf(p, t, 8.40016484e-1f);
    } else {
        p = 5.43877832e-9f;
        p = fmaf(p, t, 1.43285448e-7f);
        p = fmaf(p, t, 1.22774793e-6f);
        p = fmaf(p, t, 1.12963626e-7f);
        p = fmaf(p, t, -5.61530760e-5f);
        p = fmaf(p, t, -1.47697632e-4f);
        p = fmaf(p, t, 2.31468678e-3f);
        p = fmaf(p, t, 1.15392581e-2f);
        p = fmaf(p, t, -2.32015476e-1f);
        p = fmaf(p, t, 8.86226892e-1f);
    }
    return a * p;
}

/* MLX's exp (Cephes-style: 2^round(x/ln2) times a degree-6 polynomial). */
static float exp_mlx(float x0)
{
    float x = x0 * 1.442695f;
    float ip = floorf(x + 0.5f), fp = x - ip;
    float p = 1.535336188319500e-4f;
    p = fmaf(p, fp, 1.339887440266574e-3f);
    p = fmaf(p, fp, 9.618437357674640e-3f);
    p = fmaf(p, fp, 5.550332471162809e-2f);
    p = fmaf(p, fp, 2.402264791363012e-1f);
    p = fmaf(p, fp, 6.931472028550421e-1f);
    p = fmaf(p, fp, 1.0f);
    if (isnan(x0))
        return x0;
    if (x0 > 88.0f)
        return INFINITY;
    if (x0 < -88.0f)
        return 0.0f;
    return mc_bits_f32((uint32_t)((int32_t)ip + 127) << 23) * p;
}

/* MLX's erf: Abramowitz-Stegun 7.1.26 with exp_mlx. */
static float erf_mlx(float v)
{
    float t = 1.0f / fmaf(0.3275911f, fabsf(v), 1.0f);
    float r = fmaf(1.061405429f, t, -1.453152027f);
    r = fmaf(r, t, 1.421413741f);
    r = fmaf(r, t, -0.284496736f);
    r = fmaf(r, t, 0.254829592f);
    float e = -exp_mlx(-v * v);
    float res = fmaf(e * t, r, 1.0f);
    return v > 0 ? res : -res;
}

/* The (-1, 1) draw that normal and laplace start from. */
static float symmetric1(uint32_t bits)
{
    return uniform1(bits, nextafterf(-1.0f, 0.0f), 1.0f, F32);
}

static void expect(const rf_case *c, size_t j, uint64_t ours)
{
    if (ours != rf_vals[c->off + j])
        fail_msg("%s %s %s p0 %g: element %zu is 0x%llx, MLX 0x%llx", c->op, c->dtype, c->shape, c->p[0], j,
                 (unsigned long long)ours, (unsigned long long)rf_vals[c->off + j]);
}

static void test_uniform_follows_mlx_formula_bit_for_bit(void **state)
{
    (void)state;
    assert_int_equal(count_cases("uniform"), 9);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "uniform") != 0)
            continue;
        fdt d = dtype_of(c->dtype);
        uint32_t *b = bits32(c, c->n);
        for (size_t j = 0; j < c->n; j++)
            expect(c, j, pattern(uniform1(b[j], (float)c->p[0], (float)c->p[1], d), d));
        free(b);
    }
}

static void test_normal_follows_mlx_formula_bit_for_bit(void **state)
{
    (void)state;
    assert_int_equal(count_cases("normal"), 6);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "normal") != 0)
            continue;
        fdt d = dtype_of(c->dtype);
        uint32_t *b = bits32(c, c->n);
        for (size_t j = 0; j < c->n; j++) {
            float e = erfinv_mlx(symmetric1(b[j]));
            if (d == F64) {
                double v = sqrt(2.0) * (double)e;
                uint64_t u;
                memcpy(&u, &v, sizeof u);
                expect(c, j, u);
                continue;
            }
            float scale = rnd((float)sqrt(2.0), d);
            if (c->np == 2)
                scale = rnd(scale * rnd((float)c->p[1], d), d);
            float v = rnd(scale * rnd(e, d), d);
            if (c->np == 2)
                v = rnd(rnd((float)c->p[0], d) + v, d);
            expect(c, j, pattern(v, d));
        }
        free(b);
    }
}

static void test_randint_truncates_a_float32_uniform_as_mlx(void **state)
{
    (void)state;
    assert_int_equal(count_cases("randint"), 3);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "randint") != 0)
            continue;
        uint32_t *b = bits32(c, c->n);
        float lo = (float)c->p[0];
        for (size_t j = 0; j < c->n; j++) {
            float u = uniform1(b[j], lo, (float)c->p[1], F32);
            int32_t v = (int32_t)(u > lo ? u : lo);
            expect(c, j, (uint64_t)(int64_t)v);
        }
        free(b);
    }
}

static void test_bernoulli_compares_bits_with_scaled_p_in_float32(void **state)
{
    (void)state;
    assert_int_equal(count_cases("bernoulli"), 2);
    const float upper = nextafterf(4294967295.0f, 3.4e38f);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "bernoulli") != 0)
            continue;
        uint32_t *b = bits32(c, c->n);
        float thr = (float)c->p[0] * upper;
        for (size_t j = 0; j < c->n; j++)
            expect(c, j, (float)b[j] < thr);
        free(b);
    }
}

static float gumbel1(uint32_t bits)
{
    return -logf(-logf(uniform1(bits, 0.0f, 1.0f, F32)));
}

static void test_gumbel_laplace_and_truncated_normal_follow_mlx_formulas(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        int g = strcmp(c->op, "gumbel") == 0, l = strcmp(c->op, "laplace") == 0;
        int t = strcmp(c->op, "truncated_normal") == 0;
        if (!g && !l && !t)
            continue;
        uint32_t *b = bits32(c, c->n);
        for (size_t j = 0; j < c->n; j++) {
            float v;
            if (g) {
                v = gumbel1(b[j]);
            } else if (l) {
                float s = symmetric1(b[j]);
                float sg = s < 0 ? -1.0f : s > 0 ? 1.0f : 0.0f;
                v = sg * log1pf(-1.0f * fabsf(s));
                if (c->p[1] != 1.0)
                    v = (float)c->p[1] * v;
                if (c->p[0] != 0.0)
                    v = (float)c->p[0] + v;
            } else {
                float sq2 = (float)sqrt(2.0), lo = (float)c->p[0], hi = (float)c->p[1];
                float a = erf_mlx(lo / sq2), bb = erf_mlx(hi / sq2);
                v = sq2 * erfinv_mlx(uniform1(b[j], a, bb, F32));
                v = hi < v ? hi : v;
                v = v > lo ? v : lo;
            }
            expect(c, j, mc_f32_bits(v));
        }
        free(b);
    }
}

static void test_categorical_and_permutation_follow_mlx_formulas(void **state)
{
    (void)state;
    assert_int_equal(count_cases("categorical"), 2);
    assert_int_equal(count_cases("permutation"), 1);
    for (size_t i = 0; i < NCASES; i++) {
        const rf_case *c = &rf_cases[i];
        if (strcmp(c->op, "categorical") == 0) {
            /* gumbel noise of shape (classes, samples), argmax over classes */
            size_t k = 4, ns = c->n;
            uint32_t *b = bits32(c, k * ns);
            for (size_t s = 0; s < ns; s++) {
                size_t best = 0;
                float bv = 0;
                for (size_t cl = 0; cl < k; cl++) {
                    float v = gumbel1(b[cl * ns + s]) + (float)c->p[cl];
                    if (cl == 0 || v > bv)
                        best = cl, bv = v;
                }
                expect(c, s, best);
            }
            free(b);
        } else if (strcmp(c->op, "permutation") == 0) {
            /* argsort of the bits: rank order of distinct words */
            uint32_t *b = bits32(c, c->n);
            for (size_t r = 0; r < c->n; r++) {
                size_t idx = rf_vals[c->off + r];
                size_t below = 0;
                for (size_t j = 0; j < c->n; j++)
                    below += b[j] < b[idx];
                assert_int_equal(below, r);
            }
            free(b);
        }
    }
}

int main(void)
{
    printf("fixtures from mlx %s\n", RF_MLX_VERSION);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_of_a_seed_is_its_high_and_low_words_as_mlx),
        cmocka_unit_test(test_threefry_matches_random123_known_answers),
        cmocka_unit_test(test_split_gives_mlx_keys_for_one_to_five_parts),
        cmocka_unit_test(test_bits_of_every_width_and_odd_count_equal_mlx),
        cmocka_unit_test(test_chunked_bits_equal_whole_bits_for_any_split),
        cmocka_unit_test(test_chunk_past_the_end_is_clipped),
        cmocka_unit_test(test_uniform_follows_mlx_formula_bit_for_bit),
        cmocka_unit_test(test_normal_follows_mlx_formula_bit_for_bit),
        cmocka_unit_test(test_randint_truncates_a_float32_uniform_as_mlx),
        cmocka_unit_test(test_bernoulli_compares_bits_with_scaled_p_in_float32),
        cmocka_unit_test(test_gumbel_laplace_and_truncated_normal_follow_mlx_formulas),
        cmocka_unit_test(test_categorical_and_permutation_follow_mlx_formulas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
