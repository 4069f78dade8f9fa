/* A naive Adblock network-filter matcher, written from the filter syntax documents alone
 * (Adblock Plus "How to write filters", uBlock Origin "Static filter syntax"), for the
 * differential tests of issue 26: every request is tried against every candidate rule,
 * so it is slow and meant to be obviously right. It shares no code with src/adblock/.
 * Single-threaded test code: one caller at a time. */
#ifndef BLOOMGATE_TESTS_NAIVE_H
#define BLOOMGATE_TESTS_NAIVE_H

#include <stddef.h>

struct naive;

/* What decided a request: the rule and the exception as written in the list (NULL for
 * none), pointing into the matcher (valid until naive_free). */
struct naive_verdict {
    int block;
    const char *rule;
    const char *exception;
};

/* Counts of what the lists held, for a summary line. */
struct naive_stats {
    size_t network;    /* network rules kept (blocking and exceptions) */
    size_t exceptions; /* of which exceptions */
    size_t regex;      /* /regex/ rules */
    size_t inert;      /* rules whose action a gateway cannot take (csp, removeparam, ...) */
    size_t dropped;    /* unknown option or bad pattern: ignored, as the engines do */
    size_t badfiltered;
    size_t skipped; /* comments, headers, cosmetic rules */
    size_t always;  /* rules tried on every request (no 3-byte literal piece) */
};

struct naive *naive_new(char *err, size_t errlen);
void naive_free(struct naive *n);

/* Add every line of a list (len bytes, need not end in a newline). */
int naive_add_list(struct naive *n, const char *text, size_t len, char *err, size_t errlen);

/* Apply $badfilter and build the candidate index; call once, after the last list. */
int naive_finish(struct naive *n, char *err, size_t errlen);

/* Decide one request. type: an Adblock type name ("" or NULL: document); from: the
 * initiating page's URL ("" or NULL: none). -1 with a message for an unknown type. */
int naive_match(struct naive *n, const char *url, const char *type, const char *from,
                struct naive_verdict *v, char *err, size_t errlen);

void naive_get_stats(const struct naive *n, struct naive_stats *s);

#endif
