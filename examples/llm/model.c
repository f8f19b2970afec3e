/* The model: loading its weights from model.safetensors, and the forward
 * pass (mlx-lm's mlx_lm/models/llama.py, written with mlx-c's ops). The
 * pass only builds the lazy graph; whoever asks for the logits evaluates
 * it, so one mlx_eval runs a whole token step.
 *
 * Intermediate arrays live in a scope: each op's result is a new slot,
 * the scope remembers the first failure (later ops are skipped), and one
 * call frees every slot. The graph keeps what it needs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm.h"

/* ---- a scope of intermediate arrays ---- */

typedef struct scope {
    mlx_array *a;
    int n, cap;
    int err;
    mlx_stream s;
} scope;

/* A new empty array owned by the scope (NULL once the scope has failed). */
static mlx_array *slot(scope *sc)
{
    if (sc->err)
        return NULL;
    if (sc->n == sc->cap) {
        int cap = sc->cap ? 2 * sc->cap : 64;
        mlx_array *a = realloc(sc->a, sizeof *a * (size_t)cap);
        if (!a) {
            fprintf(stderr, "llm: out of memory\n");
            sc->err = 1;
            return NULL;
        }
        sc->a = a, sc->cap = cap;
    }
    sc->a[sc->n] = mlx_array_new();
    return &sc->a[sc->n++];
}

static void scope_free(scope *sc)
{
    for (int i = 0; i < sc->n; i++)
        mlx_array_free(sc->a[i]);
    free(sc->a);
    sc->a = NULL;
    sc->n = sc->cap = 0;
}

static const mlx_array EMPTY = {0};

/* The wrapped ops: each result is a new slot of the scope; after a failure
 * they do nothing and return an empty array. Arguments are evaluated
 * before the slot is taken, so calls nest. */
static mlx_array keep(scope *sc, mlx_array *o, int rc)
{
    if (rc) {
        sc->err = 1;
        return EMPTY;
    }
    return *o;
}

static mlx_array add(scope *sc, mlx_array a, mlx_array b)
{
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_add(o, a, b, sc->s));
}

static mlx_array mul(scope *sc, mlx_array a, mlx_array b)
{
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_multiply(o, a, b, sc->s));
}

static mlx_array sigmoid(scope *sc, mlx_array a)
{
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_sigmoid(o, a, sc->s));
}

static mlx_array reshape(scope *sc, mlx_array a, int d0, int d1, int d2, int d3, int nd)
{
    int shape[4] = {d0, d1, d2, d3};
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_reshape(o, a, shape, (size_t)nd, sc->s));
}

static mlx_array transpose0213(scope *sc, mlx_array a)
{
    static const int axes[4] = {0, 2, 1, 3};
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_transpose_axes(o, a, axes, 4, sc->s));
}

static mlx_array take_rows(scope *sc, mlx_array a, mlx_array idx)
{
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_take_axis(o, a, idx, 0, sc->s));
}

/* a[start:stop] over ndim axes, step 1 */
static mlx_array slice(scope *sc, mlx_array a, const int *start, const int *stop, int ndim)
{
    static const int step[4] = {1, 1, 1, 1};
    mlx_array *o = slot(sc);
    return !o ? EMPTY
              : keep(sc, o, mlx_slice(o, a, start, (size_t)ndim, stop, (size_t)ndim, step, (size_t)ndim, sc->s));
}

static mlx_array rms_norm(scope *sc, mlx_array x, mlx_array w, float eps)
{
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_fast_rms_norm(o, x, w, eps, sc->s));
}

/* ---- linear layers ---- */

/* x @ W^T (+ bias): quantized_matmul for a quantized W, as
 * nn.QuantizedLinear does, else a matmul with W transposed. */
static mlx_array linear(scope *sc, mlx_array x, const llm_linear *l)
{
    mlx_array *o = slot(sc);
    if (!o)
        return EMPTY;
    int rc;
    if (l->quantized) {
        mlx_optional_int gs = {l->group_size, true}, bits = {l->bits, true};
        rc = mlx_quantized_matmul(o, x, l->w, l->scales, l->biases, true, gs, bits, "affine", sc->s);
    } else {
        mlx_array wt = mlx_array_new();
        rc = mlx_swapaxes(&wt, l->w, 0, 1, sc->s) || mlx_matmul(o, x, wt, sc->s);
        mlx_array_free(wt);
    }
    mlx_array y = keep(sc, o, rc);
    return l->bias.ctx ? add(sc, y, l->bias) : y;
}

