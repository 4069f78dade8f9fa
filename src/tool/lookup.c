/* lookup: the `check` and `url` subcommands, which ask what a filter or a
 * lookup would answer for given items or URLs without building anything.
 * Split from tool.c to keep that file about the command table and build.
 * Main thread. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adblock/adblock.h"
#include "tool/build.h"
#include "tool/build_adblock.h"
#include "store/xtable.h"
#include "tool/cli.h"
#include "url/keys.h"
#include "url/canon.h"
#include "bloom/filter.h"
#include "bloom/format.h"

/* The tool hands a keys_query's probes straight to the filter, and stores a
 * keys_kind as a filter_keys. */
_Static_assert(sizeof(struct keys_probe) == sizeof(struct filter_key) &&
                   offsetof(struct keys_probe, len) == offsetof(struct filter_key, len),
               "keys_probe and filter_key differ");
_Static_assert((int)KEYS_EXACT == (int)FILTER_KEYS_EXACT &&
                   (int)KEYS_HOST == (int)FILTER_KEYS_HOST && (int)KEYS_URL == (int)FILTER_KEYS_URL,
               "keys_kind and filter_keys differ");

/* What check prints and counts. The query scratch (about 16 KiB) lives on
 * the heap, one for the whole run. */
struct checker {
    const struct filter *f;
    struct keys_query *q;
    struct adblock_engine *ab; /* an adblock file's engine, or NULL */
    struct exact_table *xt;    /* the exact table the file names, or NULL: confirms a YES */
    struct adblock_ctx *abx;
    struct adblock_request ctx; /* --type, --from, --method: every item's context */
    bool with_items, match;
    uint64_t bad; /* items that are not a host or URL the filter's kind can read */
};

/* One line of an adblock check: the URL, then its own context words
 * (`type=`, `from=`, `method=`, as on the line protocol) over the options'
 * context. The verdict is the daemon's engine's (its host tier is empty in
 * a built file); --match adds the rule and the exception. */
static void check_adblock(struct checker *k, const char *item, size_t len)
{
    char why[256];
    struct adblock_request r = k->ctx;
    size_t ul = 0;
    while (ul < len && item[ul] != ' ' && item[ul] != '\t')
        ul++;
    r.url = item;
    r.url_len = ul;
    int bad = 0;
    for (size_t i = ul; i < len && !bad;) {
        while (i < len && (item[i] == ' ' || item[i] == '\t'))
            i++;
        size_t j = i;
        while (j < len && item[j] != ' ' && item[j] != '\t')
            j++;
        if (j > i) {
            int rc = adblock_context_word(item + i, j - i, &r.type, &r.method, &r.from,
                                          &r.from_len, why, sizeof(why));
            if (rc == 0)
                snprintf(why, sizeof(why), "'%.*s' is not type=, from= or method=",
                         (int)(j - i > 64 ? 64 : j - i), item + i);
            bad = rc != 1;
        }
        i = j;
    }
    /* Read as the daemon reads it (core/cmd_adblock.c). */
    char *full = NULL;
    if (adblock_needs_scheme(r.url, r.url_len) && (full = malloc(r.url_len + 9))) {
        memcpy(full, "https://", 8);
        memcpy(full + 8, r.url, r.url_len);
        r.url = full;
        r.url_len += 8;
    }
    struct adblock_verdict v;
    int rc = bad ? -1 : adblock_match(k->ab, k->abx, &r, &v, why, sizeof(why));
    free(full);
    if (rc != 0) {
        k->bad++;
        printf("ERROR\t%s", why);
    } else {
        fputs(v.block ? "YES" : "NO", stdout);
        if (k->match && (v.block || v.exception))
            printf("\t%.*s\t%.*s", v.rule ? (int)v.rule_len : 0, v.rule ? v.rule : "",
                   v.exception ? (int)v.exception_len : 0, v.exception ? v.exception : "");
    }
    if (k->with_items) {
        putchar('\t');
        fwrite(item, 1, len, stdout);
    }
    putchar('\n');
}

/* One item: applied to the filter's key kind, every probe checked in one
 * batch (hashes first, then prefetched lines), YES if any is present. */
