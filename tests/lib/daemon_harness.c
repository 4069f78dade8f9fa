/* The integration-test harness: see daemon_harness.h. */
#include "config.h"

#include "lib/daemon_harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tool/build.h"

#define MAX_LIVE 32
#define LOG_TAIL 2000 /* bytes of the daemon's log quoted in a failure */

static char root[DH_PATH_MAX];           /* the run's directory; "" if none */
static struct dh_daemon *live[MAX_LIVE]; /* daemons dh_free has not freed yet */

/* ---- small helpers ---- */

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static const char *tmp_base(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

static bool keep_dirs(void)
{
    const char *k = getenv("DH_KEEP");
    return k && *k && strcmp(k, "0") != 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_rf(const char *path)
{
    if (path[0])
        nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* mkdtemp under parent, made absolute; 0 or -1. */
static int make_dir(const char *parent, const char *prefix, char *out)
{
    char tmpl[DH_PATH_MAX];
    if ((size_t)snprintf(tmpl, sizeof(tmpl), "%s/%s.XXXXXX", parent, prefix) >= sizeof(tmpl))
        return -1;
    if (!mkdtemp(tmpl))
        return -1;
    if (!realpath(tmpl, out)) {
        rmdir(tmpl);
        return -1;
    }
    return 0;
}

/* The end of the log, for failure messages (static buffer). */
static const char *log_tail(const struct dh_daemon *d)
{
    static char tail[LOG_TAIL + 1];
    char *all = dh_log_read(d);
    size_t n = strlen(all);
    const char *from = n > LOG_TAIL ? all + n - LOG_TAIL : all;
    snprintf(tail, sizeof(tail), "%s", from);
    free(all);
    return tail;
}

static void track(struct dh_daemon *d)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = d;
            return;
        }
    ck_abort_msg("daemon_harness: more than %d daemons at once", MAX_LIVE);
}

static void untrack(struct dh_daemon *d)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == d)
            live[i] = NULL;
}

/* In a fresh child, before exec: own process group, killed with its parent,
 * default signal mask, only fds 0-2 (sockets the test holds must not be kept
 * open by the daemon, or closing them would not close the connection).
 * Async-signal-safe calls only: the test may have threads. */
static void child_setup(pid_t parent, int out_fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127); /* the parent died before prctl took effect */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0)
        dup2(devnull, 0);
    dup2(out_fd >= 0 ? out_fd : devnull, 1);
    dup2(out_fd >= 0 ? out_fd : devnull, 2);
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
}

/* ---- the run ---- */

int dh_root_init(void)
{
    if (make_dir(tmp_base(), "bloomgate-dtests", root) != 0) {
        root[0] = '\0';
        return -1;
    }
    if (keep_dirs())
        fprintf(stderr, "daemon_harness: keeping test directories under %s\n", root);
    return 0;
}

void dh_root_cleanup(void)
{
    if (root[0] && !keep_dirs())
        rm_rf(root);
    root[0] = '\0';
}

void dh_cleanup_all(void)
{
    dh_close_all();
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i])
            dh_free(live[i]);
}

const char *dh_daemon_path(void)
{
    const char *p = getenv("BLOOMGATED");
    return p && *p ? p : "./bloomgated";
}

const char *dh_tool_path(void)
{
    const char *p = getenv("BLOOMGATE");
    return p && *p ? p : "./bloomgate";
}

/* ---- a daemon's directory, config and filters ---- */

struct dh_daemon *dh_new(void)
{
    struct dh_daemon *d = calloc(1, sizeof(*d));
    ck_assert_ptr_nonnull(d);
    d->status = -1;
    if (make_dir(root[0] ? root : tmp_base(), root[0] ? "d" : "bloomgate-dtest", d->dir) != 0) {
        free(d);
        ck_abort_msg("daemon_harness: cannot make a temporary directory under %s: %s",
                     root[0] ? root : tmp_base(), strerror(errno));
    }
    dh_path(d, "bloomgate.conf", d->conf);
    dh_path(d, "daemon.log", d->log);
    track(d);
    return d;
}

char *dh_path(const struct dh_daemon *d, const char *name, char *out)
{
    int n = snprintf(out, DH_PATH_MAX, "%s/%s", d->dir, name);
    ck_assert_msg(n > 0 && n < DH_PATH_MAX, "path too long: %s/%s", d->dir, name);
    return out;
}

