#include "config.h"

#include "tool/tool.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adblock/adblock.h"
#include "tool/build.h"
#include "tool/build_adblock.h"
#include "tool/build_exact.h"
#include "tool/build_words.h"
#include "core/views.h"
#include "tool/cli.h"
#include "url/lists.h"
#include "bloom/filter.h"
#include "bloom/format.h"
#include "store/journal.h"
#include "bloom/sizing.h"
#include "base/util.h"

/* The parse-mode summary: lines by outcome, keys by form (kept, new, merged
 * as duplicates), rejections by reason, what was dropped without rejecting
 * the line. A fuse build takes every key as new and merges duplicates by
 * hash when each shard is built, so its new keys are the filter's, distinct
 * (`distinct`), and are known in total only, not by form. Main thread. */
static void print_tally(const struct build_tally *t, const char *rejects, bool fuse,
                        uint64_t distinct)
{
    printf("lines: %llu read: %llu kept, %llu blank, %llu comment, %llu ignored, %llu rejected\n",
           (unsigned long long)t->lines, (unsigned long long)t->cls[LISTS_KEPT],
           (unsigned long long)t->cls[LISTS_BLANK], (unsigned long long)t->cls[LISTS_COMMENT],
           (unsigned long long)t->cls[LISTS_IGNORED], (unsigned long long)t->cls[LISTS_REJECTED]);
    uint64_t kept = 0, fresh = 0;
    for (int i = 0; i < BUILD_FORMS; i++) {
        kept += t->kept[i];
        fresh += t->fresh[i];
    }
    bool by_hash = fuse && distinct <= kept; /* else the tally's own figures */
    uint64_t fresh_all = by_hash ? distinct : fresh;
    printf("keys: %llu kept, %llu new, %llu merged as duplicates (%s)\n", (unsigned long long)kept,
           (unsigned long long)fresh_all, (unsigned long long)(kept - fresh_all),
           by_hash ? "fuse: by hash, as each shard was built; by form, only the keys kept"
                   : "or false positives");
    for (int i = 0; i < BUILD_FORMS; i++) {
        if (!t->kept[i])
            continue;
        printf("  %-5s %llu kept", build_form_name((enum build_form)i),
               (unsigned long long)t->kept[i]);
        if (!by_hash)
            printf(", %llu new, %llu merged", (unsigned long long)t->fresh[i],
                   (unsigned long long)(t->kept[i] - t->fresh[i]));
        printf("\n");
    }
    if (t->cls[LISTS_REJECTED]) {
        printf("rejected: %llu lines%s%s%s:", (unsigned long long)t->cls[LISTS_REJECTED],
               rejects ? " (written to " : "", rejects ? rejects : "", rejects ? ")" : "");
        const char *sep = " ";
        for (int i = 1; i < LISTS_REASON_COUNT; i++)
            if (t->rejected[i]) {
                printf("%s%s %llu", sep, lists_reason_name((enum lists_reason)i),
                       (unsigned long long)t->rejected[i]);
                sep = ", ";
            }
        putchar('\n');
    }
    if (t->ignored_opts || t->ignored_names)
        printf("dropped: %llu adblock options that change no match, %llu hosts names never "
               "blocked (localhost, ...)\n",
               (unsigned long long)t->ignored_opts, (unsigned long long)t->ignored_names);
}

/* What `bloomgate build` was asked for: the library's options plus the
 * tool's own switches. */
struct build_cli {
    struct build_opts o;
    bool dry, quiet, keys_given;
    bool words;           /* --format words (or --keys words): a word list */
    bool words_opt;       /* a word list's setting was given */
    struct words_opts wo; /* its settings (--nfkc, --zh, --whole-word, --skip) */
};

/* build_cli_opt and build_main's steps return this to mean "go on"; any
 * other value is the exit code to return at once. */
#define BUILD_GO_ON (-1)

