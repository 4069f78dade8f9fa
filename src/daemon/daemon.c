#include "config.h"

#include "daemon/daemon.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/conf.h"
#include "bloom/format.h"
#include "store/reload.h"
#include "base/log.h"
#include "base/notify.h"
#include "store/registry.h"
#include "front/fronts.h"
#include "base/util.h"

#define DEFAULT_CONFIG SYSCONFDIR "/bloomgate/bloomgate.conf"

static const char usage_text[] =
    "usage: bloomgated [-c FILE] [--check-config] [--foreground] [-v] [--log-level L]\n"
    "  -c, --config FILE   configuration file (default " DEFAULT_CONFIG ")\n"
    "  --check-config      validate the configuration and the filter files' headers, then exit\n"
    "  --foreground        stay in the foreground (the default; bloomgated never forks)\n"
    "  -v, --verbose       log at debug level\n"
    "  --log-level L       debug, info, warn or error (overrides the config)\n"
    "  --version, --help\n"
    "signals: TERM/INT stop gracefully; HUP reloads the configuration and changed filters\n";

struct daemon {
    struct event_base *base;
    struct server *srv;
    struct registry *reg;
    unsigned threads;
    const char *config_path;
    char *pidfile;
    struct reloader *reloader;
    bool stopping;
};

/* Validate a config without starting: parse it, and read the header of each
 * filter file (a missing file is fine only with a capacity). */
static int check_config(const char *path)
{
    char err[1024];
    struct conf *c = conf_load(path, err, sizeof(err));
    if (!c) {
        fprintf(stderr, "bloomgated: %s\n", err);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < c->n_filters; i++) {
        const struct conf_filter *f = &c->filters[i];
        if (!f->file)
            continue;
        struct stat st;
        if (stat(f->file, &st) != 0) {
            if (errno == ENOENT && f->capacity)
                continue;
            fprintf(stderr, "bloomgated: %s:%u: filter %s: file %s: %s\n", path, f->line, f->name,
                    f->file, strerror(errno));
            rc = 1;
            continue;
        }
        struct format_info fi;
        if (format_read_info(f->file, &fi, err, sizeof(err)) != 0) {
            fprintf(stderr, "bloomgated: %s:%u: filter %s: %s\n", path, f->line, f->name, err);
            rc = 1;
            continue;
        }
        format_info_free(&fi);
    }
    conf_free(c);
    if (rc == 0)
        printf("%s: ok\n", path);
    return rc;
}

