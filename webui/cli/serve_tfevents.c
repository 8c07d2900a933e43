/* cli/serve_tfevents.c — how `glassbox serve --logdir` reads TensorBoard's
 * event files: the logdir (store layer) finds each directory of
 * events.out.tfevents.* files and asks this converter for a store of it,
 * again whenever its files change (into a copy of the last store, which
 * knows how far it read each file: only new records are converted; a
 * file that changed otherwise exits 3, and the logdir converts the
 * directory anew). The importer is the writer's, which
 * this program does not link (it links no engine), so the conversion runs
 * `glassbox-model import --tfevents DIR --run RUN --db DB`, the same
 * import a person runs, with its output silenced: a torn tail, which a
 * live writer leaves between two flushes, is normal here, not news. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/cli.h"

extern char **environ;

bool gb__cli_import_tfevents(const char *dir, const char *run, const char *db, char *why,
                             size_t why_size) {
    char program[PATH_MAX + 32];
    gb__cli_engine_program(program, sizeof program);
    char *argv[] = {program, "import", "--tfevents", (char *)dir, "--run", (char *)run,
                    "--db", (char *)db, NULL};
    posix_spawn_file_actions_t io;
    posix_spawn_file_actions_init(&io);
    posix_spawn_file_actions_addopen(&io, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&io, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, program, &io, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&io);
    if (rc) {
        snprintf(why, why_size, "%s cannot be started: %s", program, strerror(rc));
        return false;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, why_size, "waiting for %s: %s", program, strerror(errno));
            return false;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
    snprintf(why, why_size, "'glassbox import --tfevents %s --run %s' failed (%s %d)", dir, run,
             WIFEXITED(status) ? "exit status" : "signal",
             WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return false;
}