void dh_write_file(struct dh_daemon *d, const char *name, const void *data, size_t len)
{
    char path[DH_PATH_MAX];
    dh_path(d, name, path);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    size_t put = fwrite(data, 1, len, f);
    int rc = fclose(f);
    ck_assert_msg(put == len && rc == 0, "cannot write %s: %s", path, strerror(errno));
}

/* Whether some line of text starts (after blanks) with the word `word`. */
static bool has_directive(const char *text, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, word, wl) == 0 && (p[wl] == ' ' || p[wl] == '\t'))
            return true;
    }
    return false;
}

void dh_write_config(struct dh_daemon *d, const char *body)
{
    size_t cap = strlen(body) * 2 + 4 * DH_PATH_MAX + 128;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    size_t len = 0;
    len += (size_t)snprintf(text + len, cap - len, "# written by daemon_harness\n");
    if (!has_directive(body, "listen"))
        len += (size_t)snprintf(text + len, cap - len, "listen 127.0.0.1:0\n");
    if (!has_directive(body, "http_listen"))
        len += (size_t)snprintf(text + len, cap - len, "http_listen off\n");
    if (!has_directive(body, "log_level")) /* connections come and go in the log */
        len += (size_t)snprintf(text + len, cap - len, "log_level debug\n");
    size_t dl = strlen(d->dir);
    for (const char *p = body; *p;) {
        if (strncmp(p, "@DIR@", 5) == 0) {
            if (len + dl + 1 >= cap) {
                cap = cap * 2 + dl;
                text = realloc(text, cap);
                ck_assert_ptr_nonnull(text);
            }
            memcpy(text + len, d->dir, dl);
            len += dl;
            p += 5;
        } else {
            if (len + 2 >= cap) {
                cap *= 2;
                text = realloc(text, cap);
                ck_assert_ptr_nonnull(text);
            }
            text[len++] = *p++;
        }
    }
    dh_write_file(d, "bloomgate.conf", text, len);
    free(text);
}

void dh_build_filter(struct dh_daemon *d, const char *name, const char *const *items, size_t n,
                     uint64_t capacity, double fpr)
{
    char list_name[DH_PATH_MAX], list[DH_PATH_MAX], out[DH_PATH_MAX];
    snprintf(list_name, sizeof(list_name), "%s.items", name);
    dh_path(d, list_name, list);
    dh_path(d, name, out);
    FILE *f = fopen(list, "w");
    ck_assert_msg(f != NULL, "cannot write %s: %s", list, strerror(errno));
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s\n", items[i]);
    ck_assert_int_eq(fclose(f), 0);

    const char *inputs[] = {list};
    struct build_opts o = {
        .inputs = inputs,
        .n_inputs = 1,
        .output = out,
        .layout = FILTER_BLOCKED,
        .capacity = capacity ? capacity : (n ? n : 1),
        .fpr = fpr > 0 ? fpr : 1e-4,
        .threads = 1,
        .seed = 0x5eedb10f,
    };
    struct build_result res;
    char err[1024];
    ck_assert_msg(build_run(&o, &res, err, sizeof(err)) == 0, "building %s: %s", out, err);
}

/* ---- starting and stopping ---- */

