/* fuzz_target.h — what every fuzz target shares, whatever it links.
 *
 * A target checks what must hold for any input with FUZZ_CHECK: a failed
 * check prints why and aborts, which libFuzzer reports as a crash (saving
 * the input) and which fails the CTest replay of that input. Library code
 * never aborts on bad input; the target does, because there a failed
 * check is a bug in the library, not in the input.
 */
#ifndef GB_FUZZ_TARGET_H
#define GB_FUZZ_TARGET_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                               \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "fuzz check failed: %s: ", #cond);              \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            abort();                                                        \
        }                                                                   \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
