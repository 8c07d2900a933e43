/* test_webui_cli.c — the `glassbox` program, run as a user would.
 *
 * Runs the built build/glassbox binary (GB_BUILD_DIR, set by CTest) on a
 * store written for each test (webui_fixtures.c, "cli": run run-a with an
 * hparam lr=0.01, scalars loss = 0.5, NaN, +Inf, -Inf, 0.1, -2.25e-300 at
 * steps 0..5 and a histogram w) and on the wrong files: inspect and export
 * read it exactly; each error gives a non-zero exit, a message naming the
 * problem and nothing on stdout. The one argument parser: every subcommand
 * takes --name VALUE and --name=VALUE alike, answers --help with its usage
 * on stdout, and refuses unknown options, missing values and missing
 * required options with exit 2. serve's bad arguments are refused before
 * it would serve. A directory, a FIFO, a file that is no store and a newer
 * schema are each one line and exit 1 for every subcommand. Names from
 * the store ("webui_fixtures evil": ESC sequences, BEL, newlines, C1, bytes
 * that are not UTF-8) print escaped, exactly, in inspect's output and in
 * every message quoting them. serve --allow-host reaches the server's Host
 * check. Links the server and the store only.
 */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_program.h"
#include "run_suite.h"
#include "summary_test_util.h"
#include "webui_http.h"

static char dir[256], db[300], out_path[300], err_path[300], out[1 << 16], err[4096];

static void read_file(const char *path, char *buf, size_t n) {
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(buf, 1, n - 1, f);
    buf[len] = 0;
    fclose(f);
}

/* Runs `glassbox args...`; stdout and stderr land in out and err. */
static int glassbox(const char *const *args) {
    int rc = run_program("glassbox", args, out_path, err_path);
    ck_assert_int_ge(rc, 0);
    read_file(out_path, out, sizeof out);
    read_file(err_path, err, sizeof err);
    return rc;
}

#define ASSERT_FAILS(code, part, ...)                                                         \
    do {                                                                                      \
        ck_assert_int_eq(glassbox((const char *const[]){__VA_ARGS__, NULL}), (code));         \
        ck_assert_msg(strstr(err, (part)), "stderr '%s' lacks '%s'", err, (part));            \
        ck_assert_str_eq(out, "");                                                            \
    } while (0)

/* text holds `line` as a whole line. */
#define ASSERT_HAS_LINE(text, line)                                                         \
    ck_assert_msg(has_line((text), (line)), "no line\n%s\nin\n%s", (line), (text))

static bool has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) return true;
    return false;
}

static void setup(void) {
    SUMMARY_TEMP_STORE(dir, db, "gb_webui_cli");
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(err_path, sizeof err_path, "%s/err", dir);
    ck_assert_int_eq(run_program("tests/webui_fixtures", (const char *const[]){"cli", db, NULL},
                                 NULL, NULL), 0);
}

static void teardown(void) {
    summary_remove_dir(dir);
}

START_TEST(test_inspect_lists_runs_tags_counts) {
    ck_assert_int_eq(glassbox((const char *const[]){"inspect", "--db", db, NULL}), 0);
    ck_assert_msg(strstr(out, "schema version 8): 1 run"), "%s", out);
    ck_assert(strstr(out, "run 'run-a'"));
    ck_assert(strstr(out, "lr=0.01"));
    ck_assert_msg(strstr(out, "scalar     loss                                      6  0..5"), "%s",
                  out);
    ck_assert(strstr(out, "histogram  w                                         1  0..0"));
    ck_assert(strstr(out, "0 traces, 0 numerics alerts, 0 messages"));
    ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(test_export_csv_and_json_are_full_and_exact) {
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--db", db, "--run", "run-a", "--tag",
                                                    "loss", "--format", "csv", NULL}),
                     0);
    ck_assert(!strncmp(out, "step,wall_time,value\n0,", 23));
    const char *want[] = {",0.5\n", ",nan\n", ",inf\n", ",-inf\n", ",0.1\n", ",-2.25e-300\n"};
    const char *p = out;
    for (int i = 0; i < 6; i++) {
        char head[32];
        snprintf(head, sizeof head, "\n%d,", i);
        p = strstr(p, head);
        ck_assert_msg(p, "no row for step %d in\n%s", i, out);
        const char *eol = strchr(p + 1, '\n');
        ck_assert(!strncmp(eol - strlen(want[i]) + 1, want[i], strlen(want[i])));
    }
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--db=" , "x", NULL}), 2);
    char arg[400];
    snprintf(arg, sizeof arg, "--db=%s", db);
    ck_assert_int_eq(glassbox((const char *const[]){"export", arg, "--run", "run-a", "--tag", "loss",
                                                    "--format=json", NULL}),
                     0);
    ck_assert(out[0] == '[' && strstr(out, "\"value\": \"NaN\"") &&
              strstr(out, "\"value\": \"-Infinity\"") && strstr(out, "\"step\": 5,") &&
              strstr(out, "\n]\n"));
}
END_TEST

