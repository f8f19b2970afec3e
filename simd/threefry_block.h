/* The threefry2x32-20 hash of a block of consecutive counter pairs, inline
 * so that each file that hashes (random_k.c, and random_dist.c in each of
 * its ISA builds) gets a copy compiled for its own vector width. */
#ifndef MC_SIMD_THREEFRY_BLOCK_H
#define MC_SIMD_THREEFRY_BLOCK_H

#include <stdint.h>

/* Counters hashed per block: a fixed trip count lets the vectoriser work
 * without a scalar epilogue even at -O2; a short last block is hashed in
 * full and only its first lanes are kept. */
enum { MC_THREEFRY_BLOCK = 64 };

/* Threefish-256's parity constant, which every threefry key schedule adds. */
#define MC_THREEFRY_PARITY 0x1BD11BDAu

static inline uint32_t mc_threefry_rotl(uint32_t v, unsigned r) { return (v << r) | (v >> (32 - r)); }

/* Four mixing steps with the given rotations. */
#define MC_THREEFRY_MIX4(r0, r1, r2, r3)         \
    do {                                         \
        a += b, b = mc_threefry_rotl(b, r0) ^ a; \
        a += b, b = mc_threefry_rotl(b, r1) ^ a; \
        a += b, b = mc_threefry_rotl(b, r2) ^ a; \
        a += b, b = mc_threefry_rotl(b, r3) ^ a; \
    } while (0)

/* (x[l], y[l]) = threefry2x32((k0, k1), (c0 + l, c1 + l)) for l < MC_THREEFRY_BLOCK,
 * the counters wrapping at 2^32: five groups of four rounds, each followed
 * by the injection of the key schedule (k0, k1, k0 ^ k1 ^ parity). */
static inline void mc_threefry_block(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t *restrict x,
                                     uint32_t *restrict y)
{
    const uint32_t k2 = k0 ^ k1 ^ MC_THREEFRY_PARITY;
    for (uint32_t l = 0; l < MC_THREEFRY_BLOCK; l++) {
        uint32_t a = c0 + l + k0, b = c1 + l + k1;
        MC_THREEFRY_MIX4(13, 15, 26, 6);
        a += k1, b += k2 + 1;
        MC_THREEFRY_MIX4(17, 29, 16, 24);
        a += k2, b += k0 + 2;
        MC_THREEFRY_MIX4(13, 15, 26, 6);
        a += k0, b += k1 + 3;
        MC_THREEFRY_MIX4(17, 29, 16, 24);
        a += k1, b += k2 + 4;
        MC_THREEFRY_MIX4(13, 15, 26, 6);
        a += k2, b += k0 + 5;
        x[l] = a;
        y[l] = b;
    }
}

#endif
