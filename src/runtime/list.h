/* An intrusive circular doubly linked list: a sentinel head, links embedded
 * in their owner, the owner reached through offsetof. Used for the registry
 * of per-thread compile caches, a cache's hash chains, the trace lists, and
 * the free lists of the data allocator (buffer_cache.c).
 * Unless NDEBUG is defined, every insertion and removal first checks that
 * the neighbours still point back (next->prev == node, prev->next == node)
 * and aborts with a message otherwise: a corrupted list is a library bug,
 * and stopping at the first inconsistency beats freeing the wrong node.
 * Portable C11: no typeof, no statement expressions. */
#ifndef MC_RUNTIME_LIST_H
#define MC_RUNTIME_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct mc_list mc_list;
struct mc_list {
    mc_list *next;
    mc_list *prev;
};

/* The owner of a link: mc_list_entry(ptr, struct cache, link). */
#define mc_list_entry(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* Walks the list; the body must not unlink `it`. */
#define mc_list_foreach(it, head) for ((it) = (head)->next; (it) != (head); (it) = (it)->next)

/* Walks the list; the body may unlink (or free) `it`, but no other node. */
#define mc_list_foreach_safe(it, tmp, head) \
    for ((it) = (head)->next, (tmp) = (it)->next; (it) != (head); (it) = (tmp), (tmp) = (it)->next)

#ifndef NDEBUG
/* Aborts with the addresses involved; defined in list_check.c. */
void mc_list_corrupt(const char *what, const mc_list *node);

static inline void mc_list_check(const mc_list *node)
{
    if (node->next->prev != node)
        mc_list_corrupt("next->prev != node", node);
    if (node->prev->next != node)
        mc_list_corrupt("prev->next != node", node);
}
#else
static inline void mc_list_check(const mc_list *node) { (void)node; }
#endif

/* An empty list, or a node that is in no list (it points at itself). */
static inline void mc_list_init(mc_list *head)
{
    head->next = head;
    head->prev = head;
}

static inline bool mc_list_empty(const mc_list *head) { return head->next == head; }

/* True if the node is in some list (it was initialised or removed with
 * mc_list_remove otherwise). */
static inline bool mc_list_linked(const mc_list *node) { return node->next != node; }

/* Inserts node between prev and next, which must be adjacent. */
static inline void mc_list_link_between(mc_list *node, mc_list *prev, mc_list *next)
{
    mc_list_check(prev);
    mc_list_check(next);
    node->next = next;
    node->prev = prev;
    prev->next = node;
    next->prev = node;
}

static inline void mc_list_insert_tail(mc_list *head, mc_list *node)
{
    mc_list_link_between(node, head->prev, head);
}

static inline void mc_list_insert_head(mc_list *head, mc_list *node)
{
    mc_list_link_between(node, head, head->next);
}

/* Unlinks node from its list and leaves it pointing at itself. */
static inline void mc_list_remove(mc_list *node)
{
    mc_list_check(node);
    node->prev->next = node->next;
    node->next->prev = node->prev;
    mc_list_init(node);
}

/* Appends every node of `from` to the tail of `to`; `from` ends empty. */
static inline void mc_list_splice_tail(mc_list *to, mc_list *from)
{
    if (mc_list_empty(from))
        return;
    mc_list_check(from);
    mc_list_check(to);
    mc_list *first = from->next;
    mc_list *last = from->prev;
    first->prev = to->prev;
    to->prev->next = first;
    last->next = to;
    to->prev = last;
    mc_list_init(from);
}

/* Number of nodes (a walk; for counters and tests). */
static inline size_t mc_list_length(const mc_list *head)
{
    size_t n = 0;
    for (const mc_list *it = head->next; it != head; it = it->next)
        n++;
    return n;
}

#endif
