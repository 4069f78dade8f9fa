/* The naive Adblock matcher's URL and host helpers (naive_host.h). */
#define _GNU_SOURCE
#include "naive_host.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *naive_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL) {
        fputs("naive: out of memory\n", stderr);
        exit(1);
    }
    return q;
}

char *naive_xstrndup(const char *s, size_t n)
{
    char *d = naive_xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void naive_domains_parse(struct naive_domains *d, const char *value)
{
    const char *p = value;
    while (*p != '\0') {
        const char *e = strchr(p, '|');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        int neg = len > 0 && p[0] == '~';
        if (len - neg > 0) {
            d->names = naive_xrealloc(d->names, (d->n + 1) * sizeof(*d->names));
            d->neg = naive_xrealloc(d->neg, (d->n + 1) * sizeof(*d->neg));
            d->names[d->n] = naive_xstrndup(p + neg, len - neg);
            for (char *c = d->names[d->n]; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            d->neg[d->n] = neg;
            d->n++;
        }
        p += len + (e != NULL);
    }
}

void naive_domains_free(struct naive_domains *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->names[i]);
    free(d->names);
    free(d->neg);
}

/* The host of a URL: between "scheme://" and the first '/', '?' or '#', without the user
 * information and the port. NULL when the URL has no "://". */
char *naive_url_host(const char *url, size_t *start, size_t *end)
{
    const char *p = url;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.' || *p == '_')
        p++;
    if (p == url || p[0] != ':' || p[1] != '/')
        return NULL;
    p++;
    while (*p == '/')
        p++;
    const char *h = p;
    const char *e = h + strcspn(h, "/?#");
    if (start != NULL) {
        *start = (size_t)(h - url);
        *end = (size_t)(h + strcspn(h, "/") - url);
    }
    const char *at = memrchr(h, '@', (size_t)(e - h));
    if (at != NULL)
        h = at + 1;
    if (start != NULL) /* user information is not part of the host "||" anchors in */
        *start = (size_t)(h - url);
    const char *q = e;
    if (*h == '[') {
        const char *rb = memchr(h, ']', (size_t)(e - h));
        if (rb != NULL)
            q = rb + 1;
    } else {
        const char *colon = memchr(h, ':', (size_t)(e - h));
        if (colon != NULL)
            q = colon;
    }
    char *host = naive_xstrndup(h, (size_t)(q - h));
    for (char *c = host; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    size_t hl = strlen(host);
    if (hl > 0 && host[hl - 1] == '.')
        host[hl - 1] = '\0';
    return host;
}

static int is_ip_literal(const char *host)
{
    if (host[0] == '[')
        return 1;
    int dots = 0;
    for (const char *c = host; *c; c++) {
        if (*c == '.')
            dots++;
        else if (!isdigit((unsigned char)*c))
            return 0;
    }
    return dots == 3;
}

/* The site a host belongs to: its registrable domain by the Public Suffix List, or the
 * host itself (an IP address, a public suffix, a single label). */
const char *naive_site(const psl_ctx_t *psl, const char *host)
{
    if (is_ip_literal(host))
        return host;
    const char *r = psl_registrable_domain(psl, host);
    return r ? r : host;
}

/* host is name or a subdomain of it; "name.*" is an entity: name followed by any public
 * suffix (uBO). */
int naive_host_in(const psl_ctx_t *psl, const char *host, const char *name)
{
    size_t nl = strlen(name), hl = strlen(host);
    if (nl >= 2 && strcmp(name + nl - 2, ".*") == 0) {
        const char *suffix = psl_unregistrable_domain(psl, host);
        if (suffix == NULL || suffix == host || suffix[-1] != '.')
            return 0;
        hl = (size_t)(suffix - 1 - host);
        nl -= 2;
    } else if (hl == nl) {
        return strcmp(host, name) == 0;
    }
    if (hl < nl || memcmp(host + hl - nl, name, nl) != 0)
        return 0;
    return hl == nl || host[hl - nl - 1] == '.';
}

/* A $domain / $to list: no negated name may match; if there are plain names, one must. */
int naive_domains_ok(const psl_ctx_t *psl, const struct naive_domains *d, const char *host)
{
    int positives = 0, hit = 0;
    for (size_t i = 0; i < d->n; i++) {
        int in = host != NULL && naive_host_in(psl, host, d->names[i]);
        if (d->neg[i] && in)
            return 0;
        positives += !d->neg[i];
        hit |= !d->neg[i] && in;
    }
    return positives == 0 || hit;
}
