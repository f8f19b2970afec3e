/* The language-model example (examples/llm/config.c and model.c) against
 * MLX: two tiny Llama models made with mlx-lm's model class and random
 * weights (test/fixtures/llm, scripts/make_llm_fixtures.py), one float32
 * with an untied lm_head and llama3 rope scaling, one quantized to 4 bits
 * with tied embeddings. The prompt's logits and every greedy step's
 * logits (through the KV cache) match MLX's within TOL_ABS + TOL_REL *
 * |MLX's value|, and the greedy tokens match exactly. Bad model
 * directories, token ids and cache overflows are refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "llm.h"
#include "test_util.h"

#define FIXTURE(name) MC_TEST_SOURCE_DIR "/fixtures/llm/" name

/* float32 through a 2-layer model: ours and MLX's differ only in the
 * order of sums (BLAS blocking, the fused kernels' lanes). The logits are
 * of order 1 to 10 and differ by at most about 5e-6 (measured when this
 * was written): the tolerance leaves a factor of 20. */
static const float TOL_ABS = 1e-4f, TOL_REL = 1e-4f;

typedef struct expected {
    mlx_array prompt, logits, greedy, decode;
} expected;

static void load_expected(expected *e, const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/expected.safetensors", dir);
    mlx_map_string_to_array m = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new();
    assert_int_equal(mlx_load_safetensors(&m, &meta, path, tu_stream()), 0);
    e->prompt = mlx_array_new(), e->logits = mlx_array_new(), e->greedy = mlx_array_new();
    e->decode = mlx_array_new();
    assert_int_equal(mlx_map_string_to_array_get(&e->prompt, m, "prompt"), 0);
    assert_int_equal(mlx_map_string_to_array_get(&e->logits, m, "logits"), 0);
    assert_int_equal(mlx_map_string_to_array_get(&e->greedy, m, "greedy"), 0);
    assert_int_equal(mlx_map_string_to_array_get(&e->decode, m, "decode_logits"), 0);
    mlx_map_string_to_array_free(m);
    mlx_map_string_to_string_free(meta);
}

static void free_expected(expected *e)
{
    mlx_array_free(e->prompt), mlx_array_free(e->logits), mlx_array_free(e->greedy), mlx_array_free(e->decode);
}

/* got (rows, V) against MLX's want, rows [row0, row0 + rows) of it. */
static void assert_logits_close(mlx_array got, mlx_array want, int row0, int rows, const char *what)
{
    assert_int_equal(mlx_array_eval(got), 0);
    assert_int_equal(mlx_array_dtype(got), MLX_FLOAT32);
    int V = mlx_array_shape(want)[1];
    assert_int_equal(mlx_array_shape(got)[0], rows);
    assert_int_equal(mlx_array_shape(got)[1], V);
    const float *g = mlx_array_data_float32(got), *w = mlx_array_data_float32(want) + (size_t)row0 * V;
    float worst = 0;
    for (int i = 0; i < rows * V; i++) {
        float err = fabsf(g[i] - w[i]) / (TOL_ABS + TOL_REL * fabsf(w[i]));
        worst = err > worst ? err : worst;
    }
    if (worst > 1.0f)
        fail_msg("%s: logits differ from MLX's by %.2f x the tolerance", what, worst);
}

static int argmax_row(mlx_array logits)
{
    const float *p = mlx_array_data_float32(logits);
    int V = mlx_array_shape(logits)[1], best = 0;
    for (int j = 1; j < V; j++)
        best = p[j] > p[best] ? j : best;
    return best;
}

/* The prompt in one pass (every row's logits), then greedy decoding one
 * token at a time through the cache, each step's logits checked. */
