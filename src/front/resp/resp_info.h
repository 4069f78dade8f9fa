/* resp_info: INFO's text for the Redis protocol front (resp.c). */
#ifndef BLOOMGATE_RESP_INFO_H
#define BLOOMGATE_RESP_INFO_H

#include <event2/buffer.h>
#include <jansson.h>

/* Append to b the daemon's INFO (info: the command table's INFO JSON) as
 * Redis's INFO text: `# Server` with the daemon's figures, then `# Filters`
 * with one `name:keys=url,items=N,...` line a filter, as Redis's keyspace
 * lines (which client libraries parse into a map). */
void resp_info_text(json_t *info, struct evbuffer *b);

#endif