/* Rows `tokens` of the embedding (n, hidden): a quantized table is
 * dequantized row by row, as nn.QuantizedEmbedding does. */
static mlx_array embed(scope *sc, const llm_linear *e, mlx_array tokens)
{
    if (!e->quantized)
        return take_rows(sc, e->w, tokens);
    mlx_array w = take_rows(sc, e->w, tokens), s = take_rows(sc, e->scales, tokens),
              b = take_rows(sc, e->biases, tokens);
    mlx_optional_int gs = {e->group_size, true}, bits = {e->bits, true};
    mlx_optional_dtype none = {MLX_FLOAT32, false};
    mlx_array *o = slot(sc);
    return !o ? EMPTY : keep(sc, o, mlx_dequantize(o, w, s, b, gs, bits, "affine", EMPTY, none, sc->s));
}

/* ---- loading ---- */

/* Takes name's array from the map into *a; absent is an error when need. */
static int get(mlx_array *a, mlx_map_string_to_array w, const char *name, bool need)
{
    *a = mlx_array_new();
    int rc = mlx_map_string_to_array_get(a, w, name);
    if (rc == 2 && !need)
        return 0;
    if (rc)
        fprintf(stderr, "model.safetensors: no tensor \"%s\"\n", name);
    return rc != 0;
}

static int load_linear(llm_linear *l, const llm_config *c, mlx_map_string_to_array w, const char *path, bool bias)
{
    char name[256];
    snprintf(name, sizeof name, "%s.weight", path);
    if (get(&l->w, w, name, true))
        return 1;
    snprintf(name, sizeof name, "%s.scales", path);
    if (get(&l->scales, w, name, false))
        return 1;
    l->quantized = l->scales.ctx != NULL;
    if (l->quantized) {
        llm_config_quant_of(c, path, &l->group_size, &l->bits);
        snprintf(name, sizeof name, "%s.biases", path);
        if (get(&l->biases, w, name, true))
            return 1;
    }
    snprintf(name, sizeof name, "%s.bias", path);
    return get(&l->bias, w, name, bias);
}

static void free_linear(llm_linear *l)
{
    mlx_array_free(l->w), mlx_array_free(l->scales), mlx_array_free(l->biases), mlx_array_free(l->bias);
}

static const float PI_F = 3.14159265358979f;

/* mlx-lm's Llama3RoPE frequencies: base^(2i/dims), stretched by factor
 * for long wavelengths and blended between the two cut-offs. */
static int llama3_freqs(llm_model *m)
{
    const llm_config *c = &m->cfg;
    int half = c->head_dim / 2;
    float *f = malloc(sizeof *f * (size_t)half);
    if (!f)
        return 1;
    float low_wl = c->rope_orig_ctx / c->rope_low, high_wl = c->rope_orig_ctx / c->rope_high;
    for (int i = 0; i < half; i++) {
        float freq = powf(c->rope_theta, (float)(2 * i) / (float)c->head_dim);
        float wl = 2.0f * PI_F * freq;
        float scaled = wl > low_wl ? freq * c->rope_factor : freq;
        if (wl > high_wl && wl < low_wl) {
            float smooth = (c->rope_orig_ctx / wl - c->rope_low) / (c->rope_high - c->rope_low);
            scaled = scaled / ((1.0f - smooth) / c->rope_factor + smooth);
        }
        f[i] = scaled;
    }
    int shape[1] = {half};
    m->rope_freqs = mlx_array_new_data(f, shape, 1, MLX_FLOAT32);
    free(f);
    return 0;
}