static void check_model(const char *dir)
{
    llm_model m;
    assert_int_equal(llm_load(&m, dir), 0);
    expected e;
    load_expected(&e, dir);
    int P = (int)mlx_array_size(e.prompt), N = (int)mlx_array_size(e.greedy);
    const int32_t *prompt = mlx_array_data_int32(e.prompt), *greedy = mlx_array_data_int32(e.greedy);
    llm_cache cache;
    assert_int_equal(llm_cache_init(&cache, &m, P + N), 0);
    mlx_array logits = mlx_array_new(), last = mlx_array_new();
    assert_int_equal(llm_forward(&logits, &m, &cache, prompt, P, true), 0);
    assert_logits_close(logits, e.logits, 0, P, "prompt");
    assert_int_equal(cache.offset, P);
    int start[2] = {P - 1, 0}, stop[2] = {P, m.cfg.vocab}, step[2] = {1, 1};
    assert_int_equal(mlx_slice(&last, logits, start, 2, stop, 2, step, 2, tu_stream()), 0);
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            assert_int_equal(llm_forward(&last, &m, &cache, &greedy[i - 1], 1, false), 0);
            assert_logits_close(last, e.decode, i, 1, "decode step");
        }
        assert_int_equal(mlx_array_eval(last), 0);
        assert_int_equal(argmax_row(last), greedy[i]);
    }
    assert_int_equal(cache.offset, P + N - 1);
    mlx_array_free(logits), mlx_array_free(last);
    llm_cache_free(&cache);
    free_expected(&e);
    llm_free(&m);
}

static void test_float_model_matches_mlx_logits_and_greedy_tokens(void **state)
{
    (void)state;
    check_model(FIXTURE("float"));
}

static void test_4bit_model_matches_mlx_logits_and_greedy_tokens(void **state)
{
    (void)state;
    check_model(FIXTURE("q4"));
}

/* The prompt in one pass and token by token give the same last logits:
 * the cache and the causal mask agree. */
static void test_prompt_at_once_equals_token_by_token(void **state)
{
    (void)state;
    llm_model m;
    assert_int_equal(llm_load(&m, FIXTURE("q4")), 0);
    static const int prompt[5] = {3, 9, 27, 81, 115};
    llm_cache a, b;
    assert_int_equal(llm_cache_init(&a, &m, 5), 0);
    assert_int_equal(llm_cache_init(&b, &m, 5), 0);
    mlx_array la = mlx_array_new(), lb = mlx_array_new();
    assert_int_equal(llm_forward(&la, &m, &a, prompt, 5, false), 0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(llm_forward(&lb, &m, &b, &prompt[i], 1, false), 0);
        assert_int_equal(mlx_array_eval(lb), 0);
    }
    assert_logits_close(lb, la, 0, 1, "token by token");
    mlx_array_free(la), mlx_array_free(lb);
    llm_cache_free(&a), llm_cache_free(&b);
    llm_free(&m);
}

static void test_bad_tokens_and_cache_overflow_are_refused(void **state)
{
    (void)state;
    llm_model m;
    assert_int_equal(llm_load(&m, FIXTURE("float")), 0);
    llm_cache c;
    assert_int_equal(llm_cache_init(&c, &m, 2), 0);
    mlx_array l = mlx_array_new();
    int bad[1] = {m.cfg.vocab}, neg[1] = {-1}, ok[3] = {1, 2, 3};
    assert_int_equal(llm_forward(&l, &m, &c, bad, 1, false), 1);
    assert_int_equal(llm_forward(&l, &m, &c, neg, 1, false), 1);
    assert_int_equal(llm_forward(&l, &m, &c, ok, 3, false), 1);
    assert_int_equal(c.offset, 0);
    assert_null(l.ctx);
    assert_int_equal(llm_forward(&l, &m, &c, ok, 2, false), 0);
    assert_int_equal(llm_forward(&l, &m, &c, ok, 1, false), 1);
    mlx_array_free(l);
    llm_cache_free(&c);
    llm_free(&m);
}

static void test_missing_model_directory_is_refused(void **state)
{
    (void)state;
    llm_model m;
    assert_int_equal(llm_load(&m, FIXTURE("no_such_model")), 1);
    tu_reset_errors();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_float_model_matches_mlx_logits_and_greedy_tokens, tu_test_teardown),
        cmocka_unit_test_teardown(test_4bit_model_matches_mlx_logits_and_greedy_tokens, tu_test_teardown),
        cmocka_unit_test_teardown(test_prompt_at_once_equals_token_by_token, tu_test_teardown),
        cmocka_unit_test_teardown(test_bad_tokens_and_cache_overflow_are_refused, tu_test_teardown),
        cmocka_unit_test_teardown(test_missing_model_directory_is_refused, tu_test_teardown),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