static const struct option build_longopts[] = {{"output", required_argument, NULL, 'o'},
                                               {"capacity", required_argument, NULL, 'n'},
                                               {"fpr", required_argument, NULL, 'p'},
                                               {"layout", required_argument, NULL, 'l'},
                                               {"shards", required_argument, NULL, 's'},
                                               {"threads", required_argument, NULL, 't'},
                                               {"seed", required_argument, NULL, 'S'},
                                               {"dry-run", no_argument, NULL, 'd'},
                                               {"quiet", no_argument, NULL, 'q'},
                                               {"help", no_argument, NULL, 'h'},
                                               {"journal", required_argument, NULL, 'j'},
                                               {"keys", required_argument, NULL, 'k'},
                                               {"format", required_argument, NULL, 'f'},
                                               {"rejects", required_argument, NULL, 'r'},
                                               {"exact", optional_argument, NULL, 'x'},
                                               {"exact-memory", required_argument, NULL, 'X'},
                                               {"nfkc", required_argument, NULL, 'N'},
                                               {"zh", required_argument, NULL, 'Z'},
                                               {"whole-word", required_argument, NULL, 'W'},
                                               {"skip", required_argument, NULL, 'K'},
                                               {NULL, 0, NULL, 0}};

/* One option of build, as getopt returned it: a flat switch, one case per
 * option, each a parse and a bound. Journals go into the array build_main
 * sized from argc. Main thread. */
static int build_cli_opt(int c, const char *arg, struct build_cli *b, const char **journals)
{
    struct build_opts *o = &b->o;
    char why[256];
    uint64_t v;
    switch (c) {
    case 'k':
        if (format_keys_parse(arg, &o->keys) != 0)
            return tool_usage_error(
                "build: --keys: '%s' is not exact, host, url, adblock or words", arg);
        b->keys_given = true;
        b->words = o->keys == FILTER_KEYS_WORDS;
        break;
    case 'f':
        /* A word list is not one of url/lists' formats: the words library
         * reads it (src/words/list.c). */
        if (strcmp(arg, "words") == 0) {
            b->words = true;
            break;
        }
        if (lists_format_parse(arg, &o->format, why, sizeof(why)) != 0)
            return tool_usage_error(
                "build: --format: '%s' is not plain, hosts, adblock, urls or words", arg);
        break;
    case 'N': /* the word list's settings (build_words.c) */
    case 'Z':
    case 'W':
    case 'K':
        if (build_words_opt(c, arg, &b->wo) != 0)
            return EXIT_USAGE;
        b->words_opt = true;
        break;
    case 'r':
        o->rejects = arg;
        break;
    case 'x': /* --exact[=fp|keys]: the exact table beside the filter */
        if (arg && strcmp(arg, "fp") != 0 && strcmp(arg, "keys") != 0)
            return tool_usage_error("build: --exact=%s: fp (fingerprints) or keys", arg);
        o->exact = arg && strcmp(arg, "keys") == 0 ? EXACT_KIND_KEYS : EXACT_KIND_FP;
        break;
    case 'X':
        if (util_parse_count(arg, &o->exact_mem) != 0 || o->exact_mem < (1u << 20))
            return tool_usage_error("build: --exact-memory: '%s' is not a byte count of at least "
                                    "1M",
                                    arg);
        break;
    case 'o':
        o->output = arg;
        break;
    case 'j':
        journals[o->n_journals++] = arg;
        break;
    case 'n':
        if (util_parse_count(arg, &o->capacity) != 0 || o->capacity == 0)
            return tool_usage_error("build: --capacity: '%s' is not a positive whole number", arg);
        break;
    case 'p':
        if (util_parse_double(arg, &o->fpr) != 0 || !(o->fpr > 0 && o->fpr < 1))
            return tool_usage_error("build: --fpr: '%s' is not a rate between 0 and 1", arg);
        break;
    case 'l':
        if (filter_layout_parse(arg, &o->layout) != 0)
            return tool_usage_error("build: --layout: '%s' is not blocked, classic or fuse", arg);
        /* A counting filter counts the adds and removals of a filter filled
         * at run time (the config's layout counting): a list has neither. */
        if (o->layout == FILTER_COUNTING)
            return tool_usage_error("build: --layout counting is for filters filled at run time "
                                    "(layout counting in bloomgate.conf); build blocked, classic "
                                    "or fuse");
        break;
    case 's':
        if (util_parse_u64(arg, &v) != 0 || v < 1 || v > FILTER_MAX_SHARDS || (v & (v - 1)) != 0)
            return tool_usage_error("build: --shards: '%s' is not a power of two from 1 to %u", arg,
                                    FILTER_MAX_SHARDS);
        o->shards = (uint32_t)v;
        break;
    case 't':
        if (tool_parse_threads(arg, &o->threads) != 0)
            return tool_usage_error("build: --threads: '%s' is not a number from 1 to 1024", arg);
        break;
    case 'S':
        if (util_parse_u64(arg, &o->seed) != 0 || o->seed == 0)
            return tool_usage_error("build: --seed: '%s' is not a positive whole number", arg);
        break;
    case 'd':
        b->dry = true;
        break;
    case 'q':
        b->quiet = true;
        break;
    case 'h':
        return tool_print_cmd_help("build");
    default:
        return tool_usage_error("build: bad option");
    }
    return BUILD_GO_ON;
}

