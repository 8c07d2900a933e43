/* cli/store.c — opening a store for a subcommand, and the reader's errors
 * as a subcommand reports them ("glassbox inspect: store 'x.db' ...",
 * exit code 1). */
#include <stdio.h>

#include "cli/cli.h"

gb_store *gb__cli_open_store(const gb__cli_command *cmd, const char *path) {
    gb_store *s;
    if (gb_store_open(path, &s) == GB_STORE_OK) return s;
    gb__cli_store_failed(cmd);
    return NULL;
}

int gb__cli_store_failed(const gb__cli_command *cmd) {
    gb__cli_print(stderr, "glassbox %s: %s", cmd->name, gb_store_last_error());
    return 1;
}
