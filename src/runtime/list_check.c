/* Owns the failure path of the debug-build list checks (list.h). */
#include "runtime/list.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef NDEBUG
void mc_list_corrupt(const char *what, const mc_list *node)
{
    /* Not reported through mc_error: the list is internal state, not user
     * input, and continuing would free or skip the wrong nodes. */
    fprintf(stderr, "mlx-cpu: corrupted list (%s) at node %p (next %p, prev %p)\n", what,
            (const void *)node, (const void *)node->next, (const void *)node->prev);
    abort();
}
#else
/* Keeps the translation unit non-empty in release builds. */
typedef int mc_list_check_unused;
#endif
