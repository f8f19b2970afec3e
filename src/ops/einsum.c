/* Owns einsum: parsing MLX's subscript language (implicit and explicit
 * output, one ellipsis per term), MLX's argument checks and messages, the
 * greedy contraction order MLX takes from numpy/opt_einsum, and running
 * that path with existing ops: repeated indices become diagonals, indices
 * seen once are summed, pairs with a contracted index go through one
 * batched matmul, the rest are multiplied and summed.
 *
 * Where MLX fails inside another op (an output index that no input has,
 * a batch index broadcast from size 1 in the first operand of a product),
 * this reports an einsum error or computes numpy's result instead. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op_util.h"
#include "runtime/error.h"

/* Subscripts are letters only once ellipses are expanded: 52 of them. */
enum { EI_MAX = 52 };

typedef struct {
    char str[EI_MAX + 1];
    int len;
    uint64_t set;
} ei_term;

static int letter_bit(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : c - 'A' + 26; }

static uint64_t bit_of(char c) { return (uint64_t)1 << letter_bit(c); }

static void term_set(ei_term *t, const char *s, int len)
{
    memcpy(t->str, s, (size_t)len);
    t->str[len] = 0;
    t->len = len;
    t->set = 0;
    for (int i = 0; i < len; i++)
        t->set |= bit_of(s[i]);
}

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

/* ---- the path ---- */

typedef struct {
    ei_term in[2];
    int nin; /* 2, or every remaining input for a naive step */
    ei_term *all;
    ei_term out;
    int pos[EI_MAX];
} ei_node;

typedef struct {
    int64_t size;
    size_t cost;
    uint64_t out;
    int dims, x, y;
} ei_pair;

static size_t set_size(uint64_t set, const int64_t *dim)
{
    size_t n = 1;
    for (int b = 0; b < EI_MAX; b++)
        if (set >> b & 1)
            n *= (size_t)dim[b];
    return n;
}

static size_t flops(uint64_t set, bool inner, int nterms, const int64_t *dim)
{
    size_t f = nterms - 1 > 1 ? (size_t)(nterms - 1) : 1;
    return set_size(set, dim) * (f + (inner ? 1 : 0));
}

/* The letters of set ordered by size, ties by letter (MLX's order among
 * equal sizes is its hash set's, which only changes a transpose). */
static void sorted_letters(uint64_t set, const int64_t *dim, ei_term *t)
{
    char s[EI_MAX];
    int n = 0;
    for (int b = 0; b < EI_MAX; b++)
        if (set >> b & 1)
            s[n++] = (char)(b < 26 ? 'a' + b : 'A' + b - 26);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && dim[letter_bit(s[j - 1])] > dim[letter_bit(s[j])]; j--) {
            char c = s[j];
            s[j] = s[j - 1];
            s[j - 1] = c;
        }
    term_set(t, s, n);
}

/* MLX's greedy_path: repeatedly contract the pair that removes the most
 * elements (ties: the cheaper), skipping outer products while another
 * pair exists; nodes are appended to path, returning their count. */
