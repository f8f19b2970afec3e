/* The shared utilities every layer above runtime uses, one copy each: the
 * pointer map (growth, replacement, removal that keeps every other key
 * reachable, content keys, a removed key's address reused by a new
 * object, the keys-only set), the growable array, the intrusive list (order, splice, removal
 * while iterating, the debug check of neighbour links) and the post-order
 * graph walk (each node once after its inputs, and a 100,000-deep chain on
 * a thread whose stack could not hold a recursive walk). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "array/array.h"
#include "graph/walk.h"
#include "runtime/darray.h"
#include "runtime/list.h"
#include "runtime/ptrmap.h"

/* ---- pointer map ---- */

enum { N_KEYS = 10000 };

/* Distinct, never-NULL addresses to use as keys. */
static char key_storage[N_KEYS];

static void test_ptrmap_finds_every_key_after_growth(void **state)
{
    (void)state;
    mc_ptrmap m = {0};
    assert_null(mc_ptrmap_get(&m, &key_storage[0]));
    for (int i = 0; i < N_KEYS; i++)
        assert_int_equal(mc_ptrmap_put(&m, &key_storage[i], i * 3), 0);
    assert_int_equal(m.count, N_KEYS);
    assert_true(m.cap >= 2 * (size_t)N_KEYS);
    assert_int_equal(m.cap & (m.cap - 1), 0);
    for (int i = 0; i < N_KEYS; i++) {
        int *v = mc_ptrmap_get(&m, &key_storage[i]);
        assert_non_null(v);
        assert_int_equal(*v, i * 3);
    }
    int outside;
    assert_null(mc_ptrmap_get(&m, &outside));
    mc_ptrmap_free(&m);
    assert_int_equal(m.count, 0);
    assert_null(mc_ptrmap_get(&m, &key_storage[0]));
}

static void test_ptrmap_put_replaces_and_get_or_put_keeps(void **state)
{
    (void)state;
    mc_ptrmap m = {0};
    bool added;
    assert_int_equal(mc_ptrmap_put(&m, &key_storage[1], 5), 0);
    assert_int_equal(mc_ptrmap_put(&m, &key_storage[1], 7), 0);
    assert_int_equal(m.count, 1);
    assert_int_equal(*mc_ptrmap_get(&m, &key_storage[1]), 7);
    int *v = mc_ptrmap_get_or_put(&m, &key_storage[1], 9, &added);
    assert_false(added);
    assert_int_equal(*v, 7);
    v = mc_ptrmap_get_or_put(&m, &key_storage[2], 9, &added);
    assert_true(added);
    assert_int_equal(*v, 9);
    assert_int_equal(m.count, 2);
    mc_ptrmap_free(&m);
}

/* Keys whose hash is chosen by the test: value / 8, so eight keys share a
 * home and runs of them wrap around the end of the table. */
static uint64_t clustered_hash(const void *key, const void *ctx)
{
    (void)ctx;
    return (uint64_t)(*(const int *)key / 8) * 61; /* 61: odd, spreads homes */
}

static bool int_equal(const void *a, const void *b, const void *ctx)
{
    (void)ctx;
    return *(const int *)a == *(const int *)b;
}

static void test_ptrmap_remove_keeps_every_other_key_reachable(void **state)
{
    (void)state;
    enum { N = 2000 };
    static int keys[N];
    static bool present[N];
    mc_ptrmap m;
    mc_ptrmap_init_by_content(&m, clustered_hash, int_equal, NULL);
    for (int i = 0; i < N; i++) {
        keys[i] = i;
        present[i] = true;
        assert_int_equal(mc_ptrmap_put(&m, &keys[i], i), 0);
    }
    /* Remove in a scrambled order (7 is coprime with N), checking after
     * each step that the removed key is gone and the rest are found. */
    for (int k = 0; k < N; k++) {
        int i = (int)(((long)k * 7) % N);
        assert_true(mc_ptrmap_remove(&m, &keys[i]));
        assert_false(mc_ptrmap_remove(&m, &keys[i]));
        present[i] = false;
        if (k % 97 == 0 || k > N - 20) {
            for (int j = 0; j < N; j++) {
                int *v = mc_ptrmap_get(&m, &keys[j]);
                if (present[j]) {
                    assert_non_null(v);
                    assert_int_equal(*v, j);
                } else {
                    assert_null(v);
                }
            }
        }
    }
    assert_int_equal(m.count, 0);
    mc_ptrmap_free(&m);
}

