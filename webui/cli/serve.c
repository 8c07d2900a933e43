/* cli/serve.c — `glassbox serve --db FILE | --logdir DIR[,DIR...] [--host 127.0.0.1] [--port 6006]
 * [--threads 4] [--allow-host NAME[,NAME...]] [--token T | --token-file F |
 * --no-auth] [--cert PEM --key PEM]`: runs the dashboard server until
 * SIGINT or SIGTERM.
 *
 * The first line on stdout is "glassbox: serving http://HOST:PORT/ ..."
 * (https with --cert and --key),
 * printed once the socket listens (scripts and tests that pass --port 0
 * read the chosen port from it). Beyond loopback the address printed
 * carries the token (`?token=...`) every request needs, as Jupyter's. A
 * store that does not exist yet is created empty (said on the next line),
 * as TensorBoard waits for a logdir: the page is open before training
 * starts and shows each run as it appears. With --logdir it serves every
 * store under the directories (or glob patterns) as one board, and shows
 * each store as it appears; each directory of TensorBoard event files is
 * a run too, followed as its files grow (serve_tfevents.c).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "gb_board.h"
#include "gb_tfevents.h"

/* options[] and values[] */
enum { DB, LOGDIR, HOST, PORT, THREADS, ALLOW_HOST, TOKEN, TOKEN_FILE, NO_AUTH, CERT, KEY };

/* The token from --token or the first line of --token-file (into buf);
 * false after a usage error. */
static bool read_token(const gb__cli_command *cmd, const char *const *values, char *buf,
                       size_t size, const char **token) {
    *token = values[TOKEN];
    if ((values[TOKEN] != NULL) + (values[TOKEN_FILE] != NULL) + (values[NO_AUTH] != NULL) > 1) {
        gb__cli_usage_error(cmd, "--token, --token-file and --no-auth exclude each other");
        return false;
    }
    if (!values[TOKEN_FILE]) return true;
    FILE *f = fopen(values[TOKEN_FILE], "r");
    if (!f || !fgets(buf, (int)size, f)) {
        gb__cli_usage_error(cmd, "--token-file %s: %s", values[TOKEN_FILE],
                            f ? "the file is empty" : strerror(errno));
        if (f) fclose(f);
        return false;
    }
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    *token = buf;
    return true;
}

/* Splits --logdir's comma-separated list into list (in the copy buf);
 * the count, 0 after a usage error. */
static int split_logdir(const gb__cli_command *cmd, char *buf, const char **list, int max) {
    int n = 0;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            gb__cli_usage_error(cmd, "--logdir: more than %d directories", max);
            return 0;
        }
        list[n++] = p;
    }
    if (!n) gb__cli_usage_error(cmd, "--logdir: no directory given");
    return n;
}

static gb_board *start_logdir_board(const gb__cli_command *cmd, const char *logdir,
                                   const char *host, int port, const gb_board_options *opts,
                                   int *status) {
    enum { MAX_LOGDIRS = 64 };
    const char *list[MAX_LOGDIRS];
    char *buf = strdup(logdir);
    int n = buf ? split_logdir(cmd, buf, list, MAX_LOGDIRS) : 0;
    if (buf && !n) *status = GB__CLI_USAGE;
    /* Directories of TensorBoard event files are runs too. */
    gb_store_set_tfevents_converter(gb__cli_import_tfevents);
    gb_board *board = n ? gb_board_start_logdir(list, n, host, port, opts) : NULL;
    free(buf);
    return board;
}

/* The board of --db (the store made empty when missing) or of --logdir.
 * NULL with *status the exit code, the reason printed. */
static gb_board *start_board(const gb__cli_command *cmd, const char *const *values,
                             const char *host, int port, const gb_board_options *opts,
                             bool *created, int *status) {
    *status = 1;
    gb_board *board = NULL;
    if (!values[DB] == !values[LOGDIR]) {
        *status = gb__cli_usage_error(cmd, "give one of --db and --logdir");
        return NULL;
    }
    if (values[DB]) {
        if (gb_store_create(values[DB], created) != GB_STORE_OK) {
            *status = gb__cli_store_failed(cmd);
            return NULL;
        }
        board = gb_board_start(values[DB], host, port, opts);
    } else {
        board = start_logdir_board(cmd, values[LOGDIR], host, port, opts, status);
        if (!board && *status != 1) return NULL;   /* a usage error, said */
    }
    if (!board) gb__cli_print(stderr, "glassbox %s: %s", cmd->name, gb_board_last_error());
    return board;
}

