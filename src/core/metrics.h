/* metrics: the Prometheus text exposition (format 0.0.4) of what the workers
 * count and of the filters served, for GET /metrics. The counters come in as
 * plain data (struct stats_src: relaxed loads, no lock), so any worker thread
 * may call it between its own requests, and it never calls the network layer. */
#ifndef BLOOMGATE_METRICS_H
#define BLOOMGATE_METRICS_H

struct catalog;
struct evbuffer;
struct stats_src;

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Append the whole exposition to out. 0, or -1 when out of memory. */
int metrics_render(const struct stats_src *src, const struct catalog *cat, struct evbuffer *out);

#endif
