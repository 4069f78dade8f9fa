/* The authorization endpoint behind the real nginx (Debian's, with
 * auth_request): bloomgated serves the shipped URLhaus list as url keys and
 * an exact filter of one client address; nginx runs the configuration
 * docs/gateways.md gives (read from that file, only its three addresses
 * changed) in front of a small upstream (another nginx server block that
 * echoes the request); curl is the client. A listed URL, in several
 * spellings, gets nginx's 403 with the filter and the match copied into the
 * response; a clean one reaches the upstream; a listed client address is
 * refused; a client cannot choose the URL judged; with bloomgated stopped
 * nginx answers 500 (fail-closed) except where the config fails open. A
 * second documented block serves an Adblock list: a third party's tracking
 * script is refused while the tracker's own page is served, from the
 * browser's Sec-Fetch-Dest and Referer that nginx passes on.
 * Skipped (77) only when there is no nginx. nginx runs in the foreground
 * without a master process, in its own process group, killed when the test
 * process ends however it ends (PR_SET_PDEATHSIG) and stopped by every
 * test's teardown. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/daemon_harness.h"
#include "lib/http_client.h"

#define START_MS 30000 /* nginx's start-up, generous: the machine is shared */

static const char *nginx_bin(void)
{
    static const char *const cands[] = {"/usr/sbin/nginx", "/usr/local/sbin/nginx",
                                        "/usr/bin/nginx"};
    for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
        if (access(cands[i], X_OK) == 0)
            return cands[i];
    return NULL;
}

static pid_t g_nginx;

/* SIGTERM to nginx's group, then SIGKILL if it has not gone within 20 s. */
static void nginx_stop(void)
{
    if (g_nginx <= 0)
        return;
    kill(-g_nginx, SIGTERM);
    for (int i = 0; i < 2000; i++) {
        if (waitpid(g_nginx, NULL, WNOHANG) == g_nginx) {
            g_nginx = 0;
            return;
        }
        usleep(10000);
    }
    kill(-g_nginx, SIGKILL);
    waitpid(g_nginx, NULL, 0);
    g_nginx = 0;
}

static void teardown(void)
{
    nginx_stop();
    dh_cleanup_all();
}

/* A port free at this moment (the kernel's pick); nginx cannot take port 0. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t len = sizeof(a);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap);
    size_t n;
    while (b && (n = fread(b + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            } else {
                b = nb;
            }
        }
    }
    fclose(f);
    if (b)
        b[len] = '\0';
    return b;
}

/* s with `from` replaced by `to`, which must occur exactly once. */
static char *replace_once(char *s, const char *from, const char *to)
{
    char *at = strstr(s, from);
    ck_assert_msg(at != NULL, "docs/gateways.md's nginx block lacks '%s'", from);
    ck_assert_msg(strstr(at + 1, from) == NULL, "'%s' twice in the nginx block", from);
    size_t fl = strlen(from), tl = strlen(to), sl = strlen(s);
    char *out = malloc(sl - fl + tl + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, s, (size_t)(at - s));
    memcpy(out + (at - s), to, tl);
    memcpy(out + (at - s) + tl, at + fl, sl - (size_t)(at - s) - fl + 1);
    free(s);
    return out;
}

/* The markers of docs/gateways.md's tested nginx blocks: the URL list
 * with the client filter, and the Adblock list with the request context. */
#define MARK_URLS "<!-- tested: tests/it/check_authz_nginx.c reads the block below -->"
#define MARK_ADBLOCK "<!-- tested: tests/it/check_authz_nginx.c reads the Adblock block below -->"

/* A block of docs/gateways.md: the fenced nginx block after marker. */
static char *docs_block(const char *marker)
{
    const char *src = getenv("srcdir");
    char path[DH_PATH_MAX];
    snprintf(path, sizeof(path), "%s/docs/gateways.md", src ? src : ".");
    char *doc = slurp(path);
    ck_assert_msg(doc != NULL, "cannot read %s", path);
    const char *m = strstr(doc, marker);
    ck_assert_msg(m != NULL, "no marker '%s' in %s", marker, path);
    const char *open = strstr(m, "```nginx\n");
    ck_assert_ptr_nonnull(open);
    open += strlen("```nginx\n");
    const char *close = strstr(open, "\n```");
    ck_assert_ptr_nonnull(close);
    char *block = strndup(open, (size_t)(close - open) + 1);
    free(doc);
    return block;
}