static void check_print(struct checker *k, const void *item, size_t len)
{
    char why[256];
    bool present[KEYS_MAX];
    size_t hit;
    if (k->ab) {
        check_adblock(k, item, len);
        return;
    }
    if (keys_expand((enum keys_kind)k->f->keys, item, len, k->q, why, sizeof(why)) != 0) {
        k->bad++;
        printf("ERROR\t%s", why);
    } else {
        filter_check_batch(k->f, (const struct filter_key *)k->q->p, k->q->n, present);
        for (size_t i = 0; k->xt && i < k->q->n; i++) /* as the daemon confirms */
            present[i] =
                present[i] && exact_table_find(k->xt, k->q->p[i].data, k->q->p[i].len, NULL);
        hit = keys_first_present(k->q, present);
        fputs(hit < k->q->n ? "YES" : "NO", stdout);
        if (k->match && hit < k->q->n) {
            putchar('\t');
            fwrite(k->q->p[hit].data, 1, k->q->p[hit].len, stdout);
        }
    }
    if (k->with_items) {
        putchar('\t');
        fwrite(item, 1, len, stdout);
    }
    putchar('\n');
}

/* `bloomgate check FILE [ITEM...]`: options, the file, then each item from
 * the arguments or stdin through the file's key kind. Main thread. ~85 lines,
 * most of them the option table and the two item sources. */
int tool_cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {{"with-items", no_argument, NULL, 'w'},
                                         {"match", no_argument, NULL, 'm'},
                                         {"type", required_argument, NULL, 'T'},
                                         {"from", required_argument, NULL, 'F'},
                                         {"method", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct checker k = {0};
    k.ctx.type = -1;
    k.ctx.method = -1;
    int c;
    bool ctx_given = false;
    optind = 1;
    while ((c = getopt_long(argc, argv, "wmh", opts, NULL)) != -1) {
        if (c == 'T') {
            ctx_given = true;
            if ((k.ctx.type = adblock_fetch_dest_parse(optarg, strlen(optarg))) < 0)
                return tool_usage_error("check: --type: '%s' is not a request type", optarg);
        } else if (c == 'F') {
            ctx_given = true;
            k.ctx.from = optarg;
            k.ctx.from_len = strlen(optarg);
        } else if (c == 'M') {
            ctx_given = true;
            if ((k.ctx.method = adblock_method_parse(optarg, strlen(optarg))) < 0)
                return tool_usage_error("check: --method: '%s' is not an HTTP method", optarg);
        } else if (c == 'w') {
            k.with_items = true;
        } else if (c == 'm') {
            k.match = true;
        } else if (c == 'h') {
            return tool_help("check");
        } else {
            return tool_usage_error("check: bad option");
        }
    }
    const char *file = NULL;
    if (tool_one_file_arg(argc, argv, "check", &file))
        return EXIT_USAGE;
    char err[1024];
    struct filter *f = format_load(file, 0, err, sizeof(err));
    if (!f)
        return tool_runtime_error(err);
    k.f = f;
    if (f->keys == FILTER_KEYS_ADBLOCK) {
        struct format_info fi;
        if (format_read_info(file, &fi, err, sizeof(err)) == 0) {
            k.ab = build_adblock_load(file, &fi, err, sizeof(err));
            format_info_free(&fi);
        }
        if (!k.ab || !(k.abx = adblock_ctx_new())) {
            adblock_engine_free(k.ab);
            filter_free(f);
            return tool_runtime_error(k.ab ? "out of memory" : err);
        }
    } else {
        /* A file built with --exact answers as the daemon would: confirmed. */
        struct format_info fi;
        struct exact_ref ref;
        if (format_read_info(file, &fi, err, sizeof(err)) != 0) {
            filter_free(f);
            return tool_runtime_error(err);
        }
        if (fi.section_kind == FORMAT_SECTION_EXACT &&
            !(k.xt = xtable_open(file, &fi, &ref, err, sizeof(err)))) {
            format_info_free(&fi);
            filter_free(f);
            return tool_runtime_error(err);
        }
        format_info_free(&fi);
    }
    if (ctx_given && !k.ab) {
        const char *kind = format_keys_name(f->keys);
        exact_table_close(k.xt);
        filter_free(f);
        return tool_usage_error("check: --type, --from and --method are for an adblock filter; "
                                "%s is %s", file, kind);
    }
    if (!(k.q = malloc(sizeof(*k.q)))) {
        filter_free(f);
        return tool_runtime_error("out of memory");
    }
    if (optind < argc) {
        for (int i = optind; i < argc; i++)
            check_print(&k, argv[i], strlen(argv[i]));
    } else {
        /* Items on stdin, read with the same line rules as build. */
        size_t cap = 1 << 16, len = 0;
        char *buf = malloc(cap);
        bool eof = false;
        while (buf && !eof) {
            if (len == cap) {
                if (cap >= BUILD_MAX_LINE * 2) {
                    free(buf);
                    free(k.q);
                    filter_free(f);
                    return tool_runtime_error("stdin: a line is longer than 1 MiB");
                }
                char *nb = realloc(buf, cap * 2);
                if (!nb)
                    break;
                buf = nb;
                cap *= 2;
            }
            ssize_t n = read(STDIN_FILENO, buf + len, cap - len);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0) {
                free(buf);
                free(k.q);
                filter_free(f);
                return tool_runtime_error("stdin: read failed");
            }
            eof = n == 0;
            len += (size_t)n;
            size_t pos = 0;
            struct filter_key it;
            while (build_next_item(buf, len, eof, &pos, &it))
                check_print(&k, it.data, it.len);
            memmove(buf, buf + pos, len - pos);
            len -= pos;
        }
        free(buf);
    }
    enum filter_keys keys = f->keys;
    free(k.q);
    adblock_ctx_free(k.abx);
    adblock_engine_free(k.ab);
    exact_table_close(k.xt);
    filter_free(f);
    if (fflush(stdout) != 0)
        return tool_runtime_error("writing to stdout failed");
    if (k.bad) {
        fprintf(stderr,
                "bloomgate: check: %llu item%s could not be read as %s keys (ERROR lines)\n",
                (unsigned long long)k.bad, k.bad == 1 ? "" : "s", format_keys_name(keys));
        return EXIT_RUNTIME;
    }
    return 0;
}