static void test_ptrmap_content_keys_merge_equal_values(void **state)
{
    (void)state;
    int a = 42, b = 42, c = 43;
    mc_ptrmap m;
    mc_ptrmap_init_by_content(&m, clustered_hash, int_equal, NULL);
    assert_int_equal(mc_ptrmap_reserve(&m, 3), 0);
    bool added;
    assert_int_equal(*mc_ptrmap_get_or_put(&m, &a, 1, &added), 1);
    assert_true(added);
    /* b equals a by content: a stands for both */
    assert_int_equal(*mc_ptrmap_get_or_put(&m, &b, 2, &added), 1);
    assert_false(added);
    assert_int_equal(*mc_ptrmap_get_or_put(&m, &c, 3, &added), 3);
    assert_true(added);
    assert_int_equal(m.count, 2);
    mc_ptrmap_free(&m);
}

/* The map holds no reference, so its owner removes a key before the
 * object dies; a new object then born at the same address must start
 * unknown. Reuse is forced (a new object is made in the old one's storage)
 * rather than hoped for from malloc, so the test holds under ASan's
 * quarantine and valgrind, which delay reuse. */
typedef struct node_like {
    int payload;
} node_like;

static void test_ptrmap_removed_key_is_unknown_when_address_is_reused(void **state)
{
    (void)state;
    static _Alignas(node_like) unsigned char storage[sizeof(node_like)];
    mc_ptrmap m = {0};
    node_like *first = (node_like *)storage;
    first->payload = 1;
    for (int i = 0; i < 100; i++) /* neighbours, so the reused key is not alone */
        assert_int_equal(mc_ptrmap_put(&m, &key_storage[i], i), 0);
    assert_int_equal(mc_ptrmap_put(&m, first, 11), 0);
    assert_true(mc_ptrmap_remove(&m, first));

    node_like *second = (node_like *)storage; /* a new object, same address */
    second->payload = 2;
    assert_ptr_equal(first, second);
    assert_null(mc_ptrmap_get(&m, second));
    bool added;
    assert_int_equal(*mc_ptrmap_get_or_put(&m, second, 22, &added), 22);
    assert_true(added);
    assert_int_equal(m.count, 101);
    for (int i = 0; i < 100; i++)
        assert_int_equal(*mc_ptrmap_get(&m, &key_storage[i]), i);
    mc_ptrmap_free(&m);
}

static void test_ptrmap_set_adds_each_key_once_and_removes(void **state)
{
    (void)state;
    mc_ptrmap s;
    mc_ptrmap_init_set(&s);
    for (int i = 0; i < N_KEYS; i++)
        assert_int_equal(mc_ptrmap_add(&s, &key_storage[i]), 1);
    for (int i = 0; i < N_KEYS; i += 3)
        assert_int_equal(mc_ptrmap_add(&s, &key_storage[i]), 0);
    assert_int_equal(s.count, N_KEYS);
    assert_null(s.vals); /* a set stores no values */
    for (int i = 0; i < N_KEYS; i += 2)
        assert_true(mc_ptrmap_remove(&s, &key_storage[i]));
    for (int i = 0; i < N_KEYS; i++)
        assert_int_equal(mc_ptrmap_contains(&s, &key_storage[i]), i % 2 == 1);
    mc_ptrmap_free(&s);
    assert_false(mc_ptrmap_contains(&s, &key_storage[1]));
}

