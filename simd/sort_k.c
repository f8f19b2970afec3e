/* Row sort and row partition (simd/sort.h states the orders).
 *
 * Sort maps each element to an unsigned key whose integer order is MLX's
 * order (NaN to the largest key, -0.0 to +0.0's key, signed integers with
 * the sign bit flipped), pairs it with the element's index, and sorts the
 * pairs with a least-significant-digit radix sort, which is stable, so
 * equal keys keep index order, as std::stable_sort keeps them. Keys of up
 * to 32 bits share one 64-bit word with their index (key above, index
 * below); 64-bit keys sit beside theirs. Values are then gathered by index,
 * so -0.0 and NaN payloads come out as they went in.
 *
 * Partition keeps MLX's elements, comparators and algorithm (libstdc++'s
 * introselect), so equal keys are not interchangeable there: it works on
 * the elements themselves (values) or on uint32 indices compared through
 * the row (indices), instantiated per element type. */
#include "simd/sort.h"

#include <math.h>
#include <string.h>

#include "simd/half_convert.h"

/* Rows this short are insertion sorted: a radix pass costs 256 buckets. */
enum { SMALL_ROW = 48 };

/* Partition steps over more elements than this find their stops in
 * blocks of SPLIT_BLOCK. */
enum { SPLIT_BY_BLOCKS = 64, SPLIT_BLOCK = 64 };

/* ---- keys ---------------------------------------------------------------- */

static inline uint32_t key_f32(uint32_t u)
{
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return 0xffffffffu;
    if (u == 0x80000000u)
        u = 0;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline uint64_t key_f64(uint64_t u)
{
    if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull)
        return ~0ull;
    if (u == 0x8000000000000000ull)
        u = 0;
    return (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull);
}

/* float16 (inf 0x7c00) and bfloat16 (inf 0x7f80) differ only there */
static inline uint32_t key_h16(uint16_t u, uint16_t inf)
{
    if ((u & 0x7fffu) > inf)
        return 0xffffu;
    if (u == 0x8000u)
        u = 0;
    return (u & 0x8000u) ? (uint16_t)~u : (uint32_t)(u | 0x8000u);
}

static int key_bytes(int dtype)
{
    switch (dtype) {
    case MC_SIMD_BOOL:
    case MC_SIMD_UINT8:
    case MC_SIMD_INT8: return 1;
    case MC_SIMD_UINT16:
    case MC_SIMD_INT16:
    case MC_SIMD_FLOAT16:
    case MC_SIMD_BFLOAT16: return 2;
    case MC_SIMD_UINT32:
    case MC_SIMD_INT32:
    case MC_SIMD_FLOAT32: return 4;
    default: return 8;
    }
}

/* packed[i] = key(src[i]) << 32 | i, for keys of at most 32 bits */
static void load_packed(int dtype, const void *src, int64_t s, size_t n, uint64_t *out)
{
#define LOAD_LOOP(T, KEY)                        \
    do {                                         \
        const T *p = src;                        \
        for (size_t i = 0; i < n; i++, p += s) { \
            T v = *p;                            \
            out[i] = (uint64_t)(KEY) << 32 | i;  \
        }                                        \
    } while (0)
    switch (dtype) {
    case MC_SIMD_BOOL:
    case MC_SIMD_UINT8: LOAD_LOOP(uint8_t, v); break;
    case MC_SIMD_INT8: LOAD_LOOP(uint8_t, (uint8_t)(v ^ 0x80u)); break;
    case MC_SIMD_UINT16: LOAD_LOOP(uint16_t, v); break;
    case MC_SIMD_INT16: LOAD_LOOP(uint16_t, (uint16_t)(v ^ 0x8000u)); break;
    case MC_SIMD_FLOAT16: LOAD_LOOP(uint16_t, key_h16(v, 0x7c00u)); break;
    case MC_SIMD_BFLOAT16: LOAD_LOOP(uint16_t, key_h16(v, 0x7f80u)); break;
    case MC_SIMD_UINT32: LOAD_LOOP(uint32_t, v); break;
    case MC_SIMD_INT32: LOAD_LOOP(uint32_t, v ^ 0x80000000u); break;
    case MC_SIMD_FLOAT32: LOAD_LOOP(uint32_t, key_f32(v)); break;
    default: break;
    }
#undef LOAD_LOOP
}

typedef struct wide_entry {
    uint64_t k;
    uint64_t i;
} wide_entry;

