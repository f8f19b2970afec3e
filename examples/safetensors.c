/* Loading and saving named arrays in the safetensors format, as a program
 * that ships model weights does:
 *
 *   1. load every array and the metadata of a file (mlx_load_safetensors)
 *      and print them;
 *   2. save them into memory through a writer of our own (an mlx_io_writer
 *      over a growing buffer) and show the header that was written;
 *   3. load them back from that memory through a reader (mlx_io_reader),
 *      check they equal the originals, and print them.
 *
 *   safetensors [FILE]      (default: examples/arrays.safetensors)
 * Exits non-zero if any step fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlx/c/mlx.h"

/* ---- a stream over a block of memory ---- */

typedef struct membuf {
    char *data;
    size_t size, cap; /* bytes held, bytes allocated */
    size_t pos;       /* where the next sequential read starts */
    int failed;
    const char *name;
} membuf;

static bool mb_is_open(void *d) { return d != NULL; }
static bool mb_good(void *d) { return !((membuf *)d)->failed; }
static size_t mb_tell(void *d) { return ((membuf *)d)->pos; }

static void mb_seek(void *d, int64_t off, int whence)
{
    membuf *m = d;
    int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? (int64_t)m->pos : (int64_t)m->size;
    if (base + off < 0 || (uint64_t)(base + off) > m->size)
        m->failed = 1;
    else
        m->pos = (size_t)(base + off);
}

static void mb_read_at(void *d, char *out, size_t n, size_t off)
{
    membuf *m = d;
    if (off > m->size || n > m->size - off) {
        m->failed = 1; /* the loader sees good() turn false */
        return;
    }
    memcpy(out, m->data + off, n);
}

static void mb_read(void *d, char *out, size_t n)
{
    membuf *m = d;
    mb_read_at(d, out, n, m->pos);
    if (!m->failed)
        m->pos += n;
}

static void mb_write(void *d, const char *in, size_t n)
{
    membuf *m = d;
    if (n > m->cap - m->size) {
        size_t cap = 2 * (m->size + n);
        char *p = realloc(m->data, cap);
        if (!p) {
            m->failed = 1;
            return;
        }
        m->data = p;
        m->cap = cap;
    }
    memcpy(m->data + m->size, in, n);
    m->size += n;
}

static const char *mb_label(void *d) { return ((membuf *)d)->name; }

/* The library calls this once, when the reader or writer is last released;
 * the buffer itself outlives both here, so there is nothing to free. */
static void mb_release(void *d) { printf("  (%s released)\n", ((membuf *)d)->name); }

static const mlx_io_vtable membuf_vtable = {mb_is_open, mb_good,  mb_tell,  mb_seek,   mb_read,
                                            mb_read_at, mb_write, mb_label, mb_release};

/* ---- printing ---- */

static void print_arrays(mlx_map_string_to_array arrays)
{
    mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(arrays);
    mlx_string text = mlx_string_new();
    mlx_array value = mlx_array_new();
    const char *key;
    while (mlx_map_string_to_array_iterator_next(&key, &value, it) == 0) {
        mlx_array_tostring(&text, value);
        printf("%s =\n%s\n", key, mlx_string_data(text));
    }
    mlx_array_free(value);
    mlx_string_free(text);
    mlx_map_string_to_array_iterator_free(it);
}

static void print_metadata(mlx_map_string_to_string meta)
{
    mlx_map_string_to_string_iterator it = mlx_map_string_to_string_iterator_new(meta);
    const char *key, *value;
    while (mlx_map_string_to_string_iterator_next(&key, &value, it) == 0)
        printf("metadata %s = %s\n", key, value);
    mlx_map_string_to_string_iterator_free(it);
}

/* 1 if every array of a has an equal array under the same key in b. */
static int same_arrays(mlx_map_string_to_array a, mlx_map_string_to_array b, mlx_stream s)
{
    mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(a);
    mlx_array x = mlx_array_new(), y = mlx_array_new(), eq = mlx_array_new();
    const char *key;
    int same = 1;
    while (same && mlx_map_string_to_array_iterator_next(&key, &x, it) == 0) {
        bool v = false;
        same = mlx_map_string_to_array_get(&y, b, key) == 0 && mlx_array_equal(&eq, x, y, false, s) == 0 &&
               mlx_array_item_bool(&v, eq) == 0 && v;
    }
    mlx_array_free(x);
    mlx_array_free(y);
    mlx_array_free(eq);
    mlx_map_string_to_array_iterator_free(it);
    return same;
}

int main(int argc, char **argv)
{
    const char *file = argc > 1 ? argv[1] : "examples/arrays.safetensors";
    mlx_stream s = mlx_default_cpu_stream_new();
    mlx_map_string_to_array arrays = mlx_map_string_to_array_new(), back = mlx_map_string_to_array_new();
    mlx_map_string_to_string meta = mlx_map_string_to_string_new(), meta_back = mlx_map_string_to_string_new();
    membuf mem = {.name = "<memory buffer>"};
    int rc = 1;

    printf("1. loading %s\n", file);
    if (mlx_load_safetensors(&arrays, &meta, file, s) != 0)
        goto done;
    print_arrays(arrays);
    print_metadata(meta);

    printf("2. saving into memory through a writer\n");
    mlx_io_writer writer = mlx_io_writer_new(&mem, membuf_vtable);
    int saved = mlx_save_safetensors_writer(writer, arrays, meta);
    mlx_io_writer_free(writer);
    if (saved != 0)
        goto done;
    uint64_t header_len = 0;
    for (int k = 7; k >= 0; k--)
        header_len = header_len << 8 | (unsigned char)mem.data[k];
    printf("wrote %zu bytes; header (%llu bytes): %.*s\n", mem.size, (unsigned long long)header_len,
           (int)header_len, mem.data + 8);

    printf("3. loading back from memory through a reader\n");
    mlx_io_reader reader = mlx_io_reader_new(&mem, membuf_vtable);
    int loaded = mlx_load_safetensors_reader(&back, &meta_back, reader, s);
    mlx_io_reader_free(reader);
    if (loaded != 0)
        goto done;
    print_arrays(back);
    print_metadata(meta_back);
    if (!same_arrays(arrays, back, s) || !same_arrays(back, arrays, s)) {
        printf("the arrays read back differ from the originals\n");
        goto done;
    }
    printf("round trip: every array read back equals the original\n");
    rc = 0;
done:
    free(mem.data);
    mlx_map_string_to_array_free(arrays);
    mlx_map_string_to_array_free(back);
    mlx_map_string_to_string_free(meta);
    mlx_map_string_to_string_free(meta_back);
    mlx_stream_free(s);
    return rc;
}
