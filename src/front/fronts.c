/* The fronts served, see fronts.h. */
#include "config.h"

#include "front/fronts.h"

#include "base/log.h"

#include "front/bloomd/bloomd.h"
#include "front/dns/dns.h"
#include "front/http/http.h"
#include "front/line/line.h"
#include "front/postfix/postfix.h"
#include "front/resp/resp.h"

struct server *server_create(struct registry *reg, unsigned threads, char *err, size_t errlen)
{
    const struct conf *cf = registry_read(reg)->conf;
    struct server_front fronts[] = {
        [FRONT_LINE] = {&line_ops, cf->listen, cf->n_listen, 0},
        [FRONT_HTTP] = {&http_ops, cf->http_listen, cf->http_off ? 0 : cf->n_http_listen, 0},
        [FRONT_RESP] = {&resp_ops, cf->resp_listen, cf->n_resp_listen, 0},
        [FRONT_TCP_TABLE] = {&tcptable_ops, cf->n_tcp_table ? &cf->tcp_table[0].fr.listen : NULL,
                             cf->n_tcp_table, sizeof(struct conf_tcp_table)},
        [FRONT_POLICY] = {&policy_ops, cf->n_policy ? &cf->policy[0].fr.listen : NULL, cf->n_policy,
                          sizeof(struct conf_policy)},
        [FRONT_DNSBL] = {&dnsbl_tcp_ops, cf->n_dnsbl ? &cf->dnsbl[0].fr.listen : NULL, cf->n_dnsbl,
                         sizeof(struct conf_dnsbl)},
        [FRONT_BLOOMD] = {&bloomd_ops, cf->bloomd_listen, cf->n_bloomd_listen, 0},
    };
    struct server *srv =
        server_create_fronts(reg, threads, fronts, sizeof(fronts) / sizeof(fronts[0]), err, errlen);
    if (srv && cf->n_dnsbl && dnsbl_bind_udp(srv, FRONT_DNSBL, err, errlen) != 0) {
        server_free(srv);
        return NULL;
    }
    return srv;
}

void server_log_ports(const struct server *srv, const struct conf *cf)
{
    for (size_t i = 0; i < cf->n_listen; i++)
        log_info("line protocol listening on %s (port %d)", cf->listen[i].text,
                 server_port(srv, FRONT_LINE, i));
    for (size_t i = 0; !cf->http_off && i < cf->n_http_listen; i++)
        log_info("HTTP listening on %s (port %d)", cf->http_listen[i].text,
                 server_port(srv, FRONT_HTTP, i));
    for (size_t i = 0; i < cf->n_resp_listen; i++)
        log_info("Redis protocol listening on %s (port %d)", cf->resp_listen[i].text,
                 server_port(srv, FRONT_RESP, i));
    for (size_t i = 0; i < cf->n_bloomd_listen; i++)
        log_info("bloomd protocol listening on %s (port %d)", cf->bloomd_listen[i].text,
                 server_port(srv, FRONT_BLOOMD, i));
    for (size_t i = 0; i < cf->n_tcp_table; i++)
        log_info("tcp_table listening on %s (port %d)", cf->tcp_table[i].fr.listen.text,
                 server_port(srv, FRONT_TCP_TABLE, i));
    for (size_t i = 0; i < cf->n_policy; i++)
        log_info("policy listening on %s (port %d)", cf->policy[i].fr.listen.text,
                 server_port(srv, FRONT_POLICY, i));
    for (size_t i = 0; i < cf->n_dnsbl; i++)
        log_info("dnsbl %s listening on %s (port %d, UDP and TCP)", cf->dnsbl[i].zone,
                 cf->dnsbl[i].fr.listen.text, server_port(srv, FRONT_DNSBL, i));
}
