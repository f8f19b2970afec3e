/* A Llama-architecture language model in MLX's format (the files mlx-lm
 * writes: config.json and model.safetensors, float or quantized), run
 * with mlx-c's API. Three parts, one file each:
 *   config.c  reads config.json (with jansson)
 *   model.c   loads the weights and runs the forward pass with a KV cache
 *   llm.c     the program: generates tokens, greedily or by sampling
 * The model follows mlx-lm's mlx_lm/models/llama.py: pre-norm blocks of
 * grouped-query attention (rope, causal attention over the cache) and a
 * SwiGLU MLP, a final RMS norm, and logits through lm_head or, with tied
 * embeddings, the embedding matrix.
 *
 * Every function returns 0, or 1 after printing why to stderr (the
 * library's own message comes through its error handler first). */
#ifndef LLM_H
#define LLM_H

#include <stdbool.h>

#include "mlx/c/mlx.h"

/* Rope's frequency rule (mlx-lm's rope_utils.initialize_rope). */
typedef enum { LLM_ROPE_DEFAULT, LLM_ROPE_LINEAR, LLM_ROPE_LLAMA3 } llm_rope_kind;

typedef struct llm_config {
    int hidden, layers, intermediate, heads, kv_heads, head_dim, vocab;
    float rms_eps, rope_theta;
    bool rope_traditional, tie_embeddings, attention_bias, mlp_bias;
    llm_rope_kind rope_kind;
    /* rope_scaling's numbers: factor (linear, llama3) and llama3's
     * low/high frequency factors and original context length */
    float rope_factor, rope_low, rope_high, rope_orig_ctx;
    /* "quantization": {"group_size", "bits"} (0 when absent); a layer is
     * quantized when the weights have its .scales, with these parameters
     * unless the entry names the layer's path with its own */
    int q_group_size, q_bits;
    void *quant_overrides; /* the "quantization" object (json_t *), owned */
} llm_config;

/* Reads dir/config.json. Free with llm_config_free. */
int llm_config_read(llm_config *c, const char *dir);
void llm_config_free(llm_config *c);
/* The group size and bits of the quantized layer at path ("model.layers.0
 * .mlp.up_proj"): its own entry in "quantization" or the global one. */
void llm_config_quant_of(const llm_config *c, const char *path, int *group_size, int *bits);

/* A linear layer (or the embedding): weight (out, in) or, quantized,
 * packed uint32 weight with scales and biases per group; bias optional. */
typedef struct llm_linear {
    mlx_array w, scales, biases, bias;
    bool quantized;
    int group_size, bits;
} llm_linear;

typedef struct llm_layer {
    mlx_array attn_norm, mlp_norm;
    llm_linear q, k, v, o, gate, up, down;
} llm_layer;

typedef struct llm_model {
    llm_config cfg;
    llm_linear embed, lm_head; /* lm_head unused with tied embeddings */
    llm_layer *layer;
    mlx_array norm;
    mlx_array rope_freqs; /* llama3 frequencies, or empty (use the base) */
    mlx_stream s;
} llm_model;

/* The keys and values seen so far, per layer: (1, kv_heads, capacity,
 * head_dim) arrays written in place with slice_update; offset tokens are
 * valid. */
typedef struct llm_cache {
    mlx_array *k, *v;
    int layers, offset, capacity;
} llm_cache;

/* Loads dir/config.json and dir/model.safetensors. Free with llm_free. */
int llm_load(llm_model *m, const char *dir);
void llm_free(llm_model *m);

/* An empty cache for up to capacity tokens. Free with llm_cache_free. */
int llm_cache_init(llm_cache *c, const llm_model *m, int capacity);
void llm_cache_free(llm_cache *c);

/* Runs n tokens through the model after the cache's tokens and appends
 * them to the cache. *logits (set, the caller frees) becomes the lazy
 * logits (n, vocab) if all_rows, else (1, vocab) for the last token only.
 * Nothing is evaluated: the caller evaluates the logits. */
int llm_forward(mlx_array *logits, llm_model *m, llm_cache *c, const int *tokens, int n, bool all_rows);

#endif
