/* writer/text_tensor.c — gb_summary_text_tensor: a string tensor as a text
 * summary, as TensorBoard's text plugin shows one: a scalar as its
 * markdown, a vector as a one-column table, a matrix as a table of its
 * rows and columns (each cell's markdown inline; '|' escaped, line breaks
 * as spaces, so a cell stays a cell). The table is GFM markdown, which
 * the Text page renders; its header row numbers the columns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "writer/internal.h"

/* Appends len bytes of p to the growing text b (NULL after a memory error). */
typedef struct text_buf {
    char *s;
    size_t n, cap;
    bool failed;
} text_buf;

static void add(text_buf *b, const char *p, size_t len) {
    if (b->failed) return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + len + 1) cap *= 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, p, len);
    b->n += len;
    b->s[b->n] = '\0';
}

static void add_str(text_buf *b, const char *s) { add(b, s, strlen(s)); }

/* A cell: '|' escaped, line breaks as spaces. */
static void add_cell(text_buf *b, gb_string s) {
    add_str(b, "| ");
    for (int64_t i = 0; i < s.len; i++) {
        char c = s.data[i];
        if (c == '|') add_str(b, "\\|");
        else if (c == '\n' || c == '\r') add_str(b, " ");
        else add(b, &c, 1);
    }
    add_str(b, " ");
}

gb_status gb_summary_text_tensor(gb_summary_writer *w, const char *tag, const gb_tensor *t,
                                 int64_t step) {
    static const char what[] = "gb_summary_text_tensor";
    if (!t || gb_tensor_dtype(t) != GB_STRING || !gb_data(t)) {
        gb__summary_fail("%s '%s': %s", what, tag ? tag : "",
                         !t ? "the tensor is NULL" : "the tensor must be an eager string tensor");
        return GB_ERR_VALUE;
    }
    int rank = gb_rank(t);
    const gb_string *s = gb_data_strings(t);
    for (int64_t i = 0; i < gb_size(t); i++) {
        if (memchr(s[i].data, '\0', (size_t)s[i].len)) {
            gb__summary_fail("%s '%s': element %lld holds a NUL byte; text summaries are text",
                             what, tag ? tag : "", (long long)i);
            return GB_ERR_VALUE;
        }
    }
    if (rank > 2) {
        gb__summary_fail("%s '%s': a rank-%d tensor; text summaries take rank 0 (markdown), 1 or "
                         "2 (a table)", what, tag ? tag : "", rank);
        return GB_ERR_SHAPE;
    }
    if (rank == 0) {
        char *text = malloc((size_t)s[0].len + 1);
        if (!text) return gb__summary_fail("%s: out of memory", what), GB_ERR_MEMORY;
        memcpy(text, s[0].data, (size_t)s[0].len);
        text[s[0].len] = '\0';
        gb_status st = gb_summary_text(w, tag, text, step);
        free(text);
        return st;
    }
    int64_t rows = gb_dim(t, 0), cols = rank == 2 ? gb_dim(t, 1) : 1;
    text_buf b = {0};
    char num[32];
    for (int64_t c = 0; c < cols; c++) { /* the header: column numbers, then the rule */
        snprintf(num, sizeof num, "| %lld ", (long long)c);
        add_str(&b, num);
    }
    add_str(&b, "|\n");
    for (int64_t c = 0; c < cols; c++) add_str(&b, "|---");
    add_str(&b, "|\n");
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) add_cell(&b, s[r * cols + c]);
        add_str(&b, "|\n");
    }
    if (b.failed) {
        free(b.s);
        return gb__summary_fail("%s: out of memory", what), GB_ERR_MEMORY;
    }
    gb_status st = gb_summary_text(w, tag, b.s ? b.s : "", step);
    free(b.s);
    return st;
}
