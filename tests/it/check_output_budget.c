/* check_output_budget: the unread replies of all connections together are
 * held to max_buffered (src/net/conn.c), on the real bloomgated. max_output
 * bounds one connection only: a crowd of clients that send INFO and never
 * read used to hold max_output each (300 of them held 1.2 GB). Each test
 * starts its own daemon (tests/lib/daemon_harness.h). No test asserts a
 * timing: waits are bounded polls. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"

#define N_CONNS 8
#define MAX_OUTPUT (4 * 1024 * 1024)
#define BUDGET (4 * 1024 * 1024)
#define THREADS 2
#define SLOW_MS 120000 /* a reply while the workers make 32 MiB of INFO (ASan: slow) */

/* The value of series (exact, labels included) in GET /metrics. */
static double get_metric(struct dh_daemon *d, const char *series)
{
    struct hc_conn c;
    struct hc_resp r;
    ck_assert_msg(hc_open(&c, "127.0.0.1", dh_http_port(d, 0)) == 0, "%s", c.err);
    ck_assert_msg(hc_request(&c, "GET", "/metrics", NULL, NULL, 0, &r, SLOW_MS) == 0, "%s", c.err);
    ck_assert_int_eq(r.status, 200);
    size_t n = strlen(series);
    double v = -1;
    for (const char *p = r.body; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, series, n) == 0 && p[n] == ' ')
            v = strtod(p + n + 1, NULL);
    ck_assert_msg(v >= 0, "no series %s in:\n%.3000s", series, r.body);
    hc_resp_free(&r);
    hc_close(&c);
    return v;
}

/* The daemon's resident memory in KiB, from /proc. */
static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A connection whose receive buffer is small (set before the handshake), so
 * the replies it does not read stay in the daemon rather than in the kernel. */
static int dial_small(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect: %s",
                  strerror(errno));
    return fd;
}

/* 8 line clients each send 4,000 INFOs (each reply a few KiB: several times
 * max_output, 4 MiB, the default) and never read. Without a bound across
 * connections each holds up to max_output of replies (the kernel's socket
 * buffers take a little of it), 32 MiB in all; with max_buffered 4M the daemon
 * closes the connections holding the most until the total is under it. What
 * is asserted once they have all stopped (each paused or closed): the reply
 * bytes held (the daemon's own count, and its resident memory where no
 * sanitizer's quarantine distorts it) are within the budget plus at most one
 * connection's batch per worker in flight, some connections were closed for
 * it, and a new client is answered. */
START_TEST(test_replies_held_to_budget)
{
    struct dh_daemon *d = dh_new();
    char conf[512];
    snprintf(conf, sizeof(conf),
             "http_listen 127.0.0.1:0\nthreads %d\nlog_level info\nmax_output %d\n"
             "max_buffered %d\nmax_connections 1000\nidle_timeout 0\n"
             "filter f {\n    capacity 1000\n    journal off\n}\n",
             THREADS, MAX_OUTPUT, BUDGET);
    dh_write_config(d, conf);
    dh_start(d, NULL);
    int port = dh_port(d, 0);
    long rss0 = rss_kib(d->pid);

    static char burst[4000 * 5];
    for (size_t i = 0; i < sizeof(burst); i += 5)
        memcpy(burst + i, "INFO\n", 5);
    int fds[N_CONNS];
    for (int i = 0; i < N_CONNS; i++) {
        fds[i] = dial_small(port);
        size_t off = 0;
        /* What the kernel takes now; the rest is not needed (the daemon
         * stops reading this client long before). */
        while (off < sizeof(burst)) {
            ssize_t k = send(fds[i], burst + off, sizeof(burst) - off, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k <= 0)
                break;
            off += (size_t)k;
        }
        ck_assert_msg(off >= 1000, "client %d: only %zu bytes sent", i, off);
    }

    /* Every client's connection ends paused (its replies unread) or closed by
     * the budget: wait until the two counts cover them all, then until the
     * count of bytes held stops moving (bounded). */
    double pauses = 0, closes = 0, held = -1;
    for (int i = 0; i < 600; i++) {
        pauses = get_metric(d, "bloomgate_line_output_pauses_total");
        closes = get_metric(d, "bloomgate_output_budget_closes_total{protocol=\"line\"}");
        if (pauses + closes >= N_CONNS)
            break;
        sleep_ms(100);
    }
    ck_assert_msg(pauses + closes >= N_CONNS, "%.0f paused and %.0f closed of %d", pauses, closes,
                  N_CONNS);
    for (int i = 0, same = 0; i < 100 && same < 3; i++) {
        double now = get_metric(d, "bloomgate_reply_buffer_bytes");
        same = now == held ? same + 1 : 0;
        held = now;
        sleep_ms(100);
    }
    long rss1 = rss_kib(d->pid);
    if (getenv("BUDGET_DEBUG"))
        fprintf(stderr, "paused %.0f closed %.0f held %.0f rss %ld -> %ld KiB\n", pauses, closes,
                held, rss0, rss1);
    ck_assert_msg(closes >= 1, "no connection was closed for the budget (%.0f paused)", pauses);
    ck_assert_msg(held <= BUDGET + THREADS * (double)MAX_OUTPUT,
                  "%.0f bytes of replies held, the budget is %d", held, BUDGET);
#ifndef __SANITIZE_ADDRESS__
    /* Unbounded, the daemon would hold N_CONNS * MAX_OUTPUT (32 MiB). */
    ck_assert_msg(rss1 - rss0 < N_CONNS * (MAX_OUTPUT / 1024) / 2,
                  "resident memory grew from %ld to %ld KiB", rss0, rss1);
#else
    (void)rss0;
    (void)rss1;
#endif
    /* The daemon goes on serving a client that reads. */
    dh_expect_ping(d);
    for (int i = 0; i < N_CONNS; i++)
        close(fds[i]);
    dh_finish(d);
}
END_TEST

static Suite *budget_suite(void)
{
    Suite *s = suite_create("output_budget");
    TCase *tc = tcase_create("budget");
    tcase_set_timeout(tc, 300);
    tcase_add_checked_fixture(tc, NULL, dh_cleanup_all);
    tcase_add_test(tc, test_replies_held_to_budget);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return dh_run_suite(budget_suite());
}
