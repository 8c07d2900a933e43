/* io/internal.h — what the io/ sources share: the checkpoint file's
 * entries and its reader and writer (checkpoint_file.c).
 */
#ifndef GB_IO_INTERNAL_H
#define GB_IO_INTERNAL_H

#include "gb_io.h"
#include "ops/internal.h"

#define GB__CKPT_VERSION 1

/* One tensor of a checkpoint file. Writing: path, dtype, rank, dims,
 * data and nbytes are the caller's; offset and crc are filled in. */
typedef struct gb__ckpt_entry {
    char path[256];
    gb_dtype dtype;
    int rank;
    int64_t dims[GB_MAX_RANK];
    uint64_t offset, nbytes;
    uint32_t crc;
    const void *data;
} gb__ckpt_entry;

/* Writes the entries to path atomically (temp file, fsync, rename, fsync
 * of the directory); false with a GB_ERR_IO error naming the file. */
bool gb__ckpt_write(const char *path, gb__ckpt_entry *e, int n);

/* A checkpoint read into memory, its index checked. */
typedef struct gb__ckpt_file {
    char path[512];
    unsigned char *bytes;
    size_t size;
    gb__ckpt_entry *entries;
    int count;
} gb__ckpt_file;

/* false with a GB_ERR_IO error naming the file and what is wrong
 * (truncated, bad magic, newer version, corrupt header or index). */
bool gb__ckpt_read(const char *path, gb__ckpt_file *out);
/* The same on bytes already read (malloc'd; *out takes them over, also
 * on failure); path names them in errors. */
bool gb__ckpt_parse(const char *path, unsigned char *bytes, size_t size, gb__ckpt_file *out);
/* An entry's bytes after checking its CRC; NULL with an error naming the
 * tensor when they do not match. */
const void *gb__ckpt_data(const gb__ckpt_file *f, const gb__ckpt_entry *e);
void gb__ckpt_close(gb__ckpt_file *f);

/* gb_checkpoint_write with extra entries beside the tracked tensors (a
 * model file's config, fit's position): each with its path, dtype, rank,
 * dims, data and nbytes set; a path a tracked tensor has is an error. */
bool gb__checkpoint_write_with(gb_checkpoint *c, const char *path, const gb__ckpt_entry *extra,
                               int nextra);
/* gb_checkpoint_restore from a file already read, all or nothing: the
 * file's tensors and the tracked ones must match exactly (but for the
 * entries whose paths are in own[0..nown), which the caller reads
 * itself), else an error naming the first missing and unexpected tensor
 * (gb_restore_assert_consumed's), and nothing is assigned. */
bool gb__checkpoint_restore_exact(gb_checkpoint *c, const gb__ckpt_file *f, const char *const *own,
                                  int nown);

#endif