int llm_load(llm_model *m, const char *dir)
{
    memset(m, 0, sizeof *m);
    m->s = mlx_default_cpu_stream_new();
    if (llm_config_read(&m->cfg, dir)) {
        llm_free(m);
        return 1;
    }
    const llm_config *c = &m->cfg;
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    mlx_map_string_to_array w = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    int rc = mlx_load_safetensors(&w, &meta, path, m->s);
    mlx_map_string_to_string_free(meta);
    if (rc) {
        fprintf(stderr, "%s: cannot load\n", path);
        goto done;
    }
    rc = 1;
    m->layer = calloc((size_t)c->layers, sizeof *m->layer);
    if (!m->layer)
        goto done;
    if (load_linear(&m->embed, c, w, "model.embed_tokens", false) || get(&m->norm, w, "model.norm.weight", true) ||
        (!c->tie_embeddings && load_linear(&m->lm_head, c, w, "lm_head", false)))
        goto done;
    for (int i = 0; i < c->layers; i++) {
        llm_layer *L = &m->layer[i];
        char p[256], n[256];
        struct {
            llm_linear *l;
            const char *name;
            bool bias;
        } lin[7] = {{&L->q, "self_attn.q_proj", c->attention_bias}, {&L->k, "self_attn.k_proj", c->attention_bias},
                    {&L->v, "self_attn.v_proj", c->attention_bias}, {&L->o, "self_attn.o_proj", c->attention_bias},
                    {&L->gate, "mlp.gate_proj", c->mlp_bias},       {&L->up, "mlp.up_proj", c->mlp_bias},
                    {&L->down, "mlp.down_proj", c->mlp_bias}};
        for (int j = 0; j < 7; j++) {
            snprintf(p, sizeof p, "model.layers.%d.%s", i, lin[j].name);
            if (load_linear(lin[j].l, c, w, p, lin[j].bias))
                goto done;
        }
        snprintf(n, sizeof n, "model.layers.%d.input_layernorm.weight", i);
        if (get(&L->attn_norm, w, n, true))
            goto done;
        snprintf(n, sizeof n, "model.layers.%d.post_attention_layernorm.weight", i);
        if (get(&L->mlp_norm, w, n, true))
            goto done;
    }
    if (c->rope_kind == LLM_ROPE_LLAMA3 && llama3_freqs(m))
        goto done;
    rc = 0;
done:
    mlx_map_string_to_array_free(w);
    if (rc)
        llm_free(m);
    return rc;
}

void llm_free(llm_model *m)
{
    if (m->layer) {
        for (int i = 0; i < m->cfg.layers; i++) {
            llm_layer *L = &m->layer[i];
            mlx_array_free(L->attn_norm), mlx_array_free(L->mlp_norm);
            llm_linear *lin[7] = {&L->q, &L->k, &L->v, &L->o, &L->gate, &L->up, &L->down};
            for (int j = 0; j < 7; j++)
                free_linear(lin[j]);
        }
        free(m->layer);
    }
    free_linear(&m->embed), free_linear(&m->lm_head);
    mlx_array_free(m->norm), mlx_array_free(m->rope_freqs);
    mlx_stream_free(m->s);
    llm_config_free(&m->cfg);
    memset(m, 0, sizeof *m);
}

/* ---- the cache ---- */

int llm_cache_init(llm_cache *c, const llm_model *m, int capacity)
{
    memset(c, 0, sizeof *c);
    c->layers = m->cfg.layers;
    c->capacity = capacity;
    c->k = calloc((size_t)c->layers, sizeof *c->k);
    c->v = calloc((size_t)c->layers, sizeof *c->v);
    if (!c->k || !c->v) {
        llm_cache_free(c);
        return 1;
    }
    return 0;
}

void llm_cache_free(llm_cache *c)
{
    for (int i = 0; c->k && c->v && i < c->layers; i++)
        mlx_array_free(c->k[i]), mlx_array_free(c->v[i]);
    free(c->k), free(c->v);
    memset(c, 0, sizeof *c);
}

/* Writes upd (1, heads, n, hd) at offset off of *store (zeros of upd's
 * dtype on first use) and returns the valid part, store[:, :, :off + n].
 * Once *store moves on to the updated array, the slice_update node holds
 * the only reference to the old one, so evaluation writes in place. */
static mlx_array cache_put(scope *sc, mlx_array *store, mlx_array upd, int off, int n, int cap)
{
    if (sc->err)
        return EMPTY;
    const int *sh = mlx_array_shape(upd);
    int heads = sh[1], hd = sh[3];
    if (!store->ctx) {
        int shape[4] = {1, heads, cap, hd};
        mlx_array z = mlx_array_new();
        if (mlx_zeros(&z, shape, 4, mlx_array_dtype(upd), sc->s)) {
            sc->err = 1;
            return EMPTY;
        }
        *store = z;
    }
    int start[4] = {0, 0, off, 0}, stop[4] = {1, heads, off + n, hd}, step[4] = {1, 1, 1, 1};
    mlx_array next = mlx_array_new();
    if (mlx_slice_update(&next, *store, upd, start, 4, stop, 4, step, 4, sc->s)) {
        mlx_array_free(next);
        sc->err = 1;
        return EMPTY;
    }
    mlx_array_free(*store);
    *store = next;
    int vstart[4] = {0, 0, 0, 0};
    return slice(sc, *store, vstart, stop, 4);
}

/* ---- the forward pass ---- */

