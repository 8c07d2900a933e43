/* fuzz_vocabulary.c — the vocabulary loader (gb__vocabulary_parse, what
 * gb_lookup_table_from_file reads) on arbitrary bytes.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused vocabulary gets a value error whose message starts with the
 * name standing for the file; an accepted one is a table with one entry
 * per line, where every line's token finds its line number and a token
 * not in it finds the default.
 */
#include "fuzz_engine.h"
#include "ops/strings_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    const char *text = (const char *)data;
    gb_lookup_table *t = gb__vocabulary_parse("input", text, size, -1);
    if (!t) {
        const gb_error *e = gb_last_error();
        FUZZ_CHECK(e != NULL, "refused without an error");
        FUZZ_CHECK(e->code == GB_ERR_VALUE, "code %s: %s", gb_status_name(e->code), e->message);
        FUZZ_CHECK(strncmp(e->message, "input", 5) == 0, "the message does not name input: %s",
                   e->message);
    } else {
        int64_t lines = 0;
        for (size_t i = 0; i < size; i++) lines += text[i] == '\n';
        if (size && text[size - 1] != '\n') lines++;
        FUZZ_CHECK(gb_lookup_table_size(t) == lines, "%lld entries for %lld lines",
                   (long long)gb_lookup_table_size(t), (long long)lines);
        /* every line finds its number */
        gb_scope_begin();
        size_t start = 0;
        for (int64_t k = 0; k < lines; k++) {
            size_t end = start;
            while (end < size && text[end] != '\n') end++;
            size_t stop = end > start && text[end - 1] == '\r' ? end - 1 : end;
            gb_tensor *id = gb_lookup_table_find(t, gb_string_bytes(text + start, (int64_t)(stop - start)));
            FUZZ_CHECK(id && gb_item(id) == (double)k, "line %lld found %g", (long long)k,
                       id ? gb_item(id) : -2.0);
            start = end + 1;
        }
        /* a token no line holds: the lines hold no \n */
        gb_tensor *miss = gb_lookup_table_find(t, gb_string_bytes("\n", 1));
        FUZZ_CHECK(miss && gb_item(miss) == -1, "a missing token found %g", miss ? gb_item(miss) : -2.0);
        gb_scope_end();
        gb_lookup_table_free(t);
    }
    fuzz_end();
    return 0;
}
