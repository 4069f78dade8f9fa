/* Integration tests of bloomgate-squid: the real helper binary, driven over
 * its stdin/stdout as Squid drives it, against a real bloomgated serving the
 * shipped URLhaus list as url keys and an exact list of IP addresses. With
 * channel IDs (Squid's concurrency=N) replies come as soon as they are known,
 * out of order; without them, in order. Everything waiting goes out as one
 * MCHECK per filter. While the daemon is stopped or frozen the helper answers
 * BH (or ERR with --on-down err) within its timeout, and it reconnects once the
 * daemon is back. With --context and an adblock filter, each request's
 * Referer, Origin, Sec-Fetch-Dest and method decide as they should, in one
 * batch of mixed contexts where no request's context leaks to another. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/fname.h"
#include "lib/daemon_harness.h"

/* A URL the list blocks (111101111.ru is listed as a whole host) and the key
 * MATCH names for it; a URL it does not list. */
#define LISTED "http://WWW.111101111.RU:8080/some/path%3Fx?y=1"
#define LISTED_KEY "111101111.ru/"
#define CLEAN "https://www.debian.org/"

struct helper {
    pid_t pid;
    int in, out;       /* its stdin (we write), its stdout (we read) */
    char buf[1 << 17]; /* bytes read from its stdout, not yet returned */
    size_t len;
    char line[1 << 16];
    char log[DH_PATH_MAX]; /* its stderr */
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A port that was free a moment ago, so a restarted daemon listens where the
 * helper connects. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sin);
    ck_assert(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
    ck_assert(getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
    close(fd);
    return ntohs(sin.sin_port);
}

/* A daemon on a fixed port serving urls (url keys, the URLhaus list) and ips
 * (exact: 10.6.6.6, 192.0.2.7). */
static struct dh_daemon *start_daemon(int port)
{
    struct dh_daemon *d = dh_new();
    const char *src = getenv("srcdir");
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    snprintf(list, sizeof(list), "%s/data/urlhaus-filter-online.txt", src ? src : ".");
    const char *argv[] = {dh_tool_path(), "build",  "--seed", "7",  "--format",
                          "adblock",      "--keys", "url",    "-o", dh_path(d, "urls.bloom", out),
                          list,           NULL};
    int st = dh_run(argv, dh_path(d, "build.log", log), 60000);
    ck_assert_msg(st == 0, "bloomgate build failed (status %d); see %s", st, log);
    static const char *const ips[] = {"10.6.6.6", "192.0.2.7"};
    dh_build_filter(d, "ips.bloom", ips, 2, 1000, 1e-4);
    char conf[512];
    snprintf(conf, sizeof(conf),
             "listen 127.0.0.1:%d\nlog_level info\n"
             "filter urls {\n file @DIR@/urls.bloom\n keys url\n}\n"
             "filter ips {\n file @DIR@/ips.bloom\n}\n",
             port);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

/* Start the helper with argv (argv[0] is replaced by its path), its stderr
 * to helper.log in d's directory. */
static void helper_exec(struct helper *h, struct dh_daemon *d, const char **argv)
{
    const char *bin = getenv("BLOOMGATE_SQUID");
    if (!bin)
        bin = "./bloomgate-squid";
    argv[0] = bin;
    dh_path(d, "helper.log", h->log);
    int pin[2], pout[2];
    ck_assert(pipe2(pin, O_CLOEXEC) == 0 && pipe2(pout, O_CLOEXEC) == 0);
    int logfd = open(h->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ck_assert(logfd >= 0);
    pid_t parent = getpid();
    h->pid = fork();
    ck_assert(h->pid >= 0);
    if (h->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        dup2(logfd, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    close(pin[0]);
    close(pout[1]);
    close(logfd);
    h->in = pin[1];
    h->out = pout[0];
    h->len = 0;
}

/* Start the helper with the given extra arguments (NULL-terminated), at
 * --log-level info if verbose, else at its default level. */
static void helper_spawn(struct helper *h, struct dh_daemon *d, int port, const char *const *extra,
                         bool verbose)
{
    char connect[64];
    snprintf(connect, sizeof(connect), "127.0.0.1:%d", port);
    const char *argv[24] = {NULL,  "--connect", connect, "--filter",    "urls", "--filter",
                            "ips", "--timeout", "2",     "--log-level", "info"};
    size_t n = verbose ? 11 : 9;
    for (size_t i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    helper_exec(h, d, argv);
}

static void helper_start(struct helper *h, struct dh_daemon *d, int port, const char *const *extra)
{
    helper_spawn(h, d, port, extra, true);
}

/* Lines of the helper's log that hold needle. */
static int helper_log_count(const struct helper *h, const char *needle)
{
    FILE *f = fopen(h->log, "r");
    ck_assert_msg(f != NULL, "%s", h->log);
    char l[1024];
    int n = 0;
    while (fgets(l, sizeof(l), f))
        n += strstr(l, needle) != NULL;
    fclose(f);
    return n;
}

static void helper_send(struct helper *h, const char *s)
{
    size_t n = strlen(s);
    /* One write: what Squid has queued arrives together (a pipe write of at
     * most PIPE_BUF bytes is atomic). */
    ck_assert_uint_le(n, 4096);
    ck_assert_int_eq(write(h->in, s, n), (ssize_t)n);
}

/* The helper's next reply line, or NULL after timeout_ms. */
static const char *helper_line(struct helper *h, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        char *lf = memchr(h->buf, '\n', h->len);
        if (lf) {
            size_t n = (size_t)(lf - h->buf);
            memcpy(h->line, h->buf, n);
            h->line[n] = '\0';
            memmove(h->buf, lf + 1, h->len - n - 1);
            h->len -= n + 1;
            return h->line;
        }
        long long left = deadline - now_ms();
        if (left <= 0)
            return NULL;
        struct pollfd p = {h->out, POLLIN, 0};
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        ssize_t r = read(h->out, h->buf + h->len, sizeof(h->buf) - h->len);
        if (r <= 0)
            return NULL;
        h->len += (size_t)r;
    }
}

static const char *expect_line(struct helper *h)
{
    const char *l = helper_line(h, DH_TIMEOUT_MS);
    ck_assert_msg(l != NULL, "no reply from bloomgate-squid (its log: %s)", h->log);
    return l;
}

/* Close its stdin, as Squid does, and expect a clean exit. */
static void helper_stop(struct helper *h)
{
    close(h->in);
    long long deadline = now_ms() + DH_TIMEOUT_MS;
    int st = 0;
    pid_t r;
    while ((r = waitpid(h->pid, &st, WNOHANG)) == 0 && now_ms() < deadline) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    if (r == 0) {
        kill(h->pid, SIGKILL);
        waitpid(h->pid, &st, 0);
        ck_abort_msg("bloomgate-squid did not exit after its stdin closed");
    }
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "bloomgate-squid exit status %d", st);
    close(h->out);
    /* A sanitizer report from the helper fails the test like one from the daemon. */
    FILE *f = fopen(h->log, "r");
    if (f) {
        char l[1024];
        while (fgets(l, sizeof(l), f))
            ck_assert_msg(!strstr(l, "Sanitizer") && !strstr(l, "runtime error:"),
                          "sanitizer report in %s: %s", h->log, l);
        fclose(f);
    }
}

static unsigned long long info_counter(struct dh_daemon *d, const char *name)
{
    struct dh_conn *c = dh_connect(d);
    const char *info = dh_cmd(c, "INFO");
    char key[64];
    snprintf(key, sizeof(key), "\"%s\":", name);
    const char *p = strstr(info, key);
    ck_assert_msg(p != NULL, "no %s in INFO: %s", name, info);
    unsigned long long v = strtoull(p + strlen(key), NULL, 10);
    dh_close(c);
    return v;
}

/* With channel IDs: every reply tagged with its channel, the listed URL
 * (answered after a MATCH) after misses Squid sent later; the listed source
 * address found in the exact filter; six requests in one MCHECK per filter
 * plus one MATCH per hit. */
START_TEST(test_concurrency)
{
    int port = free_port();
    struct dh_daemon *d = start_daemon(port);
    struct helper h;
    helper_start(&h, d, port, NULL);
    /* Warm up: the first request connects. */
    helper_send(&h, "0 " CLEAN " -\n");
    ck_assert_str_eq(expect_line(&h), "0 ERR message=\"bloomgate: not listed in urls ips\"");
    unsigned long long before = info_counter(d, "check_requests");
    helper_send(&h, "11 " LISTED " 127.0.0.1 -\n"
                    "12 " CLEAN " 127.0.0.1 -\n"
                    "13 http://a.example/x%20y 10.6.6.6 -\n"
                    "14 http://b.example/ 127.0.0.1 -\n"
                    "15 127.0.0.1:443 127.0.0.1 -\n"
                    "16 http://c.example/ 127.0.0.1 -\n");
    const char *want[] = {
        "11 OK message=\"bloomgate: listed in urls as " LISTED_KEY "\"",
        "12 ERR message=\"bloomgate: not listed in urls ips\"",
        "13 OK message=\"bloomgate: listed in ips as 10.6.6.6\"",
        "14 ERR message=\"bloomgate: not listed in urls ips\"",
        "15 ERR message=\"bloomgate: not listed in urls ips\"",
        "16 ERR message=\"bloomgate: not listed in urls ips\"",
    };
    bool seen[6] = {0};
    int order[6];
    for (int i = 0; i < 6; i++) {
        const char *l = expect_line(&h);
        int ch = atoi(l) - 11;
        ck_assert_msg(ch >= 0 && ch < 6 && !seen[ch], "unexpected reply '%s'", l);
        ck_assert_str_eq(l, want[ch]);
        seen[ch] = true;
        order[i] = ch;
    }
    /* The misses are known from the MCHECKs alone; the hits wait for their
     * MATCH: so the first reply is a miss, out of Squid's order. */
    ck_assert_msg(order[0] != 0 && order[0] != 2, "first reply was channel %d", order[0] + 11);
    /* One MCHECK per filter and one MATCH per hit: at most 4 lookups for
     * six requests (MATCH may or may not count as a check request). */
    unsigned long long after = info_counter(d, "check_requests");
    ck_assert_msg(after - before >= 2 && after - before <= 4, "%llu check requests",
                  after - before);
    helper_stop(&h);
    dh_finish(d);
}
END_TEST

/* Without channel IDs (concurrency=0) replies keep Squid's order even though
 * the first one waits for a MATCH. Bad items fail alone: BH with the daemon's
 * reason, the rest of the batch answered. */
START_TEST(test_in_order_and_bad_items)
{
    int port = free_port();
    struct dh_daemon *d = start_daemon(port);
    struct helper h;
    helper_start(&h, d, port, NULL);
    helper_send(&h, LISTED " -\n" CLEAN " -\nmailto:bob@x.example -\nhttp://d.example/ -\n");
    ck_assert_str_eq(expect_line(&h), "OK message=\"bloomgate: listed in urls as " LISTED_KEY "\"");
    ck_assert_str_eq(expect_line(&h), "ERR message=\"bloomgate: not listed in urls ips\"");
    ck_assert_str_eq(expect_line(&h), "BH message=\"bloomgate: urls: bad_item bad URL: not a URL "
                                      "with a host (scheme without \\\"//\\\")\"");
    ck_assert_str_eq(expect_line(&h), "ERR message=\"bloomgate: not listed in urls ips\"");
    /* Every value '-': nothing to check. An over-long line: BH on its channel. */
    helper_send(&h, "5 -\n");
    ck_assert_str_eq(expect_line(&h),
                     "5 BH message=\"bloomgate: nothing to check (every value is '-')\"");
    static char big[70000];
    memcpy(big, "6 http://x.example/", 19);
    memset(big + 19, 'a', sizeof(big) - 21);
    big[sizeof(big) - 2] = '\n';
    size_t off = 0, len = sizeof(big) - 1;
    while (off < len) {
        ssize_t w = write(h.in, big + off, len - off);
        ck_assert(w > 0);
        off += (size_t)w;
    }
    helper_send(&h, "7 http://e.example/%2520 -\n");
    ck_assert_str_eq(expect_line(&h),
                     "6 BH message=\"bloomgate: request line longer than 65536 bytes\"");
    ck_assert_str_eq(expect_line(&h), "7 ERR message=\"bloomgate: not listed in urls ips\"");
    helper_stop(&h);
    dh_finish(d);
}
END_TEST

/* Send "N <url> -" every 50 ms until a reply other than BH comes (at most
 * 30 s); returns it. */
static const char *until_not_bh(struct helper *h, const char *url)
{
    long long deadline = now_ms() + 30000;
    for (int n = 100; now_ms() < deadline; n++) {
        char req[512];
        snprintf(req, sizeof(req), "%d %s -\n", n, url);
        helper_send(h, req);
        const char *l = expect_line(h);
        ck_assert_msg(atoi(l) == n, "reply '%s' to channel %d", l, n);
        if (!strstr(l, " BH "))
            return l;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    ck_abort_msg("still BH after 30 s (helper log: %s)", h->log);
    return NULL;
}

/* The daemon stops: BH at once, naming the cause; it comes back on the same
 * port: the helper reconnects and answers again. At the helper's default log
 * level, the failure and the recovery are logged once each (the man page
 * says so). */
START_TEST(test_daemon_down_and_back)
{
    int port = free_port();
    struct dh_daemon *d = start_daemon(port);
    struct helper h;
    helper_spawn(&h, d, port, NULL, false);
    helper_send(&h, "1 " LISTED " -\n");
    ck_assert_str_eq(expect_line(&h),
                     "1 OK message=\"bloomgate: listed in urls as " LISTED_KEY "\"");

    dh_stop_ok(d);
    /* The first request after the drop may go out again on a new connection
     * (which fails); either way the answer is a BH, without waiting. */
    for (int i = 2; i < 6; i++) {
        char req[256], want[256];
        snprintf(req, sizeof(req), "%d %s -\n", i, LISTED);
        helper_send(&h, req);
        snprintf(want, sizeof(want),
                 "%d BH message=\"bloomgate: bloomgated at 127.0.0.1:%d unreachable: "
                 "Connection refused\"",
                 i, port);
        ck_assert_str_eq(expect_line(&h), want);
    }
    dh_start(d, NULL);
    const char *l = until_not_bh(&h, LISTED);
    ck_assert_msg(strstr(l, " OK message=\"bloomgate: listed in urls as " LISTED_KEY "\""), "%s",
                  l);
    /* And on: the new connection serves the next requests too. */
    helper_send(&h, "900 " CLEAN " -\n");
    ck_assert_str_eq(expect_line(&h), "900 ERR message=\"bloomgate: not listed in urls ips\"");
    helper_stop(&h);
    char want[128];
    snprintf(want, sizeof(want), "bloomgated at 127.0.0.1:%d unreachable: ", port);
    ck_assert_int_eq(helper_log_count(&h, want), 1);
    snprintf(want, sizeof(want), "connected to bloomgated at 127.0.0.1:%d again", port);
    ck_assert_int_eq(helper_log_count(&h, want), 1);
    dh_finish(d);
}
END_TEST

/* A daemon that stops answering (frozen) costs at most the timeout: BH for
 * what was in flight; once it thaws, answers resume. With --on-down err the
 * same failures answer ERR (fail-open). */
START_TEST(test_daemon_frozen)
{
    int port = free_port();
    struct dh_daemon *d = start_daemon(port);
    struct helper h;
    static const char *const err_args[] = {"--on-down", "err", NULL};
    helper_start(&h, d, port, err_args);
    helper_send(&h, "1 " CLEAN " -\n");
    ck_assert_str_eq(expect_line(&h), "1 ERR message=\"bloomgate: not listed in urls ips\"");
    ck_assert_int_eq(dh_freeze(d), 0);
    helper_send(&h, "2 " LISTED " -\n");
    char want[256];
    snprintf(want, sizeof(want),
             "2 ERR message=\"bloomgate: not checked: bloomgated at 127.0.0.1:%d did not answer "
             "within 2 s\"",
             port);
    ck_assert_str_eq(expect_line(&h), want);
    ck_assert_int_eq(dh_thaw(d), 0);
    /* Not checked is not "not listed": the message says so; once back, the
     * same URL is found. */
    long long deadline = now_ms() + 30000;
    const char *l = NULL;
    for (int n = 100; now_ms() < deadline; n++) {
        char req[256];
        snprintf(req, sizeof(req), "%d %s -\n", n, LISTED);
        helper_send(&h, req);
        l = expect_line(&h);
        if (strstr(l, " OK "))
            break;
        ck_assert_msg(strstr(l, "not checked"), "%s", l);
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
    }
    ck_assert_msg(l && strstr(l, " OK message=\"bloomgate: listed in urls as " LISTED_KEY "\""),
                  "%s", l ? l : "(none)");
    helper_stop(&h);
    dh_finish(d);
}
END_TEST

/* The two rules of the Squid test (docs/gateways.md) and a daemon serving
 * them as the adblock filter ads. */
static struct dh_daemon *start_adblock_daemon(int port)
{
    struct dh_daemon *d = dh_new();
    static const char rules[] = "||tracker.example^$third-party,script\n||ads.example^$image\n";
    dh_write_file(d, "ads.txt", rules, sizeof(rules) - 1);
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    const char *argv[] = {dh_tool_path(),
                          "build",
                          "--format",
                          "adblock",
                          "-o",
                          dh_path(d, "ads.bloom", out),
                          dh_path(d, "ads.txt", list),
                          NULL};
    int st = dh_run(argv, dh_path(d, "build.log", log), 60000);
    ck_assert_msg(st == 0, "bloomgate build failed (status %d); see %s", st, log);
    char conf[256];
    snprintf(conf, sizeof(conf),
             "listen 127.0.0.1:%d\nlog_level info\nfilter ads {\n file @DIR@/ads.bloom\n}\n", port);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    return d;
}

#define TRACKER_RULE "||tracker.example^$third-party,script"
#define ADS_RULE "||ads.example^$image"
#define HIT(ch, rule) ch " OK message=\"bloomgate: listed in ads as " rule "\""
#define MISS(ch) ch " ERR message=\"bloomgate: not listed in ads\""

/* Read n replies with channel IDs first..first+n-1 (any order) and compare
 * each with want[channel - first]. */
static void expect_replies(struct helper *h, int first, const char *const *want, int n)
{
    bool seen[64] = {false};
    ck_assert_int_le(n, 64);
    for (int i = 0; i < n; i++) {
        const char *l = expect_line(h);
        int ch = atoi(l) - first;
        ck_assert_msg(ch >= 0 && ch < n && !seen[ch], "unexpected reply '%s'", l);
        ck_assert_msg(strcmp(l, want[ch]) == 0, "channel %d: '%s', wanted '%s'", ch + first, l,
                      want[ch]);
        seen[ch] = true;
    }
}

/* --context referer,origin,dest,method with FORMAT %URI %>{Referer}
 * %>{Origin} %>{Sec-Fetch-Dest} %METHOD: every request of one write decided
 * by its own context (the helper batches them by context; 12 and 13 would
 * each be blocked with the other's words), destinations and methods the
 * daemon does not know answered, not refused; the hits name the rule. */
START_TEST(test_context)
{
    int port = free_port();
    struct dh_daemon *d = start_adblock_daemon(port);
    struct helper h;
    char connect[64];
    snprintf(connect, sizeof(connect), "127.0.0.1:%d", port);
    const char *argv[] = {NULL,
                          "--connect",
                          connect,
                          "--filter",
                          "ads",
                          "--context",
                          "referer,origin,dest,method",
                          "--timeout",
                          "5",
                          "--log-level",
                          "info",
                          NULL};
    helper_exec(&h, d, argv);
    helper_send(&h, "100 http://warm.example/ - - - GET -\n");
    ck_assert_str_eq(expect_line(&h), MISS("100"));
    unsigned long long before = info_counter(d, "check_requests");
    helper_send(&h,
                /* third-party script: blocked; the tracker's own page and its
                 * first-party script, and the script without context: not */
                "1 http://tracker.example/t.js http://news.example/a%20b - script GET -\n"
                "2 http://tracker.example/ - - document GET -\n"
                "3 http://tracker.example/t.js http://www.tracker.example/p - script GET -\n"
                "4 http://tracker.example/t.js - - - - -\n"
                /* an image from ads.example: blocked, in any case; its page not */
                "5 http://ads.example/i.png http://news.example/ - image GET -\n"
                "6 http://ads.example/ - - document GET -\n"
                "7 http://ads.example/i.png - - IMAGE - -\n"
                /* the Origin when there is no Referer; "null" is no page */
                "8 http://tracker.example/t.js - http://news.example script POST -\n"
                "9 http://tracker.example/t.js - null script GET -\n"
                /* unknown to the daemon: json goes as other, PROPFIND as no method */
                "10 http://ads.example/i.png - - json PROPFIND -\n"
                "11 http://ads.example/i.png - - webidentity GET -\n"
                /* a page without a type, a type without a page */
                "12 http://tracker.example/t.js http://news.example/ - - GET -\n"
                "13 http://tracker.example/t.js - - script GET -\n"
                "14 http://ads.example/i.png http://news.example/ - worker CONNECT -\n"
                "15 http://ads.example/x.png http://news.example/ - image GET -\n");
    static const char *const want[] = {
        HIT("1", TRACKER_RULE),
        MISS("2"),
        MISS("3"),
        MISS("4"),
        HIT("5", ADS_RULE),
        MISS("6"),
        HIT("7", ADS_RULE),
        HIT("8", TRACKER_RULE),
        MISS("9"),
        MISS("10"),
        MISS("11"),
        MISS("12"),
        MISS("13"),
        MISS("14"),
        HIT("15", ADS_RULE),
    };
    expect_replies(&h, 1, want, 15);
    /* By key set (from, type, method): 4 {}; 7 10 {type}; 12 {from,method};
     * 2 6 9 11 13 {type,method}; the rest all three. Sorted so, a line goes
     * on while the set grows: {} {type} | {from,method} | {type,method} and
     * all three, which may split at the daemon's 16 context words. So 3 or
     * 4 MCHECKs and a MATCH per hit (5), which may or may not count. */
    unsigned long long after = info_counter(d, "check_requests");
    ck_assert_msg(after - before >= 3 && after - before <= 9, "%llu check requests",
                  after - before);

    /* More distinct pages than the daemon takes context words in one
     * request: split over lines, each request still with its own page. */
    char batch[4096];
    size_t o = 0;
    static char wbuf[20][128];
    const char *want2[20];
    for (int i = 0; i < 20; i++) {
        bool first_party = i % 3 == 0;
        o += (size_t)snprintf(
            batch + o, sizeof(batch) - o,
            "%d http://tracker.example/s%d.js http://%s.example/p%d - script GET -\n", 200 + i, i,
            first_party ? "www.tracker" : "news", i);
        if (first_party)
            snprintf(wbuf[i], sizeof(wbuf[i]), "%d ERR message=\"bloomgate: not listed in ads\"",
                     200 + i);
        else
            snprintf(wbuf[i], sizeof(wbuf[i]),
                     "%d OK message=\"bloomgate: listed in ads as " TRACKER_RULE "\"", 200 + i);
        want2[i] = wbuf[i];
    }
    helper_send(&h, batch);
    expect_replies(&h, 200, want2, 20);
    helper_stop(&h);
    ck_assert_int_eq(helper_log_count(&h, "bad_request"), 0);
    dh_finish(d);
}
END_TEST

/* --filter takes a name of the wider rule (base/fname.h): the helper asks
 * for it and names it in the reply; a name outside the rule is refused at
 * start with the rule. */
START_TEST(test_filter_names)
{
    const char *bin = getenv("BLOOMGATE_SQUID") ? getenv("BLOOMGATE_SQUID") : "./bloomgate-squid";
    int port = free_port();
    struct dh_daemon *d = dh_new();
    static const char *const ips[] = {"10.6.6.6"};
    dh_build_filter(d, "ips.bloom", ips, 1, 1000, 1e-4);
    char conf[256], out[DH_PATH_MAX];
    snprintf(conf, sizeof(conf),
             "listen 127.0.0.1:%d\nfilter \"ips:{v4}/eu\" {\n file @DIR@/ips.bloom\n}\n", port);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    char connect[64];
    snprintf(connect, sizeof(connect), "127.0.0.1:%d", port);
    const char *argv[] = {NULL, "--connect", connect, "--filter", "ips:{v4}/eu", NULL};
    struct helper h;
    helper_exec(&h, d, argv);
    helper_send(&h, "1 http://a.example/ 10.6.6.6 -\n");
    ck_assert_str_eq(expect_line(&h),
                     "1 OK message=\"bloomgate: listed in ips:{v4}/eu as 10.6.6.6\"");
    helper_send(&h, "2 http://a.example/ 10.0.0.1 -\n");
    ck_assert_str_eq(expect_line(&h), "2 ERR message=\"bloomgate: not listed in ips:{v4}/eu\"");
    helper_stop(&h);
    static const char *const bad[] = {"a b", "a\"b", "caf\xc3\xa9", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *cli[] = {bin, "--filter", bad[i], NULL};
        int st = dh_run(cli, dh_path(d, "cli.out", out), DH_TIMEOUT_MS);
        ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 2, "'%s': status 0x%x",
                      bad[i], st);
        FILE *f = fopen(out, "r");
        ck_assert_ptr_nonnull(f);
        char text[512] = "";
        text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
        fclose(f);
        ck_assert_msg(strstr(text, "use " FNAME_RULE), "'%s': %s", bad[i], text);
    }
    dh_finish(d);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("squid_helper");
    dh_add_case(s, "helper", 120,
                (const TTest *const[]){test_concurrency, test_in_order_and_bad_items,
                                       test_daemon_down_and_back, test_daemon_frozen, NULL});
    dh_add_case(s, "context", 120, (const TTest *const[]){test_context, NULL});
    dh_add_case(s, "names", 120, (const TTest *const[]){test_filter_names, NULL});
    return dh_run_suite(s);
}