/* ---- growable array ---- */

typedef struct triple {
    int a, b, c;
} triple;

static void test_darray_keeps_elements_across_growth(void **state)
{
    (void)state;
    enum { N = 100000 };
    mc_darray d = MC_DARRAY_INIT(triple);
    assert_null(mc_darray_last(&d));
    for (int i = 0; i < N; i++) {
        triple *t = mc_darray_push(&d);
        assert_non_null(t);
        *t = (triple){i, -i, 2 * i};
    }
    assert_int_equal(d.len, N);
    assert_true(d.cap >= N);
    const triple *items = d.items;
    for (int i = 0; i < N; i++) {
        assert_int_equal(items[i].a, i);
        assert_int_equal(items[i].b, -i);
        assert_int_equal(items[i].c, 2 * i);
    }
    assert_int_equal(((triple *)mc_darray_last(&d))->a, N - 1);
    assert_ptr_equal(mc_darray_at(&d, 5), &items[5]);
    mc_darray_free(&d);
    assert_int_equal(d.len, 0);
    assert_int_equal(d.elem, sizeof(triple));
}

static void test_darray_reserve_makes_pushes_stay_in_place(void **state)
{
    (void)state;
    mc_darray d = MC_DARRAY_INIT(int);
    assert_int_equal(mc_darray_reserve(&d, 1000), 0);
    void *base = d.items;
    for (int i = 0; i < 1000; i++)
        *(int *)mc_darray_push(&d) = i;
    assert_ptr_equal(d.items, base);
    assert_int_equal(mc_darray_reserve(&d, 10), 0); /* never shrinks */
    assert_true(d.cap >= 1000);
    mc_darray_free(&d);
}

/* ---- intrusive list ---- */

typedef struct item {
    int id;
    mc_list link;
} item;

/* The ids in list order, as "1 2 3" (empty list: ""), checking on the way
 * that the backward links agree with the forward ones. */
static const char *draw(const mc_list *head)
{
    static char buf[256];
    size_t n = 0;
    buf[0] = '\0';
    for (const mc_list *it = head->next; it != head; it = it->next) {
        assert_ptr_equal(it->next->prev, it);
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d", n ? " " : "", mc_list_entry(it, item, link)->id);
    }
    assert_ptr_equal(head->next->prev, head);
    return buf;
}

static void fill(mc_list *head, item *items, int n)
{
    mc_list_init(head);
    for (int i = 0; i < n; i++) {
        items[i].id = i;
        mc_list_insert_tail(head, &items[i].link);
    }
}

static void test_list_keeps_insertion_order_and_splices(void **state)
{
    (void)state;
    mc_list a, b;
    item xs[6];
    fill(&a, xs, 3);
    assert_string_equal(draw(&a), "0 1 2");
    mc_list_init(&b);
    assert_true(mc_list_empty(&b));
    for (int i = 3; i < 6; i++) {
        xs[i].id = i;
        mc_list_insert_head(&b, &xs[i].link);
    }
    assert_string_equal(draw(&b), "5 4 3");
    mc_list_splice_tail(&a, &b);
    assert_string_equal(draw(&a), "0 1 2 5 4 3");
    assert_true(mc_list_empty(&b));
    assert_int_equal(mc_list_length(&a), 6);
    mc_list_remove(&xs[5].link);
    assert_false(mc_list_linked(&xs[5].link));
    assert_string_equal(draw(&a), "0 1 2 4 3");
}

static void test_list_safe_walk_removes_current_node(void **state)
{
    (void)state;
    mc_list head;
    item xs[8];
    fill(&head, xs, 8);
    mc_list *it, *tmp;
    /* drop the odd ids, one at a time, while walking */
    mc_list_foreach_safe(it, tmp, &head)
    {
        if (mc_list_entry(it, item, link)->id % 2)
            mc_list_remove(it);
    }
    assert_string_equal(draw(&head), "0 2 4 6");
    /* remove every node, as a release loop does */
    int seen = 0;
    mc_list_foreach_safe(it, tmp, &head)
    {
        mc_list_remove(it);
        seen++;
    }
    assert_int_equal(seen, 4);
    assert_true(mc_list_empty(&head));
    assert_string_equal(draw(&head), "");
    for (int i = 0; i < 8; i++)
        assert_false(mc_list_linked(&xs[i].link));
}