START_TEST(test_errors_exit_non_zero_with_a_message) {
    char path[400];
    snprintf(path, sizeof path, "%s/missing.db", dir);
    ASSERT_FAILS(1, "glassbox inspect: store '", "inspect", "--db", path);
    ck_assert(strstr(err, "missing.db' does not exist"));
    snprintf(path, sizeof path, "%s/text.db", dir);
    FILE *f = fopen(path, "w");
    fputs("hello, I am a text file and not a database at all, sorry about that\n", f);
    fclose(f);
    ASSERT_FAILS(1, "not a glassbox store (not an SQLite database)", "inspect", "--db", path);
    ASSERT_FAILS(1, "not a glassbox store", "export", "--db", path, "--run", "r", "--tag", "t");
    ASSERT_FAILS(1, "unknown run 'nope'", "export", "--db", db, "--run", "nope", "--tag", "loss");
    ASSERT_FAILS(1, "run 'run-a' has no scalar tag 'zz'", "export", "--db", db, "--run", "run-a",
                 "--tag", "zz");
    ASSERT_FAILS(1, "has no scalar tag 'w'", "export", "--db", db, "--run", "run-a", "--tag", "w");
    ASSERT_FAILS(2, "unknown format 'xml'", "export", "--db", db, "--run", "run-a", "--tag", "loss",
                 "--format", "xml");
    ASSERT_FAILS(2, "unknown format 'xml' (use csv, json or tfevents)", "export", "--db", db,
                 "--run", "run-a", "--tag", "loss", "--format", "xml");
    ASSERT_FAILS(2, "--format tfevents writes a run: --run and --out DIR, no --tag", "export",
                 "--db", db, "--run", "run-a", "--format", "tfevents");
    ASSERT_FAILS(2, "--out is for --format tfevents", "export", "--db", db, "--run", "run-a",
                 "--tag", "loss", "--out", dir);
    ASSERT_FAILS(1, "unknown run 'nope'", "export", "--db", db, "--run", "nope", "--format",
                 "tfevents", "--out", dir);
    ASSERT_FAILS(2, "usage: glassbox export", "export", "--db", db);
    ASSERT_FAILS(2, "usage: glassbox inspect", "inspect");
    ASSERT_FAILS(2, "unknown option '--verbose'", "inspect", "--db", db, "--verbose");
    ASSERT_FAILS(2, "--db needs a value", "inspect", "--db");
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "PRAGMA user_version = 9", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    ASSERT_FAILS(1, "schema version 9, newer than this glassbox supports (8)", "inspect", "--db", db);
}
END_TEST

/* ---- the one argument parser -------------------------------------------------------------- */

/* export --hparams: the HParams table of the "hparams" fixture, exactly;
 * its refusals. */
