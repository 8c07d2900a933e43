/* gb_cli.h — the subcommands of the `glassbox` program.
 *
 * Each takes the arguments after its name and returns the process exit
 * code (0 on success); errors are printed to stderr. inspect and export
 * live in summary/ (they only read the store), serve in webui/.
 */
#ifndef GB_CLI_H
#define GB_CLI_H

int gb_cli_inspect(int argc, char **argv);
int gb_cli_export(int argc, char **argv);
int gb_cli_serve(int argc, char **argv);

#endif
