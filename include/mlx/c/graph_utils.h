/* Graph printing: write the graph behind some arrays as Graphviz DOT or as
 * a plain listing, with optional names for chosen arrays (a node namer).
 * From mlx-c after v0.6.0. */
#ifndef MLX_GRAPH_UTILS_H
#define MLX_GRAPH_UTILS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mlx/c/array.h"
#include "mlx/c/closure.h"
#include "mlx/c/stream.h"
#include "mlx/c/string.h"
#include "mlx/c/vector.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* A node namer: a map from arrays to the names printed for them. Free it
 * with mlx_node_namer_free. */
typedef struct mlx_node_namer_ {
  void* ctx;
} mlx_node_namer;

/* Returns a new namer with no names; an empty handle, with an error
 * reported, if out of memory. */
mlx_node_namer mlx_node_namer_new(void);
/* Frees the namer and its names; returns 0. */
int mlx_node_namer_free(mlx_node_namer namer);
/* Gives arr the name name (copied) in namer; returns 0 or 1. */
int mlx_node_namer_set_name(
    mlx_node_namer namer,
    const mlx_array arr,
    const char* name);
/* Writes arr's name, giving it a generated one if it has none; the text
 * belongs to namer and lives as long as it. Returns 0 or 1. */
int mlx_node_namer_get_name(
    const char** name,
    mlx_node_namer namer,
    const mlx_array arr);

/* Write the graph that computes outputs to os, as Graphviz DOT or as a
 * listing of inputs, nodes and outputs; nothing is evaluated. Arrays that
 * namer does not name get generated names (namer itself is not changed).
 * Return 0, or 1 with an error reported (also for an empty namer). */
int mlx_export_to_dot(
    FILE* os,
    const mlx_node_namer namer,
    const mlx_vector_array outputs);
int mlx_print_graph(
    FILE* os,
    const mlx_node_namer namer,
    const mlx_vector_array outputs);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
