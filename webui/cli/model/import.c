/* cli/model/import.c — `glassbox import --tfevents DIR --db FILE`:
 * TensorBoard event files (TensorFlow's tf.summary, PyTorch's
 * SummaryWriter) into a store, through the writer
 * (gb_summary_import_tfevents), so `glassbox serve` shows them beside
 * glassbox's own runs. It says what it read, and for each file that
 * stopped early (a torn or damaged record) where and why; those files'
 * values before the bad record are imported. Importing again into the
 * same store reads only what the files gained since; a file that changed
 * otherwise is left out and makes the exit status 3. */
#include <stdio.h>
#include <string.h>

#include "gb_summary.h"
#include "model.h"

enum { TFEVENTS, DB, RUN };

static int import(const gb__cli_command *cmd, const char *const *values) {
    gb_tfevents_report r;
    gb_status st = values[RUN] ? gb_summary_import_tfevents_run(values[TFEVENTS], values[RUN], values[DB], &r)
                               : gb_summary_import_tfevents(values[TFEVENTS], values[DB], &r);
    if (st != GB_OK) {
        gb__cli_print(stderr, "glassbox %s: %s", cmd->name, gb_summary_last_error());
        return 1;
    }
    gb__cli_print(stdout, "glassbox: imported %zu event files (%zu events) into %s: %zu scalars, "
                          "%zu histograms, %zu images, %zu texts, %zu audio clips, %zu PR curves, "
                          "%zu hparams records; %zu values of other kinds left out",
                  r.files, r.events, values[DB], r.scalars, r.histograms, r.images, r.texts,
                  r.audio, r.pr_curves, r.hparams, r.skipped);
    if (r.resumed)
        gb__cli_print(stdout, "glassbox: %zu of the files had been imported into %s before: only "
                              "the records added since were read",
                      r.resumed, values[DB]);
    /* One line per file that stopped early, escaped as every printed line. */
    for (char *line = r.notes, *end; *line; line = end + 1) {
        if (!(end = strchr(line, '\n'))) break;
        *end = '\0';
        gb__cli_print(stderr, "glassbox %s: %s", cmd->name, line);
    }
    return r.changed ? 3 : 0;
}

static const gb__cli_option options[] = {
    [TFEVENTS] = {"--tfevents", "DIR", "the directory of event files (searched recursively)",
                  .required = true},
    [DB] = {"--db", "FILE", "the store to write (made if missing)", .required = true},
    [RUN] = {"--run", "NAME", "read only the event files in DIR itself, as one run of this name"},
};

const gb__cli_command gb__cli_import = {
    .name = "import",
    .summary = "Reads TensorBoard event files into a store",
    .details = "Every events.out.tfevents.* file under DIR is read; its directory under\n"
               "DIR names the run (files in DIR itself: DIR's last component), as\n"
               "TensorBoard names runs. Scalars, histograms, images, text, audio and PR\n"
               "curves keep their steps and wall times; the HParams plugin's experiment and\n"
               "sessions become the store's hyperparameters. A file cut short (its writer killed) or with a\n"
               "damaged record is read up to there; the line on stderr says where.\n"
               "With --run, the files directly in DIR make the one run NAME ('glassbox\n"
               "serve --logdir' reads each directory of event files so).\n"
               "The store keeps how far it read each file: importing again reads only\n"
               "what was added since, so no event is stored twice. A file that changed\n"
               "otherwise (cut shorter, or replaced) is named and left out, and the exit\n"
               "status is then 3.\n",
    .options = options,
    .noptions = sizeof options / sizeof options[0],
    .run = import,
};
