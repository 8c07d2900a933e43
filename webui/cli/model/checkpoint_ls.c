/* cli/model/checkpoint_ls.c — `glassbox checkpoint ls --file F`: each
 * tensor of a checkpoint with its dtype, shape and size, and any whose
 * bytes no longer match their CRC, like TensorFlow's
 * inspect_checkpoint / tf.train.list_variables.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/model/model.h"

enum { FILE_ };

static int list(const gb__cli_command *cmd, const char *const *values) {
    gb_checkpoint_entry *e = NULL;
    int n = gb_checkpoint_list(values[FILE_], &e);
    if (n < 0) return gb__cli_engine_failed(cmd);
    int corrupt = 0;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        char spec[160];
        gb__cli_print(stdout, "%-48s %-24s %10llu bytes%s", e[i].path,
                      gb__cli_spec_text(e[i].dtype, e[i].rank, e[i].shape, spec, sizeof spec),
                      (unsigned long long)e[i].bytes, e[i].intact ? "" : "  CORRUPT (CRC mismatch)");
        corrupt += !e[i].intact;
        total += e[i].bytes;
    }
    gb__cli_print(stdout, "%d tensor%s, %llu bytes%s", n, n == 1 ? "" : "s", (unsigned long long)total,
                  corrupt ? "" : ", every CRC intact");
    free(e);
    if (!corrupt) return 0;
    gb__cli_print(stderr, "glassbox %s: %d tensor%s of %s corrupt", cmd->name, corrupt,
                  corrupt == 1 ? " is" : "s are", values[FILE_]);
    return 1;
}

static const gb__cli_option options[] = {
    {.name = "--file", .metavar = "FILE", .help = "the checkpoint file", .required = true},
};
_Static_assert(sizeof options / sizeof options[0] <= GB__CLI_MAX_OPTIONS,
               "more options than the parser holds (cli.h)");

const gb__cli_command gb__cli_checkpoint_ls = {
    .name = "checkpoint ls",
    .summary = "Lists a checkpoint's tensors: paths, dtypes, shapes, sizes",
    .details = "Exits 1 when the file is not a checkpoint or a tensor's bytes fail their CRC.",
    .options = options,
    .noptions = sizeof options / sizeof options[0],
    .run = list,
};