static void load_wide(int dtype, const void *src, int64_t s, size_t n, wide_entry *out)
{
    const uint64_t *p = src;
    for (size_t i = 0; i < n; i++, p += s) {
        uint64_t v = *p, k;
        if (dtype == MC_SIMD_UINT64) {
            k = v;
        } else if (dtype == MC_SIMD_INT64) {
            k = v ^ 0x8000000000000000ull;
        } else if (dtype == MC_SIMD_FLOAT64) {
            k = key_f64(v);
        } else {
            /* complex64: real part (low word) first; a NaN real part is
             * NaN for MLX's comparator, whatever the imaginary part */
            uint32_t re = key_f32((uint32_t)v), im = key_f32((uint32_t)(v >> 32));
            k = re == 0xffffffffu ? ~0ull : (uint64_t)re << 32 | im;
        }
        out[i].k = k;
        out[i].i = i;
    }
}

/* ---- radix sorts ---------------------------------------------------------- */

/* Sorts a (n packed entries, key in bits 32..32+8*w) and returns the
 * buffer holding the result: a or tmp. */
static uint64_t *radix_packed(uint64_t *a, uint64_t *tmp, size_t n, int w)
{
    if (n <= SMALL_ROW) {
        for (size_t i = 1; i < n; i++) {
            uint64_t v = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1] > v; j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return a;
    }
    size_t cnt[4][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)(a[i] >> 32);
        for (int p = 0; p < w; p++)
            cnt[p][(k >> (8 * p)) & 255]++;
    }
    uint64_t *s = a, *d = tmp;
    for (int p = 0; p < w; p++) {
        size_t *c = cnt[p], sum = 0;
        if (c[(uint32_t)(s[0] >> (32 + 8 * p)) & 255] == n)
            continue; /* one digit everywhere: the pass would copy */
        for (int b = 0; b < 256; b++) {
            size_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        int sh = 32 + 8 * p;
        for (size_t i = 0; i < n; i++) {
            uint64_t v = s[i];
            d[c[(v >> sh) & 255]++] = v;
        }
        uint64_t *t = s;
        s = d;
        d = t;
    }
    return s;
}

static wide_entry *radix_wide(wide_entry *a, wide_entry *tmp, size_t n)
{
    if (n <= SMALL_ROW) {
        for (size_t i = 1; i < n; i++) {
            wide_entry v = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1].k > v.k; j--)
                a[j] = a[j - 1];
            a[j] = v;
        }
        return a;
    }
    size_t cnt[8][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++)
        for (int p = 0; p < 8; p++)
            cnt[p][(a[i].k >> (8 * p)) & 255]++;
    wide_entry *s = a, *d = tmp;
    for (int p = 0; p < 8; p++) {
        size_t *c = cnt[p], sum = 0;
        int sh = 8 * p;
        if (c[(s[0].k >> sh) & 255] == n)
            continue;
        for (int b = 0; b < 256; b++) {
            size_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++)
            d[c[(s[i].k >> sh) & 255]++] = s[i];
        wide_entry *t = s;
        s = d;
        d = t;
    }
    return s;
}

/* dst[j * ds] = src[idx(j) * ss] for elements of sz bytes */
#define GATHER(T)                                           \
    do {                                                    \
        const T *sp = src;                                  \
        T *dp = dst;                                        \
        for (size_t j = 0; j < n; j++)                      \
            dp[(int64_t)j * ds] = sp[(int64_t)IDX(j) * ss]; \
    } while (0)

static void emit(bool indices, size_t sz, const void *src, int64_t ss, void *dst, int64_t ds, size_t n,
                 const uint64_t *packed, const wide_entry *wide)
{
    if (indices) {
        uint32_t *dp = dst;
        for (size_t j = 0; j < n; j++)
            dp[(int64_t)j * ds] = packed ? (uint32_t)packed[j] : (uint32_t)wide[j].i;
        return;
    }
#define IDX(j) (packed ? (uint32_t)packed[j] : wide[j].i)
    switch (sz) {
    case 1: GATHER(uint8_t); break;
    case 2: GATHER(uint16_t); break;
    case 4: GATHER(uint32_t); break;
    default: GATHER(uint64_t); break;
    }
#undef IDX
}

