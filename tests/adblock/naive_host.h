/* The naive Adblock matcher's URL and host helpers (naive.h): a URL's host, the site it
 * belongs to by the Public Suffix List, and $domain-style host lists. Test code, single
 * thread. */
#ifndef BLOOMGATE_TESTS_NAIVE_HOST_H
#define BLOOMGATE_TESTS_NAIVE_HOST_H

#include <libpsl.h>
#include <stddef.h>

/* A $domain / $to / $denyallow list: lower case names, "name.*" entities kept as such. */
struct naive_domains {
    char **names;
    int *neg;
    size_t n;
};

void *naive_xrealloc(void *p, size_t n);
char *naive_xstrndup(const char *s, size_t n);
void naive_domains_parse(struct naive_domains *d, const char *value);
void naive_domains_free(struct naive_domains *d);
char *naive_url_host(const char *url, size_t *start, size_t *end);
const char *naive_site(const psl_ctx_t *psl, const char *host);
int naive_host_in(const psl_ctx_t *psl, const char *host, const char *name);
int naive_domains_ok(const psl_ctx_t *psl, const struct naive_domains *d, const char *host);

#endif