static int greedy(ei_term *inputs, int n, const ei_term *output, const int64_t *dim, size_t cost_limit,
                  size_t mem_limit, ei_node *path, ei_pair *pc, int *pairs)
{
    int npc = 0, npairs = 0, nodes = 0;
    size_t path_cost = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            pairs[2 * npairs] = i;
            pairs[2 * npairs + 1] = j;
            npairs++;
        }
    int num_in = n;
    for (int it = 0; it < num_in - 1; it++) {
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1 && npc > 0)
                break;
            for (int k = 0; k < npairs; k++) {
                int p1 = pairs[2 * k], p2 = pairs[2 * k + 1];
                if (pass == 0 && !(inputs[p1].set & inputs[p2].set))
                    continue;
                uint64_t both = inputs[p1].set | inputs[p2].set, keep = 0;
                for (int i = 0; i < n; i++)
                    if (i != p1 && i != p2)
                        keep |= inputs[i].set & both;
                keep |= output->set & both;
                size_t new_size = set_size(keep, dim);
                if (new_size > mem_limit)
                    continue;
                int64_t removed = (int64_t)set_size(inputs[p1].set, dim) + (int64_t)set_size(inputs[p2].set, dim) -
                                  (int64_t)new_size;
                size_t cost = flops(both, popcount64(both) > popcount64(keep), 2, dim);
                if (path_cost + cost > cost_limit)
                    continue;
                pc[npc++] = (ei_pair){removed, cost, keep, popcount64(both), p1, p2};
            }
        }
        if (npc == 0) {
            ei_node *nd = &path[nodes++];
            nd->nin = n;
            nd->all = inputs;
            nd->out = *output;
            for (int i = 0; i < n; i++)
                nd->pos[i] = i;
            return nodes;
        }
        int best = 0;
        for (int k = 1; k < npc; k++)
            if (pc[k].size > pc[best].size || (pc[k].size == pc[best].size && pc[k].cost < pc[best].cost))
                best = k;
        ei_pair b = pc[best];
        ei_node *nd = &path[nodes++];
        nd->nin = 2;
        nd->all = NULL;
        nd->in[0] = inputs[b.x];
        nd->in[1] = inputs[b.y];
        nd->pos[0] = b.x;
        nd->pos[1] = b.y;
        sorted_letters(b.out, dim, &nd->out);
        memmove(&inputs[b.y], &inputs[b.y + 1], sizeof *inputs * (size_t)(n - b.y - 1));
        memmove(&inputs[b.x], &inputs[b.x + 1], sizeof *inputs * (size_t)(n - b.x - 2));
        n -= 2;
        inputs[n++] = nd->out;
        int kept = 0;
        for (int k = 0; k < npc; k++) {
            ei_pair c = pc[k];
            if (c.x == b.x || c.x == b.y || c.y == b.x || c.y == b.y)
                continue;
            c.x -= (c.x > b.x) + (c.x > b.y);
            c.y -= (c.y > b.x) + (c.y > b.y);
            pc[kept++] = c;
        }
        npc = kept;
        npairs = 0;
        for (int i = 0; i < n - 1; i++) {
            pairs[2 * npairs] = i;
            pairs[2 * npairs + 1] = n - 1;
            npairs++;
        }
        path_cost += b.cost;
    }
    return nodes;
}

/* ---- running a step on handles ---- */

static int put(mlx_array *x, int rc, mlx_array r)
{
    if (rc) {
        mlx_array_free(r);
        return 1;
    }
    mlx_array_free(*x);
    *x = r;
    return 0;
}

/* Repeated letters become one axis each (a diagonal), kept at the end. */
static int collapse_repeats(mlx_array *x, ei_term *t, mlx_stream s)
{
    for (;;) {
        int i = -1, j = -1;
        for (int a = 0; a < t->len && j < 0; a++)
            for (int b = a + 1; b < t->len; b++)
                if (t->str[a] == t->str[b]) {
                    i = a;
                    j = b;
                    break;
                }
        if (j < 0)
            return 0;
        mlx_array r = mlx_array_new();
        if (put(x, mlx_diagonal(&r, *x, 0, i, j, s), r))
            return 1;
        char c = t->str[i], buf[EI_MAX + 1];
        int n = 0;
        for (int a = 0; a < t->len; a++)
            if (a != i && a != j)
                buf[n++] = t->str[a];
        buf[n++] = c;
        term_set(t, buf, n);
    }
}

static int transpose_to(mlx_array *x, const int *perm, int n, mlx_stream s)
{
    bool identity = true;
    for (int i = 0; i < n; i++)
        identity = identity && perm[i] == i;
    if (identity)
        return 0;
    mlx_array r = mlx_array_new();
    return put(x, mlx_transpose_axes(&r, *x, perm, (size_t)n, s), r);
}

/* MLX's preprocess: collapse repeats, then sum letters seen in only one
 * of the step's terms (output included). */