void dh_spawn(struct dh_daemon *d, const char *const *args)
{
    ck_assert_msg(d->pid == 0 || d->status != -1, "daemon already running (pid %d)", (int)d->pid);
    const char *argv[64];
    size_t n = 0;
    argv[n++] = dh_daemon_path();
    argv[n++] = "-c";
    argv[n++] = d->conf;
    for (size_t i = 0; args && args[i]; i++) {
        ck_assert(n < 63);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    /* The environment is built here, not in the child: between fork and exec
     * only async-signal-safe calls are allowed (no malloc). */
    extern char **environ;
    size_t n_env = 0, n_extra = 0;
    while (environ[n_env])
        n_env++;
    while (n_extra < sizeof(d->env) / sizeof(d->env[0]) && d->env[n_extra])
        n_extra++;
    const char **envp = calloc(n_env + n_extra + 1, sizeof(*envp));
    ck_assert_ptr_nonnull(envp);
    size_t k = 0;
    for (size_t i = 0; i < n_env; i++) {
        bool overridden = false;
        for (size_t e = 0; e < n_extra && !overridden; e++) {
            const char *eq = strchr(d->env[e], '=');
            size_t nl = eq ? (size_t)(eq - d->env[e]) : strlen(d->env[e]);
            overridden = strncmp(environ[i], d->env[e], nl) == 0 && environ[i][nl] == '=';
        }
        if (!overridden)
            envp[k++] = environ[i];
    }
    for (size_t e = 0; e < n_extra; e++)
        envp[k++] = d->env[e];
    envp[k] = NULL;
    int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ck_assert_msg(fd >= 0, "cannot open %s: %s", d->log, strerror(errno));
    struct stat st;
    d->log_from = fstat(fd, &st) == 0 ? (long)st.st_size : 0;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        child_setup(parent, fd);
        if (d->fsize_limit > 0) {
            struct rlimit rl = {(rlim_t)d->fsize_limit, (rlim_t)d->fsize_limit};
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        if (d->nofile_limit > 0) {
            struct rlimit rl = {(rlim_t)d->nofile_limit, (rlim_t)d->nofile_limit};
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        execve(argv[0], (char *const *)argv, (char *const *)envp);
        static const char msg[] = "daemon_harness: exec failed\n";
        ssize_t ignored = write(2, msg, sizeof(msg) - 1);
        (void)ignored;
        _exit(127);
    }
    setpgid(pid, pid); /* also here: a signal to the group must not race the child */
    close(fd);
    free(envp);
    d->pid = pid;
    d->port = 0;
    d->status = -1;
}

/* The port in the idx-th "<tag>ADDR (port N)", or 0. */
static int parse_tagged_port(const char *log, const char *tag, unsigned idx)
{
    const char *p = strstr(log, tag);
    for (unsigned i = 0; p && i < idx; i++)
        p = strstr(p + 1, tag);
    if (!p)
        return 0;
    const char *q = strstr(p, "(port ");
    const char *eol = strchr(p, '\n');
    if (!q || (eol && q > eol))
        return 0;
    return atoi(q + 6);
}

/* The port in the idx-th "line protocol listening on ADDR (port N)", or 0. */
static int parse_port(const char *log, unsigned idx)
{
    return parse_tagged_port(log, "line protocol listening on ", idx);
}

int dh_port(const struct dh_daemon *d, unsigned idx)
{
    char *log = dh_log_read(d);
    int port = parse_port(log, idx);
    free(log);
    return port;
}

int dh_tagged_port(const struct dh_daemon *d, const char *tag, unsigned idx)
{
    char *log = dh_log_read(d);
    int port = parse_tagged_port(log, tag, idx);
    free(log);
    return port;
}

int dh_http_port(const struct dh_daemon *d, unsigned idx)
{
    char *log = dh_log_read(d);
    int port = parse_tagged_port(log, "HTTP listening on ", idx);
    free(log);
    return port;
}

int dh_resp_port(const struct dh_daemon *d, unsigned idx)
{
    char *log = dh_log_read(d);
    int port = parse_tagged_port(log, "Redis protocol listening on ", idx);
    free(log);
    return port;
}

int dh_wait_ready(struct dh_daemon *d, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        char *log = dh_log_read(d);
        bool ready = strstr(log, " ready: ") != NULL;
        if (ready)
            d->port = parse_port(log, 0);
        free(log);
        if (ready)
            return d->port > 0 ? 0 : -1;
        if (!dh_alive(d) || now_ms() >= deadline)
            return -1;
        sleep_ms(10);
    }
}

void dh_start(struct dh_daemon *d, const char *const *args)
{
    dh_spawn(d, args);
    if (dh_wait_ready(d, DH_TIMEOUT_MS) != 0)
        ck_abort_msg("bloomgated did not become ready (%s); its log:\n%s",
                     dh_alive(d) ? "timed out" : "it exited", log_tail(d));
}

bool dh_alive(struct dh_daemon *d)
{
    if (d->pid == 0 || d->status != -1)
        return false;
    int st;
    pid_t r = waitpid(d->pid, &st, WNOHANG);
    if (r == d->pid) {
        d->status = st;
        return false;
    }
    return r == 0;
}

int dh_wait_exit(struct dh_daemon *d, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    while (dh_alive(d)) {
        if (now_ms() >= deadline)
            return -1;
        sleep_ms(5);
    }
    return d->status;
}

int dh_signal(struct dh_daemon *d, int sig)
{
    if (!dh_alive(d))
        return -1;
    return kill(d->pid, sig);
}

/* Whether every thread of pid is stopped (state T in /proc/PID/task/TID/stat). */
static bool all_stopped(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return false;
    bool stopped = true;
    struct dirent *e;
    while (stopped && (e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        char stat_path[320], buf[512];
        snprintf(stat_path, sizeof(stat_path), "/proc/%d/task/%s/stat", (int)pid, e->d_name);
        FILE *f = fopen(stat_path, "r");
        if (!f)
            continue; /* the thread is gone */
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        const char *rp = strrchr(buf, ')'); /* "TID (COMM) STATE ..." */
        stopped = rp && (rp[2] == 'T' || rp[2] == 't');
    }
    closedir(dir);
    return stopped;
}

int dh_freeze(struct dh_daemon *d)
{
    if (dh_signal(d, SIGSTOP) != 0)
        return -1;
    long long deadline = now_ms() + DH_TIMEOUT_MS;
    while (!all_stopped(d->pid)) {
        if (now_ms() >= deadline)
            return -1;
        sleep_ms(1);
    }
    return 0;
}

int dh_thaw(struct dh_daemon *d)
{
    return dh_signal(d, SIGCONT);
}

/* A daemon that did not exit in time: print every thread's stack (gdb, if
 * installed) to stderr, into the test's log, before it is killed, so a hang
 * can be read after the fact. Test thread. */
static void dump_stacks(const struct dh_daemon *d)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd),
             "command -v gdb >/dev/null && gdb -p %d -batch -ex 'thread apply all bt' 2>/dev/null "
             "| grep -E '^(#|Thread)' >&2",
             (int)d->pid);
    fprintf(stderr, "bloomgated (pid %d) did not exit in time; its threads:\n", (int)d->pid);
    if (system(cmd) != 0)
        fprintf(stderr, "(no stacks: gdb missing or could not attach)\n");
}

