/* The primitives suite: the table made from the list in
 * src/graph/prim_list.h is complete (every id has a descriptor with a name
 * and its rules, derivative and vmap rules included), names are unique, and building a node checks the
 * primitive's arity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "graph/primitive.h"
#include "test_util.h"

static void test_every_primitive_has_name_arity_and_rules(void **state)
{
    (void)state;
    assert_null(mc_prims[MC_PRIM_NONE]);
    for (int id = MC_PRIM_NONE + 1; id < MC_PRIM_COUNT; id++) {
        const mc_prim_info *p = mc_prims[id];
        assert_non_null(p);
        assert_non_null(p->name);
        assert_true(p->name[0] != '\0');
        assert_true(p->arity >= MC_ARITY_ANY);
        assert_non_null(p->infer);
        assert_non_null(p->eval);
    }
}

/* Every primitive that takes inputs can be differentiated both ways (a
 * primitive with none is never on a tape): a new primitive without its
 * vjp and jvp fails here, and its op's row in test_grad fails too. */
static void test_every_primitive_with_inputs_has_derivative_rules(void **state)
{
    (void)state;
    for (int id = MC_PRIM_NONE + 1; id < MC_PRIM_COUNT; id++) {
        const mc_prim_info *p = mc_prims[id];
        if (p->arity == 0)
            continue;
        if (!p->vjp || !p->jvp)
            fail_msg("%s has no %s rule", p->name, p->vjp ? "jvp" : "vjp");
    }
}

/* Every primitive has a vmap rule, as MLX's Primitive::vmap (one that
 * reports MLX's message where MLX cannot batch the primitive counts): a
 * primitive added without one fails here, and its row in test_vmap too. */
static void test_every_primitive_has_a_vmap_rule(void **state)
{
    (void)state;
    for (int id = MC_PRIM_NONE + 1; id < MC_PRIM_COUNT; id++)
        if (!mc_prims[id]->vmap)
            fail_msg("%s has no vmap rule", mc_prims[id]->name);
}

static void test_primitive_names_are_unique(void **state)
{
    (void)state;
    for (int i = MC_PRIM_NONE + 1; i < MC_PRIM_COUNT; i++)
        for (int j = i + 1; j < MC_PRIM_COUNT; j++)
            if (strcmp(mc_prims[i]->name, mc_prims[j]->name) == 0)
                fail_msg("primitives %d and %d are both named %s", i, j, mc_prims[i]->name);
}

/* The list's rows become the enum in the same order, so a descriptor sits
 * at its own id: spot-check both ends and a family primitive. */
static void test_table_rows_sit_at_their_ids(void **state)
{
    (void)state;
    assert_ptr_equal(mc_prims[MC_PRIM_PLACEHOLDER], &mc_prim_placeholder);
    assert_ptr_equal(mc_prims[MC_PRIM_BINARY], &mc_prim_binary);
    assert_ptr_equal(mc_prims[MC_PRIM_FUSED], &mc_prim_fused);
    assert_string_equal(mc_prim_name(MC_PRIM_RESHAPE, NULL), "Reshape");
    assert_string_equal(mc_prim_name(MC_PRIM_NONE, NULL), "Data");
}

static mc_array *scalar_f32(float v)
{
    mlx_array a = mlx_array_new_float32(v);
    mc_array *x = mc_array_retain(a.ctx);
    mlx_array_free(a);
    return x;
}

static void test_node_with_wrong_input_count_is_refused(void **state)
{
    (void)state;
    mc_array *x = scalar_f32(1.0f);
    mc_array *in[3] = {x, x, x};
    mc_meta meta = {.dtype = MLX_FLOAT32, .ndim = 0};

    /* Transpose takes one input: two are refused before infer reads them */
    assert_null(mc_node_new("transpose", MC_PRIM_TRANSPOSE, in, 2, NULL, 0));
    tu_expect_error("[transpose]");
    assert_null(mc_node_new_meta("select", MC_PRIM_WHERE, &meta, in, 2, NULL, 0));
    tu_expect_error("[select]");
    assert_null(mc_node_new_meta("astype", 0, &meta, in, 1, NULL, 0));
    tu_expect_error("[astype]");
    assert_null(mc_node_new_meta("astype", MC_PRIM_COUNT, &meta, in, 1, NULL, 0));
    tu_expect_error("[astype]");

    /* the right count builds (Select's rule needs no params) */
    mc_array *ok = mc_node_new_meta("select", MC_PRIM_WHERE, &meta, in, 3, NULL, 0);
    assert_non_null(ok);
    tu_expect_no_error();
    mc_array_release(ok);
    mc_array_release(x);
}

static void test_any_arity_primitive_takes_any_count(void **state)
{
    (void)state;
    assert_int_equal(mc_prims[MC_PRIM_CONCATENATE]->arity, MC_ARITY_ANY);
    mc_array *x = scalar_f32(2.0f);
    mc_array *in[4] = {x, x, x, x};
    mc_meta meta = {.dtype = MLX_FLOAT32, .ndim = 1, .shape = {4}};
    mc_array *c = mc_node_new_meta("concatenate", MC_PRIM_CONCATENATE, &meta, in, 4, NULL, 0);
    assert_non_null(c);
    assert_int_equal(c->n_inputs, 4);
    mc_array_release(c);
    mc_array_release(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_every_primitive_has_name_arity_and_rules, tu_test_teardown),
        cmocka_unit_test_teardown(test_every_primitive_with_inputs_has_derivative_rules, tu_test_teardown),
        cmocka_unit_test_teardown(test_every_primitive_has_a_vmap_rule, tu_test_teardown),
        cmocka_unit_test_teardown(test_primitive_names_are_unique, tu_test_teardown),
        cmocka_unit_test_teardown(test_table_rows_sit_at_their_ids, tu_test_teardown),
        cmocka_unit_test_teardown(test_node_with_wrong_input_count_is_refused, tu_test_teardown),
        cmocka_unit_test_teardown(test_any_arity_primitive_takes_any_count, tu_test_teardown),
    };
    return cmocka_run_group_tests_name("primitives", tests, tu_group_setup, tu_group_teardown);
}