static int preprocess(ei_term *in, int nin, const ei_term *out, mlx_array *ops, mlx_stream s)
{
    for (int i = 0; i < nin; i++)
        if (popcount64(in[i].set) < in[i].len && collapse_repeats(&ops[i], &in[i], s))
            return 1;
    int count[EI_MAX] = {0};
    for (int i = 0; i < nin; i++)
        for (int b = 0; b < EI_MAX; b++)
            count[b] += (int)(in[i].set >> b & 1);
    for (int b = 0; b < EI_MAX; b++)
        count[b] += (int)(out->set >> b & 1);
    for (int i = 0; i < nin; i++) {
        int axes[EI_MAX], na = 0, n = 0;
        char buf[EI_MAX + 1];
        for (int a = 0; a < in[i].len; a++) {
            if (count[letter_bit(in[i].str[a])] == 1)
                axes[na++] = a;
            else
                buf[n++] = in[i].str[a];
        }
        if (na == 0)
            continue;
        mlx_array r = mlx_array_new();
        if (put(&ops[i], mlx_sum_axes(&r, ops[i], axes, (size_t)na, false, s), r))
            return 1;
        term_set(&in[i], buf, n);
    }
    return 0;
}

static int shape_of(mlx_array x, int ax) { return mlx_array_shape(x)[ax]; }

/* The product of two terms with contracted letters as one matmul:
 * a -> (batch, a-only, contracted), b -> (batch, contracted, b-only). */
static int dot_step(const ei_term *ta, const ei_term *tb, const ei_term *out, mlx_array a0, mlx_array b0,
                    mlx_array *res, mlx_stream s)
{
    int ac[EI_MAX], ab[EI_MAX], ao[EI_MAX], bc[EI_MAX], bb[EI_MAX], bo[EI_MAX];
    int nc = 0, nb = 0, nao = 0, nbo = 0;
    for (int i = 0; i < ta->len; i++) {
        uint64_t m = bit_of(ta->str[i]);
        if (!(out->set & m))
            ac[nc++] = i;
        else if (tb->set & m)
            ab[nb++] = i;
        else
            ao[nao++] = i;
    }
    for (int k = 0; k < nc; k++)
        bc[k] = (int)(strchr(tb->str, ta->str[ac[k]]) - tb->str);
    for (int k = 0; k < nb; k++)
        bb[k] = (int)(strchr(tb->str, ta->str[ab[k]]) - tb->str);
    for (int i = 0; i < tb->len; i++) {
        uint64_t m = bit_of(tb->str[i]);
        if ((out->set & m) && !(ta->set & m))
            bo[nbo++] = i;
    }
    mlx_array a = mlx_array_new(), b = mlx_array_new();
    int rc = mlx_array_set(&a, a0) || mlx_array_set(&b, b0);
    /* Contracted and batch letters broadcast between the operands (MLX
     * broadcasts the contracted ones; matmul the batch ones). */
    int ash[EI_MAX], bsh[EI_MAX];
    for (int i = 0; !rc && i < ta->len; i++)
        ash[i] = shape_of(a, i);
    for (int i = 0; !rc && i < tb->len; i++)
        bsh[i] = shape_of(b, i);
    for (int k = 0; k < nc; k++) {
        int d = ash[ac[k]] > bsh[bc[k]] ? ash[ac[k]] : bsh[bc[k]];
        ash[ac[k]] = bsh[bc[k]] = d;
    }
    for (int k = 0; k < nb; k++) {
        int d = ash[ab[k]] > bsh[bb[k]] ? ash[ab[k]] : bsh[bb[k]];
        ash[ab[k]] = bsh[bb[k]] = d;
    }
    mlx_array r = mlx_array_new();
    rc = rc || put(&a, mlx_broadcast_to(&r, a, ash, (size_t)ta->len, s), r);
    r = mlx_array_new();
    rc = rc || put(&b, mlx_broadcast_to(&r, b, bsh, (size_t)tb->len, s), r);
    int perm[EI_MAX], shp[EI_MAX], n = 0, outshape[EI_MAX], no = 0;
    int64_t m1 = 1, k1 = 1, n1 = 1;
    for (int k = 0; k < nb; k++) {
        perm[n] = ab[k];
        shp[n++] = ash[ab[k]];
        outshape[no++] = ash[ab[k]];
    }
    for (int k = 0; k < nao; k++) {
        perm[n + k] = ao[k];
        m1 *= ash[ao[k]];
        outshape[no++] = ash[ao[k]];
    }
    for (int k = 0; k < nc; k++) {
        perm[n + nao + k] = ac[k];
        k1 *= ash[ac[k]];
    }
    for (int k = 0; k < nbo; k++) {
        n1 *= bsh[bo[k]];
        outshape[no++] = bsh[bo[k]];
    }
    if (m1 > INT32_MAX || k1 > INT32_MAX || n1 > INT32_MAX) {
        rc = rc || mc_error("[einsum] The contraction is too large (%lld x %lld by %lld x %lld).", (long long)m1,
                            (long long)k1, (long long)k1, (long long)n1);
    }
    shp[n] = (int)m1;
    shp[n + 1] = (int)k1;
    rc = rc || transpose_to(&a, perm, ta->len, s);
    r = mlx_array_new();
    rc = rc || put(&a, mlx_reshape(&r, a, shp, (size_t)n + 2, s), r);
    for (int k = 0; k < nb; k++)
        perm[k] = bb[k];
    for (int k = 0; k < nc; k++)
        perm[nb + k] = bc[k];
    for (int k = 0; k < nbo; k++)
        perm[nb + nc + k] = bo[k];
    shp[n] = (int)k1;
    shp[n + 1] = (int)n1;
    rc = rc || transpose_to(&b, perm, tb->len, s);
    r = mlx_array_new();
    rc = rc || put(&b, mlx_reshape(&r, b, shp, (size_t)n + 2, s), r);
    mlx_array p = mlx_array_new();
    r = mlx_array_new();
    rc = rc || put(&p, mlx_matmul(&r, a, b, s), r);
    r = mlx_array_new();
    rc = rc || put(&p, mlx_reshape(&r, p, outshape, (size_t)no, s), r);
    /* p's letters: batch, a-only, b-only; the step's output order next. */
    char have[EI_MAX];
    int nh = 0;
    for (int k = 0; k < nb; k++)
        have[nh++] = ta->str[ab[k]];
    for (int k = 0; k < nao; k++)
        have[nh++] = ta->str[ao[k]];
    for (int k = 0; k < nbo; k++)
        have[nh++] = tb->str[bo[k]];
    for (int i = 0; i < out->len; i++)
        perm[i] = (int)((char *)memchr(have, out->str[i], (size_t)nh) - have);
    rc = rc || transpose_to(&p, perm, out->len, s);
    rc = rc || mlx_array_set(res, p);
    mlx_array_free(a);
    mlx_array_free(b);
    mlx_array_free(p);
    return rc;
}

