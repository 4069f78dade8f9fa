/* bloomgate journal dump: a journal's items, as a list file can carry them.
 * Records are read twice: first into each item's last word (a set of the
 * items' 128-bit hashes, flags as the daemon's allow set keeps them), then
 * printed as the mode asks. Main thread. */
#include "config.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "store/allow.h"
#include "store/journal.h"
#include "tool/cli.h"

/* What `journal dump` counts: items a list file cannot carry unchanged, because
 * build reads lines (ending at LF, trailing whitespace trimmed, empty and '#'
 * lines skipped). CR and NUL also trip up the text tools a dump is piped to. */
static bool list_safe(const unsigned char *p, size_t len)
{
    if (len == 0 || p[0] == '#')
        return false;
    unsigned char last = p[len - 1];
    if (last == ' ' || last == '\t' || last == '\r' || last == '\v' || last == '\f')
        return false;
    return !memchr(p, '\n', len) && !memchr(p, '\r', len) && !memchr(p, '\0', len);
}

enum mode { M_ADDS, M_OPS, M_REMOVED, M_ALLOWED };

struct dump {
    enum mode mode;
    uint64_t seed;
    struct allow_set *last;    /* each item's last add/remove and allow/unallow */
    struct allow_set *printed; /* --removed, --allowed: items printed already */
    uint64_t unsafe, printed_n, oom;
};

static int state_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item,
                      size_t len)
{
    struct dump *d = ctx;
    (void)time_ms;
    unsigned set = op == JOURNAL_OP_REMOVE ? ALLOW_REMOVED : op == JOURNAL_OP_ALLOW ? ALLOW_EXCEPT : 0;
    unsigned clear =
        op == JOURNAL_OP_ADD ? ALLOW_REMOVED : op == JOURNAL_OP_UNALLOW ? ALLOW_EXCEPT : 0;
    if (allow_update(d->last, hash_item(item, len, d->seed), set, clear, NULL) != 0) {
        d->oom = 1;
        return 1;
    }
    return 0;
}

static void print_item(struct dump *d, const char *prefix, const void *item, size_t len)
{
    if (!list_safe(item, len))
        d->unsafe++;
    if (prefix)
        fputs(prefix, stdout);
    fwrite(item, 1, len, stdout);
    putchar('\n');
    d->printed_n++;
}

static int dump_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item, size_t len)
{
    struct dump *d = ctx;
    (void)time_ms;
    if (d->mode == M_OPS) {
        char prefix[16];
        snprintf(prefix, sizeof(prefix), "%s\t", journal_op_name(op));
        print_item(d, prefix, item, len);
        return 0;
    }
    struct hash128 h = hash_item(item, len, d->seed);
    unsigned last = allow_get(d->last, h);
    if (d->mode == M_ADDS) {
        if (op == JOURNAL_OP_ADD && !(last & ALLOW_REMOVED))
            print_item(d, NULL, item, len);
        return 0;
    }
    unsigned want = d->mode == M_REMOVED ? ALLOW_REMOVED : ALLOW_EXCEPT;
    enum journal_op by = d->mode == M_REMOVED ? JOURNAL_OP_REMOVE : JOURNAL_OP_ALLOW;
    unsigned was;
    if (op != by || !(last & want))
        return 0;
    if (allow_update(d->printed, h, ALLOW_EXCEPT, 0, &was) != 0) {
        d->oom = 1;
        return 1;
    }
    if (!was)
        print_item(d, NULL, item, len);
    return 0;
}

static int parse_opts(int argc, char **argv, bool *count, enum mode *mode)
{
    static const struct option opts[] = {
        {"count", no_argument, NULL, 'c'},   {"ops", no_argument, NULL, 'o'},
        {"removed", no_argument, NULL, 'r'}, {"allowed", no_argument, NULL, 'a'},
        {"help", no_argument, NULL, 'h'},    {NULL, 0, NULL, 0}};
    int c, modes = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "corah", opts, NULL)) != -1) {
        if (c == 'c') {
            *count = true;
            modes++;
        } else if (c == 'o' || c == 'r' || c == 'a') {
            *mode = c == 'o' ? M_OPS : c == 'r' ? M_REMOVED : M_ALLOWED;
            modes++;
        } else if (c == 'h') {
            return tool_help("journal") ? EXIT_RUNTIME : -1;
        } else {
            return tool_usage_error("journal dump: bad option");
        }
    }
    if (modes > 1)
        return tool_usage_error("journal dump: --count, --ops, --removed and --allowed exclude "
                                "each other");
    return 0;
}

/* ~60 lines: the options, two passes, and the notes on stderr. */
int tool_cmd_journal(int argc, char **argv)
{
    if (argc < 2)
        return tool_usage_error("journal: a subcommand is required (dump)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return tool_help("journal");
    if (strcmp(argv[1], "dump") != 0)
        return tool_usage_error("journal: unknown subcommand '%s'", argv[1]);
    argc--, argv++;
    bool count = false;
    struct dump d = {.mode = M_ADDS, .seed = 0x6a6f75726e616cull};
    int rc = parse_opts(argc, argv, &count, &d.mode);
    if (rc)
        return rc < 0 ? 0 : rc;
    const char *file = NULL;
    if (tool_one_file_arg(argc, argv, "journal dump", &file))
        return EXIT_USAGE;
    if (optind < argc)
        return tool_usage_error("journal dump: one FILE only");
    char err[1024];
    struct journal_scan js;
    d.last = allow_new();
    d.printed = allow_new();
    if (!d.last || !d.printed) {
        rc = tool_runtime_error("out of memory");
        goto out;
    }
    int64_t n = journal_read_file_ops(file, count ? NULL : state_item, &d, &js, err, sizeof(err));
    if (n >= 0 && !count)
        n = journal_read_file_ops(file, dump_item, &d, NULL, err, sizeof(err));
    if (n < 0) {
        rc = tool_runtime_error(d.oom ? "out of memory" : err);
        goto out;
    }
    if (count)
        printf("%lld\n", (long long)n);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        rc = tool_runtime_error("writing to stdout failed");
        goto out;
    }
    if (js.torn_at != JOURNAL_NO_TEAR)
        fprintf(stderr,
                "bloomgate: %s: torn tail at offset %llu (%llu bytes: %s) left out: a crash "
                "mid-write, or a write in progress\n",
                file, (unsigned long long)js.torn_at, (unsigned long long)js.torn_bytes,
                js.torn_why);
    uint64_t removed = allow_count(d.last, ALLOW_REMOVED), excepted = allow_count(d.last, ALLOW_EXCEPT);
    if (d.mode == M_ADDS && !count && (removed || excepted))
        fprintf(stderr,
                "bloomgate: note: %s also holds %llu removed and %llu allowed items, not in this "
                "output: see --removed and --allowed (`bloomgate build --journal` applies the "
                "removals)\n",
                file, (unsigned long long)removed, (unsigned long long)excepted);
    if (d.unsafe)
        fprintf(stderr,
                "bloomgate: warning: %s: %llu of %llu items cannot round-trip through a list "
                "file (empty, starting with '#', trailing whitespace, or holding LF, CR or NUL); "
                "use `bloomgate build --journal %s` to keep their exact bytes\n",
                file, (unsigned long long)d.unsafe, (unsigned long long)d.printed_n, file);
    rc = 0;
out:
    allow_free(d.last);
    allow_free(d.printed);
    return rc;
}
