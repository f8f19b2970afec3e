/* Generates tokens with a Llama-architecture model in MLX's format (a
 * directory with config.json and model.safetensors, as mlx-lm saves one,
 * float or quantized). Token ids in, token ids out: there is no
 * tokenizer.
 *
 *   llm MODEL_DIR [-p 1,2,3] [-n TOKENS] [-t TEMP] [-s SEED]
 *
 *   -p  the prompt's token ids (default: 1)
 *   -n  how many tokens to generate (default 16)
 *   -t  sampling temperature; 0 (the default) is greedy
 *   -s  the sampling seed (default 0)
 *
 * Prints the generated ids on one line, then the prompt's processing
 * (prefill, up to the first new token) and the generation after it
 * (decode) in tokens per second, and how much of a decoded token went to
 * building its lazy graph (llm_forward) rather than evaluating it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Parses "1,2,3" into a new array (the caller frees it). */
static int *parse_ids(const char *s, int *n)
{
    int cap = 16, *ids = malloc(sizeof *ids * (size_t)cap);
    *n = 0;
    while (ids && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 0x7fffffff) {
            fprintf(stderr, "llm: bad token id list at \"%s\"\n", s);
            free(ids);
            return NULL;
        }
        if (*n == cap) {
            int *more = realloc(ids, sizeof *ids * (size_t)(cap *= 2));
            if (!more)
                free(ids);
            ids = more;
            if (!ids)
                break;
        }
        ids[(*n)++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    if (ids && *n == 0) {
        fprintf(stderr, "llm: the prompt is empty\n");
        free(ids);
        return NULL;
    }
    return ids;
}

/* The next token from logits (1, vocab): argmax, or with temp > 0 a draw
 * from softmax(logits / temp) with a fresh subkey of *key. Evaluates. */
static int next_token(int *tok, mlx_array logits, float temp, mlx_array *key, mlx_stream s)
{
    mlx_array pick = mlx_array_new(), as32 = mlx_array_new(), scaled = mlx_array_new();
    mlx_array next = mlx_array_new(), sub = mlx_array_new();
    mlx_array inv = mlx_array_new_float(temp > 0 ? 1.0f / temp : 1.0f);
    int rc;
    if (temp > 0) {
        rc = mlx_random_split(&next, &sub, *key, s) || mlx_multiply(&scaled, logits, inv, s) ||
             mlx_random_categorical(&pick, scaled, -1, sub, s);
        if (!rc)
            mlx_array_set(key, next);
    } else
        rc = mlx_argmax_axis(&pick, logits, -1, false, s);
    int32_t v = 0;
    rc = rc || mlx_astype(&as32, pick, MLX_INT32, s) || mlx_array_item_int32(&v, as32);
    *tok = v;
    mlx_array_free(pick), mlx_array_free(as32), mlx_array_free(scaled), mlx_array_free(sub), mlx_array_free(inv);
    mlx_array_free(next);
    return rc;
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *prompt_s = "1";
    int n_new = 16;
    float temp = 0;
    unsigned long long seed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
            prompt_s = argv[++i];
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n_new = atoi(argv[++i]);
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
            temp = (float)atof(argv[++i]);
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else
            dir = NULL, i = argc;
    }
    if (!dir || n_new < 1) {
        fprintf(stderr, "usage: %s MODEL_DIR [-p 1,2,3] [-n TOKENS] [-t TEMP] [-s SEED]\n", argv[0]);
        return 2;
    }
    int n_prompt;
    int *prompt = parse_ids(prompt_s, &n_prompt);
    if (!prompt)
        return 2;

    llm_model m;
    llm_cache cache = {0};
    mlx_array logits = mlx_array_new(), key = mlx_array_new();
    int *out = malloc(sizeof *out * (size_t)n_new), rc = 1;
    double t0 = now_s();
    if (!out || llm_load(&m, dir))
        goto done;
    double t_load = now_s() - t0;
    if (llm_cache_init(&cache, &m, n_prompt + n_new) || mlx_random_key(&key, seed))
        goto unload;

    /* prefill: the whole prompt in one pass, up to the first new token */
    t0 = now_s();
    if (llm_forward(&logits, &m, &cache, prompt, n_prompt, false) || next_token(&out[0], logits, temp, &key, m.s))
        goto unload;
    double t_prefill = now_s() - t0;
    /* decode: one token per pass through the cache */
    t0 = now_s();
    double t_build = 0;
    for (int i = 1; i < n_new; i++) {
        double tb = now_s();
        if (llm_forward(&logits, &m, &cache, &out[i - 1], 1, false))
            goto unload;
        t_build += now_s() - tb;
        if (next_token(&out[i], logits, temp, &key, m.s))
            goto unload;
    }
    double t_decode = now_s() - t0;

    for (int i = 0; i < n_new; i++)
        printf("%d%s", out[i], i + 1 < n_new ? " " : "\n");
    fprintf(stderr, "load: %.3f s\n", t_load);
    fprintf(stderr, "prefill: %d tokens in %.3f s, %.2f tokens/s\n", n_prompt, t_prefill, n_prompt / t_prefill);
    if (n_new > 1)
        fprintf(stderr, "decode: %d tokens in %.3f s, %.2f tokens/s\n", n_new - 1, t_decode,
                (n_new - 1) / t_decode);
    if (n_new > 1)
        fprintf(stderr, "decode step: %.3f ms, of which %.3f ms building the graph\n", 1e3 * t_decode / (n_new - 1),
                1e3 * t_build / (n_new - 1));
    rc = 0;
unload:
    llm_free(&m);
done:
    llm_cache_free(&cache);
    mlx_array_free(logits), mlx_array_free(key);
    free(prompt), free(out);
    return rc;
}
