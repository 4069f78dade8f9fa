/* cli: the tool's error lines (cli.h), below every subcommand's file so
 * that each calls down to them. Main thread. */
#include "config.h"

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