/* In debug builds, removing a node whose neighbour no longer points back
 * stops the process at once (in a child, so this test survives it). */
static void test_list_debug_check_stops_on_broken_links(void **state)
{
    (void)state;
#ifdef NDEBUG
    skip();
#else
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2); /* the expected message is not a test failure */
        mc_list head;
        item xs[3];
        fill(&head, xs, 3);
        xs[2].link.prev = &xs[0].link; /* the node after 1 forgets it */
        mc_list_remove(&xs[1].link);
        _exit(0); /* not reached when the check works */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGABRT);
#endif
}

/* ---- post-order walk ---- */

/* Nodes for the walk: it reads only inputs, n_inputs and prim, so the
 * test links descriptors by hand (no data, no references). */
typedef struct graph {
    mc_array *nodes;
    mc_array **edges;
} graph;

static void graph_free(graph *g)
{
    free(g->nodes);
    free(g->edges);
}

/* node i uses node i - 1: node 0 is the deepest input. */
static graph chain(int n)
{
    graph g = {calloc((size_t)n, sizeof(mc_array)), calloc((size_t)n, sizeof(mc_array *))};
    assert_non_null(g.nodes);
    assert_non_null(g.edges);
    for (int i = 0; i < n; i++) {
        g.nodes[i].prim = 1;
        if (i > 0) {
            g.edges[i] = &g.nodes[i - 1];
            g.nodes[i].inputs = &g.edges[i];
            g.nodes[i].n_inputs = 1;
        }
    }
    return g;
}

/* The position of each node of a in order (-1: absent). */
static int position(const mc_darray *order, const mc_array *a)
{
    mc_array *const *items = order->items;
    for (size_t i = 0; i < order->len; i++)
        if (items[i] == a)
            return (int)i;
    return -1;
}

static void test_walk_visits_each_node_once_after_its_inputs(void **state)
{
    (void)state;
    /* d = f(b, c), b = g(a), c = h(a, a), e = k(d, a): a diamond with a
     * repeated edge, and a second root that shares everything. */
    mc_array n[5];
    memset(n, 0, sizeof n);
    mc_array *a = &n[0], *b = &n[1], *c = &n[2], *d = &n[3], *e = &n[4];
    mc_array *in_b[] = {a}, *in_c[] = {a, a}, *in_d[] = {b, c}, *in_e[] = {d, a};
    b->inputs = in_b, b->n_inputs = 1;
    c->inputs = in_c, c->n_inputs = 2;
    d->inputs = in_d, d->n_inputs = 2;
    e->inputs = in_e, e->n_inputs = 2;
    for (int i = 1; i < 5; i++)
        n[i].prim = 1; /* a is evaluated data */

    mc_array *roots[] = {d, NULL, e, d};
    mc_darray order = MC_DARRAY_INIT(mc_array *);
    assert_int_equal(mc_walk_collect(roots, 4, false, &order, "test"), 0);
    assert_int_equal(order.len, 5);
    for (int i = 0; i < 5; i++) {
        int p = position(&order, &n[i]);
        assert_true(p >= 0);
        for (int k = 0; k < n[i].n_inputs; k++)
            assert_true(position(&order, n[i].inputs[k]) < p);
    }
    assert_ptr_equal(((mc_array **)order.items)[4], e);
    mc_darray_free(&order);

    /* pending only: the evaluated input is left out */
    order = MC_DARRAY_INIT(mc_array *);
    assert_int_equal(mc_walk_collect(roots, 4, true, &order, "test"), 0);
    assert_int_equal(order.len, 4);
    assert_int_equal(position(&order, a), -1);
    mc_darray_free(&order);
}

