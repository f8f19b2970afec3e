/* Reads a model's config.json (the Hugging Face names that mlx-lm's
 * llama.ModelArgs takes) with jansson. Missing optional entries get
 * ModelArgs's defaults; a missing required one, a model_type that is not
 * Llama's, or a rope_scaling or quantization mode this example does not
 * run is reported and refused. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "llm.h"

static int need_int(const json_t *root, const char *key, int *out)
{
    json_t *v = json_object_get(root, key);
    if (!json_is_integer(v)) {
        fprintf(stderr, "config.json: \"%s\" (an integer) is missing\n", key);
        return 1;
    }
    *out = (int)json_integer_value(v);
    return 0;
}

static int opt_int(const json_t *root, const char *key, int dflt)
{
    json_t *v = json_object_get(root, key);
    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

static float opt_num(const json_t *root, const char *key, float dflt)
{
    json_t *v = json_object_get(root, key);
    return json_is_number(v) ? (float)json_number_value(v) : dflt;
}

static bool opt_bool(const json_t *root, const char *key, bool dflt)
{
    json_t *v = json_object_get(root, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static int read_rope_scaling(llm_config *c, const json_t *rs)
{
    c->rope_kind = LLM_ROPE_DEFAULT;
    if (!json_is_object(rs))
        return 0;
    /* older configs say "type", newer "rope_type" */
    const char *kind = json_string_value(json_object_get(rs, "type"));
    if (!kind)
        kind = json_string_value(json_object_get(rs, "rope_type"));
    if (!kind || strcmp(kind, "default") == 0)
        return 0;
    c->rope_factor = opt_num(rs, "factor", 1.0f);
    if (strcmp(kind, "linear") == 0) {
        c->rope_kind = LLM_ROPE_LINEAR;
        return 0;
    }
    if (strcmp(kind, "llama3") == 0) {
        c->rope_kind = LLM_ROPE_LLAMA3;
        c->rope_low = opt_num(rs, "low_freq_factor", 1.0f);
        c->rope_high = opt_num(rs, "high_freq_factor", 4.0f);
        c->rope_orig_ctx = opt_num(rs, "original_max_position_embeddings", 8192.0f);
        return 0;
    }
    fprintf(stderr, "config.json: rope_scaling type \"%s\" is not supported (default, linear, llama3 are)\n",
            kind);
    return 1;
}

static int read_quantization(llm_config *c, json_t *q)
{
    if (!json_is_object(q))
        return 0;
    const char *mode = json_string_value(json_object_get(q, "mode"));
    if (mode && strcmp(mode, "affine") != 0) {
        fprintf(stderr, "config.json: quantization mode \"%s\" is not supported (affine is)\n", mode);
        return 1;
    }
    c->q_group_size = opt_int(q, "group_size", 64);
    c->q_bits = opt_int(q, "bits", 4);
    c->quant_overrides = json_incref(q);
    return 0;
}

int llm_config_read(llm_config *c, const char *dir)
{
    memset(c, 0, sizeof *c);
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        fprintf(stderr, "%s:%d: %s\n", path, jerr.line, jerr.text);
        return 1;
    }
    int rc = 1;
    const char *type = json_string_value(json_object_get(root, "model_type"));
    if (!type || (strcmp(type, "llama") != 0 && strcmp(type, "mistral") != 0)) {
        fprintf(stderr, "%s: model_type \"%s\" is not a Llama-architecture model\n", path, type ? type : "");
        goto done;
    }
    if (need_int(root, "hidden_size", &c->hidden) || need_int(root, "num_hidden_layers", &c->layers) ||
        need_int(root, "intermediate_size", &c->intermediate) ||
        need_int(root, "num_attention_heads", &c->heads) || need_int(root, "vocab_size", &c->vocab))
        goto done;
    c->kv_heads = opt_int(root, "num_key_value_heads", c->heads);
    c->head_dim = opt_int(root, "head_dim", c->heads > 0 ? c->hidden / c->heads : 0);
    c->rms_eps = opt_num(root, "rms_norm_eps", 1e-5f);
    c->rope_theta = opt_num(root, "rope_theta", 10000.0f);
    c->rope_traditional = opt_bool(root, "rope_traditional", false);
    c->tie_embeddings = opt_bool(root, "tie_word_embeddings", true);
    c->attention_bias = opt_bool(root, "attention_bias", false);
    c->mlp_bias = opt_bool(root, "mlp_bias", false);
    if (c->hidden <= 0 || c->layers <= 0 || c->heads <= 0 || c->kv_heads <= 0 || c->heads % c->kv_heads ||
        c->head_dim <= 0 || c->head_dim % 2 || c->vocab <= 0 || c->intermediate <= 0) {
        fprintf(stderr, "%s: inconsistent sizes (hidden %d, heads %d, kv heads %d, head_dim %d)\n", path,
                c->hidden, c->heads, c->kv_heads, c->head_dim);
        goto done;
    }
    if (read_rope_scaling(c, json_object_get(root, "rope_scaling")) ||
        read_quantization(c, json_object_get(root, "quantization")))
        goto done;
    rc = 0;
done:
    json_decref(root);
    if (rc)
        llm_config_free(c);
    return rc;
}

void llm_config_free(llm_config *c)
{
    json_decref(c->quant_overrides);
    c->quant_overrides = NULL;
}

void llm_config_quant_of(const llm_config *c, const char *path, int *group_size, int *bits)
{
    *group_size = c->q_group_size ? c->q_group_size : 64;
    *bits = c->q_bits ? c->q_bits : 4;
    json_t *own = json_object_get(c->quant_overrides, path);
    if (json_is_object(own)) {
        *group_size = opt_int(own, "group_size", *group_size);
        *bits = opt_int(own, "bits", *bits);
    }
}