static int serve(const gb__cli_command *cmd, const char *const *values) {
    const char *db = values[DB] ? values[DB] : values[LOGDIR], *host = values[HOST];
    int port;
    char token_buf[256];
    gb_board_options opts = {.allow_hosts = values[ALLOW_HOST], .no_auth = values[NO_AUTH] != NULL,
                             .tls_cert = values[CERT], .tls_key = values[KEY]};
    if (!gb__cli_int(cmd, values, PORT, 0, 65535, &port) ||
        !gb__cli_int(cmd, values, THREADS, 1, 64, &opts.threads) ||
        !read_token(cmd, values, token_buf, sizeof token_buf, &opts.token))
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
    int status;
    gb_board *board = start_board(cmd, values, host, port, &opts, &created, &status);
    if (!board) return status;
    const char *token = gb_board_token(board);
    gb__cli_print(stdout, "glassbox: serving %s%s%s (%s %s); Ctrl-C stops", gb_board_url(board),
                  *token ? "?token=" : "", token, values[DB] ? "store" : "logdir", db);
    if (created)
        gb__cli_print(stdout, "glassbox: %s did not exist: created it empty; runs appear as a "
                              "program writes them (--db %s)", db, db);
    if (opts.no_auth)
        gb__cli_print(stderr, "glassbox %s: WARNING: --no-auth: anyone who can reach %s port %d "
                              "reads every run of %s, with no token asked",
                      cmd->name, host, gb_board_port(board), db);
    if (*token && !values[TOKEN] && !values[TOKEN_FILE])
        gb__cli_print(stderr, "glassbox %s: listening on %s, reachable from other machines: "
                              "open the address above once, with its token (a new one each "
                              "start; --token or --token-file keep one). Browsers that reach "
                              "it by another name or address need --allow-host NAME",
                      cmd->name, host);
    fflush(stdout);
    int sig = 0;
    sigwait(&stop, &sig);
    gb_board_stop(board);
    return 0;
}

static const gb__cli_option options[] = {
    [DB] = {"--db", "FILE", "the store to serve (created empty when missing)"},
    [LOGDIR] = {"--logdir", "DIRS", "serve every store under these directories or glob "
                                    "patterns, comma-separated, as one board (instead of --db)"},
    [HOST] = {"--host", "HOST", "the address to listen on", .fallback = "127.0.0.1"},
    [PORT] = {"--port", "PORT", "the TCP port; 0 picks a free one", .fallback = "6006"},
    [THREADS] = {"--threads", "N", "HTTP worker threads, 1..64", .fallback = "4"},
    [ALLOW_HOST] = {"--allow-host", "NAMES",
                    "other names or addresses requests may give in Host, comma-separated"},
    [TOKEN] = {"--token", "TOKEN", "the secret every request must carry (default: a new one "
                                   "when not on loopback)"},
    [TOKEN_FILE] = {"--token-file", "FILE", "the token, from the first line of FILE"},
    [NO_AUTH] = {"--no-auth", NULL, "beyond loopback, ask no token (anyone reaching the port "
                                    "reads every run)"},
    [CERT] = {"--cert", "PEM", "serve HTTPS with this certificate (and its chain); needs --key"},
    [KEY] = {"--key", "PEM", "the certificate's private key (unencrypted PEM)"},
};
_Static_assert(sizeof options / sizeof options[0] <= GB__CLI_MAX_OPTIONS,
               "more options than the parser holds (cli.h)");

const gb__cli_command gb__cli_serve = {
    .name = "serve",
    .summary = "Serves the live dashboard of a store until Ctrl-C",
    .details = "It binds the loopback interface unless --host names another address\n"
               "(--host 0.0.0.0 lets other machines in). Beyond loopback every request\n"
               "needs a secret token: the address printed carries it once\n"
               "(http://HOST:PORT/?token=...), then a cookie (HttpOnly,\n"
               "SameSite=Strict) does; scripts send 'Authorization: Bearer TOKEN'.\n"
               "A new token is made at each start unless --token or --token-file\n"
               "gives one; --no-auth serves without one. With --cert and --key it\n"
               "serves HTTPS, and the cookie is Secure. New events reach the open\n"
               "pages within a second.\n"
               "\n"
               "--logdir serves many stores as one board: a sweep's, or an MPI job's\n"
               "written one per rank. Every glassbox store under the directories\n"
               "(searched recursively; glob patterns allowed: --logdir 'sweep_*,mpi')\n"
               "is read, found by its content whatever its name; a run is named by\n"
               "its store's path under the directory, without the extension, then its\n"
               "name there (lr_0.1/trial/train). Stores appearing, growing or\n"
               "disappearing show within about a second; each is opened read-only\n"
               "when looked at and closed when idle. A directory holding TensorBoard\n"
               "event files (events.out.tfevents.*) is a run named by its path, read\n"
               "as its files grow (a record still being written is waited for).\n"
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
