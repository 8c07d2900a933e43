/* serve_cli.c — `glassbox serve --db FILE [--host 127.0.0.1] [--port 6006]`:
 * runs the dashboard server until SIGINT or SIGTERM.
 *
 * The first line on stdout is "glassbox: serving http://HOST:PORT/ ...",
 * printed once the socket listens (scripts and tests that pass --port 0
 * read the chosen port from it).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_board.h"
#include "gb_cli.h"

static const char usage_text[] =
    "usage: glassbox serve --db FILE [--host 127.0.0.1] [--port 6006] [--threads 4]\n"
    "  Serves the dashboard of the store FILE. It binds the loopback interface\n"
    "  unless --host names another address (e.g. --host 0.0.0.0 to allow\n"
    "  other machines). --port 0 picks a free port.\n";

/* Parses a whole decimal int in [lo, hi] into *out. */
static int parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) return 0;
    *out = (int)v;
    return 1;
}

int gb_cli_serve(int argc, char **argv) {
    const char *db = NULL, *host = "127.0.0.1";
    int port = 6006;
    gb_board_options opts = {0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            return 0;
        }
        int ok = v != NULL;
        if (!strcmp(a, "--db")) db = v;
        else if (!strcmp(a, "--host")) host = v;
        else if (!strcmp(a, "--port")) ok = ok && parse_int(v, 0, 65535, &port);
        else if (!strcmp(a, "--threads")) ok = ok && parse_int(v, 1, 64, &opts.threads);
        else {
            fprintf(stderr, "glassbox serve: unknown option '%s'\n%s", a, usage_text);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "glassbox serve: %s needs %s\n%s", a,
                    v ? "a valid value" : "a value", usage_text);
            return 2;
        }
        i++;
    }
    if (!db) {
        fprintf(stderr, "glassbox serve: --db FILE is required\n%s", usage_text);
        return 2;
    }

    /* Block the stop signals before any thread starts, so only sigwait
     * below receives them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    gb_board *board = gb_board_start(db, host, port, &opts);
    if (!board) {
        fprintf(stderr, "glassbox serve: %s\n", gb_board_last_error());
        return 1;
    }
    printf("glassbox: serving %s (store %s); Ctrl-C stops\n", gb_board_url(board), db);
    if (strcmp(host, "127.0.0.1") && strcmp(host, "localhost") && strcmp(host, "::1"))
        fprintf(stderr, "glassbox serve: warning: listening on %s, reachable from other "
                        "machines; the dashboard has no authentication\n", host);
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    gb_board_stop(board);
    return 0;
}