/* Write DIR/nginx/nginx.conf: the test's main context and temporary paths,
 * the documented block after marker with its addresses changed (the
 * upstream's in n_up proxy_pass lines), and the upstream. */
static void write_nginx_conf(struct dh_daemon *d, int front, int upstream, const char *marker,
                             int n_up)
{
    char dir[DH_PATH_MAX], tmp[DH_PATH_MAX + 64];
    dh_path(d, "nginx", dir);
    mkdir(dir, 0755);
    snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
    mkdir(tmp, 0755);
    char *block = docs_block(marker), a[64];
    snprintf(a, sizeof(a), "listen 127.0.0.1:%d;", front);
    block = replace_once(block, "listen 80;", a);
    snprintf(a, sizeof(a), "server 127.0.0.1:%d;", dh_http_port(d, 0));
    block = replace_once(block, "server 127.0.0.1:7879;", a);
    /* The upstream's address appears in n_up proxy_pass lines. */
    char up[64];
    snprintf(up, sizeof(up), "http://127.0.0.1:%d;", upstream);
    for (int i = 0; i < n_up; i++) {
        char *at = strstr(block, "http://127.0.0.1:8080;");
        ck_assert_msg(at != NULL, "the nginx block has fewer than %d upstream proxy_pass lines",
                      n_up);
        char *joined;
        ck_assert_int_ge(asprintf(&joined, "%.*s%s%s", (int)(at - block), block, up,
                                  at + strlen("http://127.0.0.1:8080;")),
                         0);
        free(block);
        block = joined;
    }
    ck_assert_ptr_null(strstr(block, "127.0.0.1:8080"));
    char path[DH_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/nginx.conf", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "worker_processes 1;\n"
            "pid %s/nginx.pid;\n"
            "error_log %s/error.log info;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            "    access_log %s/access.log;\n"
            "    client_body_temp_path %s/body;\n"
            "    proxy_temp_path %s/proxy;\n"
            "    fastcgi_temp_path %s/fastcgi;\n"
            "    uwsgi_temp_path %s/uwsgi;\n"
            "    scgi_temp_path %s/scgi;\n"
            /* curl sends the client address in X-Forwarded-For, as a load
             * balancer in front of nginx would. */
            "    set_real_ip_from 127.0.0.1;\n"
            "    real_ip_header X-Forwarded-For;\n"
            "%s\n"
            "    server {\n"
            "        listen 127.0.0.1:%d;\n"
            "        location / { default_type text/plain;\n"
            "                     return 200 \"upstream saw $request_uri\\n\"; }\n"
            "    }\n"
            "}\n",
            dir, dir, dir, tmp, tmp, tmp, tmp, tmp, block, upstream);
    fclose(f);
    free(block);
}

/* Start nginx in the foreground, no master process (one process: nothing
 * is orphaned if the test dies), in its own group, dying with this thread. */
