/* cli: what the `bloomgate` subcommands share (exit codes, the error lines, help from
 * the one command table), so a subcommand can live in its own file. Internal to
 * src/tool/; main thread. */
#ifndef BLOOMGATE_CLI_H
#define BLOOMGATE_CLI_H

#include <jansson.h>
#include <stdint.h>

#include "bloom/filter.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* "bloomgate: <fmt> (see bloomgate --help)" on stderr; returns EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int tool_usage_error(const char *fmt, ...);

/* "bloomgate: <msg>" on stderr; returns EXIT_RUNTIME. */
int tool_runtime_error(const char *msg);

/* Prints the help of the command called name (its text lives in tool.c's
 * commands[], the one copy) to stdout; returns 0. The subcommands call
 * tool_help, which tool_main points at tool_print_cmd_help. */
int tool_print_cmd_help(const char *name);
void tool_set_help(int (*fn)(const char *name));
int tool_help(const char *name);

/* Takes argv[optind] as cmd's FILE and advances optind; a usage error (its
 * exit code returned) when there is none. */
int tool_one_file_arg(int argc, char **argv, const char *cmd, const char **file);

/* info and verify (info.c), and what the build's dry run shares with them:
 * the JSON of a file or a plan, printing it, a --threads value. */
int tool_cmd_info(int argc, char **argv);
int tool_cmd_verify(int argc, char **argv);
json_t *tool_info_object(enum filter_keys keys, const struct filter_plan *p, uint64_t items,
                         uint64_t bits_set, double fpr_estimated, uint64_t seed,
                         int64_t build_time);
void tool_print_json(json_t *o);
int tool_parse_threads(const char *s, unsigned *out);

/* The lookup subcommands (lookup.c): check and url. */
int tool_cmd_check(int argc, char **argv);
int tool_cmd_url(int argc, char **argv);

/* journal dump (jdump.c). */
int tool_cmd_journal(int argc, char **argv);

#endif
