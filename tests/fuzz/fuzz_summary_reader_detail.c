/* fuzz_summary_reader_detail.c — the parser of a numerics alert's JSON
 * detail (gb_numerics_detail_parse), alone.
 *
 * The store's target reaches this parser too, through the detail column
 * of damaged rows, but at the pace of opening a store per input; alone it
 * runs thousands of times faster, which a hand-written parser of escapes,
 * surrogate pairs, numbers and nesting deserves. The input is the detail
 * text (cut at a NUL byte, as a C string is). This links the store
 * library alone.
 *
 * What must hold (detail_check.h): no crash, leak or undefined behaviour;
 * a parsed detail is within its bounds (ranks, input counts, terminated
 * strings, indices and counts not negative); a refused one is all
 * unknowns, never half filled.
 */
#include "detail_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *json = malloc(size + 1);
    FUZZ_CHECK(json != NULL, "out of memory");
    memcpy(json, data, size);
    json[size] = '\0';
    check_detail(size ? json : NULL);
    free(json);
    return 0;
}