/* The pid of the process tracing pid (TracerPid in /proc/PID/status), 0 if
 * none, and in *ppid that tracer's parent. */
static pid_t tracer_of(pid_t pid, pid_t *ppid)
{
    char path[64], line[256];
    pid_t tracer = 0;
    *ppid = 0;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "TracerPid: %d", &tracer) == 1)
            break;
    fclose(f);
    if (tracer <= 0)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)tracer);
    if ((f = fopen(path, "r"))) {
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "PPid: %d", ppid) == 1)
                break;
        fclose(f);
    }
    return tracer;
}

/* Whether a daemon that has not exited is stuck in LeakSanitizer's leak
 * check, not in bloomgate: at exit, after main has returned and every
 * bloomgate thread is gone, LSan clones a tracer (a child of the daemon)
 * that ptrace-stops the process to scan it, and that tracer sporadically
 * deadlocks on a sanitizer mutex (google/sanitizers#1330; seen here about
 * once in several hundred daemon exits under heavy load, with gdb unable
 * to attach because the tracer already has). Test thread. */
static bool stuck_in_lsan(const struct dh_daemon *d)
{
    pid_t ppid;
    pid_t tracer = tracer_of(d->pid, &ppid);
    if (tracer == 0 || ppid != d->pid)
        return false;
    fprintf(stderr,
            "bloomgated (pid %d) is held by its own LeakSanitizer tracer (pid %d) after main "
            "returned: the sanitizer's stop-the-world hang, not bloomgate's; killed, and taken "
            "as an exit with status 0 (no leak report could be made)\n",
            (int)d->pid, (int)tracer);
    return true;
}

int dh_stop(struct dh_daemon *d, int timeout_ms)
{
    if (d->pid == 0)
        return -1;
    if (dh_alive(d)) {
        kill(d->pid, SIGTERM);
        kill(d->pid, SIGCONT); /* in case it was frozen */
        if (dh_wait_exit(d, timeout_ms) == -1) {
            bool lsan = stuck_in_lsan(d);
            if (!lsan)
                dump_stacks(d);
            killpg(d->pid, SIGKILL);
            int st;
            if (waitpid(d->pid, &st, 0) == d->pid)
                d->status = lsan ? 0 : st;
        }
    }
    return d->status;
}

static void assert_exit0(const struct dh_daemon *d, int st, const char *what)
{
    dh_assert_log_clean(d);
    ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "bloomgated did not exit 0 on %s (status 0x%x); its log:\n%s", what, st,
                  log_tail(d));
}

void dh_stop_ok(struct dh_daemon *d)
{
    assert_exit0(d, dh_stop(d, DH_EXIT_TIMEOUT_MS), "SIGTERM");
}

void dh_restart(struct dh_daemon *d)
{
    dh_stop_ok(d);
    dh_start(d, NULL);
}

