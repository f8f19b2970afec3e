/* Where io/ reads bytes from and writes them to: a file (by descriptor,
 * its size known, read with pread) or a program's reader or writer
 * (handles/iostream.h, its size unknown, checked with good() after every
 * call). The format parsers see only these calls, so every read is
 * bounded by what the source has. */
#ifndef MC_IO_STREAM_H
#define MC_IO_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "handles/iostream.h"

typedef struct mc_io_src {
    int fd;            /* -1 for a reader */
    mc_iostream *rd;   /* borrowed, NULL for a file */
    uint64_t size;     /* file size, UINT64_MAX for a reader */
    uint64_t pos;      /* next sequential read */
    const char *label; /* "file <path>" or the reader's label */
    char label_buf[256];
} mc_io_src;

/* Opens path for reading. Returns 0, or 1 with "[fn] Failed to open file
 * <path>" reported. Close with mc_io_src_close. */
int mc_io_src_open(mc_io_src *src, const char *path, const char *fn);
/* A source over a reader (which must be open and good, else 1 with
 * "[fn] Failed to open <label>"). */
int mc_io_src_reader(mc_io_src *src, mc_iostream *rd, const char *fn);
void mc_io_src_close(mc_io_src *src);

/* Reads n bytes at the current position and advances it. Returns 0, or 1
 * with "[fn] ..." reported if the source has fewer bytes or fails. */
int mc_io_read(mc_io_src *src, void *dst, size_t n, const char *fn);
/* Reads n bytes at offset (large files in parallel). Same returns. */
int mc_io_read_at(mc_io_src *src, void *dst, size_t n, uint64_t offset, const char *fn);
/* Whether the source holds a byte at end - 1 (true for end 0). A file is
 * checked against its size; a reader, which has none, by reading that
 * byte, so that a header claiming more data than follows is refused
 * before a buffer of that size is allocated. Reports nothing. */
bool mc_io_holds(mc_io_src *src, uint64_t end);

typedef struct mc_io_sink {
    int fd;          /* -1 for a writer */
    mc_iostream *wr; /* borrowed, NULL for a file */
    const char *label;
    char label_buf[256];
} mc_io_sink;

/* Creates (truncates) path. Returns 0, or 1 with "[fn] Failed to open
 * file <path>". */
int mc_io_sink_open(mc_io_sink *dst, const char *path, const char *fn);
int mc_io_sink_writer(mc_io_sink *dst, mc_iostream *wr, const char *fn);
/* Closes a file sink; returns 1 with an error if the close failed (data
 * may be lost), else 0. With fn NULL it closes without reporting. */
int mc_io_sink_close(mc_io_sink *dst, const char *fn);
/* Writes n bytes. Returns 0, or 1 with "[fn] Unable to write ..." reported. */
int mc_io_write(mc_io_sink *dst, const void *data, size_t n, const char *fn);

#endif