static const char *build_format_name(enum lists_format f)
{
    static const char *const names[] = {"plain", "hosts", "adblock", "urls"};
    return names[f];
}

/* A list format implies the keys it is written for; the combinations that
 * would silently mean something else are usage errors. Main thread. */
static int build_cli_keys(struct build_cli *b)
{
    struct build_opts *o = &b->o;
    if (!b->keys_given)
        o->keys = o->format == LISTS_PLAIN     ? FILTER_KEYS_EXACT
                  : o->format == LISTS_HOSTS   ? FILTER_KEYS_HOST
                  : o->format == LISTS_ADBLOCK ? FILTER_KEYS_ADBLOCK
                                               : FILTER_KEYS_URL;
    if (o->keys == FILTER_KEYS_ADBLOCK && o->exact)
        return tool_usage_error("build: --exact confirms a Bloom or fuse filter's YES; an "
                                "adblock file's answers come from its compiled rules");
    if (o->keys == FILTER_KEYS_ADBLOCK && o->format != LISTS_ADBLOCK)
        return tool_usage_error("build: --keys adblock compiles Adblock lists (--format adblock)");
    if (o->keys == FILTER_KEYS_ADBLOCK && o->layout == FILTER_FUSE)
        return tool_usage_error("build: an adblock file's Bloom part is its host tier, which takes "
                                "run-time adds: --layout blocked or classic, not fuse");
    if (o->format != LISTS_PLAIN && o->keys == FILTER_KEYS_EXACT)
        return tool_usage_error("build: --format %s yields host or url keys, not exact items "
                                "(use --keys host or --keys url)",
                                build_format_name(o->format));
    if (o->format == LISTS_URLS && o->keys == FILTER_KEYS_HOST)
        return tool_usage_error(
            "build: --format urls with --keys host would block a whole host for "
            "one URL (use --keys url, or a hosts or plain list of hosts)");
    if (o->n_journals && o->keys != FILTER_KEYS_EXACT)
        return tool_usage_error("build: --journal holds exact items; it cannot go into a %s filter",
                                format_keys_name(o->keys));
    return BUILD_GO_ON;
}

/* build --dry-run: the plan a build would make, as info's JSON, without
 * reading any input. Main thread. */
static int build_dry_run(const struct build_cli *b, int argc)
{
    const struct build_opts *o = &b->o;
    char err[1024];
    if (o->capacity == 0)
        return tool_usage_error("build --dry-run needs --capacity");
    if (optind < argc || o->n_journals)
        return tool_usage_error("build --dry-run takes no input");
    struct filter_plan plan;
    if (filter_plan_make(o->layout, o->capacity, o->fpr, o->shards, &plan, err, sizeof(err)) != 0)
        return tool_usage_error("build: %s", err);
    json_t *j = tool_info_object(o->keys, &plan, 0, 0, 0.0, o->seed, 0);
    json_object_set_new(j, "dry_run", json_true());
    tool_print_json(j);
    return 0;
}

/* A torn tail is not an error (a crash mid-write, or a daemon writing
 * now), but say what was left out before the build starts. build_run
 * checks the journals again. Main thread. */
static int build_scan_journals(const struct build_opts *o)
{
    char err[1024];
    for (size_t i = 0; i < o->n_journals; i++) {
        struct journal_scan js;
        if (journal_read_file(o->journals[i], NULL, NULL, &js, err, sizeof(err)) < 0)
            return tool_runtime_error(err);
        if (js.torn_at != JOURNAL_NO_TEAR)
            fprintf(stderr, "bloomgate: %s: torn tail at offset %llu (%llu bytes: %s) left out\n",
                    o->journals[i], (unsigned long long)js.torn_at,
                    (unsigned long long)js.torn_bytes, js.torn_why);
    }
    return BUILD_GO_ON;
}

