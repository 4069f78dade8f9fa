/* cli: the tool's error lines (cli.h), below every subcommand's file so
 * that each calls down to them. Main thread. */
#include "config.h"

#include <getopt.h>

#include <stdarg.h>
#include <stdio.h>

#include "tool/cli.h"

int tool_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("bloomgate: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see bloomgate --help)\n", stderr);
    return EXIT_USAGE;
}

int tool_runtime_error(const char *msg)
{
    fprintf(stderr, "bloomgate: %s\n", msg);
    return EXIT_RUNTIME;
}

int tool_one_file_arg(int argc, char **argv, const char *cmd, const char **file)
{
    if (optind >= argc)
        return tool_usage_error("%s: FILE is required", cmd);
    *file = argv[optind++];
    return 0;
}

/* The command table (and so every command's help) is tool.c's, above the
 * subcommands' files: it hands its printer down once, at start. */
static int (*help_fn)(const char *name);

void tool_set_help(int (*fn)(const char *name))
{
    help_fn = fn;
}

int tool_help(const char *name)
{
    return help_fn ? help_fn(name) : 0;
}