START_TEST(test_export_hparams_csv) {
    char hp_db[400];
    snprintf(hp_db, sizeof hp_db, "%s/hparams.db", dir);
    ck_assert_int_eq(run_program("tests/webui_fixtures", (const char *const[]){"hparams", hp_db, NULL},
                                 NULL, NULL), 0);
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--db", hp_db, "--hparams", NULL}), 0);
    ck_assert_str_eq(out, "run,status,lr,optimizer,acc,acc (best),loss,loss (best)\n"
                          "a,done,0.001,adam,0.75,0.75,0.25,0.25\n"
                          "b,failed,0.01,sgd,0.25,0.25,,\n"
                          "c,killed,0.1,,,,,\n");
    ck_assert_str_eq(err, "");
    ASSERT_FAILS(2, "--hparams exports every run: no --run or --tag", "export", "--db", hp_db,
                 "--hparams", "--run", "a");
    ASSERT_FAILS(2, "--hparams writes CSV only", "export", "--db", hp_db, "--hparams", "--format",
                 "json");
    ASSERT_FAILS(2, "--run and --tag are required (or --hparams, or --profile)", "export", "--db",
                 hp_db, "--run", "a");
    /* No experiment declared: inferred from the runs (their hparam keys,
     * their scalar tags as metrics, lower is better unless "acc"). */
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--db", db, "--hparams", NULL}), 0);
    ck_assert_str_eq(out, "run,status,lr,loss,loss (best)\n"
                          "run-a,done,0.01,-2.25e-300,-2.25e-300\n");
}
END_TEST

static const char *const subcommands[] = {"inspect", "export", "serve"};

START_TEST(test_value_after_equals_sign_everywhere) {
    char arg[400];
    snprintf(arg, sizeof arg, "--db=%s", db);
    ck_assert_int_eq(glassbox((const char *const[]){"inspect", arg, NULL}), 0);
    ck_assert_msg(strstr(out, "run 'run-a'"), "%s", out);
    ck_assert_int_eq(glassbox((const char *const[]){"export", arg, "--run=run-a", "--tag=loss",
                                                    "--format=csv", NULL}),
                     0);
    ck_assert(!strncmp(out, "step,wall_time,value\n0,", 23));
    /* serve: --db= and --port= are read (the store is missing: exit 1, not 2). */
    char missing[400];
    snprintf(missing, sizeof missing, "--db=%s/no-such-dir/missing.db", dir);
    ASSERT_FAILS(1, "cannot create store", "serve", missing, "--port=0", "--threads=2");
    ASSERT_FAILS(2, "--port needs an integer in 0..65535, not 'http'", "serve", arg, "--port=http");
    ASSERT_FAILS(2, "--db needs a value (FILE)", "inspect", "--db=");
}
END_TEST

/* How a subcommand's usage line begins: serve takes --db or --logdir. */
static const char *usage_head(const char *subcommand) {
    static char head[64];
    snprintf(head, sizeof head, strcmp(subcommand, "serve") ? "%s --db FILE"
                                                            : "%s [--db FILE] [--logdir DIRS]",
             subcommand);
    return head;
}

START_TEST(test_help_on_every_subcommand) {
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
        const char *flags[] = {"--help", "-h"};
        for (int f = 0; f < 2; f++) {
            /* --help wins over anything else on the line, even a mistake. */
            ck_assert_int_eq(glassbox((const char *const[]){subcommands[i], "--bogus", flags[f], NULL}), 0);
            char head[80];
            snprintf(head, sizeof head, "usage: glassbox %s", usage_head(subcommands[i]));
            ck_assert_msg(!strncmp(out, head, strlen(head)), "%s", out);
            ck_assert_msg(strstr(out, "--name VALUE or --name=VALUE"), "%s", out);
            ck_assert_msg(strstr(out, "-h, --help"), "%s", out);
            ck_assert_str_eq(err, "");
        }
    }
    ck_assert_int_eq(glassbox((const char *const[]){"serve", "--help", NULL}), 0);
    ck_assert(strstr(out, "--port PORT") && strstr(out, "(default 6006)") &&
              strstr(out, "(default 127.0.0.1)") && strstr(out, "[--allow-host NAMES]"));
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--help", NULL}), 0);
    ck_assert_msg(strstr(out, "[--format FORMAT]") && strstr(out, "[--profile]") &&
                      strstr(out, "chrome-trace (a profile)"),
                  "%s", out);
    /* The program's own help lists every subcommand. */
    ck_assert_int_eq(glassbox((const char *const[]){"--help", NULL}), 0);
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++)
        ck_assert_msg(strstr(out, subcommands[i]), "%s", out);
    ck_assert_str_eq(err, "");
    ASSERT_FAILS(2, "usage: glassbox <command>", "frobnicate");
    ck_assert(strstr(err, "unknown command 'frobnicate'"));
}
END_TEST