/* Every term laid out on one set of axes, multiplied, and the letters not
 * in the output summed. */
static int naive_step(const ei_term *in, int nin, const ei_term *out, mlx_array *ops, mlx_array *res, mlx_stream s)
{
    char order[EI_MAX];
    int total = 0;
    for (int i = 0; i < nin; i++)
        for (int a = 0; a < in[i].len; a++)
            if (!memchr(order, in[i].str[a], (size_t)total))
                order[total++] = in[i].str[a];
    int rc = 0;
    mlx_array prod = mlx_array_new();
    for (int i = 0; i < nin && !rc; i++) {
        mlx_array x = mlx_array_new(), r = mlx_array_new();
        int shp[EI_MAX], perm[EI_MAX], extra = in[i].len;
        rc = mlx_array_set(&x, ops[i]);
        for (int a = 0; !rc && a < total; a++)
            shp[a] = a < in[i].len ? shape_of(x, a) : 1;
        if (!rc && in[i].len != total)
            rc = put(&x, mlx_reshape(&r, x, shp, (size_t)total, s), r);
        for (int a = 0; a < total; a++) {
            const char *at = memchr(in[i].str, order[a], (size_t)in[i].len);
            perm[a] = at ? (int)(at - in[i].str) : extra++;
        }
        rc = rc || transpose_to(&x, perm, total, s);
        r = mlx_array_new();
        if (!rc && i == 0)
            rc = mlx_array_set(&prod, x);
        else if (!rc)
            rc = put(&prod, mlx_multiply(&r, prod, x, s), r);
        else
            mlx_array_free(r);
        mlx_array_free(x);
    }
    int axes[EI_MAX], na = 0, perm[EI_MAX];
    char left[EI_MAX];
    int nl = 0;
    for (int a = 0; a < total; a++) {
        if (!(out->set & bit_of(order[a])))
            axes[na++] = a;
        else
            left[nl++] = order[a];
    }
    mlx_array r = mlx_array_new();
    if (!rc && na)
        rc = put(&prod, mlx_sum_axes(&r, prod, axes, (size_t)na, false, s), r);
    else
        mlx_array_free(r);
    for (int i = 0; i < out->len; i++)
        perm[i] = (int)((char *)memchr(left, out->str[i], (size_t)nl) - left);
    rc = rc || transpose_to(&prod, perm, out->len, s);
    rc = rc || mlx_array_set(res, prod);
    mlx_array_free(prod);
    return rc;
}