/* The summary on stdout after a build (unless --quiet): what was written,
 * what the input held, the size and rate, and the time taken. Main thread. */
static void build_print_summary(const struct build_opts *o, const struct build_result *r)
{
    uint64_t bytes = filter_plan_bytes(&r->plan);
    char hb[64], jn[64] = "";
    if (o->n_journals)
        snprintf(jn, sizeof(jn), ", %llu journal items", (unsigned long long)r->journal_items);
    printf("built %s: %llu %s (%llu lines read%s), keys %s, format %s, capacity %llu, "
           "layout %s, %u shards\n",
           o->output, (unsigned long long)r->items, r->parsed ? "keys" : "items",
           (unsigned long long)r->lines, jn, format_keys_name(o->keys),
           build_format_name(o->format), (unsigned long long)r->plan.capacity,
           filter_layout_name(r->plan.layout), r->plan.shard_count);
    if (r->parsed)
        print_tally(&r->tally, o->rejects, r->plan.layout == FILTER_FUSE, r->items);
    else
        printf("items: %llu read, %llu kept, %llu merged as duplicates (or false positives)\n",
               (unsigned long long)(r->lines + r->journal_items), (unsigned long long)r->items,
               (unsigned long long)(r->lines + r->journal_items - r->items));
    printf("size %s, %.2f bits/item, k=%u, expected false-positive rate %.3g at capacity\n",
           util_human_bytes(bytes, hb, sizeof(hb)), (double)bytes * 8 / (double)r->plan.capacity,
           r->plan.k, r->plan.fpr_expected);
    if (r->journal_removed)
        printf("journals: %llu items removed, kept out (%llu list items)\n",
               (unsigned long long)r->journal_removed, (unsigned long long)r->removed_lines);
    if (r->journal_exceptions)
        fprintf(stderr,
                "bloomgate: note: the journals hold %llu ALLOW exceptions, which a filter cannot "
                "hold: keep them with `bloomgate journal dump --allowed JOURNAL >> ALLOW_FILE`\n",
                (unsigned long long)r->journal_exceptions);
    printf("%.3f s (insert %.3f s, %.2f M items/s; write %.3f s)\n", r->seconds, r->insert_seconds,
           r->insert_seconds > 0 ? (double)(r->lines + r->journal_items) / r->insert_seconds / 1e6
                                 : 0.0,
           r->write_seconds);
    if (o->exact)
        printf("exact table %s.exact: %llu %s, %llu bytes (%llu sorted runs spilled)\n", o->output,
               (unsigned long long)r->exact_count,
               o->exact == EXACT_KIND_KEYS ? "keys" : "fingerprints",
               (unsigned long long)r->exact_bytes, (unsigned long long)r->exact_runs);
}

/* bloomgate build: options, the keys they imply, then either the dry-run
 * plan or the journals' torn tails, the build and its summary. The journal
 * array is returned for cmd_build to free on every path. Main thread. */
static int build_main(int argc, char **argv, const char ***journals_out)
{
    struct build_cli b = {.o = {.layout = FILTER_BLOCKED, .fpr = 1e-4, .format = LISTS_PLAIN}};
    struct build_opts *o = &b.o;
    int c, rc;
    /* Each --journal takes one argument, so argc bounds their number. */
    const char **journals = calloc((size_t)argc, sizeof(*journals));
    if (!journals)
        return tool_runtime_error("out of memory");
    *journals_out = journals;
    o->journals = journals;
    optind = 1;
    words_opts_default(&b.wo);
    while ((c = getopt_long(argc, argv, "o:n:p:l:s:t:S:dqhj:k:f:r:", build_longopts, NULL)) != -1)
        if ((rc = build_cli_opt(c, optarg, &b, journals)) != BUILD_GO_ON)
            return rc;
    if (b.words || b.words_opt) /* a word list (build_words.c) */
        return build_words_cli(o, &b.wo, b.words, b.keys_given, b.dry, b.quiet,
                               (const char *const *)argv + optind, (size_t)(argc - optind));
    if ((rc = build_cli_keys(&b)) != BUILD_GO_ON)
        return rc;
    if (b.dry && o->keys == FILTER_KEYS_ADBLOCK)
        return tool_usage_error("build --dry-run plans a Bloom filter; an adblock build is "
                                "sized by its lists");
    if (b.dry)
        return build_dry_run(&b, argc);
    if (!o->output)
        return tool_usage_error("build: -o FILE is required");
    o->inputs = (const char *const *)argv + optind;
    o->n_inputs = (size_t)(argc - optind);
    if (o->keys == FILTER_KEYS_ADBLOCK)
        return build_adblock_main(o, b.quiet);
    o->progress = !b.quiet && isatty(STDERR_FILENO);
    if ((rc = build_scan_journals(o)) != BUILD_GO_ON)
        return rc;
    char err[1024];
    struct build_result r;
    if (build_run(o, &r, err, sizeof(err)) != 0)
        return tool_runtime_error(err);
    if (!b.quiet)
        build_print_summary(o, &r);
    return 0;
}