START_TEST(test_unknown_option_is_a_clear_error) {
    for (size_t i = 0; i < sizeof subcommands / sizeof subcommands[0]; i++) {
        char want[160];
        snprintf(want, sizeof want, "glassbox %s: unknown option '--verbose'\nusage: glassbox %s",
                 subcommands[i], usage_head(subcommands[i]));
        ASSERT_FAILS(2, want, subcommands[i], "--db", db, "--verbose");
        snprintf(want, sizeof want, "'glassbox %s --help' describes the options", subcommands[i]);
        ck_assert_msg(strstr(err, want), "%s", err);
    }
    ASSERT_FAILS(2, "unexpected argument 'runs.db'", "inspect", "runs.db");
    ASSERT_FAILS(2, "--db is given more than once", "inspect", "--db", db, "--db=x");
    ASSERT_FAILS(2, "--db needs a value (FILE)", "inspect", "--db", "--format", "csv");
}
END_TEST

/* serve refuses bad arguments (exit 2) before it would serve. */
START_TEST(test_serve_rejects_bad_arguments) {
    ASSERT_FAILS(2, "glassbox serve: give one of --db and --logdir", "serve");
    ASSERT_FAILS(2, "glassbox serve: give one of --db and --logdir", "serve", "--db", db,
                 "--logdir", dir);
    ASSERT_FAILS(2, "glassbox serve: --logdir: no directory given", "serve", "--logdir", ",");
    ASSERT_FAILS(1, "glassbox serve: logdir '/no/such/logdir' does not exist\n", "serve",
                 "--logdir", "/no/such/logdir", "--port", "0");
    ASSERT_FAILS(2, "--port needs an integer in 0..65535, not '65536'", "serve", "--db", db,
                 "--port", "65536");
    ASSERT_FAILS(2, "--threads needs an integer in 1..64, not '0'", "serve", "--db", db,
                 "--threads", "0");
    ASSERT_FAILS(2, "--db needs a value", "serve", "--db");
    char missing[400];
    snprintf(missing, sizeof missing, "%s/no-such-dir/missing.db", dir);
    ASSERT_FAILS(1, "glassbox serve: cannot create store", "serve", "--db", missing, "--port", "0");
}
END_TEST

/* ---- paths that are no store ---------------------------------------------------------------- */

/* err is exactly "<head><message>\n": one line. */
static void assert_one_line(const char *head, const char *message) {
    char want[1200];
    snprintf(want, sizeof want, "%s%s\n", head, message);
    ck_assert_str_eq(err, want);
}

