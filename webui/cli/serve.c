/* cli/serve.c — `glassbox serve --db FILE [--host 127.0.0.1] [--port 6006]
 * [--threads 4] [--allow-host NAME[,NAME...]]`: runs the dashboard server
 * until SIGINT or SIGTERM.
 *
 * The first line on stdout is "glassbox: serving http://HOST:PORT/ ...",
 * printed once the socket listens (scripts and tests that pass --port 0
 * read the chosen port from it). A store that does not exist yet is
 * created empty (said on the next line), as TensorBoard waits for a
 * logdir: the page is open before training starts and shows each run as
 * it appears.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "gb_board.h"

enum { DB, HOST, PORT, THREADS, ALLOW_HOST };   /* options[] and values[] */

static bool is_loopback(const char *host) {
    return !strcmp(host, "127.0.0.1") || !strcmp(host, "localhost") || !strcmp(host, "::1");
}

static int serve(const gb__cli_command *cmd, const char *const *values) {
    const char *db = values[DB], *host = values[HOST];
    int port;
    gb_board_options opts = {.allow_hosts = values[ALLOW_HOST]};
    if (!gb__cli_int(cmd, values, PORT, 0, 65535, &port) ||
        !gb__cli_int(cmd, values, THREADS, 1, 64, &opts.threads))
        return GB__CLI_USAGE;

    /* Block the stop signals before any thread starts, so only sigwait
     * below receives them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    /* A store that does not exist yet is made empty, so the dashboard can
     * be opened before training starts; runs appear as they are written. */
    bool created = false;
    if (gb_store_create(db, &created) != GB_STORE_OK) return gb__cli_store_failed(cmd);
    gb_board *board = gb_board_start(db, host, port, &opts);
    if (!board) {
        gb__cli_print(stderr, "glassbox %s: %s", cmd->name, gb_board_last_error());
        return 1;
    }
    gb__cli_print(stdout, "glassbox: serving %s (store %s); Ctrl-C stops", gb_board_url(board), db);
    if (created)
        gb__cli_print(stdout, "glassbox: %s did not exist: created it empty; runs appear as a "
                              "program writes them (--db %s)", db, db);
    if (!is_loopback(host))
        gb__cli_print(stderr, "glassbox %s: warning: listening on %s, reachable from other "
                              "machines; the dashboard has no authentication. Browsers that "
                              "reach it by a name or address other than %s need --allow-host NAME",
                      cmd->name, host, host);
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    gb_board_stop(board);
    return 0;
}

static const gb__cli_option options[] = {
    [DB] = {"--db", "FILE", "the store to serve (created empty when missing)", .required = true},
    [HOST] = {"--host", "HOST", "the address to listen on", .fallback = "127.0.0.1"},
    [PORT] = {"--port", "PORT", "the TCP port; 0 picks a free one", .fallback = "6006"},
    [THREADS] = {"--threads", "N", "HTTP worker threads, 1..64", .fallback = "4"},
    [ALLOW_HOST] = {"--allow-host", "NAMES",
                    "other names or addresses requests may give in Host, comma-separated"},
};

const gb__cli_command gb__cli_serve = {
    .name = "serve",
    .summary = "Serves the live dashboard of a store until Ctrl-C",
    .details = "It binds the loopback interface unless --host names another address\n"
               "(--host 0.0.0.0 lets other machines in; the dashboard has no\n"
               "authentication). New events reach the open pages within a second.\n"
               "\n"
               "Requests must name the server in their Host header: localhost,\n"
               "127.0.0.1, [::1], the --host address, or a name given with\n"
               "--allow-host (e.g. --allow-host dash.example.com,10.0.0.5 when\n"
               "browsers reach it by that name); others are refused (403), so a\n"
               "web page elsewhere cannot reach the dashboard by DNS rebinding.\n",
    .options = options,
    .noptions = sizeof options / sizeof options[0],
    .run = serve,
};
