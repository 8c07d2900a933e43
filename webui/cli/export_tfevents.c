/* cli/export_tfevents.c — `glassbox export --db FILE --run RUN --format
 * tfevents --out DIR`: the run as a TensorBoard event file in DIR (made if
 * missing), named as TensorFlow names its own
 * (events.out.tfevents.<seconds>.<host>), so `tensorboard --logdir DIR`
 * shows it. What is written is gb_store_export_tfevents's (gb_tfevents.h):
 * scalars, histograms, images and text, each value's bits kept. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gb_tfevents.h"

/* mkdir -p: dir and the parents it lacks. */
static bool make_dirs(const char *dir) {
    char p[4096];
    if ((size_t)snprintf(p, sizeof p, "%s", dir) >= sizeof p) return (errno = ENAMETOOLONG), false;
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0777) && errno != EEXIST) return false;
            *s = '/';
        }
    return !mkdir(p, 0777) || errno == EEXIST;
}

int gb__cli_export_tfevents(const gb__cli_command *cmd, const char *db, const char *run,
                            const char *out_dir) {
    if (!make_dirs(out_dir)) {
        gb__cli_print(stderr, "glassbox %s: cannot make '%s': %s", cmd->name, out_dir, strerror(errno));
        return 1;
    }
    char host[256] = "localhost", path[4096];
    gethostname(host, sizeof host - 1);
    if ((size_t)snprintf(path, sizeof path, "%s/events.out.tfevents.%lld.%s", out_dir,
                         (long long)time(NULL), host) >= sizeof path) {
        gb__cli_print(stderr, "glassbox %s: the path under '%s' is too long", cmd->name, out_dir);
        return 1;
    }
    gb_store *s = gb__cli_open_store(cmd, db);
    if (!s) return 1;
    size_t written = 0;
    int rc = 0;
    if (gb_store_export_tfevents(s, run, path, &written) != GB_STORE_OK) rc = gb__cli_store_failed(cmd);
    else gb__cli_print(stdout, "glassbox: wrote %zu values of run '%s' to %s", written, run, path);
    gb_store_close(s);
    return rc;
}