/* ---- parsing and checks ---- */

typedef struct {
    ei_term *in; /* n terms */
    ei_term out;
    int n;
    int64_t dim[EI_MAX];
} ei_spec;

/* Expands the one ellipsis of raw (len chars) into t, from the end of the
 * unused letters; ndim < 0 for the output (uses *max_ell). */
static int expand(const char *raw, int len, int ndim, int idx, const char *unused, int nunused, int *max_ell,
                  ei_term *t, mlx_array op)
{
    static const char fn[] = "einsum";
    int before = 0, after = 0, at = -1;
    for (int i = 0; i < len; i++) {
        char c = raw[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            if (i + 2 >= len || c != '.' || raw[i + 1] != '.' || raw[i + 2] != '.')
                return mc_error("[%s] Subscripts must be letters, but got '%c'.", fn, c);
            if (at >= 0)
                return mc_error("[%s] Only one ellipsis per subscript is allowed but found more in '%.*s'.", fn,
                                len, raw);
            at = i;
            i += 2;
            continue;
        }
        if (at >= 0)
            after++;
        else
            before++;
    }
    char buf[2 * EI_MAX + 4];
    int ell = 0;
    if (at >= 0) {
        if (ndim >= 0) {
            ell = ndim - before - after;
            if (ell < 0) {
                char sh[128];
                mc_shape_str(sh, sizeof sh, ndim, mlx_array_shape(op));
                return mc_error(
                    "[%s] Operand %d with shape %s has insufficient dimensions for subscript '%.*s'. The "
                    "ellipsis requires at least %d dimensions but the operand has %d dimensions.",
                    fn, idx, sh, len, raw, before + after, ndim);
            }
            if (ell > *max_ell)
                *max_ell = ell;
        } else {
            ell = *max_ell;
        }
        if (ell > nunused)
            return mc_error("[%s] The ellipsis needs %d letters but only %d are unused.", fn, ell, nunused);
    }
    int n = 0;
    for (int i = 0; i < len; i++) {
        if (i == at) {
            memcpy(buf + n, unused + nunused - ell, (size_t)ell);
            n += ell;
            i += 2;
        } else {
            buf[n++] = raw[i];
        }
    }
    if (n > EI_MAX)
        return mc_error("[%s] Subscript '%.*s' has more than %d indices.", fn, len, raw, EI_MAX);
    term_set(t, buf, n);
    return 0;
}

