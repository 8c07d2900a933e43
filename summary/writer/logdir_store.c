/* writer/logdir_store.c — the store of this process in a logdir.
 *
 * SQLite must never be shared over a network file system, and ranks of an
 * MPI job on several machines cannot all write one file, so each process
 * writes a store of its own into a shared directory and `glassbox serve
 * --logdir` reads them all as one board. This names that store: one per
 * run for a job of one process, one per rank under the run's directory
 * for an MPI job, so the board's run names say which rank wrote what
 * ("mnist/rank_1/mnist").
 */
#include <stdio.h>
#include <string.h>

#include "gb_dist.h"
#include "gb_io.h"
#include "writer/internal.h"

gb_status gb_summary_logdir_store(const char *logdir, const char *name, char *out, size_t size) {
    if (!logdir || !*logdir || !name || !*name || !out || !size) {
        gb__summary_fail("gb_summary_logdir_store: %s is NULL or empty",
                         !logdir || !*logdir ? "the logdir" : !name || !*name ? "the name" : "out");
        return GB_ERR_VALUE;
    }
    if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
        gb__summary_fail("gb_summary_logdir_store: the name '%s' is not a file name", name);
        return GB_ERR_VALUE;
    }
    char dir[4096];
    int ranks = gb_dist_size();
    int n = ranks > 1 ? snprintf(dir, sizeof dir, "%s/%s", logdir, name)
                      : snprintf(dir, sizeof dir, "%s", logdir);
    int m = ranks > 1 ? snprintf(out, size, "%s/rank_%d.db", dir, gb_dist_rank())
                      : snprintf(out, size, "%s/%s.db", dir, name);
    if (n < 0 || (size_t)n >= sizeof dir || m < 0 || (size_t)m >= size) {
        gb__summary_fail("gb_summary_logdir_store: the path under '%s' is too long", logdir);
        return GB_ERR_VALUE;
    }
    if (!gb_make_dirs(dir)) {
        const gb_error *e = gb_last_error();
        gb__summary_fail("gb_summary_logdir_store: cannot make '%s': %s", dir,
                         e ? e->message : "unknown error");
        gb_clear_error();
        return GB_ERR_IO;
    }
    return GB_OK;
}