void dh_expect_exit0(struct dh_daemon *d, const char *what)
{
    assert_exit0(d, dh_wait_exit(d, DH_EXIT_TIMEOUT_MS), what);
}

void dh_finish(struct dh_daemon *d)
{
    dh_stop_ok(d);
    dh_free(d);
}

void dh_free(struct dh_daemon *d)
{
    if (!d)
        return;
    if (dh_alive(d)) {
        killpg(d->pid, SIGKILL);
        int st;
        if (waitpid(d->pid, &st, 0) == d->pid)
            d->status = st;
    }
    if (!keep_dirs())
        rm_rf(d->dir);
    untrack(d);
    free(d);
}

/* ---- the log ---- */

static char *read_log(const struct dh_daemon *d, long from)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = fopen(d->log, "rb");
    if (f && fseek(f, from, SEEK_SET) != 0) {
        fclose(f);
        f = NULL;
    }
    if (f) {
        size_t cap = 0;
        for (;;) {
            if (len + 4096 + 1 > cap) {
                cap = cap ? cap * 2 : 8192;
                char *nb = realloc(buf, cap);
                if (!nb)
                    break;
                buf = nb;
            }
            size_t n = fread(buf + len, 1, cap - len - 1, f);
            len += n;
            if (n == 0)
                break;
        }
        fclose(f);
    }
    if (!buf)
        buf = malloc(1);
    ck_assert_ptr_nonnull(buf);
    buf[len] = '\0';
    return buf;
}

char *dh_log_read(const struct dh_daemon *d)
{
    return read_log(d, d->log_from);
}

bool dh_log_contains(const struct dh_daemon *d, const char *needle)
{
    char *log = dh_log_read(d);
    bool found = strstr(log, needle) != NULL;
    free(log);
    return found;
}

/* The first sanitizer report in log, or NULL. */
static const char *sanitizer_report(const char *log)
{
    static const char *const bad[] = {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                                      "runtime error:"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *hit = strstr(log, bad[i]);
        if (hit)
            return hit;
    }
    return NULL;
}

const char *dh_explain(struct dh_daemon *d, const char *what)
{
    static char why[LOG_TAIL + 256];
    char *log = d ? read_log(d, 0) : NULL;
    const char *report = log ? sanitizer_report(log) : NULL;
    if (report) /* the daemon may still be writing it, and not dead yet */
        snprintf(why, sizeof(why), "%s; the daemon's log holds a sanitizer report:\n%.*s", what,
                 LOG_TAIL, report);
    else if (d && d->pid && !dh_alive(d))
        snprintf(why, sizeof(why), "%s; the daemon died (status 0x%x); its log:\n%s", what,
                 d->status, log_tail(d));
    else
        snprintf(why, sizeof(why), "%s", what);
    free(log);
    return why;
}

void dh_assert_log_clean(const struct dh_daemon *d)
{
    char *log = read_log(d, 0);
    const char *hit = sanitizer_report(log);
    if (hit) {
        char excerpt[LOG_TAIL + 1];
        snprintf(excerpt, sizeof(excerpt), "%s", hit);
        free(log);
        ck_abort_msg("sanitizer report in the daemon's log %s:\n%s", d->log, excerpt);
    }
    free(log);
}

long dh_rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

int dh_run(const char *const *argv, const char *out_path, int timeout_ms)
{
    int fd = -1;
    if (out_path) {
        fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ck_assert_msg(fd >= 0, "cannot open %s: %s", out_path, strerror(errno));
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        child_setup(parent, fd);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid);
    if (fd >= 0)
        close(fd);
    long long deadline = now_ms() + timeout_ms;
    int st;
    for (;;) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (now_ms() >= deadline) {
            killpg(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        sleep_ms(5);
    }
}

double dh_cpu_seconds(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* Fields after the command (which may hold spaces): from the last ')'. */
    char *p = strrchr(buf, ')');
    unsigned long ut, st;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* ---- the test program ---- */

TCase *dh_add_case(Suite *s, const char *name, int timeout_s, const TTest *const *tests)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, NULL, dh_cleanup_all);
    tcase_set_timeout(tc, timeout_s);
    for (size_t i = 0; tests[i]; i++)
        tcase_add_test(tc, tests[i]);
    suite_add_tcase(s, tc);
    return tc;
}

int dh_run_suite(Suite *s)
{
    if (dh_root_init() != 0) {
        fprintf(stderr, "cannot make the run's temporary directory\n");
        return EXIT_FAILURE;
    }
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    dh_root_cleanup();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
