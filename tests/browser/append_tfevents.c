/* append_tfevents.c — appends scalar records to a TensorBoard event file,
 * as a live tf.summary or SummaryWriter does between two flushes: the
 * tests of `serve --logdir` check that a new event file and each record
 * appended later show up, and that a record still being written (its
 * first bytes only: a torn tail) is waited on.
 *   append_tfevents FILE TAG STEP VALUE [COUNT] [--torn]
 * COUNT records at steps STEP.. with VALUE + the step's offset; --torn
 * writes only the first half of the last record (run again without it,
 * from the same step, to finish the file: the rest of the record is
 * appended). The file starts with the file_version event when new. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_tfevents.h"

/* Appends the framed records of ev from byte `skip`, the first `keep`
 * bytes only (0: all). */
static bool put(FILE *f, const gb_tf_buf *ev, size_t keep, size_t skip) {
    size_t n = keep && keep < ev->len ? keep : ev->len;
    return !ev->failed && fwrite(ev->data + skip, 1, n - skip, f) == n - skip;
}

int main(int argc, char **argv) {
    bool torn = argc > 1 && !strcmp(argv[argc - 1], "--torn");
    int args = argc - torn;
    if (args != 5 && args != 6) {
        fprintf(stderr, "usage: append_tfevents FILE TAG STEP VALUE [COUNT] [--torn]\n");
        return 2;
    }
    long long step = strtoll(argv[3], NULL, 10), count = args == 6 ? strtoll(argv[5], NULL, 10) : 1;
    double value = atof(argv[4]);
    FILE *f = fopen(argv[1], "ab");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    bool ok = true;
    if (ftell(f) == 0) {
        gb_tf_buf ev = {0};
        gb_tf_put_file_version(&ev, 1.7e9);
        ok = put(f, &ev, 0, 0);
        gb_tf_buf_free(&ev);
    }
    /* A file ending in half a record gets its second half first. */
    long at = ftell(f);
    for (long long i = 0; ok && i < count; i++) {
        gb_tf_buf ev = {0};
        gb_tf_put_scalar(&ev, 1.7e9 + (double)(step + i), step + i, argv[2], value + (double)i);
        size_t half = ev.len / 2, skip = 0;
        bool last = i == count - 1;
        if (i == 0 && at > 0) {   /* the same record torn before: skip what is there */
            FILE *r = fopen(argv[1], "rb");
            unsigned char *tail = malloc(half);
            if (r && tail && fseek(r, at - (long)half, SEEK_SET) == 0 &&
                fread(tail, 1, half, r) == half && !memcmp(ev.data, tail, half))
                skip = half;
            free(tail);
            if (r) fclose(r);
        }
        ok = put(f, &ev, torn && last ? half : 0, skip);
        gb_tf_buf_free(&ev);
    }
    if (fclose(f) != 0) ok = false;
    if (!ok) fprintf(stderr, "append_tfevents: cannot write %s\n", argv[1]);
    return ok ? 0 : 1;
}
