/* helper: bloomgate-squid's loop. It reads Squid's external ACL requests from
 * one fd, checks their values, with each request's context (--context), against
 * bloomgated's filters over one pipelined line-protocol connection (one MCHECK
 * per filter for everything waiting), and writes OK/ERR/BH replies to another
 * fd, each as soon as it is known. One thread, poll(2); never waits on the
 * daemon longer than the timeout. */
#ifndef BLOOMGATE_SQUID_HELPER_H
#define BLOOMGATE_SQUID_HELPER_H

#include <stddef.h>

#include "squid/squidproto.h"

#define HELPER_FILTERS_MAX 16

struct helper_opts {
    const char *host;                        /* the daemon's address (name or literal) */
    const char *port;                        /* and port, as text */
    const char *filters[HELPER_FILTERS_MAX]; /* filters every value is checked against, in order */
    size_t n_filters;
    double timeout;            /* seconds for a connect and for a reply to arrive */
    size_t batch;              /* most items in one MCHECK */
    enum squid_result on_down; /* the answer while the daemon cannot be reached: BH or ERR */
    int in_fd, out_fd;         /* Squid's requests and our replies (0 and 1) */
    struct squid_ctx_spec ctx; /* the context fields after each line's URL (none: n == 0) */
};

/* Serve until in_fd reaches EOF and every request read has been answered.
 * 0, or -1 with the reason in err (a write to out_fd failed: Squid is gone). */
int helper_run(const struct helper_opts *o, char *err, size_t errlen);

#endif
