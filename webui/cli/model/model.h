/* cli/model/model.h — the `glassbox-model` program: the subcommands of
 * `glassbox` that need the engine (saved-model show / run, checkpoint ls,
 * import: the writer that import fills a store with links the engine).
 *
 * `glassbox` itself links no engine (it serves dashboards from a store and
 * must run where OpenBLAS is not installed), so it hands these
 * subcommands to glassbox-model, built beside it, which links the engine
 * and shares the one argument parser (cli/args.c) and the escaped output
 * (cli/terminal.c).
 *
 *   main.c              the program: "saved-model show" -> its command
 *   saved_model_show.c  signatures with their inputs and outputs
 *   saved_model_run.c   a signature run on .npy or IDX files
 *   checkpoint_ls.c     a checkpoint's tensors
 *   import.c            TensorBoard event files into a store (needs the writer)
 */
#ifndef GB_CLI_MODEL_H
#define GB_CLI_MODEL_H

#include "cli/cli.h"
#include "glassbox.h"

extern const gb__cli_command gb__cli_saved_model_show;
extern const gb__cli_command gb__cli_saved_model_run;
extern const gb__cli_command gb__cli_checkpoint_ls;
extern const gb__cli_command gb__cli_import;

/* "float32[-1,28,28,1]" */
const char *gb__cli_spec_text(gb_dtype dt, int rank, const int64_t *shape, char *buf, size_t n);
/* Prints "glassbox <cmd>: <the engine's last error>" and clears it; 1. */
int gb__cli_engine_failed(const gb__cli_command *cmd);

#endif