size_t mc_sort_scratch_bytes(int dtype, size_t n)
{
    if (key_bytes(dtype) <= 4) /* two arrays of packed words; a row copy is smaller */
        return 2 * n * sizeof(uint64_t) + 16;
    /* two arrays of wide entries bound every use (partition: a row copy) */
    return 2 * n * sizeof(wide_entry) + 16;
}

void mc_sort_row(int dtype, bool indices, const void *src, int64_t sstride, void *dst, int64_t dstride, size_t n,
                 void *scratch)
{
    if (n == 0)
        return;
    int w = key_bytes(dtype);
    size_t sz = (size_t)key_bytes(dtype);
    if (w <= 4) {
        uint64_t *a = scratch, *r = radix_packed((load_packed(dtype, src, sstride, n, a), a), a + n, n, w);
        emit(indices, sz, src, sstride, dst, dstride, n, r, NULL);
    } else {
        wide_entry *a = scratch;
        load_wide(dtype, src, sstride, n, a);
        emit(indices, sz, src, sstride, dst, dstride, n, NULL, radix_wide(a, a + n, n));
    }
}

/* ---- partition: libstdc++'s nth_element, with bounded scans --------------- */

/* Defines select_NAME(void *a (of E), ptrdiff_t n, ptrdiff_t nth, const void *ctx),
 * comparing with LESS(x, y) (which may read ctx). */
