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

#include "conf/conf.h"
#include "bloom/format.h"
#include "store/loader.h"
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
    "  --check-config      validate the configuration, the filter files' headers, a word\n"
    "                      list's settings and the sizes of filters to create, then exit\n"
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
    struct event *sigs[4]; /* TERM, INT, HUP; NULL-terminated */
    bool stopping;
};

/* Validate a config without starting: parse it, then run on each filter the
 * checks loading would (loader_check_filter: a file's header and key kind,
 * or an empty filter's sizing), so that what passes here starts. Main thread. */
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
        if (loader_check_filter(f, err, sizeof(err)) != 0) {
            fprintf(stderr, "bloomgated: %s:%u: %s\n", path, f->line, err);
            rc = 1;
        }
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
    reloader_request(d->reloader, NULL, NULL, NULL, NULL);
}

/* What the command line asked for beyond the config path (which goes
 * straight into struct daemon). */
struct daemon_args {
    bool only_check, verbose;
    const char *level_arg; /* --log-level as given; NULL: the config's */
    enum log_level forced; /* level_arg parsed */
};

/* daemon_args_parse and the start-up steps return this to mean "go on";
 * any other value is the exit status. */
#define DAEMON_GO_ON (-1)

/* The command line, before anything is opened (main thread, single
 * threaded): --version and --help answer here, bad usage exits 2. */
static int daemon_args_parse(int argc, char **argv, struct daemon *d, struct daemon_args *a)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"check-config", no_argument, NULL, 'C'},
                                         {"foreground", no_argument, NULL, 'f'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"log-level", required_argument, NULL, 'L'},
                                         {"version", no_argument, NULL, 'V'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "c:fvh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            d->config_path = optarg;
            break;
        case 'C':
            a->only_check = true;
            break;
        case 'f':
            break;
        case 'v':
            a->verbose = true;
            break;
        case 'L':
            a->level_arg = optarg;
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
    if (a->level_arg && log_level_parse(a->level_arg, &a->forced) != 0) {
        fprintf(stderr, "bloomgated: --log-level: '%s' is not debug, info, warn or error\n",
                a->level_arg);
        return 2;
    }
    return DAEMON_GO_ON;
}

/* Bind: publish conf with no filter yet (the registry owns it from here),
 * create the server, which binds every listener from it (this may need root:
 * a port below 1024), and say where it listens. Main thread, before any
 * other thread exists. */
static int daemon_bind(struct daemon *d, struct conf *conf, char *err, size_t errlen)
{
    if (reload_publish_conf(d->reg, conf, err, errlen) != 0) {
        log_error("%s", err);
        conf_free(conf);
        return -1;
    }
    const struct catalog *cat = registry_read(d->reg);
    if (!(d->srv = server_create(d->reg, d->threads, err, errlen))) {
        log_error("%s", err);
        return -1;
    }
    server_log_ports(d->srv, cat->conf);
    return 0;
}

/* Write the pidfile (its directory may be root's), then drop to the
 * configured user. Main thread, after bind, before load. */
static int daemon_drop_privileges(struct daemon *d, char *err, size_t errlen)
{
    const struct conf *conf = registry_read(d->reg)->conf;
    if (conf->pidfile) {
        if (write_pidfile(conf->pidfile, err, errlen) != 0) {
            log_error("%s", err);
            return -1;
        }
        d->pidfile = strdup(conf->pidfile);
    }
    if (conf->user && drop_privileges(conf->user, err, errlen) != 0) {
        log_error("%s", err);
        return -1;
    }
    return 0;
}

/* Start: the signal events on the main event_base, the reload thread, then
 * the workers; READY=1 once they all run. Main thread; from here on other
 * threads run, and the reloader may be called from the workers. */
static int daemon_start(struct daemon *d, char *err, size_t errlen)
{
    const struct catalog *cat = registry_read(d->reg); /* the catalog with the filters */
    d->base = event_base_new();
    d->sigs[0] = evsignal_new(d->base, SIGTERM, on_stop, d);
    d->sigs[1] = evsignal_new(d->base, SIGINT, on_stop, d);
    d->sigs[2] = evsignal_new(d->base, SIGHUP, on_hup, d);
    for (int i = 0; d->sigs[i]; i++)
        event_add(d->sigs[i], NULL);
    if (!(d->reloader = reloader_start(d->reg, d->config_path, d->threads))) {
        log_error("cannot start the reload thread");
        return -1;
    }
    server_set_reload(d->srv, reloader_hook, d->reloader);
    if (server_start(d->srv, err, errlen) != 0) {
        log_error("%s", err);
        return -1;
    }
    char status[128];
    snprintf(status, sizeof(status), "READY=1\nSTATUS=serving %zu filter(s)\nMAINPID=%d", cat->n,
             (int)getpid());
    notify_send(status);
    log_info("ready: serving %zu filter(s)", cat->n);
    return 0;
}

/* Shutdown order: refuse new reloads first (a RELOAD still buffered on a
 * connection is answered with its error), let the reload in progress
 * finish and answer while the workers still run, then drain the workers,
 * and only then free the reloader (daemon_free): until server_stop returns,
 * a worker may still call the hook with it. Main thread, after the event
 * loop returned. */
static void daemon_shut_down(struct daemon *d)
{
    reloader_stop(d->reloader);
    unsigned timeout = registry_read(d->reg)->conf->shutdown_timeout;
    server_stop(d->srv, timeout);
    log_info("stopped");
}

/* Frees whatever start-up got to, in reverse order; safe after a failure at
 * any step. Main thread, with the workers stopped or never started. */
static void daemon_free(struct daemon *d)
{
    reloader_free(d->reloader);
    for (int i = 0; d->sigs[i]; i++)
        event_free(d->sigs[i]);
    server_free(d->srv);
    if (d->base)
        event_base_free(d->base);
    if (d->pidfile) {
        unlink(d->pidfile);
        free(d->pidfile);
    }
    registry_free(d->reg);
}

/* bloomgated: parse the command line, read the config, then start up in
 * the order below and serve until TERM or INT. Main thread. */
int daemon_main(int argc, char **argv)
{
    struct daemon d = {.config_path = DEFAULT_CONFIG};
    struct daemon_args a = {0};
    int rc = daemon_args_parse(argc, argv, &d, &a);
    if (rc != DAEMON_GO_ON)
        return rc;
    if (a.only_check)
        return check_config(d.config_path);

    char err[2048];
    struct conf *conf = conf_load(d.config_path, err, sizeof(err));
    if (!conf) {
        log_error("%s", err);
        return 1;
    }
    log_set_level(a.level_arg ? a.forced : a.verbose ? LOG_DEBUG : (enum log_level)conf->log_level);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file-size limit fails the journal write, not the daemon */
    d.threads = conf->threads ? conf->threads : util_ncpus();
    log_info("bloomgated %s starting: config %s, %u worker threads", PACKAGE_VERSION,
             d.config_path, d.threads);
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
    rc = 1;
    if (daemon_bind(&d, conf, err, sizeof(err)) != 0 ||
        daemon_drop_privileges(&d, err, sizeof(err)) != 0)
        goto out;
    if (reload_initial(d.reg, conf, 0, err, sizeof(err)) != 0) {
        log_error("%s", err);
        goto out;
    }
    if (daemon_start(&d, err, sizeof(err)) != 0)
        goto out;
    event_base_dispatch(d.base);
    daemon_shut_down(&d);
    rc = 0;
out:
    daemon_free(&d);
    return rc;
}