static int cmd_build(int argc, char **argv)
{
    const char **journals = NULL;
    int rc = build_main(argc, argv, &journals);
    free(journals);
    return rc;
}

static int cmd_help(int argc, char **argv);

/* One option as help shows it. */
struct tool_opt {
    const char *flags; /* "-o, --output FILE" */
    const char *text;  /* what it does, and its default; one line */
};

/* A command: its handler and its help, written once. `help CMD`, `CMD --help`
 * and the overview (`help`, `--help`) all print from here, so they cannot
 * drift; man/bloomgate.1 is checked against the overview's command list
 * by tests/it/man_test.sh. */
struct tool_cmd {
    const char *name;            /* the word after `bloomgate` */
    const char *sub;             /* the word after that, if the command needs one */
    const char *args;            /* the synopsis after the name */
    const char *summary;         /* what it does; lines end in \n */
    const struct tool_opt *opts; /* ends with a NULL flags; NULL for none */
    const char *notes;           /* only in the command's own help; may be NULL */
    int (*run)(int argc, char **argv);
};

static const struct tool_opt build_opts[] = {
    {"-o, --output FILE", "filter file to write (required; written beside it, then renamed)"},
    {"-k, --keys K", "exact (default for plain), host, url, adblock or words: stored in the file"},
    {"-f, --format F", "plain (default), hosts, adblock (the lists compiled: adblock keys), urls, "
                       "or words (a word list compiled: words keys, docs/words.md)"},
    {"--nfkc on|off", "words: NFKC and case folding of list and text (default on)"},
    {"--zh on|off", "words: traditional Chinese read as simplified (default on)"},
    {"--whole-word on|off", "words: words of space-separated scripts match whole (default on)"},
    {"--skip SET", "words: characters skipped between letters (default \"P S Cf space\")"},
    {"-r, --rejects FILE", "write each rejected line to FILE with its reason (words: every "
                           "one, not only those named on stderr; adblock: every line not "
                           "served, comments and cosmetic filters aside)"},
    {"--exact[=fp|keys]", "also write FILE.exact, every key's fingerprint (or the keys): "
                          "the daemon confirms each YES in it"},
    {"--exact-memory B", "memory the exact table's sort may hold, e.g. 256M (default 1G)"},
    {"-j, --journal J", "also add every item of journal J, exact bytes; a words journal's changes "
                        "(repeatable)"},
    {"-n, --capacity N", "items to size for, e.g. 50M or 1e9 (default: the items in the input)"},
    {"-p, --fpr P", "target false-positive rate at capacity (default 0.0001)"},
    {"-l, --layout L", "blocked (default: one cache line per lookup), classic, or fuse "
                       "(binary fuse: least memory, built whole, adds go to a delta)"},
    {"-s, --shards S", "shard count, a power of two up to 65536 (default: one per 64 MiB)"},
    {"-t, --threads T", "build threads, 1 to 1024 (default: every CPU)"},
    {"-S, --seed N", "hash seed, a positive number (default: random)"},
    {"-d, --dry-run", "print the filter that would be built (needs --capacity), build nothing"},
    {"-q, --quiet", "no summary, no progress"},
    {NULL, NULL},
};
static const struct tool_opt verify_opts[] = {
    {"-t, --threads T", "checking threads, 1 to 1024 (default: every CPU)"},
    {NULL, NULL},
};
static const struct tool_opt check_opts[] = {
    {"-w, --with-items", "print YES or NO, a tab, then the item"},
    {"-m, --match", "after YES, a tab and the expression that matched (most specific); "
                    "adblock: the rule, a tab, the exception"},
    {"--type T", "adblock: every item's request type (script, image, document, ...)"},
    {"--from URL", "adblock: every item's initiator page"},
    {"--method M", "adblock: every item's HTTP method"},
    {NULL, NULL},
};
static const struct tool_opt url_expr_opts[] = {
    {"-k, --keys K", "url (default: host-suffix x path-prefix), host (the host and parents)"},
    {NULL, NULL},
};
static const struct tool_opt journal_opts[] = {
    {"-c, --count", "print only the number of items (of every record)"},
    {"-o, --ops", "print every record's items as OP<tab>ITEM (add, allow, unallow, remove)"},
    {"-r, --removed", "print the items whose last add/remove is a REMOVE, once each"},
    {"-a, --allowed", "print the items whose last allow/unallow is an ALLOW, once each"},
    {NULL, NULL},
};