#define DEFINE_SELECT(NAME, E, LESS)                                                                 \
    static void adjust_heap_##NAME(E *a, ptrdiff_t hole, ptrdiff_t len, E v, const void *ctx)        \
    {                                                                                                \
        (void)ctx;                                                                                   \
        ptrdiff_t top = hole, child = hole;                                                          \
        while (child < (len - 1) / 2) {                                                              \
            child = 2 * (child + 1);                                                                 \
            if (LESS(a[child], a[child - 1]))                                                        \
                child--;                                                                             \
            a[hole] = a[child];                                                                      \
            hole = child;                                                                            \
        }                                                                                            \
        if ((len & 1) == 0 && child == (len - 2) / 2) {                                              \
            child = 2 * (child + 1);                                                                 \
            a[hole] = a[child - 1];                                                                  \
            hole = child - 1;                                                                        \
        }                                                                                            \
        ptrdiff_t parent = (hole - 1) / 2;                                                           \
        while (hole > top && LESS(a[parent], v)) {                                                   \
            a[hole] = a[parent];                                                                     \
            hole = parent;                                                                           \
            parent = (hole - 1) / 2;                                                                 \
        }                                                                                            \
        a[hole] = v;                                                                                 \
    }                                                                                                \
    static void heap_select_##NAME(E *a, ptrdiff_t mid, ptrdiff_t len, const void *ctx)              \
    {                                                                                                \
        if (mid >= 2)                                                                                \
            for (ptrdiff_t parent = (mid - 2) / 2;; parent--) {                                      \
                adjust_heap_##NAME(a, parent, mid, a[parent], ctx);                                  \
                if (parent == 0)                                                                     \
                    break;                                                                           \
            }                                                                                        \
        for (ptrdiff_t i = mid; i < len; i++)                                                        \
            if (LESS(a[i], a[0])) {                                                                  \
                E v = a[i];                                                                          \
                a[i] = a[0];                                                                         \
                adjust_heap_##NAME(a, 0, mid, v, ctx);                                               \
            }                                                                                        \
    }                                                                                                \
    /* The Hoare split of a[lo+1, hi) around pv, with the scans' stops \
     * found a block at a time without branches (left: !(x < pv) rising; \
     * right: !(pv < x) falling, down to a[lo], which always stops it) and \
     * then paired in order: the scans would swap exactly these pairs until \
     * the first pair that crosses, and the left scan would stop at that \
     * pair's left stop or at the last right stop swapped, whichever comes \
     * first (every position past it holds a left stop by then). A block \
     * may reach past the crossing, where values may be swapped already; \
     * such stops only ever end the pairing, which is what the scans do \
     * there too. Same swaps, same cut, as the loop in select. */                             \
    static ptrdiff_t split_by_blocks_##NAME(E *a, ptrdiff_t lo, ptrdiff_t hi, E pv, const void *ctx) \
    {                                                                                                \
        (void)ctx;                                                                                   \
        uint32_t lb[SPLIT_BLOCK], rb[SPLIT_BLOCK];                                                   \
        ptrdiff_t ln = lo + 1, rn = hi - 1, last = hi;                                               \
        int lc = 0, li = 0, rc = 0, ri = 0;                                                          \
        for (;;) {                                                                                   \
            if (li == lc) {                                                                          \
                if (ln >= hi)                                                                        \
                    return last; /* no left stop before hi: the scan ends at hi */                   \
                ptrdiff_t e = ln + SPLIT_BLOCK < hi ? ln + SPLIT_BLOCK : hi;                         \
                lc = li = 0;                                                                         \
                for (ptrdiff_t j = ln; j < e; j++) {                                                 \
                    lb[lc] = (uint32_t)j;                                                            \
                    lc += !LESS(a[j], pv);                                                           \
                }                                                                                    \
                ln = e;                                                                              \
                continue;                                                                            \
            }                                                                                        \
            if (ri == rc) {                                                                          \
                if (rn < lo)                                                                         \
                    return lb[li] < last ? lb[li] : last; /* cannot happen: a[lo] stops */           \
                ptrdiff_t e = rn - SPLIT_BLOCK + 1 > lo ? rn - SPLIT_BLOCK + 1 : lo;                 \
                rc = ri = 0;                                                                         \
                for (ptrdiff_t j = rn; j >= e; j--) {                                                \
                    rb[rc] = (uint32_t)j;                                                            \
                    rc += !LESS(pv, a[j]);                                                           \
                }                                                                                    \
                rn = e - 1;                                                                          \
                continue;                                                                            \
            }                                                                                        \
            ptrdiff_t l = lb[li], r = rb[ri];                                                        \
            if (l >= r)                                                                              \
                return l < last ? l : last;                                                          \
            E t = a[l];                                                                              \
            a[l] = a[r];                                                                             \
            a[r] = t;                                                                                \
            last = r;                                                                                \
            li++;                                                                                    \
            ri++;                                                                                    \
        }                                                                                            \
    }                                                                                                \
    static void select_##NAME(void *av, ptrdiff_t n, ptrdiff_t nth, const void *ctx)                 \
    {                                                                                                \
        E *a = av;                                                                                   \
        ptrdiff_t lo = 0, hi = n, depth = 0;                                                         \
        for (size_t m = (size_t)n; m > 1; m >>= 1)                                                   \
            depth += 2;                                                                              \
        while (hi - lo > 3) {                                                                        \
            E t;                                                                                     \
            if (depth == 0) {                                                                        \
                heap_select_##NAME(a + lo, nth + 1 - lo, hi - lo, ctx);                              \
                t = a[lo], a[lo] = a[nth], a[nth] = t;                                               \
                return;                                                                              \
            }                                                                                        \
            depth--;                                                                                 \
            /* the median of a[lo+1], a[mid], a[hi-1] moves to a[lo] */                              \
            ptrdiff_t x = lo + 1, y = lo + (hi - lo) / 2, z = hi - 1, m;                             \
            if (LESS(a[x], a[y]))                                                                    \
                m = LESS(a[y], a[z]) ? y : LESS(a[x], a[z]) ? z : x;                                 \
            else                                                                                     \
                m = LESS(a[x], a[z]) ? x : LESS(a[y], a[z]) ? z : y;                                 \
            t = a[lo], a[lo] = a[m], a[m] = t;                                                       \
            ptrdiff_t f = lo + 1, l = hi;                                                            \
            E pv = a[lo]; /* a[lo] stays put while the row is split */                               \
            if (hi - lo > SPLIT_BY_BLOCKS) {                                                         \
                f = split_by_blocks_##NAME(a, lo, hi, pv, ctx);                                      \
            } else {                                                                                 \
                for (;;) {                                                                           \
                    while (f < hi && LESS(a[f], pv))                                                 \
                        f++;                                                                         \
                    l--;                                                                             \
                    while (l > lo && LESS(pv, a[l]))                                                 \
                        l--;                                                                         \
                    if (!(f < l))                                                                    \
                        break;                                                                       \
                    t = a[f], a[f] = a[l], a[l] = t;                                                 \
                    f++;                                                                             \
                }                                                                                    \
            }                                                                                        \
            if (f <= nth)                                                                            \
                lo = f;                                                                              \
            else                                                                                     \
                hi = f;                                                                              \
        }                                                                                            \
        for (ptrdiff_t i = lo + 1; i < hi; i++) {                                                    \
            E v = a[i];                                                                              \
            if (LESS(v, a[lo])) {                                                                    \
                memmove(a + lo + 1, a + lo, (size_t)(i - lo) * sizeof(E));                           \
                a[lo] = v;                                                                           \
            } else {                                                                                 \
                ptrdiff_t j = i;                                                                     \
                for (; j > lo + 1 && LESS(v, a[j - 1]); j--)                                         \
                    a[j] = a[j - 1];                                                                 \
                a[j] = v;                                                                            \
            }                                                                                        \
        }                                                                                            \
    }

