/* The fronts served, see fronts.h. */
#include "config.h"

#include "front/fronts.h"

#include "front/http/http.h"
#include "front/line/line.h"
#include "front/resp/resp.h"

struct server *server_create(struct registry *reg, unsigned threads, char *err, size_t errlen)
{
    const struct conf *cf = registry_read(reg)->conf;
    struct server_front fronts[] = {
        [FRONT_LINE] = {&line_ops, cf->listen, cf->n_listen},
        [FRONT_HTTP] = {&http_ops, cf->http_listen, cf->http_off ? 0 : cf->n_http_listen},
        [FRONT_RESP] = {&resp_ops, cf->resp_listen, cf->n_resp_listen},
    };
    return server_create_fronts(reg, threads, fronts, sizeof(fronts) / sizeof(fronts[0]), err,
                                errlen);
}