static const struct tool_cmd commands[] = {
    {"build", NULL, "-o FILE [options] [INPUT...]",
     "build a filter file from lists (one item per line;\n"
     "'-' reads stdin, as does no INPUT without --journal)\n",
     build_opts,
     "input: one item per line, LF or CRLF; trailing spaces, tabs, CR, VT and FF are\n"
     "trimmed; empty lines and lines starting with '#' are skipped; a line may hold\n"
     "at most 1 MiB. The summary's \"items\" counts the items that set a new bit:\n"
     "duplicates are not counted, nor the rare item whose bits others had all set.\n"
     "A list format implies its keys: hosts gives host keys, urls url keys, adblock\n"
     "the compiled lists (rules, options and exceptions, served with each request's\n"
     "context; --capacity sizes the host tier for run-time adds); adblock with the\n"
     "keys url or host reads only the hosts and URLs the rules name. Host and url\n"
     "keys are canonical (docs/url-matching.md); exact keys take\n"
     "only plain lists, and journals only exact keys. A journal's records go in as\n"
     "the daemon applied them: an item whose last record is a REMOVE stays out (its\n"
     "list lines too); ALLOW exceptions cannot be folded into a filter and are\n"
     "counted. A rejects file line is INPUT:OFFSET<tab>REASON<tab>WHY<tab>LINE.\n",
     cmd_build},
    {"info", NULL, "FILE", "print the header as JSON\n", NULL, NULL, tool_cmd_info},
    {"verify", NULL, "FILE [--threads T]", "check every checksum\n", verify_opts, NULL, tool_cmd_verify},
    {"check", NULL, "FILE [--with-items] [--match] [ITEM...]",
     "print YES or NO per item (items from stdin if none),\n"
     "applying the file's key kind\n",
     check_opts,
     "stdin is read with build's line rules. YES means probably listed (a Bloom\n"
     "filter has false positives); NO means certainly not. A host or url filter\n"
     "canonicalises each item and probes its expressions (bloomgate url\n"
     "expressions shows them): YES if any is present. An item that is not a host\n"
     "or URL prints ERROR, a tab and the reason, and the exit status is 1.\n"
     "An adblock filter answers with its compiled lists (its host tier is empty\n"
     "in a built file): each item is a URL, optionally followed by context words\n"
     "type=T, from=URL, method=M (as on the line protocol), over --type, --from\n"
     "and --method; YES means a rule blocks the request.\n",
     tool_cmd_check},
    {"url", "canon", "canon URL...",
     "print each URL's canonical form (Safe Browsing),\n"
     "one a line; a bad URL is an error on stderr\n",
     NULL, NULL, tool_cmd_url},
    {"url", "expressions", "expressions [--keys K] URL",
     "print each expression a lookup of URL tries,\n"
     "one a line, most specific first\n",
     url_expr_opts, "See docs/url-matching.md for canonicalisation and the expressions.\n",
     tool_cmd_url},
    {"journal", "dump", "dump [--count | --ops | --removed | --allowed] FILE",
     "print a journal's added items, one per line (raw bytes),\n"
     "or with --count only how many items its records hold\n",
     journal_opts,
     "an add whose item a later REMOVE took out is left out, so the output can be\n"
     "appended to the list the filter is built from; --removed prints what to delete\n"
     "from that list, --allowed what to append to the filter's allow file. A torn\n"
     "tail (a crash mid-write) is reported on stderr and left out; the file is never\n"
     "modified. Items a list file cannot carry unchanged are counted in a warning:\n"
     "fold such a journal in with `bloomgate build --journal` instead.\n",
     tool_cmd_journal},
    {"help", NULL, "[COMMAND]", "print COMMAND's help, or this overview\n", NULL, NULL, cmd_help},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))