static int parse(const char *subscripts, mlx_vector_array operands, ei_spec *sp)
{
    static const char fn[] = "einsum";
    size_t slen = strlen(subscripts);
    char *str = malloc(slen + 1);
    if (!str)
        return mc_error_oom(fn, slen + 1);
    size_t L = 0;
    for (size_t i = 0; i < slen; i++)
        if (subscripts[i] != ' ')
            str[L++] = subscripts[i];
    str[L] = 0;
    int rc = 1;
    const char *arrow = strstr(str, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - str) : L;
    char implicit[EI_MAX + 4];
    const char *rhs;
    int rhs_len;
    if (arrow) {
        rhs = arrow + 2;
        rhs_len = (int)(L - lhs_len - 2);
    } else {
        /* MLX: the ellipsis first, then letters seen once, sorted. */
        int count[128] = {0};
        bool dots = false;
        for (size_t i = 0; i < L; i++) {
            unsigned char c = (unsigned char)str[i];
            if (c == ',')
                continue;
            if (c == '.' && !dots) {
                dots = true;
                continue;
            }
            count[c & 127]++;
        }
        int n = 0;
        if (dots) {
            memcpy(implicit, "...", 3);
            n = 3;
        }
        for (int c = 0; c < 128; c++)
            if (count[c] == 1 && n < EI_MAX + 3)
                implicit[n++] = (char)c;
        rhs = implicit;
        rhs_len = n;
    }
    /* Split on commas as getline does: no last empty term. */
    int nterms = 0;
    for (size_t i = 0; i < lhs_len; i++)
        nterms += str[i] == ',';
    if (lhs_len > 0 && str[lhs_len - 1] != ',')
        nterms++;
    int nops = (int)mlx_vector_array_size(operands);
    if (nops == 0) {
        mc_error("[%s] At least one operand is required.", fn);
        goto done;
    }
    if (nops > EI_MAX) {
        mc_error("[%s] At most %d operands are supported, got %d.", fn, EI_MAX, nops);
        goto done;
    }
    if (nops != nterms) {
        mc_error("[%s] Number of operands, %d, does not match number of input subscripts, %d", fn, nops, nterms);
        goto done;
    }
    char unused[EI_MAX];
    int nunused = 0;
    for (char c = 'a'; c <= 'z'; c++)
        if (!memchr(subscripts, c, slen))
            unused[nunused++] = c;
    for (char c = 'A'; c <= 'Z'; c++)
        if (!memchr(subscripts, c, slen))
            unused[nunused++] = c;
    sp->in = calloc((size_t)nops, sizeof *sp->in);
    if (!sp->in) {
        mc_error_oom(fn, sizeof *sp->in * (size_t)nops);
        goto done;
    }
    sp->n = nops;
    int max_ell = 0;
    size_t start = 0;
    for (int i = 0; i < nops; i++) {
        size_t end = start;
        while (end < lhs_len && str[end] != ',')
            end++;
        mlx_array op = mlx_array_new();
        if (mlx_vector_array_get(&op, operands, (size_t)i) || !op.ctx) {
            mlx_array_free(op);
            mc_error("[%s] Operand %d is an empty array handle.", fn, i);
            goto done;
        }
        int e = expand(str + start, (int)(end - start), (int)mlx_array_ndim(op), i, unused, nunused, &max_ell,
                       &sp->in[i], op);
        mlx_array_free(op);
        if (e)
            goto done;
        start = end + 1;
    }
    if (expand(rhs, rhs_len, -1, -1, unused, nunused, &max_ell, &sp->out, (mlx_array){NULL}))
        goto done;
    if (popcount64(sp->out.set) != sp->out.len) {
        mc_error("[%s] Repeat indices not allowed in output.", fn);
        goto done;
    }
    for (int b = 0; b < EI_MAX; b++)
        sp->dim[b] = -1;
    uint64_t seen = 0;
    for (int i = 0; i < nops; i++) {
        mlx_array op = mlx_array_new();
        mlx_vector_array_get(&op, operands, (size_t)i);
        const int *shape = mlx_array_shape(op);
        int ndim = (int)mlx_array_ndim(op);
        const ei_term *t = &sp->in[i];
        char sh[128];
        mc_shape_str(sh, sizeof sh, ndim, shape);
        mlx_array_free(op);
        if (t->len != ndim) {
            mc_error("[%s] Invalid number of subscripts %d for input %d with %d dimensions.", fn, t->len, i, ndim);
            goto done;
        }
        for (int a = 0; a < ndim; a++)
            for (int b = 0; b < a; b++)
                if (t->str[a] == t->str[b] && shape[a] != shape[b]) {
                    /* MLX reports the first size kept for the letter. */
                    mc_error("[%s] Dimensions of repeated subscripts do not have the same size (%d != %d).", fn,
                             shape[b], shape[a]);
                    goto done;
                }
        for (int a = 0; a < ndim; a++) {
            int64_t *d = &sp->dim[letter_bit(t->str[a])];
            if (*d < 0)
                *d = shape[a];
            if (shape[a] != 1 && *d != 1 && *d != shape[a]) {
                mc_error("[%s] Cannot broadcast dimension %d of input %d with shape %s to size %lld.", fn, a, i,
                         sh, (long long)*d);
                goto done;
            }
            if (shape[a] > *d)
                *d = shape[a];
        }
        seen |= t->set;
    }
    if (sp->out.set & ~seen) {
        for (int i = 0; i < sp->out.len; i++)
            if (!(seen & bit_of(sp->out.str[i]))) {
                mc_error("[%s] Output subscript '%c' does not appear in any input.", fn, sp->out.str[i]);
                goto done;
            }
    }
    rc = 0;
done:
    free(str);
    return rc;
}

/* ---- the op ---- */

