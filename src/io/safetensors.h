/* The safetensors format: an 8-byte little-endian header length, a JSON
 * header naming each tensor's dtype, shape and byte range (and optional
 * string metadata under "__metadata__"), then the data. Parsing the header
 * from untrusted bytes (safetensors_json.c), loading and saving
 * (safetensors.c). */
#ifndef MC_IO_SAFETENSORS_H
#define MC_IO_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "handles/map.h"
#include "io/stream.h"

/* MLX's limit on the header length (the Rust safetensors library's). */
enum { MC_ST_MAX_HEADER = 100000000 };

typedef struct mc_st_entry {
    char *name;
    mlx_dtype dtype;
    int ndim;
    int *shape;          /* ndim dims, owned */
    uint64_t begin, end; /* data_offsets, relative to the data section */
} mc_st_entry;

typedef struct mc_st_header {
    mc_st_entry *e; /* n tensors in header order */
    size_t n, cap;
    mc_map *meta; /* MC_MAP_STRING */
} mc_st_header;

/* Parses the JSON header text[0..n) into *h (which it initializes).
 * Checks the JSON, each tensor's dtype (MLX's names), shape and offsets
 * (integers in range, two offsets, end - begin equal to the shape's
 * bytes), duplicate names, and string-only metadata. Returns 0, or 1 with
 * one "[fn] ..." error naming label, *h then holding nothing. */
int mc_st_parse_header(const char *text, size_t n, mc_st_header *h, const char *label, const char *fn);
void mc_st_header_free(mc_st_header *h);

/* True if s is valid UTF-8 (what a JSON string may hold). */
bool mc_io_utf8_valid(const char *s);

/* The safetensors name of an MLX dtype ("F32", "BF16"...), or NULL for one
 * the format lacks (float64). */
const char *mc_st_dtype_name(mlx_dtype t);

/* Loads every tensor of src: *arrays gets a new MC_MAP_ARRAY map of
 * evaluated arrays (header order), *meta a new MC_MAP_STRING map. Returns
 * 0, or 1 with one error reported and nothing allocated. */
int mc_st_load(mc_io_src *src, mc_map **arrays, mc_map **meta, const char *fn);

/* Writes arrays (evaluated, row-contiguous) and meta to dst: keys sorted,
 * data in key order, the header padded with spaces to 8 bytes. Returns 0,
 * or 1 with an error reported (an array of no bytes, a dtype safetensors
 * lacks, a key named __metadata__, text that is not UTF-8). */
int mc_st_save(mc_io_sink *dst, const mc_map *arrays, const mc_map *meta, const char *fn);

#endif