typedef struct c64 {
    float re, im;
} c64;

/* MLX's comparators. Values: nan_aware_less, which tests NaN for float,
 * double and complex64 (whose isnan reads the real part); float16 and
 * bfloat16 compare as float, NaN unordered. Complex order is MLX's
 * operator<: real parts, then imaginary parts. */
#define LT_PLAIN(x, y) ((x) < (y))
#define LT_NAN(x, y) (!isnan(x) && (isnan(y) || (x) < (y)))
#define C64_LT(x, y) ((y).re > (x).re || ((y).re == (x).re && (y).im > (x).im))
#define C64_EQ(x, y) ((x).re == (y).re && (x).im == (y).im)
#define LT_C64(x, y) (!isnan((x).re) && (isnan((y).re) || C64_LT(x, y)))
#define LT_F16(x, y) (mc_f16_to_f32(x) < mc_f16_to_f32(y))
#define LT_BF16(x, y) (mc_bf16_to_f32(x) < mc_bf16_to_f32(y))

DEFINE_SELECT(u8, uint8_t, LT_PLAIN)
DEFINE_SELECT(i8, int8_t, LT_PLAIN)
DEFINE_SELECT(u16, uint16_t, LT_PLAIN)
DEFINE_SELECT(i16, int16_t, LT_PLAIN)
DEFINE_SELECT(u32, uint32_t, LT_PLAIN)
DEFINE_SELECT(i32, int32_t, LT_PLAIN)
DEFINE_SELECT(u64, uint64_t, LT_PLAIN)
DEFINE_SELECT(i64, int64_t, LT_PLAIN)
DEFINE_SELECT(f16, uint16_t, LT_F16)
DEFINE_SELECT(bf16, uint16_t, LT_BF16)
DEFINE_SELECT(f32, float, LT_NAN)
DEFINE_SELECT(f64, double, LT_NAN)
/* rows without NaN compare as plain floats: the same order, fewer tests */
DEFINE_SELECT(f32n, float, LT_PLAIN)
DEFINE_SELECT(f64n, double, LT_PLAIN)
DEFINE_SELECT(c64, c64, LT_C64)

/* Indices: MLX's argpartition comparator, v1 < v2 or equal with the lower
 * index first; NaN tested for float and double only. */
typedef struct row_ref {
    const void *p;
    int64_t s;
} row_ref;
#define AT(T, i) (((const T *)((const row_ref *)ctx)->p)[(int64_t)(i) * ((const row_ref *)ctx)->s])
#define ILT_BY(T, GET, LT, EQ, x, y) (LT(GET(T, x), GET(T, y)) || (EQ(GET(T, x), GET(T, y)) && (x) < (y)))
#define EQ_PLAIN(x, y) ((x) == (y))
#define ILT_NAN(T, x, y) (!isnan(AT(T, x)) && (isnan(AT(T, y)) || ILT_BY(T, AT, LT_PLAIN, EQ_PLAIN, x, y)))
#define F16AT(T, i) mc_f16_to_f32(AT(uint16_t, i))
#define BF16AT(T, i) mc_bf16_to_f32(AT(uint16_t, i))

#define ILT_U8(x, y) ILT_BY(uint8_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_I8(x, y) ILT_BY(int8_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_U16(x, y) ILT_BY(uint16_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_I16(x, y) ILT_BY(int16_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_U32(x, y) ILT_BY(uint32_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_I32(x, y) ILT_BY(int32_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_U64(x, y) ILT_BY(uint64_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_I64(x, y) ILT_BY(int64_t, AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_F16(x, y) ILT_BY(uint16_t, F16AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_BF16(x, y) ILT_BY(uint16_t, BF16AT, LT_PLAIN, EQ_PLAIN, x, y)
#define ILT_F32(x, y) ILT_NAN(float, x, y)
#define ILT_F64(x, y) ILT_NAN(double, x, y)
#define ILT_C64(x, y) ILT_BY(c64, AT, C64_LT, C64_EQ, x, y)

