/* fuzz_conf: the configuration parser (src/conf/conf.h), from a buffer with
 * conf_parse and, when the first byte's low bit is set, from a file with
 * conf_load (a memfd named /proc/self/fd/N).
 *
 * Input: u8 options, then the file's text. What is checked: a failure says
 * "PATH:LINE: reason"; a config that parses keeps what conf.h promises (a
 * listener, max_item below max_line, valid unique filter names each found by
 * conf_find_filter, only absolute paths), may replace itself on reload, and
 * parses to the same again. addr_parse gets the text's first line. */
#include "config.h"

#include "conf/addr.h"
#include "conf/conf.h"
#include "fuzz.h"

#define PATH "/etc/bloomgate/fuzz.conf"

static void check_conf(const struct conf *c)
{
    char err[512];
    FUZZ_CHECK(c->n_listen >= 1 && c->listen, "no listener");
    FUZZ_CHECK(c->http_off ? c->n_http_listen == 0 : c->n_http_listen >= 1,
               "http_off %d with %zu HTTP listeners", c->http_off, c->n_http_listen);
    FUZZ_CHECK(c->max_item < c->max_line, "max_item %zu >= max_line %zu", c->max_item, c->max_line);
    FUZZ_CHECK(c->dir && c->dir[0] == '/', "dir not absolute");
    FUZZ_CHECK(!c->pidfile || c->pidfile[0] == '/', "pidfile not absolute");
    for (size_t i = 0; i < c->n_listen; i++)
        FUZZ_CHECK(memchr(c->listen[i].text, '\0', CONF_ADDR_TEXT_MAX), "addr text unterminated");
    for (size_t i = 0; i < c->n_filters; i++) {
        const struct conf_filter *f = &c->filters[i];
        FUZZ_CHECK(conf_is_valid_name(f->name, strlen(f->name)), "bad filter name");
        FUZZ_CHECK(conf_find_filter(c, f->name) == f, "filter %zu not found by name", i);
        FUZZ_CHECK(!f->file || f->file[0] == '/', "filter file not absolute");
        FUZZ_CHECK(!f->journal || f->journal[0] == '/', "journal not absolute");
        FUZZ_CHECK(!(f->journal && f->journal_off), "journal both set and off");
        FUZZ_CHECK(f->file || f->capacity > 0, "filter %s with neither file nor capacity",
                   f->name);
    }
    FUZZ_CHECK(conf_check_reload(c, c, err, sizeof(err)) == 0, "cannot reload itself: %s", err);
    FUZZ_CHECK(strcmp(conf_log_level_name(c->log_level), "?") != 0, "log level");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    uint8_t opt = fuzz_u8(&in);
    char *text = fuzz_dup(in.p, in.len);
    char err[1024] = "";

    struct conf *c = conf_parse(text, in.len, PATH, err, sizeof(err));
    if (c) {
        check_conf(c);
        struct conf *c2 = conf_parse(text, in.len, PATH, err, sizeof(err));
        FUZZ_CHECK(c2 != NULL, "parses once, then fails: %s", err);
        FUZZ_CHECK(c2->n_filters == c->n_filters && c2->n_listen == c->n_listen,
                   "parses differently twice");
        FUZZ_CHECK(conf_check_reload(c, c2, err, sizeof(err)) == 0, "reload of the same text: %s",
                   err);
        conf_free(c2);
    } else {
        FUZZ_CHECK(strncmp(err, PATH ":", strlen(PATH) + 1) == 0, "error not 'PATH:LINE: ...': %s",
                   err);
        FUZZ_CHECK(strlen(err) > strlen(PATH) + 1, "empty error");
    }

    if (opt & 1) {
        char path[64], err2[1024] = "";
        int fd = fuzz_memfd("fuzz.conf", in.p, in.len, path);
        char err3[1024] = "";
        struct conf *c3 = conf_load(path, err2, sizeof(err2));
        struct conf *c4 = conf_parse(text, in.len, path, err3, sizeof(err3));
        FUZZ_CHECK(!c3 == !c4 && strcmp(err2, err3) == 0,
                   "conf_load and conf_parse disagree: '%s' / '%s'", err2, err3);
        conf_free(c3);
        conf_free(c4);
        close(fd);
    }
    conf_free(c);

    /* The first line as a listen address. */
    char line[128];
    size_t n = 0;
    while (n < in.len && n < sizeof(line) - 1 && in.p[n] != '\n')
        n++;
    memcpy(line, in.p, n);
    line[n] = '\0';
    struct conf_addr a;
    if (addr_parse(line, &a, err, sizeof(err)) == 0) {
        FUZZ_CHECK(a.ss.ss_family == AF_INET || a.ss.ss_family == AF_INET6, "family %d",
                   a.ss.ss_family);
        FUZZ_CHECK(memchr(a.text, '\0', sizeof(a.text)), "text not terminated");
    } else {
        FUZZ_CHECK(err[0] != '\0', "address refused without a reason");
    }
    free(text);
    return 0;
}
