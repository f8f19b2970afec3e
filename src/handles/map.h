/* mc_map: the string-keyed table behind mlx_map_string_to_array and
 * mlx_map_string_to_string (a handle's ctx points at one), and the helpers
 * with which io/ builds and reads one without the public API.
 *
 * Entries keep their insertion order: iteration visits keys in the order
 * they were first inserted (mlx-c's std::unordered_map promises no order,
 * so this is one of the orders it allows, and a reproducible one).
 * Re-inserting a key replaces its value in place. Keys are owned copies;
 * values are one array reference each (MC_MAP_ARRAY) or owned string
 * copies (MC_MAP_STRING). A hash index (open addressing, power-of-two
 * size, at most half full) finds a key in O(1); nothing is ever removed,
 * so the index needs no tombstones. */
#ifndef MC_HANDLES_MAP_H
#define MC_HANDLES_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "array/array.h"

typedef enum mc_map_kind { MC_MAP_ARRAY, MC_MAP_STRING } mc_map_kind;

typedef struct mc_map {
    mc_map_kind kind;
    size_t len, cap;
    char **keys;     /* len owned keys, in insertion order */
    mc_array **arrs; /* MC_MAP_ARRAY: len references, else NULL */
    char **strs;     /* MC_MAP_STRING: len owned copies, else NULL */
    size_t *slots;   /* nslots entries: 0 empty, else entry index + 1 */
    size_t nslots;
} mc_map;

/* A new empty map, or NULL with "[fn] ..." reported. */
mc_map *mc_map_new(const char *fn, mc_map_kind kind);
/* Releases every key and value and the map. NULL is ignored. */
void mc_map_free(mc_map *m);
/* A new map of src's kind holding copies of its entries in its order, or
 * NULL with an error reported. */
mc_map *mc_map_copy(const char *fn, const mc_map *src);
/* Moves src's entries into dst's object (dst keeps its identity, its old
 * entries are released, src's object is freed) and returns dst; with dst
 * NULL returns src. Never fails. */
mc_map *mc_map_replace(mc_map *dst, mc_map *src);

/* The index of key, or false if it is not in m. */
bool mc_map_find(const mc_map *m, const char *key, size_t *index);
/* Inserts key with a new reference to a (MC_MAP_ARRAY), or replaces the
 * value of an existing key. Returns 0, or 1 with an error reported; m is
 * unchanged on failure. */
int mc_map_put_array(const char *fn, mc_map *m, const char *key, mc_array *a);
/* As mc_map_put_array with a copy of value (MC_MAP_STRING). */
int mc_map_put_string(const char *fn, mc_map *m, const char *key, const char *value);

/* The map of a handle's ctx, or NULL with "[fn] Expected a non-empty
 * <type_name> ..." reported. */
mc_map *mc_map_ctx_checked(void *ctx, const char *fn, const char *type_name);

#endif