START_TEST(test_bad_store_paths_are_one_line_errors) {
    char fifo[300], text[300], newer[300];
    snprintf(fifo, sizeof fifo, "%s/fifo.db", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);   /* opening it would block: it must not be opened */
    snprintf(text, sizeof text, "%s/text.db", dir);
    FILE *f = fopen(text, "w");
    fputs("a text file long enough to fill the 100 bytes of an SQLite header, which it is not, "
          "as anyone can see\n", f);
    fclose(f);
    snprintf(newer, sizeof newer, "%s/newer.db", dir);
    ck_assert_int_eq(run_program("tests/webui_fixtures", (const char *const[]){"cli", newer, NULL},
                                 NULL, NULL), 0);
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(newer, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "PRAGMA user_version = 9", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    const struct {
        const char *path, *fmt;
    } cases[] = {
        {dir, "'%s' is not a glassbox store (a directory)"},
        {fifo, "'%s' is not a glassbox store (not a regular file)"},
        {text, "'%s' is not a glassbox store (not an SQLite database)"},
        {newer, "store '%s' has schema version 9, newer than this glassbox supports (8); use a "
                "newer glassbox"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char message[600];
        snprintf(message, sizeof message, cases[i].fmt, cases[i].path);
        ASSERT_FAILS(1, "", "inspect", "--db", cases[i].path);
        assert_one_line("glassbox inspect: ", message);
        ASSERT_FAILS(1, "", "export", "--db", cases[i].path, "--run", "run-a", "--tag", "loss");
        assert_one_line("glassbox export: ", message);
        /* serve words it its own way; still one line, exit 1. */
        ASSERT_FAILS(1, "glassbox serve: ", "serve", "--db", cases[i].path, "--port", "0");
        ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
    }
}
END_TEST

/* ---- stored strings on a terminal ------------------------------------------------------------ */

/* How the run name of `webui_fixtures evil` ("evil ESC[31m red BEL
 * newline line") must print. */
#define EVIL_RUN "evil\x1b[31mred\x07\nline"
#define EVIL_SHOWN "evil\\x1b[31mred\\x07\\nline"

static char evil_db[300];

static void write_evil_store(void) {
    snprintf(evil_db, sizeof evil_db, "%s/evil.db", dir);
    const char *const args[] = {"evil", evil_db, NULL};
    ck_assert_int_eq(run_program("tests/webui_fixtures", args, NULL, NULL), 0);
}

/* Nothing in text that a terminal acts on: no control character but the
 * newline, and no byte past ASCII except those of "é". */
static void assert_terminal_safe(const char *text) {
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (p[0] == 0xc3 && p[1] == 0xa9) {
            p++;
            continue;
        }
        ck_assert_msg((*p >= 0x20 && *p < 0x7f) || *p == '\n', "byte 0x%02x at %d in\n%s", *p,
                      (int)(p - (const unsigned char *)text), text);
    }
}

START_TEST(test_inspect_escapes_stored_strings) {
    write_evil_store();
    ck_assert_int_eq(glassbox((const char *const[]){"inspect", "--db", evil_db, NULL}), 0);
    ASSERT_HAS_LINE(out, "run '" EVIL_SHOWN "'");
    ASSERT_HAS_LINE(out, "  hparams   bad=x\\xffy c1=a\\u009b2J note=" EVIL_SHOWN
                         " ok=caf\xc3\xa9 \\\\o/");
    /* Columns are padded before escaping: an escaped name pushes its row right. */
    ASSERT_HAS_LINE(out, "  scalar     tag\\x1b]0;title\\x07"
                         "                   "   /* the rest of %-32s */
                         "          1  0..0");
    assert_terminal_safe(out);
    ck_assert_str_eq(err, "");
}
END_TEST

START_TEST(test_messages_escape_stored_strings) {
    write_evil_store();
    char want[1024];
    /* export: the run name given back in the message */
    ASSERT_FAILS(1, "", "export", "--db", evil_db, "--run", EVIL_RUN, "--tag", "nope");
    snprintf(want, sizeof want, "store '%s': run '" EVIL_SHOWN "' has no scalar tag 'nope'",
             evil_db);
    assert_one_line("glassbox export: ", want);
    /* the data itself is numbers only, whatever the tag is called */
    ck_assert_int_eq(glassbox((const char *const[]){"export", "--db", evil_db, "--run", EVIL_RUN,
                                                    "--tag", "tag\x1b]0;title\x07", NULL}),
                     0);
    ck_assert_msg(!strncmp(out, "step,wall_time,value\n0,", 23) && strstr(out, ",1\n"), "%s", out);
    assert_terminal_safe(out);
    /* a damaged row: the reader's message names the run from the store */
    sqlite3 *h;
    ck_assert_int_eq(sqlite3_open(evil_db, &h), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(h, "UPDATE hparams SET value = x'00' WHERE key = 'note'", NULL,
                                  NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(h);
    ASSERT_FAILS(1, "", "inspect", "--db", evil_db);
    snprintf(want, sizeof want,
             "store '%s': damaged hparams row (run '" EVIL_SHOWN "', key 'note'): the text is a "
             "BLOB",
             evil_db);
    assert_one_line("glassbox inspect: ", want);
    /* serve: the path in its message; usage errors: the argument */
    char path[400];
    snprintf(path, sizeof path, "%s/no\x1bsuch/x.db", dir);
    ASSERT_FAILS(1, "", "serve", "--db", path, "--port", "0");
    snprintf(want, sizeof want, "cannot create store '%s/no\\x1bsuch/x.db': unable to open database file",
             dir);
    assert_one_line("glassbox serve: ", want);
    ASSERT_FAILS(2, "glassbox inspect: unknown option '--x\\x9b\\x07'\nusage:", "inspect",
                 "--x\x9b\x07");
    assert_terminal_safe(err);
}
END_TEST

/* Starts `glassbox serve args...` in the background, its stdout in
 * out_path; returns its pid once it prints the port it serves on. */
static pid_t start_serve(const char *const *args, int *port) {
    char exe[512];
    ck_assert(build_program_path("glassbox", exe, sizeof exe));
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(out_path, "w", stdout) || !freopen(err_path, "w", stderr)) _exit(99);
        char *argv[16] = {exe, "serve"};
        for (int i = 0; args[i] && i < 13; i++) argv[i + 2] = (char *)args[i];
        execv(exe, argv);
        _exit(98);
    }
    *port = 0;
    for (int i = 0; i < 100 && !*port; i++) {
        usleep(50000);
        read_file(out_path, out, sizeof out);
        const char *url = strstr(out, "serving http://127.0.0.1:");
        if (url) *port = atoi(url + 25);
    }
    ck_assert_msg(*port > 0, "serve printed no port: %s", out);
    return pid;
}

/* --allow-host names reach the server: their Host headers pass, others
 * stay refused; a name that is not one is refused before serving. */
START_TEST(test_serve_allows_the_hosts_it_is_given) {
    int port;
    pid_t pid = start_serve((const char *const[]){"--db", db, "--port", "0", "--allow-host",
                                                  "dash.example, 10.0.0.5", NULL},
                            &port);
    static const struct {
        const char *host;
        int status;
    } cases[] = {{"dash.example:6006", 200}, {"10.0.0.5", 200}, {"localhost", 200},
                 {"evil.example", 403}, {"dash.example.evil", 403}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char req[256];
        snprintf(req, sizeof req, "GET /api/runs HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
                 cases[i].host);
        int fd = http_connect(port, 3000);
        http_response r;
        ck_assert(http_exchange(fd, req, false, &r));
        close(fd);
        ck_assert_msg(r.status == cases[i].status, "Host %s: %d", cases[i].host, r.status);
        http_free(&r);
    }
    kill(pid, SIGTERM);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_FAILS(1, "allowed host 'bad name' is not a host name or address", "serve", "--db", db,
                 "--port", "0", "--allow-host", "bad name");
}
END_TEST

/* A store that does not exist yet is created empty and served: the page
 * can be opened before training starts, and shows no runs until then. */
START_TEST(test_serve_creates_a_missing_store) {
    char fresh[400];
    snprintf(fresh, sizeof fresh, "%s/new.db", dir);
    int port;
    pid_t pid = start_serve((const char *const[]){"--db", fresh, "--port", "0", NULL}, &port);
    char line[1000];
    snprintf(line, sizeof line, "glassbox: %s did not exist: created it empty; runs appear as a "
                                "program writes them (--db %s)", fresh, fresh);
    for (int i = 0; i < 100 && !has_line(out, line); i++) usleep(50000), read_file(out_path, out, sizeof out);
    ASSERT_HAS_LINE(out, line);
    int fd = http_connect(port, 3000);
    http_response r;
    ck_assert(http_exchange(fd, "GET /api/runs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                            false, &r));
    close(fd);
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(strstr(r.body, "\"runs\":[]") || strstr(r.body, "\"runs\": []"), "%s", r.body);
    http_free(&r);
    kill(pid, SIGTERM);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The store is a store now: inspect reads it, empty. */
    ck_assert_int_eq(glassbox((const char *const[]){"inspect", "--db", fresh, NULL}), 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("webui_cli");
    TCase *tc = tcase_create("cli");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_inspect_lists_runs_tags_counts);
    tcase_add_test(tc, test_export_csv_and_json_are_full_and_exact);
    tcase_add_test(tc, test_export_hparams_csv);
    tcase_add_test(tc, test_errors_exit_non_zero_with_a_message);
    tcase_add_test(tc, test_value_after_equals_sign_everywhere);
    tcase_add_test(tc, test_help_on_every_subcommand);
    tcase_add_test(tc, test_unknown_option_is_a_clear_error);
    tcase_add_test(tc, test_serve_rejects_bad_arguments);
    tcase_add_test(tc, test_bad_store_paths_are_one_line_errors);
    tcase_add_test(tc, test_inspect_escapes_stored_strings);
    tcase_add_test(tc, test_messages_escape_stored_strings);
    tcase_add_test(tc, test_serve_allows_the_hosts_it_is_given);
    tcase_add_test(tc, test_serve_creates_a_missing_store);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
