/* cli: what the `bloomgate` subcommands share (exit codes, the error lines, help from
 * the one command table), so a subcommand can live in its own file. Internal to
 * src/tool/; main thread. */
#ifndef BLOOMGATE_CLI_H
#define BLOOMGATE_CLI_H

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* "bloomgate: <fmt> (see bloomgate --help)" on stderr; returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int tool_usage_error(const char *fmt, ...);

/* "bloomgate: <msg>" on stderr; returns EXIT_RUNTIME. */
int tool_runtime_error(const char *msg);

/* Prints the help of the command called name (its text lives in tool.c's
 * commands[], the one copy) to stdout; returns 0. */
int tool_print_cmd_help(const char *name);

/* Takes argv[optind] as cmd's FILE and advances optind; a usage error (its
 * exit code returned) when there is none. */
int tool_one_file_arg(int argc, char **argv, const char *cmd, const char **file);

/* The lookup subcommands (lookup.c): check and url. */
int tool_cmd_check(int argc, char **argv);
int tool_cmd_url(int argc, char **argv);

/* journal dump (jdump.c). */
int tool_cmd_journal(int argc, char **argv);

#endif
