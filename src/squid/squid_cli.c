/* squid_cli: bloomgate-squid's command line: options into struct helper_opts,
 * then the helper loop. Main thread only. */
#include "config.h"

#include "squid/squid_cli.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fname.h"
#include "base/log.h"
#include "base/util.h"
#include "squid/helper.h"

static const char usage[] =
    "usage: bloomgate-squid [options] --filter NAME [--filter NAME...]\n"
    "Squid external ACL helper: checks every value Squid sends (%URI, %DST, %SRC, ...)\n"
    "against bloomgated's filters and answers OK (listed), ERR (not listed) or BH.\n"
    "\n"
    "  --connect HOST:PORT  bloomgated's line-protocol address (default 127.0.0.1:7878;\n"
    "                       an IPv6 address in brackets: [::1]:7878)\n"
    "  --filter NAME        a filter to check against; repeat for several (at most 16):\n"
    "                       OK if any of them lists any value\n"
    "  --timeout SECONDS    wait at most this long to connect or for a reply (default 5)\n"
    "  --batch N            at most N items in one MCHECK (default 500)\n"
    "  --context FIELDS     the values after the URL are the request's context, in this\n"
    "                       order: a comma-separated list of referer (%>{Referer}), origin\n"
    "                       (%>{Origin}), dest (%>{Sec-Fetch-Dest}) and method (%METHOD);\n"
    "                       sent with each check as from=, type= and method= (adblock\n"
    "                       filters read them); the values after them are checked\n"
    "  --on-down bh|err     the answer while bloomgated cannot be reached: BH (Squid then\n"
    "                       denies: fail-closed; the default) or ERR (not listed: fail-open)\n"
    "  --log-level LEVEL    debug, info, warn (default) or error; logs go to stderr\n"
    "  --help, --version\n";

/* Split "host:port", "[v6]:port" or "host" (port 7878) into its parts. */
static int parse_connect(char *s, const char **host, const char **port)
{
    char *colon;
    if (s[0] == '[') {
        char *end = strchr(s, ']');
        if (!end || (end[1] != '\0' && end[1] != ':'))
            return -1;
        *end = '\0';
        *host = s + 1;
        *port = end[1] == ':' ? end + 2 : "7878";
    } else if ((colon = strrchr(s, ':')) != NULL && strchr(s, ':') == colon) {
        *colon = '\0';
        *host = s;
        *port = colon + 1;
    } else if (!strchr(s, ':')) {
        *host = s;
        *port = "7878";
    } else {
        return -1;
    }
    uint64_t p;
    if (**host == '\0' || util_parse_u64(*port, &p) != 0 || p == 0 || p > 65535)
        return -1;
    return 0;
}

/* Whether s is a filter name the daemon accepts (base/fname.h). */
static bool valid_filter(const char *s)
{
    return fname_valid(s, strlen(s));
}

int squid_main(int argc, char **argv)
{
    static char connect_default[] = "127.0.0.1:7878";
    char *connect = connect_default;
    struct helper_opts o = {
        .timeout = 5, .batch = 500, .on_down = SQUID_BH, .in_fd = 0, .out_fd = 1};
    enum {
        O_CONNECT = 256,
        O_FILTER,
        O_TIMEOUT,
        O_BATCH,
        O_CONTEXT,
        O_ON_DOWN,
        O_LOG,
        O_HELP,
        O_VERSION
    };
    static const struct option longopts[] = {
        {"connect", required_argument, NULL, O_CONNECT},
        {"filter", required_argument, NULL, O_FILTER},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"batch", required_argument, NULL, O_BATCH},
        {"context", required_argument, NULL, O_CONTEXT},
        {"on-down", required_argument, NULL, O_ON_DOWN},
        {"log-level", required_argument, NULL, O_LOG},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    log_set_level(LOG_WARN);
    int c;
    char err[256];
    uint64_t u;
    double d;
    enum log_level lvl;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_CONNECT:
            connect = optarg;
            break;
        case O_FILTER:
            if (!valid_filter(optarg)) {
                fprintf(stderr, "bloomgate-squid: --filter '%s': use " FNAME_RULE "\n", optarg);
                return 2;
            }
            if (o.n_filters == HELPER_FILTERS_MAX) {
                fprintf(stderr, "bloomgate-squid: at most %d --filter options\n",
                        HELPER_FILTERS_MAX);
                return 2;
            }
            o.filters[o.n_filters++] = optarg;
            break;
        case O_TIMEOUT:
            if (util_parse_double(optarg, &d) != 0 || d <= 0 || d > 3600) {
                fprintf(stderr,
                        "bloomgate-squid: --timeout '%s': a number of seconds in (0, 3600]\n",
                        optarg);
                return 2;
            }
            o.timeout = d;
            break;
        case O_BATCH:
            if (util_parse_u64(optarg, &u) != 0 || u == 0 || u > 100000) {
                fprintf(stderr, "bloomgate-squid: --batch '%s': a number from 1 to 100000\n",
                        optarg);
                return 2;
            }
            o.batch = (size_t)u;
            break;
        case O_CONTEXT:
            if (squidproto_ctx_spec_parse(optarg, &o.ctx, err, sizeof(err)) != 0) {
                fprintf(stderr, "bloomgate-squid: --context '%s': %s\n", optarg, err);
                return 2;
            }
            break;
        case O_ON_DOWN:
            if (strcmp(optarg, "bh") == 0 || strcmp(optarg, "BH") == 0)
                o.on_down = SQUID_BH;
            else if (strcmp(optarg, "err") == 0 || strcmp(optarg, "ERR") == 0)
                o.on_down = SQUID_ERR;
            else {
                fprintf(stderr, "bloomgate-squid: --on-down '%s': bh or err\n", optarg);
                return 2;
            }
            break;
        case O_LOG:
            if (log_level_parse(optarg, &lvl) != 0) {
                fprintf(stderr, "bloomgate-squid: --log-level '%s': debug, info, warn or error\n",
                        optarg);
                return 2;
            }
            log_set_level(lvl);
            break;
        case O_HELP:
            fputs(usage, stdout);
            return 0;
        case O_VERSION:
            printf("bloomgate-squid %s\n", PACKAGE_VERSION);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bloomgate-squid: unexpected argument '%s'\n%s", argv[optind], usage);
        return 2;
    }
    if (o.n_filters == 0) {
        fprintf(stderr, "bloomgate-squid: no --filter given\n%s", usage);
        return 2;
    }
    if (parse_connect(connect, &o.host, &o.port) != 0) {
        fprintf(stderr, "bloomgate-squid: --connect '%s': use HOST:PORT or [IPv6]:PORT\n", connect);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (helper_run(&o, err, sizeof(err)) != 0) {
        log_error("bloomgate-squid: %s", err);
        return 1;
    }
    return 0;
}