#define SYNOPSIS_WIDTH 36 /* the overview's column of summaries starts after it */
#define FLAGS_WIDTH 20

static const struct tool_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* Each line of text, the first after `first`, the others after `indent`
 * spaces. */
static void print_lines(const char *text, const char *first, int indent)
{
    const char *lead = first;
    while (*text) {
        const char *nl = strchr(text, '\n');
        int len = nl ? (int)(nl - text) : (int)strlen(text);
        if (lead)
            fputs(lead, stdout);
        else
            printf("%*s", indent, "");
        printf("%.*s\n", len, text);
        text += len + (nl != NULL);
        lead = NULL;
    }
}

static void print_opts(const struct tool_opt *opts, int indent)
{
    for (const struct tool_opt *o = opts; o && o->flags; o++)
        printf("%*s%-*s %s\n", indent, "", FLAGS_WIDTH, o->flags, o->text);
}

static void print_overview(void)
{
    fputs("usage: bloomgate <command> [options]\n\ncommands:\n", stdout);
    for (size_t i = 0; i < N_COMMANDS; i++) {
        const struct tool_cmd *c = &commands[i];
        char syn[128];
        snprintf(syn, sizeof(syn), "  %s %s", c->name, c->args);
        char first[160];
        if (strlen(syn) <= SYNOPSIS_WIDTH + 2) {
            snprintf(first, sizeof(first), "%-*s ", SYNOPSIS_WIDTH + 2, syn);
        } else {
            puts(syn);
            snprintf(first, sizeof(first), "%*s", SYNOPSIS_WIDTH + 3, "");
        }
        print_lines(c->summary, first, SYNOPSIS_WIDTH + 3);
        print_opts(c->opts, 6);
    }
    fputs("\n  --help, --version\n"
          "every command also takes -h, --help: `bloomgate help COMMAND` prints its help\n"
          "exit status: 0 success, 1 runtime error, 2 usage error\n",
          stdout);
}

static void print_row_help(const struct tool_cmd *c)
{
    printf("usage: bloomgate %s %s\n", c->name, c->args);
    print_lines(c->summary, "", 0);
    if (c->opts) {
        fputs("\noptions:\n", stdout);
        print_opts(c->opts, 2);
    }
    if (c->notes) {
        putchar('\n');
        print_lines(c->notes, "", 0);
    }
}

/* The help of every row called name (url has one per subcommand). */
int tool_print_cmd_help(const char *name)
{
    const struct tool_cmd *c = find_cmd(name);
    assert(c != NULL);
    for (; c < commands + N_COMMANDS; c++)
        if (strcmp(c->name, name) == 0) {
            if (c != find_cmd(name))
                putchar('\n');
            print_row_help(c);
        }
    fputs("\nexit status: 0 success, 1 runtime error, 2 usage error; see bloomgate(1)\n", stdout);
    return 0;
}

/* help [COMMAND [SUBCOMMAND]]: `help journal dump` names the same page as
 * `help journal`, since the man page and the overview call it that. */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        print_overview();
        return 0;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0)
        name = "help";
    const struct tool_cmd *c = find_cmd(name);
    if (!c)
        return tool_usage_error("help: unknown command '%s'", argv[1]);
    if (argc == 3 && c->sub)
        for (const struct tool_cmd *r = c; r < commands + N_COMMANDS; r++)
            if (strcmp(r->name, c->name) == 0 && strcmp(argv[2], r->sub) == 0) {
                print_row_help(r);
                fputs("\nexit status: 0 success, 1 runtime error, 2 usage error; see "
                      "bloomgate(1)\n",
                      stdout);
                return 0;
            }
    if (argc > 2)
        return tool_usage_error("help: unexpected argument '%s'", argv[2]);
    return tool_print_cmd_help(c->name);
}

int tool_main(int argc, char **argv)
{
    tool_set_help(tool_print_cmd_help);
    if (argc < 2)
        return tool_usage_error("no command given");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        print_overview();
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("bloomgate %s\n", PACKAGE_VERSION);
        return 0;
    }
    const struct tool_cmd *c = find_cmd(cmd);
    if (!c)
        return tool_usage_error("unknown command '%s'", cmd);
    return c->run(argc - 1, argv + 1);
}