static pid_t nginx_spawn(struct dh_daemon *d)
{
    char dir[DH_PATH_MAX], logp[DH_PATH_MAX + 32];
    dh_path(d, "nginx", dir);
    snprintf(logp, sizeof(logp), "%s/stderr.log", dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(logp, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execl(nginx_bin(), "nginx", "-p", dir, "-c", "nginx.conf", "-g",
              "daemon off; master_process off;", (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    return pid;
}

static bool port_open(int port)
{
    struct hc_conn c;
    if (hc_open(&c, "127.0.0.1", port) != 0)
        return false;
    hc_close(&c);
    return true;
}

/* nginx up on the front and upstream ports, running the block after
 * marker; a few tries, since a port picked free may be taken before nginx
 * binds it. Returns the front port. */
static int nginx_start(struct dh_daemon *d, const char *marker, int n_up)
{
    char errlog[DH_PATH_MAX + 32];
    snprintf(errlog, sizeof(errlog), "%s/nginx/stderr.log", d->dir);
    for (int attempt = 0; attempt < 5; attempt++) {
        int front = free_port(), upstream = free_port();
        if (front == upstream)
            continue;
        write_nginx_conf(d, front, upstream, marker, n_up);
        g_nginx = nginx_spawn(d);
        for (int i = 0; i < START_MS / 20; i++) {
            int st;
            if (waitpid(g_nginx, &st, WNOHANG) == g_nginx) {
                g_nginx = 0;
                break;
            }
            if (port_open(front) && port_open(upstream))
                return front;
            usleep(20000);
        }
        char *log = slurp(errlog);
        bool in_use = log && strstr(log, "Address already in use");
        if (!in_use)
            ck_abort_msg("nginx did not start: %s", log ? log : "(no log)");
        free(log);
        nginx_stop();
    }
    ck_abort_msg("nginx could not bind free ports in 5 tries");
    return 0;
}

static void build_list(struct dh_daemon *d)
{
    const char *src = getenv("srcdir");
    char list[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    snprintf(list, sizeof(list), "%s/data/urlhaus-filter-online.txt", src ? src : ".");
    dh_path(d, "urls.bloom", out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--seed", "7", "--format", "adblock",
                          "--keys",       "url",   "-o",     out, list,       NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build failed (status %d); see %s", st, log);
}

/* bloomgated (urls: the URLhaus list as url keys; ips: one address) and
 * nginx in front of it. The front port. */
static int start_all(struct dh_daemon **dp)
{
    struct dh_daemon *d = dh_new();
    build_list(d);
    static const char *const ips[] = {"192.0.2.66"};
    dh_build_filter(d, "ips.bloom", ips, 1, 100, 1e-4);
    dh_write_config(d, "threads 2\n"
                       "log_level info\n"
                       "http_listen 127.0.0.1:0\n"
                       "filter urls {\n file @DIR@/urls.bloom\n keys url\n}\n"
                       "filter ips {\n file @DIR@/ips.bloom\n}\n");
    dh_start(d, NULL);
    *dp = d;
    return nginx_start(d, MARK_URLS, 3);
}

struct reply {
    int status;
    char headers[4096];
    char body[4096];
};

/* curl, the client: method, http://127.0.0.1:PORT<path> with Host and
 * extra headers (NULL-ended), the path sent as it is (--path-as-is). */
static void curl(struct dh_daemon *d, int port, const char *method, const char *host,
                 const char *path, const char *const *hdrs, struct reply *r)
{
    char url[2048], hostl[512], hp[DH_PATH_MAX], bp[DH_PATH_MAX], op[DH_PATH_MAX];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    snprintf(hostl, sizeof(hostl), "Host: %s", host);
    dh_path(d, "curl.headers", hp);
    dh_path(d, "curl.body", bp);
    dh_path(d, "curl.out", op);
    unlink(hp);
    unlink(bp);
    const char *argv[32] = {"curl", "-s",   "--path-as-is", "--max-time", "20",
                            "-X",   method, "-D",           hp,           "-o",
                            bp,     "-w",   "%{http_code}", "-H",         hostl};
    size_t n = 15;
    if (strcmp(method, "HEAD") == 0) {
        argv[5] = "-I"; /* a HEAD that does not wait for a body */
        argv[6] = "-s";
    }
    for (size_t i = 0; hdrs && hdrs[i] && n < 28; i++) {
        argv[n++] = "-H";
        argv[n++] = hdrs[i];
    }
    argv[n++] = url;
    argv[n] = NULL;
    char curl_path[64] = "/usr/bin/curl";
    argv[0] = curl_path;
    int st = dh_run(argv, op, 60000);
    ck_assert_msg(st == 0, "curl %s %s failed (status %d)", method, url, st);
    char *out = slurp(op), *h = slurp(hp), *b = slurp(bp);
    ck_assert_ptr_nonnull(out);
    r->status = atoi(out);
    snprintf(r->headers, sizeof(r->headers), "%s", h ? h : "");
    snprintf(r->body, sizeof(r->body), "%s", b ? b : "");
    free(out);
    free(h);
    free(b);
}

static void assert_has(const struct reply *r, const char *needle, const char *what)
{
    ck_assert_msg(strcasestr(r->headers, needle) || strstr(r->body, needle),
                  "%s: '%s' not in the reply (status %d):\n%s\n%s", what, needle, r->status,
                  r->headers, r->body);
}

#define SCIHUB_PATH "/2294/7a43bb4cf6c57229b02a9604a1f4614e/skidmore1966.pdf"
#define SCIHUB_MATCH "2024.sci-hub.se" SCIHUB_PATH

START_TEST(test_blocked_and_clean)
{
    struct dh_daemon *d;
    int port = start_all(&d);
    struct reply r;
    /* A listed URL in several spellings: nginx refuses each with 403 and
     * copies the filter and the list entry from bloomgated's answer. */
    static const struct {
        const char *host, *path;
    } listed[] = {
        {"2024.sci-hub.se", SCIHUB_PATH},
        {"2024.SCI-HUB.SE:8080", SCIHUB_PATH "?download=1"},
        {"www.2024.sci-hub.se", SCIHUB_PATH},
        {"2024.sci-hub.se", "//2294/./7a43bb4cf6c57229b02a9604a1f4614e/skidmore1966.pdf"},
        {"2024.sci-hub.se", "/2294/x/../7a43bb4cf6c57229b02a9604a1f4614e/%73kidmore1966.pdf"},
        {"2024.sci-hub.se", "/2294/7a43bb4cf6c57229b02a9604a1f4614e/skidmore1966.pdf%3Fa=b"},
    };
    for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++) {
        curl(d, port, "GET", listed[i].host, listed[i].path, NULL, &r);
        ck_assert_msg(r.status == 403, "%s%s: %d\n%s%s", listed[i].host, listed[i].path, r.status,
                      r.headers, r.body);
        assert_has(&r, "X-Bloomgate-Filter: urls", listed[i].path);
        assert_has(&r, "X-Bloomgate-Match: " SCIHUB_MATCH, listed[i].path);
        ck_assert_msg(!strstr(r.body, "upstream saw"), "the upstream was reached");
    }
    /* A whole listed host: any path on it, and its subdomains. */
    curl(d, port, "GET", "deep.sub.111101111.ru", "/anything/at/all.html?x=1", NULL, &r);
    ck_assert_int_eq(r.status, 403);
    assert_has(&r, "X-Bloomgate-Match: 111101111.ru/", "whole host");
    /* HEAD and POST are judged too. */
    curl(d, port, "HEAD", "111101111.ru", "/", NULL, &r);
    ck_assert_int_eq(r.status, 403);
    curl(d, port, "POST", "111101111.ru", "/form", NULL, &r);
    ck_assert_int_eq(r.status, 403);
    /* Clean URLs reach the upstream, which sees the request unchanged. */
    curl(d, port, "GET", "www.debian.org", "/index.html?a=1", NULL, &r);
    ck_assert_msg(r.status == 200, "clean: %d %s", r.status, r.body);
    ck_assert_str_eq(r.body, "upstream saw /index.html?a=1\n");
    ck_assert_ptr_null(strcasestr(r.headers, "X-Bloomgate"));
    curl(d, port, "GET", "2024.sci-hub.se", "/2294/other.pdf", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    /* The verdicts are counted by filter. */
    struct hc_conn h;
    struct hc_resp m;
    ck_assert_int_eq(hc_open(&h, "127.0.0.1", dh_http_port(d, 0)), 0);
    ck_assert_int_eq(hc_request(&h, "GET", "/metrics", NULL, NULL, 0, &m, DH_TIMEOUT_MS), 0);
    ck_assert_ptr_nonnull(
        strstr(m.body, "bloomgate_authz_requests_total{filter=\"urls\",verdict=\"deny\"} 9\n"));
    ck_assert_ptr_nonnull(
        strstr(m.body, "bloomgate_authz_requests_total{filter=\"urls\",verdict=\"allow\"} 2\n"));
    ck_assert_ptr_nonnull(
        strstr(m.body, "bloomgate_authz_requests_total{filter=\"ips\",verdict=\"allow\"} 2\n"));
    hc_resp_free(&m);
    hc_close(&h);
    nginx_stop();
    dh_finish(d);
}
END_TEST

/* The client address (X-Forwarded-For to nginx, $remote_addr by realip, then
 * X-Real-IP to bloomgated), and a client that tries to choose the URL. */
START_TEST(test_client_and_spoofing)
{
    struct dh_daemon *d;
    int port = start_all(&d);
    struct reply r;
    const char *listed_client[] = {"X-Forwarded-For: 192.0.2.66", NULL};
    curl(d, port, "GET", "www.debian.org", "/", listed_client, &r);
    ck_assert_msg(r.status == 403, "listed client: %d", r.status);
    assert_has(&r, "X-Bloomgate-Filter: ips", "client");
    assert_has(&r, "X-Bloomgate-Match: 192.0.2.66", "client");
    const char *clean_client[] = {"X-Forwarded-For: 192.0.2.67", NULL};
    curl(d, port, "GET", "www.debian.org", "/", clean_client, &r);
    ck_assert_int_eq(r.status, 200);
    /* The client's own X-Original-URL, X-Forwarded-Uri, X-Original-URI and
     * X-Forwarded-Host are removed or overwritten by the documented config. */
    const char *spoof[] = {"X-Original-URL: http://www.debian.org/",
                           "X-Forwarded-Uri: /clean",
                           "X-Original-URI: /clean",
                           "X-Forwarded-Host: www.debian.org",
                           "X-Real-IP: 192.0.2.67",
                           NULL};
    curl(d, port, "GET", "111101111.ru", "/x", spoof, &r);
    ck_assert_msg(r.status == 403, "spoofed headers let a listed URL through: %d %s", r.status,
                  r.body);
    assert_has(&r, "X-Bloomgate-Match: 111101111.ru/", "spoofed");
    nginx_stop();
    dh_finish(d);
}
END_TEST

/* bloomgated down: nginx's auth_request turns the failed sub-request into
 * 500 (fail-closed), and the location with error_page 500 serves anyway
 * (fail-open). */
START_TEST(test_daemon_down)
{
    struct dh_daemon *d;
    int port = start_all(&d);
    struct reply r;
    curl(d, port, "GET", "www.debian.org", "/downloads/a.iso", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    curl(d, port, "GET", "111101111.ru", "/downloads/a.iso", NULL, &r);
    ck_assert_int_eq(r.status, 403); /* fail-open still refuses what is listed */
    dh_stop_ok(d);
    curl(d, port, "GET", "www.debian.org", "/index.html", NULL, &r);
    ck_assert_msg(r.status == 500, "daemon down, fail-closed: %d", r.status);
    curl(d, port, "GET", "111101111.ru", "/downloads/a.iso", NULL, &r);
    ck_assert_msg(r.status == 200, "daemon down, fail-open: %d", r.status);
    ck_assert_str_eq(r.body, "upstream saw /downloads/a.iso\n");
    nginx_stop();
    dh_free(d);
}
END_TEST

/* The Adblock block: a list whose rule refuses a tracker's script when a
 * third party's page loads it, compiled by the real tool and served as
 * filter ads; the browser's Sec-Fetch-Dest, Referer and Origin reach
 * bloomgated because nginx passes the client's headers to the sub-request,
 * and the method because the block sets X-Original-Method. */
static int start_adblock(struct dh_daemon **dp)
{
    struct dh_daemon *d = dh_new();
    static const char list[] = "! a third party's tracking script\n"
                               "||tracker.example^$third-party,script\n"
                               "||tracker.example/collect$method=post\n";
    dh_write_file(d, "ads.txt", list, strlen(list));
    char in[DH_PATH_MAX], out[DH_PATH_MAX], log[DH_PATH_MAX];
    dh_path(d, "ads.txt", in);
    dh_path(d, "ads.bloom", out);
    dh_path(d, "build.log", log);
    const char *argv[] = {dh_tool_path(), "build", "--format", "adblock", "-o", out, in, NULL};
    int st = dh_run(argv, log, 60000);
    ck_assert_msg(st == 0, "bloomgate build --format adblock failed (status %d); see %s", st, log);
    dh_write_config(d, "threads 2\n"
                       "log_level info\n"
                       "http_listen 127.0.0.1:0\n"
                       "filter ads {\n file @DIR@/ads.bloom\n}\n");
    dh_start(d, NULL);
    *dp = d;
    return nginx_start(d, MARK_ADBLOCK, 1);
}

#define TRACKER_RULE "||tracker.example^$third-party,script"

START_TEST(test_adblock_third_party)
{
    struct dh_daemon *d;
    int port = start_adblock(&d);
    struct reply r;
    /* A news page loads the tracker's script: refused, the rule named. */
    const char *third[] = {"Sec-Fetch-Dest: script", "Referer: https://news.example/story", NULL};
    curl(d, port, "GET", "tracker.example", "/t.js", third, &r);
    ck_assert_msg(r.status == 403, "third-party script: %d\n%s%s", r.status, r.headers, r.body);
    assert_has(&r, "X-Bloomgate-Rule: " TRACKER_RULE, "third-party script");
    ck_assert_msg(!strstr(r.body, "upstream saw"), "the upstream was reached");
    /* The same from an Origin (a fetch() without a Referer). */
    const char *origin[] = {"Sec-Fetch-Dest: script", "Origin: https://news.example", NULL};
    curl(d, port, "GET", "tracker.example", "/t.js", origin, &r);
    ck_assert_int_eq(r.status, 403);
    /* The tracker's own page, as a document: served. */
    const char *page[] = {"Sec-Fetch-Dest: document", NULL};
    curl(d, port, "GET", "tracker.example", "/t.js", page, &r);
    ck_assert_msg(r.status == 200, "first-party page: %d %s", r.status, r.body);
    ck_assert_str_eq(r.body, "upstream saw /t.js\n");
    ck_assert_ptr_null(strcasestr(r.headers, "X-Bloomgate-Rule"));
    /* Its script loaded by its own page: first party, served. */
    const char *own[] = {"Sec-Fetch-Dest: script", "Referer: https://tracker.example/", NULL};
    curl(d, port, "GET", "tracker.example", "/t.js", own, &r);
    ck_assert_msg(r.status == 200, "first-party script: %d %s", r.status, r.body);
    /* Another type from the third party (fetch(): empty): the rule is for
     * scripts; and no context at all is a top-level page. */
    const char *xhr[] = {"Sec-Fetch-Dest: empty", "Referer: https://news.example/", NULL};
    curl(d, port, "GET", "tracker.example", "/t.js", xhr, &r);
    ck_assert_int_eq(r.status, 200);
    curl(d, port, "GET", "tracker.example", "/t.js", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    /* The method, from X-Original-Method: a POST refused, a GET served. */
    curl(d, port, "POST", "tracker.example", "/collect", NULL, &r);
    ck_assert_msg(r.status == 403, "POST /collect: %d %s", r.status, r.body);
    assert_has(&r, "X-Bloomgate-Rule: ||tracker.example/collect$method=post", "POST");
    curl(d, port, "GET", "tracker.example", "/collect", NULL, &r);
    ck_assert_int_eq(r.status, 200);
    /* A client cannot choose the method judged: the block overwrites it. */
    const char *spoof[] = {"X-Original-Method: GET", "X-Forwarded-Method: GET", NULL};
    curl(d, port, "POST", "tracker.example", "/collect", spoof, &r);
    ck_assert_int_eq(r.status, 403);
    nginx_stop();
    dh_finish(d);
}
END_TEST

int main(void)
{
    if (!nginx_bin()) {
        fprintf(stderr, "check_authz_nginx: no nginx: skipped\n");
        return 77;
    }
    Suite *s = suite_create("authz_nginx");
    TCase *tc = tcase_create("nginx");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_blocked_and_clean);
    tcase_add_test(tc, test_client_and_spoofing);
    tcase_add_test(tc, test_daemon_down);
    tcase_add_test(tc, test_adblock_third_party);
    suite_add_tcase(s, tc);
    return dh_run_suite(s);
}