static int run(ei_spec *sp, mlx_vector_array operands, mlx_array *res, mlx_stream s)
{
    static const char fn[] = "einsum";
    int n = sp->n, rc = 1, nops = n, nodes;
    size_t npc = (size_t)n * (size_t)n * 2 + 4;
    ei_term *terms = calloc((size_t)n, sizeof *terms);
    ei_node *path = calloc((size_t)n, sizeof *path);
    ei_pair *pc = calloc(npc, sizeof *pc);
    int *pairs = calloc(npc * 2, sizeof *pairs);
    mlx_array *ops = calloc((size_t)n, sizeof *ops);
    if (!terms || !path || !pc || !pairs || !ops) {
        mc_error_oom(fn, npc * sizeof *pc);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        ops[i] = mlx_array_new();
        mlx_vector_array_get(&ops[i], operands, (size_t)i);
    }
    memcpy(terms, sp->in, sizeof *terms * (size_t)n);
    size_t naive_cost = 0, max_size = set_size(sp->out.set | 0, sp->dim);
    {
        uint64_t all = 0;
        for (int i = 0; i < n; i++) {
            all |= sp->in[i].set;
            /* MLX sizes a term by its string: repeated letters count twice. */
            size_t sz = 1;
            for (int a = 0; a < sp->in[i].len; a++)
                sz *= (size_t)sp->dim[letter_bit(sp->in[i].str[a])];
            if (sz > max_size)
                max_size = sz;
        }
        naive_cost = flops(all, (all & ~sp->out.set) != 0, n, sp->dim);
    }
    if (n <= 2) {
        nodes = 1;
        path[0].nin = n;
        path[0].all = terms;
        path[0].out = sp->out;
        for (int i = 0; i < n; i++)
            path[0].pos[i] = i;
    } else {
        nodes = greedy(terms, n, &sp->out, sp->dim, naive_cost, max_size, path, pc, pairs);
        path[nodes - 1].out = sp->out;
    }
    for (int k = 0; k < nodes; k++) {
        ei_node *nd = &path[k];
        ei_term *in = nd->nin == 2 && !nd->all ? nd->in : nd->all;
        mlx_array step[EI_MAX];
        int ns = nd->nin;
        for (int i = 0; i < ns; i++) {
            step[i] = mlx_array_new();
            mlx_array_set(&step[i], ops[nd->pos[i]]);
        }
        mlx_array out = mlx_array_new();
        int e = preprocess(in, ns, &nd->out, step, s);
        bool dot = false;
        if (!e && ns == 2)
            dot = (in[0].set & ~nd->out.set) != 0;
        if (!e)
            e = dot ? dot_step(&in[0], &in[1], &nd->out, step[0], step[1], &out, s)
                    : naive_step(in, ns, &nd->out, step, &out, s);
        for (int i = 0; i < ns; i++)
            mlx_array_free(step[i]);
        if (e) {
            mlx_array_free(out);
            goto done;
        }
        for (int i = ns - 1; i >= 0; i--) {
            mlx_array_free(ops[nd->pos[i]]);
            memmove(&ops[nd->pos[i]], &ops[nd->pos[i] + 1], sizeof *ops * (size_t)(nops - nd->pos[i] - 1));
            nops--;
        }
        ops[nops++] = out;
    }
    rc = mlx_array_set(res, ops[0]);
done:
    for (int i = 0; ops && i < nops; i++)
        mlx_array_free(ops[i]);
    free(terms);
    free(path);
    free(pc);
    free(pairs);
    free(ops);
    return rc;
}

int mlx_einsum(mlx_array *res, const char *subscripts, const mlx_vector_array operands, const mlx_stream s)
{
    MC_STREAM_REQUIRED(s);
    static const char fn[] = "einsum";
    if (mc_op_check_res(res, fn))
        return 1;
    if (!subscripts)
        return mc_error("[%s] The subscripts string is NULL.", fn);
    if (!operands.ctx)
        return mc_error("[%s] The operands vector is an empty handle.", fn);
    ei_spec sp = {0};
    int rc = parse(subscripts, operands, &sp);
    if (!rc) {
        mlx_array r = mlx_array_new();
        rc = run(&sp, operands, &r, s);
        if (!rc)
            rc = mlx_array_set(res, r);
        mlx_array_free(r);
    }
    free(sp.in);
    return rc;
}
