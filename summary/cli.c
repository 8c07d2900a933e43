/* cli.c — PENDING: `glassbox inspect` and `glassbox export`. */
#include <stdio.h>

#include "../webui/gb_cli.h"

int gb_cli_inspect(int argc, char **argv) {
    (void)argc, (void)argv;
    fprintf(stderr, "glassbox inspect: not implemented yet\n");
    return 1;
}

int gb_cli_export(int argc, char **argv) {
    (void)argc, (void)argv;
    fprintf(stderr, "glassbox export: not implemented yet\n");
    return 1;
}
