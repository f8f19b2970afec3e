/* Counter-based random bits as MLX makes them (mlx/random.cpp,
 * mlx/backend/cpu/threefry.cpp, RandomBits::eval_cpu in
 * mlx/backend/cpu/primitives.cpp, MLX 0.31.1): the threefry2x32 hash, the
 * seed -> key rule, split, and the layout of one key's output bytes. Pointers
 * and lengths only; the distributions built on these bits are ops (their
 * formulas are in docs/random.md).
 *
 * Layout of one key's output of nbytes bytes (n elements of 1, 2 or 4 bytes,
 * row-major; a byte stream, so the element width only matters through
 * nbytes): W = ceil(nbytes / 4) 32-bit words, half = W / 2, odd = W % 2.
 * Counter j < half hashes the pair (j, half + odd + j): its first word is
 * word j, its second word is word half + odd + j. When W is odd, counter
 * j == half hashes (half, 0) and only its first word is kept, as word half.
 * Words are stored in the host's (little-endian) byte order and the last
 * word is cut to the bytes that remain, so a width-1 or width-2 element is a
 * byte or a half of a word. Counters are 32-bit: beyond 2^32 words they
 * wrap, as MLX's do.
 *
 * Chunks: the counters 0 .. mc_random_bits_jobs(nbytes) - 1 write disjoint
 * bytes, so a caller may split that range into chunks, run each chunk on any
 * thread (mc_random_bits_range), and get exactly the bytes of the whole call.
 * A chunk [j0, j1) writes words [j0, min(j1, half)) and the same count of
 * words from half + odd + j0, plus word half when odd and j0 <= half < j1. */
#ifndef MC_SIMD_RANDOM_H
#define MC_SIMD_RANDOM_H

#include <stddef.h>
#include <stdint.h>

/* key = {seed >> 32, seed & 0xffffffff}: MLX's random::key(seed). */
void mc_random_key(uint64_t seed, uint32_t key[2]);

/* For i < n: (x[i], y[i]) = threefry2x32(key, (c0 + i, c1 + i)), the
 * counters wrapping at 2^32 (20 rounds, Threefish's 2x32 rotations). */
void mc_threefry2x32(const uint32_t key[2], uint32_t c0, uint32_t c1, size_t n, uint32_t *x, uint32_t *y);

/* The number of counters (chunkable units) of an nbytes output: ceil(W / 2)
 * with W = ceil(nbytes / 4); 0 for nbytes == 0. */
size_t mc_random_bits_jobs(size_t nbytes);

/* Writes the bytes that counters [j0, j1) own (see the layout above) into
 * out, the start of the whole nbytes output; other bytes are not touched.
 * j1 is clipped to mc_random_bits_jobs(nbytes). */
void mc_random_bits_range(const uint32_t key[2], size_t nbytes, size_t j0, size_t j1, void *out);

/* The whole nbytes output of one key (MLX's random::bits for one key). */
void mc_random_bits(const uint32_t key[2], size_t nbytes, void *out);

/* out[2 * r], out[2 * r + 1] = the r-th of num keys split from key (MLX's
 * random::split(key, num), the bits of shape (num, 2)). */
void mc_random_split(const uint32_t key[2], size_t num, uint32_t *out);

#endif
