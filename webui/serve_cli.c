/* serve_cli.c — PENDING: `glassbox serve`. */
#include <stdio.h>

#include "gb_cli.h"

int gb_cli_serve(int argc, char **argv) {
    (void)argc, (void)argv;
    fprintf(stderr, "glassbox serve: not implemented yet\n");
    return 1;
}