static int write_pidfile(const char *path, char *err, size_t errlen)
{
    char tmp[4096];
    int fd = util_tmpfile_beside(path, tmp, sizeof(tmp), err, errlen);
    if (fd < 0)
        return -1;
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
    if (util_write_all(fd, buf, (size_t)n) != 0) {
        snprintf(err, errlen, "pidfile %s: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    return util_commit_file(fd, tmp, path, err, errlen);
}

/* Switch to `user` (and its groups) after the listeners are bound and before
 * the filters and journals are opened and any thread starts, so no thread ever
 * runs with the old credentials and start-up opens files as reloads do. */
static int drop_privileges(const char *user, char *err, size_t errlen)
{
    struct passwd *pw = getpwnam(user);
    if (!pw) {
        snprintf(err, errlen, "user %s: no such user", user);
        return -1;
    }
    if (getuid() == pw->pw_uid)
        return 0;
    if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
        setuid(pw->pw_uid) != 0) {
        snprintf(err, errlen, "cannot switch to user %s: %s", user, strerror(errno));
        return -1;
    }
    if (pw->pw_uid != 0 && setuid(0) == 0) {
        snprintf(err, errlen, "switched to user %s but could regain root", user);
        return -1;
    }
    return 0;
}

static void on_stop(evutil_socket_t sig, short what, void *arg)
{
    struct daemon *d = arg;
    (void)what;
    if (d->stopping)
        return;
    d->stopping = true;
    log_info("signal %d: shutting down", (int)sig);
    notify_send("STOPPING=1");
    event_base_loopexit(d->base, NULL);
}

/* SIGHUP returns at once: the reload runs on its own thread. */
static void on_hup(evutil_socket_t sig, short what, void *arg)
{
    struct daemon *d = arg;
    (void)sig;
    (void)what;
    log_info("SIGHUP: reload requested");
    reloader_request(d->reloader, NULL, NULL, NULL);
}

int daemon_main(int argc, char **argv)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"check-config", no_argument, NULL, 'C'},
                                         {"foreground", no_argument, NULL, 'f'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"log-level", required_argument, NULL, 'L'},
                                         {"version", no_argument, NULL, 'V'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct daemon d = {.config_path = DEFAULT_CONFIG};
    bool only_check = false, verbose = false;
    const char *level_arg = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "c:fvh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            d.config_path = optarg;
            break;
        case 'C':
            only_check = true;
            break;
        case 'f':
            break;
        case 'v':
            verbose = true;
            break;
        case 'L':
            level_arg = optarg;
            break;
        case 'V':
            printf("bloomgated %s\n", PACKAGE_VERSION);
            return 0;
        case 'h':
            fputs(usage_text, stdout);
            return 0;
        default:
            fputs("bloomgated: bad option (see bloomgated --help)\n", stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "bloomgated: unexpected argument '%s' (see bloomgated --help)\n",
                argv[optind]);
        return 2;
    }
    enum log_level forced;
    if (level_arg && log_level_parse(level_arg, &forced) != 0) {
        fprintf(stderr, "bloomgated: --log-level: '%s' is not debug, info, warn or error\n",
                level_arg);
        return 2;
    }
    if (only_check)
        return check_config(d.config_path);

    char err[2048];
    struct conf *conf = conf_load(d.config_path, err, sizeof(err));
    if (!conf) {
        log_error("%s", err);
        return 1;
    }
    log_set_level(level_arg ? forced : verbose ? LOG_DEBUG : (enum log_level)conf->log_level);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file-size limit fails the journal write, not the daemon */
    d.threads = conf->threads ? conf->threads : util_ncpus();
    log_info("bloomgated %s starting: config %s, %u worker threads", PACKAGE_VERSION,
             d.config_path, d.threads);

    int rc = 1;
    if (!(d.reg = registry_create(d.threads))) {
        log_error("out of memory");
        conf_free(conf);
        return 1;
    }
    /* Start-up order (after memcached): bind every listener (it may need
     * root: a port below 1024), write the pidfile, drop privileges, and only
     * then load the filters and open (or create) the journals, so that they
     * are opened by the same user as on every later reload; then start the
     * threads. The listeners are bound from the config, published first
     * with no filter. */
    if (reload_publish_conf(d.reg, conf, err, sizeof(err)) != 0) {
        log_error("%s", err);
        conf_free(conf);
        goto out;
    }
    const struct catalog *cat = registry_read(d.reg);
    if (!(d.srv = server_create(d.reg, d.threads, err, sizeof(err)))) {
        log_error("%s", err);
        goto out;
    }
    for (size_t i = 0; i < cat->conf->n_listen; i++)
        log_info("line protocol listening on %s (port %d)", cat->conf->listen[i].text,
                 server_line_port(d.srv, i));
    for (size_t i = 0; !cat->conf->http_off && i < cat->conf->n_http_listen; i++)
        log_info("HTTP listening on %s (port %d)", cat->conf->http_listen[i].text,
                 server_http_port(d.srv, i));
    if (cat->conf->pidfile) {
        if (write_pidfile(cat->conf->pidfile, err, sizeof(err)) != 0) {
            log_error("%s", err);
            goto out;
        }
        d.pidfile = strdup(cat->conf->pidfile);
    }
    if (cat->conf->user && drop_privileges(cat->conf->user, err, sizeof(err)) != 0) {
        log_error("%s", err);
        goto out;
    }
    if (reload_initial(d.reg, conf, 0, err, sizeof(err)) != 0) {
        log_error("%s", err);
        goto out;
    }
    cat = registry_read(d.reg); /* the catalog with the filters */
    d.base = event_base_new();
    struct event *sigs[4] = {
        evsignal_new(d.base, SIGTERM, on_stop, &d), evsignal_new(d.base, SIGINT, on_stop, &d),
        evsignal_new(d.base, SIGHUP, on_hup, &d), NULL};
    for (int i = 0; sigs[i]; i++)
        event_add(sigs[i], NULL);
    if (!(d.reloader = reloader_start(d.reg, d.config_path, d.threads))) {
        log_error("cannot start the reload thread");
        goto out_sigs;
    }
    server_set_reload(d.srv, reloader_hook, d.reloader);
    if (server_start(d.srv, err, sizeof(err)) != 0) {
        log_error("%s", err);
        goto out_sigs;
    }
    char status[128];
    snprintf(status, sizeof(status), "READY=1\nSTATUS=serving %zu filter(s)\nMAINPID=%d",
             cat->n, (int)getpid());
    notify_send(status);
    log_info("ready: serving %zu filter(s)", cat->n);

    event_base_dispatch(d.base);

    /* Shutdown order: refuse new reloads first (a RELOAD still buffered on a
     * connection is answered with its error), let the reload in progress
     * finish and answer while the workers still run, then drain the workers,
     * and only then free the reloader: until server_stop returns, a worker
     * may still call the hook with it. */
    reloader_stop(d.reloader);
    unsigned timeout = registry_read(d.reg)->conf->shutdown_timeout;
    server_stop(d.srv, timeout);
    log_info("stopped");
    rc = 0;
out_sigs:
    reloader_free(d.reloader);
    for (int i = 0; sigs[i]; i++)
        event_free(sigs[i]);
out:
    server_free(d.srv);
    if (d.base)
        event_base_free(d.base);
    if (d.pidfile) {
        unlink(d.pidfile);
        free(d.pidfile);
    }
    registry_free(d.reg);
    return rc;
}
