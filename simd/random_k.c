/* The threefry2x32 hash and MLX's layout of random bits over an output
 * (simd/random.h states the layout and how chunks map to counters). One
 * generic file: the hash runs over a fixed block of counters at a time, in
 * plain loops over lanes that the compiler vectorises (each lane is
 * independent 32-bit adds, rotates and xors), so it needs no ISA table. */
#include "simd/random.h"
#include "simd/threefry_block.h"

#include <string.h>

enum { RB_BLOCK = MC_THREEFRY_BLOCK };

void mc_random_key(uint64_t seed, uint32_t key[2])
{
    key[0] = (uint32_t)(seed >> 32);
    key[1] = (uint32_t)seed;
}

static void hash_block(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t *restrict x,
                       uint32_t *restrict y)
{
    mc_threefry_block(k0, k1, c0, c1, x, y);
}

void mc_threefry2x32(const uint32_t key[2], uint32_t c0, uint32_t c1, size_t n, uint32_t *x, uint32_t *y)
{
    uint32_t bx[RB_BLOCK], by[RB_BLOCK];
    for (size_t i = 0; i < n; i += RB_BLOCK) {
        size_t m = n - i < RB_BLOCK ? n - i : RB_BLOCK;
        hash_block(key[0], key[1], c0 + (uint32_t)i, c1 + (uint32_t)i, bx, by);
        memcpy(x + i, bx, m * sizeof *bx);
        memcpy(y + i, by, m * sizeof *by);
    }
}

size_t mc_random_bits_jobs(size_t nbytes)
{
    size_t words = nbytes / 4 + (nbytes % 4 != 0);
    return words / 2 + words % 2;
}

/* Copies m words to word index w of the output, cut at its nbytes: only the
 * output's last word can be partial, and it keeps its low-address bytes. */
static void put_words(unsigned char *out, size_t nbytes, size_t w, const uint32_t *src, size_t m)
{
    size_t off = 4 * w, len = 4 * m;
    if (len > nbytes - off)
        len = nbytes - off;
    memcpy(out + off, src, len);
}

void mc_random_bits_range(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out)
{
    size_t words = nbytes / 4 + (nbytes % 4 != 0);
    size_t half = words / 2, odd = words % 2, jobs = half + odd;
    unsigned char *o = out;
    uint32_t bx[RB_BLOCK], by[RB_BLOCK];
    if (j1 > jobs)
        j1 = jobs;
    size_t pair_end = j1 < half ? j1 : half;
    for (size_t j = j0; j < pair_end; j += RB_BLOCK) {
        size_t m = pair_end - j < RB_BLOCK ? pair_end - j : RB_BLOCK;
        /* counters are 32-bit in MLX: the casts wrap as its do */
        hash_block(key[0], key[1], (uint32_t)j, (uint32_t)(half + odd + j), bx, by);
        put_words(o, nbytes, j, bx, m);
        put_words(o, nbytes, half + odd + j, by, m);
    }
    if (odd && j0 <= half && half < j1) {
        uint32_t mx, my;
        mc_threefry2x32(key, (uint32_t)half, 0, 1, &mx, &my);
        put_words(o, nbytes, half, &mx, 1);
    }
}

void mc_random_bits(const uint32_t key[2], size_t nbytes, void *out)
{
    mc_random_bits_range(key, nbytes, 0, mc_random_bits_jobs(nbytes), out);
}

void mc_random_split(const uint32_t key[2], size_t num, uint32_t *out)
{
    mc_random_bits(key, num * 2 * sizeof *out, out);
}