DEFINE_SELECT(iu8, uint32_t, ILT_U8)
DEFINE_SELECT(ii8, uint32_t, ILT_I8)
DEFINE_SELECT(iu16, uint32_t, ILT_U16)
DEFINE_SELECT(ii16, uint32_t, ILT_I16)
DEFINE_SELECT(iu32, uint32_t, ILT_U32)
DEFINE_SELECT(ii32, uint32_t, ILT_I32)
DEFINE_SELECT(iu64, uint32_t, ILT_U64)
DEFINE_SELECT(ii64, uint32_t, ILT_I64)
DEFINE_SELECT(if16, uint32_t, ILT_F16)
DEFINE_SELECT(ibf16, uint32_t, ILT_BF16)
DEFINE_SELECT(if32, uint32_t, ILT_F32)
DEFINE_SELECT(if64, uint32_t, ILT_F64)
DEFINE_SELECT(ic64, uint32_t, ILT_C64)

typedef void (*select_fn)(void *a, ptrdiff_t n, ptrdiff_t nth, const void *ctx);

static void pick(int dtype, select_fn *val, select_fn *idx)
{
#define PICK(V, I)         \
    do {                   \
        *val = select_##V; \
        *idx = select_##I; \
    } while (0)
    switch (dtype) {
    case MC_SIMD_BOOL:
    case MC_SIMD_UINT8: PICK(u8, iu8); break;
    case MC_SIMD_INT8: PICK(i8, ii8); break;
    case MC_SIMD_UINT16: PICK(u16, iu16); break;
    case MC_SIMD_INT16: PICK(i16, ii16); break;
    case MC_SIMD_UINT32: PICK(u32, iu32); break;
    case MC_SIMD_INT32: PICK(i32, ii32); break;
    case MC_SIMD_UINT64: PICK(u64, iu64); break;
    case MC_SIMD_INT64: PICK(i64, ii64); break;
    case MC_SIMD_FLOAT16: PICK(f16, if16); break;
    case MC_SIMD_BFLOAT16: PICK(bf16, ibf16); break;
    case MC_SIMD_FLOAT32: PICK(f32, if32); break;
    case MC_SIMD_FLOAT64: PICK(f64, if64); break;
    default: PICK(c64, ic64); break;
    }
#undef PICK
}

static void copy_strided(void *dst, int64_t ds, const void *src, int64_t ss, size_t n, size_t sz)
{
    if (ds == 1 && ss == 1) {
        memcpy(dst, src, n * sz);
        return;
    }
    switch (sz) {
#define COPY(T)                                                          \
    for (size_t j = 0; j < n; j++)                                       \
        ((T *)dst)[(int64_t)j * ds] = ((const T *)src)[(int64_t)j * ss]; \
    break
    case 1: COPY(uint8_t);
    case 2: COPY(uint16_t);
    case 4: COPY(uint32_t);
    default: COPY(uint64_t);
#undef COPY
    }
}

static bool has_nan_f32(const float *a, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= a[i] != a[i];
    return any;
}

static bool has_nan_f64(const double *a, size_t n)
{
    int any = 0;
    for (size_t i = 0; i < n; i++)
        any |= a[i] != a[i];
    return any;
}

void mc_partition_row(int dtype, bool indices, const void *src, int64_t sstride, void *dst, int64_t dstride,
                      size_t n, size_t kth, void *scratch)
{
    if (n == 0)
        return;
    select_fn val, idx;
    pick(dtype, &val, &idx);
    if (indices) {
        uint32_t *a = dstride == 1 ? dst : scratch;
        for (size_t i = 0; i < n; i++)
            a[i] = (uint32_t)i;
        row_ref r = {src, sstride};
        idx(a, (ptrdiff_t)n, (ptrdiff_t)kth, &r);
        if (a != dst)
            copy_strided(dst, dstride, a, 1, n, 4);
        return;
    }
    size_t sz = (size_t)key_bytes(dtype);
    void *a = dstride == 1 ? dst : scratch;
    if (a != src || sstride != 1)
        copy_strided(a, 1, src, sstride, n, sz);
    if (dtype == MC_SIMD_FLOAT32 && !has_nan_f32(a, n))
        val = select_f32n;
    else if (dtype == MC_SIMD_FLOAT64 && !has_nan_f64(a, n))
        val = select_f64n;
    val(a, (ptrdiff_t)n, (ptrdiff_t)kth, NULL);
    if (a != dst)
        copy_strided(dst, dstride, a, 1, n, sz);
}