/* A visitor that makes node 1 of a chain a leaf and counts what it sees. */
typedef struct counting {
    const mc_array *leaf;
    int entered, left;
} counting;

static int count_enter(void *ctx, mc_array *node, int *val)
{
    counting *c = ctx;
    *val = ++c->entered;
    return node == c->leaf ? MC_WALK_LEAF : MC_WALK_DESCEND;
}

static int count_leave(void *ctx, mc_array *node, int val)
{
    counting *c = ctx;
    (void)node;
    (void)val;
    c->left++;
    return 0;
}

static void test_walk_leaf_is_not_descended_and_values_are_kept(void **state)
{
    (void)state;
    graph g = chain(5);
    counting c = {&g.nodes[1], 0, 0};
    mc_walk w;
    mc_walk_init(&w, &(mc_walk_visitor){count_enter, count_leave, &c}, false, "test");
    assert_int_equal(mc_walk_from(&w, &g.nodes[4]), 0);
    assert_int_equal(c.entered, 4); /* 4, 3, 2, 1: not 0, below the leaf */
    assert_int_equal(c.left, 4);
    assert_null(mc_walk_value(&w, &g.nodes[0]));
    assert_int_equal(*mc_walk_value(&w, &g.nodes[4]), 1);
    assert_int_equal(*mc_walk_value(&w, &g.nodes[1]), 4);
    assert_int_equal(mc_walk_from(&w, &g.nodes[3]), 0); /* already walked */
    assert_int_equal(c.entered, 4);
    mc_walk_free(&w);
    graph_free(&g);
}

enum { DEEP = 100000 };

static void *walk_deep_chain(void *arg)
{
    graph *g = arg;
    mc_darray order = MC_DARRAY_INIT(mc_array *);
    mc_array *root = &g->nodes[DEEP - 1];
    intptr_t ok = mc_walk_collect(&root, 1, true, &order, "test") == 0 && order.len == DEEP;
    mc_array **items = order.items;
    for (size_t i = 0; ok && i < order.len; i++)
        ok = items[i] == &g->nodes[i];
    mc_darray_free(&order);
    return (void *)ok;
}

static void test_walk_deep_chain_runs_on_a_small_stack(void **state)
{
    (void)state;
    graph g = chain(DEEP);
    /* 256 KiB: a recursive walk would need a frame per node, megabytes
     * for this chain, so only an iterative walk finishes here. */
    pthread_attr_t attr;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, &attr, walk_deep_chain, &g), 0);
    void *ok = NULL;
    assert_int_equal(pthread_join(t, &ok), 0);
    pthread_attr_destroy(&attr);
    assert_true(ok != NULL);
    graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ptrmap_finds_every_key_after_growth),
        cmocka_unit_test(test_ptrmap_put_replaces_and_get_or_put_keeps),
        cmocka_unit_test(test_ptrmap_remove_keeps_every_other_key_reachable),
        cmocka_unit_test(test_ptrmap_content_keys_merge_equal_values),
        cmocka_unit_test(test_ptrmap_removed_key_is_unknown_when_address_is_reused),
        cmocka_unit_test(test_ptrmap_set_adds_each_key_once_and_removes),
        cmocka_unit_test(test_darray_keeps_elements_across_growth),
        cmocka_unit_test(test_darray_reserve_makes_pushes_stay_in_place),
        cmocka_unit_test(test_list_keeps_insertion_order_and_splices),
        cmocka_unit_test(test_list_safe_walk_removes_current_node),
        cmocka_unit_test(test_list_debug_check_stops_on_broken_links),
        cmocka_unit_test(test_walk_visits_each_node_once_after_its_inputs),
        cmocka_unit_test(test_walk_leaf_is_not_descended_and_values_are_kept),
        cmocka_unit_test(test_walk_deep_chain_runs_on_a_small_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
