/* fuzz_nn_config.c — the config reader (gb_config_from_json, the parser
 * model files will use) and gb_module_from_config on arbitrary text.
 *
 * What must hold for any input: no crash, leak or undefined behaviour; a
 * refused text gets a GB_ERR_VALUE error naming it ("input: line L,
 * column C: ..."); an accepted one writes back to JSON that reads again
 * to the same text (a fixed point). Accepted configs whose integers are
 * all small are also given to gb_module_from_config, so every layer's
 * from_config meets hostile values without allocating without bound; a
 * module it makes must serialize again.
 */
#include "config_limits.h"
#include "fuzz_engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_begin();
    gb_config *c = gb_config_from_json((const char *)data, size, "input");
    if (!c) {
        const gb_error *e = gb_last_error();
        FUZZ_CHECK(e && e->code == GB_ERR_VALUE, "refused without a value error");
        FUZZ_CHECK(strncmp(e->message, "input: line ", 12) == 0, "the message does not say where: %s",
                   e->message);
    } else {
        char *text = gb_config_to_json(c, 0);
        FUZZ_CHECK(text != NULL, "an accepted config does not print: %s", gb_error_string());
        gb_config *again = gb_config_from_json(text, strlen(text), "again");
        FUZZ_CHECK(again != NULL, "printed text does not parse: %s: %s", gb_error_string(), text);
        char *text2 = gb_config_to_json(again, 0);
        FUZZ_CHECK(text2 && strcmp(text, text2) == 0, "not a fixed point: %s / %s", text, text2);
        free(text), free(text2);
        gb_config_free(again);
        if (config_small_values(c)) {
            gb_module *m = gb_module_from_config(c);
            FUZZ_CHECK(m || !gb_ok(), "no module and no error");
            gb_config *back = m ? gb_module_get_config(m) : NULL;
            FUZZ_CHECK(!m || back, "a module from a config has no config: %s", gb_error_string());
            gb_config_free(back);
            gb_module_free(m);
        }
        gb_config_free(c);
    }
    fuzz_end();
    return 0;
}
