/* Maps from strings to arrays and from strings to strings (mlx-c's
 * mlx_map_string_to_array and mlx_map_string_to_string), as the
 * safetensors functions of io.h and mlx_closure_kwargs use them.
 *
 * Iteration visits the keys in the order they were first inserted (mlx-c
 * keeps a std::unordered_map, whose order is unspecified, so a program
 * written for mlx-c does not depend on it). An iterator stays valid while
 * entries are inserted; it must not outlive its map. */
#ifndef MLX_MAP_H
#define MLX_MAP_H

#include "mlx/c/array.h"
#include "mlx/c/string.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility: what these headers declare
 * is what it exports. */
#pragma GCC visibility push(default)

/* A map from strings to arrays; the caller frees each map it is given with
 * mlx_map_string_to_array_free. */
typedef struct mlx_map_string_to_array_ {
  void* ctx;
} mlx_map_string_to_array;

/* Returns a new empty map (an empty handle, with an error reported, if out
 * of memory). */
mlx_map_string_to_array mlx_map_string_to_array_new(void);
/* Makes *map a copy of src's entries (the arrays are shared, not copied):
 * later inserts into one do not show in the other. Returns 0, or 1 with an
 * error reported (src empty, map NULL, out of memory). */
int mlx_map_string_to_array_set(
    mlx_map_string_to_array* map,
    const mlx_map_string_to_array src);
/* Frees the map and drops its references to its arrays. Returns 0. */
int mlx_map_string_to_array_free(mlx_map_string_to_array map);
/* Inserts key (copied) with value (a new reference), or replaces the value
 * of an existing key. Returns 0, or 1 with an error reported. */
int mlx_map_string_to_array_insert(
    mlx_map_string_to_array map,
    const char* key,
    const mlx_array value);
/* Makes *value refer to the array at key and returns 0; returns 2, with no
 * error reported and *value unchanged, if key is not in the map; 1 with an
 * error reported if a handle or pointer is empty. */
int mlx_map_string_to_array_get(
    mlx_array* value,
    const mlx_map_string_to_array map,
    const char* key);

/* An iterator over a map; free it with _iterator_free. */
typedef struct mlx_map_string_to_array_iterator_ {
  void* ctx;
  void* map_ctx;
} mlx_map_string_to_array_iterator;
/* Returns an iterator at the first entry of map (an empty handle, with an
 * error reported, if map is empty). */
mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(
    mlx_map_string_to_array map);
/* Frees the iterator (not its map). Returns 0. */
int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it);
/* Writes the next entry (*key points into the map, valid while the map
 * lives; *value gets a reference to the array) and returns 0; returns 2 when
 * every entry has been visited; 1 with an error reported on bad handles. */
int mlx_map_string_to_array_iterator_next(
    const char** key,
    mlx_array* value,
    mlx_map_string_to_array_iterator it);

/* A map from strings to strings; the same rules as above, the values being
 * copies owned by the map. */
typedef struct mlx_map_string_to_string_ {
  void* ctx;
} mlx_map_string_to_string;

mlx_map_string_to_string mlx_map_string_to_string_new(void);
int mlx_map_string_to_string_set(
    mlx_map_string_to_string* map,
    const mlx_map_string_to_string src);
int mlx_map_string_to_string_free(mlx_map_string_to_string map);
int mlx_map_string_to_string_insert(
    mlx_map_string_to_string map,
    const char* key,
    const char* value);
/* Points *value at the map's copy of the value of key (valid until key is
 * inserted again or the map is freed) and returns 0; 2 if key is absent. */
int mlx_map_string_to_string_get(
    const char** value,
    const mlx_map_string_to_string map,
    const char* key);

typedef struct mlx_map_string_to_string_iterator_ {
  void* ctx;
  void* map_ctx;
} mlx_map_string_to_string_iterator;
mlx_map_string_to_string_iterator mlx_map_string_to_string_iterator_new(
    mlx_map_string_to_string map);
int mlx_map_string_to_string_iterator_free(
    mlx_map_string_to_string_iterator it);
int mlx_map_string_to_string_iterator_next(
    const char** key,
    const char** value,
    mlx_map_string_to_string_iterator it);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif
