/* The refusal over max_connections (conn_refuse, src/net/conn_front.c),
 * with the HTTP front's 503 (http_ops): it reads what the client sent before
 * it answers (so that the close is a FIN, not a reset that could discard
 * the 503), but only so much: a client that keeps its socket full must not
 * hold the worker. Shown without a race by link-time substitution: this
 * program defines recv (and __recv_chk, its fortified form), which for one
 * socket always returns a full buffer, as a client that never stops sending
 * would make it; any other socket gets the real call. */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/stats.h"
#include "front/http/http.h"
#include "net/conn.h"

static int endless_fd = -1;
static size_t endless_calls, endless_bytes;

ssize_t recv(int fd, void *buf, size_t len, int flags);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    if (fd != endless_fd || endless_fd < 0)
        return syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);
    endless_calls++;
    endless_bytes += len;
    memset(buf, 'x', len);
    return (ssize_t)len;
}

ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
    if (len > buflen)
        abort();
    return recv(fd, buf, len, flags);
}

/* Without a bound, conn_refuse never returns here, and the test fails
 * on Check's timeout. */
START_TEST(test_refuse_reads_a_bounded_amount)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct stats *st = calloc(1, sizeof(*st));
    ck_assert_ptr_nonnull(st);
    endless_fd = sv[0];
    conn_refuse(&http_ops, sv[0], st);
    endless_fd = -1;
    ck_assert_uint_gt(endless_calls, 0);
    ck_assert_uint_le(endless_bytes, 1024 * 1024);
    /* The 503 was still written, and the write side shut. */
    char buf[1024];
    ssize_t n = read(sv[1], buf, sizeof(buf) - 1);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_msg(strncmp(buf, "HTTP/1.1 503 Service Unavailable\r\n", 34) == 0, "%s", buf);
    ck_assert_uint_eq(atomic_load(&st->http_responses[stats_http_slot(503)]), 1);
    free(st);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("http_refuse");
    TCase *tc = tcase_create("http_refuse");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_refuse_reads_a_bounded_amount);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