static mlx_array rope(scope *sc, const llm_model *m, mlx_array x, int offset)
{
    const llm_config *c = &m->cfg;
    float scale = c->rope_kind == LLM_ROPE_LINEAR ? 1.0f / c->rope_factor : 1.0f;
    mlx_optional_float base = {c->rope_theta, !m->rope_freqs.ctx};
    mlx_array *o = slot(sc);
    return !o ? EMPTY
              : keep(sc, o,
                     mlx_fast_rope(o, x, c->head_dim, c->rope_traditional, base, scale, offset, m->rope_freqs,
                                   sc->s));
}

/* Attention of q (1, heads, n, hd) over the cached keys and values:
 * one new token sees every cached one (no mask); a block of new tokens
 * is causal, aligned to the end of the keys. */
static mlx_array attention(scope *sc, mlx_array q, mlx_array k, mlx_array v, int n, int hd)
{
    mlx_array *o = slot(sc);
    return !o ? EMPTY
              : keep(sc, o,
                     mlx_fast_scaled_dot_product_attention(o, q, k, v, 1.0f / sqrtf((float)hd),
                                                           n > 1 ? "causal" : "", EMPTY, EMPTY, sc->s));
}

/* One transformer block on x (1, n, hidden). */
static mlx_array block(scope *sc, const llm_model *m, const llm_layer *L, llm_cache *cache, int li, mlx_array x,
                       int n)
{
    const llm_config *c = &m->cfg;
    int hd = c->head_dim, off = cache->offset;
    mlx_array h = rms_norm(sc, x, L->attn_norm, c->rms_eps);
    mlx_array q = transpose0213(sc, reshape(sc, linear(sc, h, &L->q), 1, n, c->heads, hd, 4));
    mlx_array k = transpose0213(sc, reshape(sc, linear(sc, h, &L->k), 1, n, c->kv_heads, hd, 4));
    mlx_array v = transpose0213(sc, reshape(sc, linear(sc, h, &L->v), 1, n, c->kv_heads, hd, 4));
    q = rope(sc, m, q, off);
    k = rope(sc, m, k, off);
    mlx_array keys = cache_put(sc, &cache->k[li], k, off, n, cache->capacity);
    mlx_array values = cache_put(sc, &cache->v[li], v, off, n, cache->capacity);
    mlx_array a = attention(sc, q, keys, values, n, hd);
    a = reshape(sc, transpose0213(sc, a), 1, n, c->heads * hd, 0, 3);
    x = add(sc, x, linear(sc, a, &L->o));
    /* SwiGLU: down(silu(gate(h)) * up(h)), silu(g) = g * sigmoid(g) */
    h = rms_norm(sc, x, L->mlp_norm, c->rms_eps);
    mlx_array g = linear(sc, h, &L->gate);
    mlx_array act = mul(sc, mul(sc, g, sigmoid(sc, g)), linear(sc, h, &L->up));
    return add(sc, x, linear(sc, act, &L->down));
}

int llm_forward(mlx_array *logits, llm_model *m, llm_cache *cache, const int *tokens, int n, bool all_rows)
{
    const llm_config *c = &m->cfg;
    if (n <= 0 || cache->offset + n > cache->capacity) {
        fprintf(stderr, "llm_forward: %d tokens after %d do not fit the cache of %d\n", n, cache->offset,
                cache->capacity);
        return 1;
    }
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab) {
            fprintf(stderr, "llm_forward: token %d is outside the vocabulary (%d)\n", tokens[i], c->vocab);
            return 1;
        }
    scope sc = {.s = m->s};
    int tshape[1] = {n};
    mlx_array *ids = slot(&sc);
    if (ids) {
        mlx_array_free(*ids);
        *ids = mlx_array_new_data(tokens, tshape, 1, MLX_INT32);
    }
    mlx_array x = reshape(&sc, embed(&sc, &m->embed, ids ? *ids : EMPTY), 1, n, c->hidden, 0, 3);
    for (int li = 0; li < c->layers; li++)
        x = block(&sc, m, &m->layer[li], cache, li, x, n);
    if (!all_rows && n > 1) {
        /* generation needs the last row only: skip the others' lm_head */
        int start[3] = {0, n - 1, 0}, stop[3] = {1, n, c->hidden};
        x = slice(&sc, x, start, stop, 3);
    }
    x = rms_norm(&sc, x, m->norm, c->rms_eps);
    x = linear(&sc, x, c->tie_embeddings ? &m->embed : &m->lm_head);
    x = reshape(&sc, x, all_rows ? n : 1, c->vocab, 0, 0, 2);
    int rc = sc.err;
    if (!rc) {
        mlx_array_set(logits, x);
        cache->offset += n;
    }
    scope_free(&sc);
    return rc;
}