/* url canon URL...: each URL's canonical form, one a line; a URL that does
 * not canonicalise is reported on stderr and fails the run at the end. */
static int url_canon_main(int argc, char **argv)
{
    if (argc < 2)
        return tool_usage_error("url canon: a URL is required");
    struct url_canon *c = malloc(sizeof(*c));
    if (!c)
        return tool_runtime_error("out of memory");
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        char why[256];
        if (url_canon_url(c, argv[i], strlen(argv[i]), why, sizeof(why)) != 0) {
            fflush(stdout);
            fprintf(stderr, "bloomgate: url canon: '%s': %s\n", argv[i], why);
            rc = EXIT_RUNTIME;
            continue;
        }
        fwrite(c->url, 1, c->len, stdout);
        putchar('\n');
    }
    free(c);
    if (fflush(stdout) != 0)
        return tool_runtime_error("writing to stdout failed");
    return rc;
}

/* url expressions [--keys K] URL: what a lookup of URL in a K filter probes,
 * most specific first. */
static int url_expressions_main(int argc, char **argv)
{
    static const struct option opts[] = {{"keys", required_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    enum filter_keys keys = FILTER_KEYS_URL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:h", opts, NULL)) != -1) {
        if (c == 'k') {
            if (format_keys_parse(optarg, &keys) != 0)
                return tool_usage_error("url expressions: --keys: '%s' is not exact, host or url",
                                        optarg);
        } else if (c == 'h') {
            return tool_help("url");
        } else {
            return tool_usage_error("url expressions: bad option");
        }
    }
    if (argc - optind != 1)
        return tool_usage_error("url expressions: one URL is required");
    struct keys_query *q = malloc(sizeof(*q));
    if (!q)
        return tool_runtime_error("out of memory");
    char why[256];
    const char *u = argv[optind];
    if (keys_expand((enum keys_kind)keys, u, strlen(u), q, why, sizeof(why)) != 0) {
        fprintf(stderr, "bloomgate: url expressions: '%s': %s\n", u, why);
        free(q);
        return EXIT_RUNTIME;
    }
    for (size_t i = 0; i < q->n; i++) {
        fwrite(q->p[i].data, 1, q->p[i].len, stdout);
        putchar('\n');
    }
    free(q);
    if (fflush(stdout) != 0)
        return tool_runtime_error("writing to stdout failed");
    return 0;
}

int tool_cmd_url(int argc, char **argv)
{
    if (argc < 2)
        return tool_usage_error("url: a subcommand is required (canon, expressions)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return tool_help("url");
    if (strcmp(argv[1], "canon") == 0) {
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
                return tool_help("url");
        return url_canon_main(argc - 1, argv + 1);
    }
    if (strcmp(argv[1], "expressions") == 0)
        return url_expressions_main(argc - 1, argv + 1);
    return tool_usage_error("url: unknown subcommand '%s'", argv[1]);
}
