/* Owns the Hadamard transform kernel: a fast Walsh-Hadamard pass over the
 * power-of-two part of each row, then, for sizes 12, 20 and 28 times a
 * power of two, a small dense Hadamard matrix across the strided groups,
 * in MLX's order of operations so float32 results round as MLX's. The
 * matrices are N. J. A. Sloane's (neilsloane.com/hadamard, as MLX takes
 * them), one bit per entry: bit k of row j is set where H[j][k] = +1. */
#include <stdint.h>

#include "simd/hadamard.h"

static const uint32_t h12[12] = {0x0000ffdu, 0x0000554u, 0x0000c37u, 0x0000691u, 0x00000dfu, 0x0000a45u,
                                 0x0000373u, 0x0000919u, 0x0000dc3u, 0x0000469u, 0x000070fu, 0x00001a5u};
static const uint32_t h20[20] = {0x006cc21u, 0x00d1c42u, 0x00ab884u, 0x005f108u, 0x00b6610u,
                                 0x009c83eu, 0x003945du, 0x007289bu, 0x00e5117u, 0x00ca60fu,
                                 0x00f05acu, 0x00e8b58u, 0x00d92b1u, 0x00ba163u, 0x007c2c6u,
                                 0x0008592u, 0x0010b05u, 0x002122au, 0x0042074u, 0x00840c9u};
static const uint32_t h28[28] = {0x3296181u, 0x6528382u, 0xc854704u, 0x92a8e08u, 0x2751c10u, 0x4ca7820u,
                                 0x994b0c0u, 0x4b980bcu, 0x9534178u, 0x2a6c271u, 0x54d8463u, 0xa9b0847u,
                                 0x536500fu, 0xa4ce01eu, 0x7804cdau, 0xf009935u, 0xe21326au, 0xc6224d5u,
                                 0x8e409abu, 0x1e81356u, 0x3d0262du, 0x030ed66u, 0x041dacdu, 0x083b51bu,
                                 0x1072ab6u, 0x20e15ecu, 0x41c2b59u, 0x81856b3u};

/* Butterflies of doubling span; the last level applies scale. */
static void walsh(float *x, int n, float scale)
{
    for (int h = 1; h < n; h <<= 1)
        for (int i = 0; i < n / 2; i++) {
            int k = i & (h - 1), j = ((i - k) << 1) + k;
            float a = x[j], b = x[j + h];
            x[j] = a + b;
            x[j + h] = a - b;
            if (h == n / 2) {
                x[j] *= scale;
                x[j + h] *= scale;
            }
        }
}

/* Element k*n + i of a row is entry k of group i. */
static void dense(float *x, int n, int m, const uint32_t *hm, float scale)
{
    float out[28];
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++) {
            float acc = 0.0f;
            for (int k = 0; k < m; k++) {
                float v = x[i + k * n];
                acc = (hm[j] >> k & 1u) ? acc + v : acc - v;
            }
            out[j] = acc;
        }
        for (int j = 0; j < m; j++)
            x[i + j * n] = out[j] * scale;
    }
}

void mc_hadamard_rows(float *x, size_t rows, int n, int m, float scale)
{
    const uint32_t *hm = m == 12 ? h12 : m == 20 ? h20 : m == 28 ? h28 : NULL;
    size_t len = (size_t)n * (size_t)m;
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * len;
        /* MLX's first pass covers every run of n and scales only when no
         * dense pass follows */
        for (int g = 0; g < m; g++)
            walsh(row + (size_t)g * (size_t)n, n, hm ? 1.0f : scale);
        if (hm)
            dense(row, n, m, hm, scale);
    }
}
