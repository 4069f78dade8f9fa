#!/usr/bin/python3
"""Replicas behind a real HAProxy (Debian's), all on 127.0.0.1 (docs/scaling.md).

Two bloomgated replicas, each with its own directory, config and ports, sit
behind one HAProxy: a TCP-mode frontend for the line protocol (leastconn, a
PING/PONG health check) and an HTTP-mode one for the API (GET /healthz
check, retries of failed requests on the other replica). Clients pipeline
MCHECK and send HTTP checks through it the whole time, and:

1. scripts/ship.sh rolls a new list onto both replicas under that load:
   0 failed requests, and afterwards every client connection sees the new
   list; a second run changes nothing.
2. a ship of a corrupt file stops at the first replica, says why, and leaves
   both serving the list they had.
3. one replica killed with SIGKILL: HAProxy marks it down, new connections go
   to the survivor, the only line requests that fail are those in flight on
   the killed replica's connections (counted), HTTP requests are retried by
   HAProxy (0 fail); restarted, it comes back into rotation by itself.
4. the ssh transport's command lines, run by `sh -c` as sshd would.
5. a replica killed, through nginx's `upstream` (http and stream), the configs
   docs/scaling.md gives.

Counts are asserted, never timings; every wait polls with a long deadline.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import http.client

BG = os.environ.get("BLOOMGATE", "./bloomgate")
BGD = os.environ.get("BLOOMGATED", "./bloomgated")
SRC = os.environ.get("srcdir", ".")
SHIP = os.path.join(SRC, "scripts", "ship.sh")
DEADLINE = 90  # seconds for anything we wait for; generous, the machine is shared
DEPTH = 8      # MCHECKs in flight per line connection
N_OLD, N_NEW = 2000, 2000

failures = []
passes = 0


def check(cond, what):
    global passes
    if cond:
        passes += 1
    else:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr, flush=True)


def wait_for(pred, what, deadline=DEADLINE):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.1)
    raise RuntimeError("timed out waiting for " + what)


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def line_request(port, line, timeout=30):
    """One request on a fresh connection; the reply line, or None."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(line.encode() + b"\r\n")
            buf = b""
            while b"\n" not in buf:
                chunk = s.recv(65536)
                if not chunk:
                    return None
                buf += chunk
            return buf.split(b"\n", 1)[0].rstrip(b"\r").decode()
    except OSError:
        return None


def info(port, name="urls"):
    r = line_request(port, "INFO " + name)
    try:
        return json.loads(r) if r else None
    except ValueError:
        return None


class Replica:
    def __init__(self, root, name, bloom):
        self.dir = os.path.join(root, name)
        os.mkdir(self.dir)
        self.name = name
        self.path = os.path.join(self.dir, "urls.bloom")
        shutil.copyfile(bloom, self.path)
        self.line, self.http = free_ports(2)
        self.pidfile = os.path.join(self.dir, "bloomgated.pid")
        self.conf = os.path.join(self.dir, "bloomgate.conf")
        with open(self.conf, "w") as f:
            f.write(f"listen 127.0.0.1:{self.line}\nhttp_listen 127.0.0.1:{self.http}\n"
                    f"threads 1\npidfile {self.pidfile}\nlog_level warn\n"
                    f"filter urls {{\n    file {self.path}\n    journal off\n}}\n")
        self.proc = None

    def start(self):
        log = open(os.path.join(self.dir, "log"), "a")
        self.proc = subprocess.Popen([BGD, "-c", self.conf], stdout=log, stderr=log)
        log.close()
        wait_for(lambda: self.proc.poll() is not None or line_request(self.line, "PING", 5) == "PONG",
                 self.name + " to answer PING")
        if self.proc.poll() is not None:
            raise RuntimeError(self.name + " exited: " + open(os.path.join(self.dir, "log")).read())
        return self.proc.pid

    def stop(self):
        """SIGTERM; the exit status (0 is a clean stop), None if it was not running."""
        if not self.proc or self.proc.poll() is not None:
            return None
        self.proc.terminate()
        try:
            return self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "killed after 30 s"

    def log_text(self):
        with open(os.path.join(self.dir, "log"), errors="replace") as f:
            return f.read()

    def spec(self, how):
        # r1 reloads by SIGHUP through its pidfile and is asked over the line
        # protocol; r2 by POST /v1/reload and asked over HTTP: both paths.
        if how == "hup":
            return f"path={self.path},reload=hup:{self.pidfile},line=127.0.0.1:{self.line}"
        return f"path={self.path},reload=http:127.0.0.1:{self.http}"


HAPROXY_CONF = """global
    maxconn 2000
    stats socket {sock} mode 600 level admin
defaults
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    timeout check 5s
    retries 3
    option redispatch 1
frontend bg_line
    mode tcp
    bind 127.0.0.1:{line}
    default_backend bg_line
backend bg_line
    mode tcp
    balance leastconn
    option tcp-check
    tcp-check send "PING\\r\\n"
    tcp-check expect string PONG
{line_servers}
frontend bg_http
    mode http
    bind 127.0.0.1:{http}
    default_backend bg_http
backend bg_http
    mode http
    balance leastconn
    option httpchk GET /healthz
    http-check expect status 200
    retry-on all-retryable-errors
{http_servers}
"""


class HAProxy:
    def __init__(self, root, replicas):
        self.sock = os.path.join(root, "haproxy.sock")
        self.line, self.http = free_ports(2)
        srv = "    server {n} 127.0.0.1:{p} check inter 300ms fall 2 rise 2"
        self.conf = os.path.join(root, "haproxy.cfg")
        with open(self.conf, "w") as f:
            f.write(HAPROXY_CONF.format(
                sock=self.sock, line=self.line, http=self.http,
                line_servers="\n".join(srv.format(n=r.name, p=r.line) for r in replicas),
                http_servers="\n".join(srv.format(n=r.name, p=r.http) for r in replicas)))
        self.log = os.path.join(root, "haproxy.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(["haproxy", "-f", self.conf, "-db"], stdout=log,
                                         stderr=subprocess.STDOUT)

    def status(self):
        """{(backend, server): status} from `show stat`."""
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.settimeout(10)
                s.connect(self.sock)
                s.sendall(b"show stat\n")
                data = b""
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
        except OSError:
            return {}
        out = {}
        lines = data.decode().splitlines()
        if not lines:
            return {}
        cols = lines[0].lstrip("# ").split(",")
        for ln in lines[1:]:
            row = dict(zip(cols, ln.split(",")))
            if row.get("svname") not in ("FRONTEND", "BACKEND", None):
                out[(row["pxname"], row["svname"])] = row.get("status", "")
        return out

    def wait_status(self, server, want):
        def ok():
            st = self.status()
            return all(st.get((b, server), "").startswith(want) for b in ("bg_line", "bg_http"))
        return wait_for(ok, f"HAProxy to see {server} {want}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


NGINX_CONF = """load_module /usr/lib/nginx/modules/ngx_stream_module.so;
pid {root}/nginx.pid;
error_log {root}/nginx.err warn;
events {{ worker_connections 512; }}
stream {{
    upstream bloomgate_line {{
        least_conn;
{line_servers}
    }}
    server {{
        listen 127.0.0.1:{line};
        proxy_pass bloomgate_line;
        proxy_connect_timeout 2s;
        proxy_next_upstream on;
        proxy_timeout 300s;
    }}
}}
http {{
    access_log off;
    client_body_temp_path {root}/nginx-body;
    proxy_temp_path {root}/nginx-proxy;
    upstream bloomgate_http {{
        least_conn;
{http_servers}
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{http};
        location / {{
            proxy_pass http://bloomgate_http;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_next_upstream error timeout http_502 http_503;
            proxy_next_upstream_tries 2;
        }}
    }}
}}
"""


class Nginx:
    """nginx (Debian's nginx-light and libnginx-mod-stream) in front of the same
    replicas: the `upstream` equivalents docs/scaling.md gives. Open-source
    nginx has no active health check: a replica is skipped for fail_timeout
    after max_fails failed attempts."""

    def __init__(self, root, replicas):
        self.line, self.http = free_ports(2)
        srv = "        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;"
        self.conf = os.path.join(root, "nginx.conf")
        with open(self.conf, "w") as f:
            f.write(NGINX_CONF.format(
                root=root, line=self.line, http=self.http,
                line_servers="\n".join(srv.format(p=r.line) for r in replicas),
                http_servers="\n".join(srv.format(p=r.http) for r in replicas)))
        self.log = os.path.join(root, "nginx.err")
        self.proc = subprocess.Popen(["nginx", "-c", self.conf, "-p", root, "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_for(lambda: self.proc.poll() is not None or line_request(self.line, "PING", 5) == "PONG",
                 "nginx to pass a PING")
        if self.proc.poll() is not None:
            raise RuntimeError("nginx exited: " + open(self.log).read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def old_item(i):
    return f"http://old{i % N_OLD}.example/p"


def new_item(i):
    return f"http://new{i % N_NEW}.example/p"


class Load:
    """Line clients pipelining MCHECK and HTTP clients, through HAProxy.

    Each line connection first asks INFO (whose "pid" says which replica it
    reached), then keeps DEPTH MCHECKs in flight. A connection that breaks
    counts its unanswered requests as failed, against that replica's pid,
    and reconnects. `mark()` starts a new phase: requests sent after it must
    see the new list (a YES for the new items)."""

    def __init__(self, hap, line_conns=4, http_conns=2):
        self.hap = hap
        self.lock = threading.Lock()
        self.stop_ev = threading.Event()
        self.phase = 0
        self.expect_new = False
        self.ok = 0
        self.failed_line = {}   # pid -> requests lost with a connection to it
        self.broken = {}        # pid -> connections that broke
        # Connections that broke before INFO answered (which replica is not
        # known; the INFO is lost): the phase each was opened in.
        self.no_info = []
        self.failed_http = 0
        self.wrong = []         # an old item answered NO, or garbage
        self.stale = 0          # after mark(): a new item answered NO
        self.after = {}         # worker -> requests answered, sent after mark()
        self.conns = []         # (phase, pid) of every line connection made
        self.threads = [threading.Thread(target=self.line_worker, args=(i,), daemon=True)
                        for i in range(line_conns)]
        self.threads += [threading.Thread(target=self.http_worker, args=(100 + i,), daemon=True)
                         for i in range(http_conns)]
        for t in self.threads:
            t.start()

    def mark(self, expect_new):
        with self.lock:
            self.phase += 1
            self.expect_new = expect_new
            self.after = {}

    def count(self, worker, phase, old_yes, new_yes):
        with self.lock:
            self.ok += 1
            if not old_yes:
                self.wrong.append(f"worker {worker}: an old item answered NO")
            if phase == self.phase and phase > 0:
                self.after[worker] = self.after.get(worker, 0) + 1
                if self.expect_new and not new_yes:
                    self.stale += 1

    def line_worker(self, w):
        n = w * 100000
        while not self.stop_ev.is_set():
            try:
                s = socket.create_connection(("127.0.0.1", self.hap.line), timeout=60)
            except OSError:
                time.sleep(0.05)
                continue
            pid = None
            inflight = []
            opened = self.phase
            try:
                f = s.makefile("rb")
                s.sendall(b"INFO\r\n")
                pid = json.loads(f.readline())["pid"]
                with self.lock:
                    self.conns.append((self.phase, pid))
                while not self.stop_ev.is_set():
                    batch = []
                    for _ in range(DEPTH):
                        n += 1
                        batch.append(f"MCHECK urls {old_item(n)} {old_item(n + 7)} "
                                     f"{new_item(n)} {new_item(n + 11)}\r\n")
                    phase = self.phase
                    inflight = [phase] * DEPTH
                    s.sendall("".join(batch).encode())
                    while inflight:
                        ln = f.readline()
                        if not ln:
                            raise ConnectionError("closed")
                        words = ln.decode().split()
                        if len(words) != 4 or any(x not in ("YES", "NO") for x in words):
                            with self.lock:
                                self.wrong.append(f"worker {w}: reply {ln!r}")
                            inflight.pop()
                            continue
                        self.count(w, inflight.pop(), words[:2] == ["YES", "YES"],
                                   words[2:] == ["YES", "YES"])
            except (OSError, ValueError, KeyError, ConnectionError):
                with self.lock:
                    if pid is None:
                        self.no_info.append(opened)
                    else:
                        self.failed_line[pid] = self.failed_line.get(pid, 0) + len(inflight)
                        self.broken[pid] = self.broken.get(pid, 0) + 1
            finally:
                s.close()

    def http_worker(self, w):
        n = w * 100000
        conn = None
        while not self.stop_ev.is_set():
            n += 1
            item = old_item(n) if n % 2 else new_item(n)
            phase = self.phase
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.hap.http, timeout=60)
                conn.request("GET", "/v1/filters/urls/check?item=" + item)
                resp = conn.getresponse()
                body = resp.read()
                if resp.status != 200:
                    raise OSError(f"status {resp.status}: {body[:200]!r}")
                present = json.loads(body)["present"]
                if n % 2:
                    self.count(w, phase, present, True)
                else:
                    self.count(w, phase, True, present)
            except (OSError, ValueError, KeyError, http.client.HTTPException) as e:
                with self.lock:
                    self.failed_http += 1
                    self.wrong.append(f"http worker {w}: {e}")
                if conn:
                    conn.close()
                conn = None
        if conn:
            conn.close()

    def wait_answered(self, per_worker, what):
        """Every worker has had `per_worker` requests answered since mark()."""
        def done():
            with self.lock:
                return (len(self.after) == len(self.threads)
                        and min(self.after.values()) >= per_worker)
        wait_for(done, what)

    def stop(self):
        self.stop_ev.set()
        for t in self.threads:
            t.join(DEADLINE)

    def failed(self):
        with self.lock:
            return sum(self.failed_line.values()) + len(self.no_info) + self.failed_http


def build(root, name, items):
    src = os.path.join(root, name + ".txt")
    with open(src, "w") as f:
        f.write("\n".join(items) + "\n")
    out = os.path.join(root, name + ".bloom")
    subprocess.run([BG, "build", "--seed", "11", "--capacity", "20000", "--fpr", "1e-6",
                    "-o", out, src], check=True, stdout=subprocess.DEVNULL)
    r = subprocess.run([BG, "info", out], check=True, capture_output=True, text=True)
    return out, json.loads(r.stdout)["checksum"]


def ship(bloom, replicas, *extra):
    specs = [replicas[0].spec("hup"), replicas[1].spec("http")]
    r = subprocess.run(["bash", SHIP, "--bloomgate", BG, "--timeout", str(DEADLINE),
                        *extra, "urls", bloom, *specs], capture_output=True, text=True)
    print(r.stdout + r.stderr, end="", flush=True)
    return r


def test_rolling_ship(root, reps, hap, new_bloom, new_sum, old_sum):
    load = Load(hap)
    load.mark(False)  # phase 1: before the ship (new items are NO)
    load.wait_answered(20, "load to run before the ship")
    r = ship(new_bloom, reps)
    check(r.returncode == 0, f"ship exit status {r.returncode}")
    for rep in reps:
        i = info(rep.line)
        check(i and i["checksum"] == new_sum and i["generation"] == 2,
              f"{rep.name} serves {i and i['checksum']} gen {i and i['generation']}")
    load.mark(True)  # phase 2: after the ship, every client must see the new list
    load.wait_answered(50, "every client to be answered after the ship")
    load.stop()
    print(f"rolling ship: {load.ok} requests answered, {load.failed()} failed, "
          f"{load.stale} stale after the ship, line connections {len(load.conns)}", flush=True)
    check(load.failed() == 0 and not load.broken,
          f"failed requests during the ship: line {load.failed_line}, broken {load.broken}, "
          f"before INFO {load.no_info}, http {load.failed_http}; {load.wrong[:3]}")
    check(not load.wrong, f"wrong answers: {load.wrong[:5]}")
    check(load.stale == 0, f"{load.stale} answers after the ship without the new list")
    check(len({p for _, p in load.conns}) == 2, f"line connections reached {load.conns}")
    # Idempotent: a second run touches nothing.
    r = ship(new_bloom, reps)
    check(r.returncode == 0 and r.stdout.count("already serves") == 2,
          f"second ship: status {r.returncode}: {r.stdout}")
    for rep in reps:
        i = info(rep.line)
        check(i and i["generation"] == 2, f"{rep.name}: generation after a second ship {i}")
        check(not [n for n in os.listdir(rep.dir) if "ship" in n],
              f"{rep.name}: leftovers {os.listdir(rep.dir)}")


def test_corrupt_ship(root, reps, cur_bloom, cur_sum):
    bad, bad_sum = build(root, "third", [f"third{i}.example" for i in range(100)])
    with open(bad, "r+b") as f:  # one payload byte of the first shard
        f.seek(4096 + 17)
        b = f.read(1)
        f.seek(4096 + 17)
        f.write(bytes([b[0] ^ 0x40]))
    r = ship(bad, reps)
    check(r.returncode != 0, "a corrupt ship succeeded")
    check("replica 1/2" in r.stderr and "step 3 (verify)" in r.stderr,
          f"the report does not name replica 1, step 3: {r.stderr}")
    check("checksum mismatch" in r.stderr, f"the report does not say why: {r.stderr}")
    check("replicas 2 to 2 were not touched" in r.stderr, f"untouched replicas: {r.stderr}")
    cur = open(cur_bloom, "rb").read()
    for rep in reps:
        i = info(rep.line)
        check(i and i["checksum"] == cur_sum and i["generation"] == 2,
              f"{rep.name} after a corrupt ship: {i}")
        check(open(rep.path, "rb").read() == cur, f"{rep.name}: the live file changed")
        check(not [n for n in os.listdir(rep.dir) if "ship" in n],
              f"{rep.name}: leftovers {os.listdir(rep.dir)}")
        check(line_request(rep.line, f"CHECK urls {new_item(5)}") == "YES",
              f"{rep.name} no longer answers the current list")


def test_reload_fails(root, reps, cur_bloom, cur_sum):
    """A reload that cannot be sent (the pidfile names no process): the new
    file is renamed back out, the replica keeps serving what it had."""
    other, other_sum = build(root, "fourth", [f"fourth{i}.example" for i in range(100)])
    r1 = reps[0]
    spec = f"path={r1.path},reload=hup:{r1.dir}/no-such.pid,line=127.0.0.1:{r1.line}"
    r = subprocess.run(["bash", SHIP, "--bloomgate", BG, "urls", other, spec,
                        reps[1].spec("http")], capture_output=True, text=True)
    print(r.stdout + r.stderr, end="", flush=True)
    check(r.returncode != 0 and "step 5 (reload)" in r.stderr and "rolled back" in r.stderr,
          f"a failed reload: status {r.returncode}: {r.stderr}")
    check(open(r1.path, "rb").read() == open(cur_bloom, "rb").read(),
          "r1: the live file is not the previous one after a rollback")
    for rep in reps:
        i = info(rep.line)
        check(i and i["checksum"] == cur_sum and i["generation"] == 2, f"{rep.name}: {i}")
        check(not [n for n in os.listdir(rep.dir) if "ship" in n],
              f"{rep.name}: leftovers {os.listdir(rep.dir)}")


SSH_HERE = """#!/bin/sh
# A stand-in for ssh in the test: `ssh-here [-o X] HOST COMMAND...` runs the
# command with sh -c, as sshd runs it with the user's shell (dash here), its
# standard input passed on; HOST is only logged.
while [ $# -gt 0 ]; do case $1 in -o) shift 2 ;; -*) shift ;; *) break ;; esac; done
echo "$1" >>"$(dirname "$0")/ssh-hosts"
shift
exec sh -c "$*"
"""


def test_ship_over_ssh(root, reps, old_sum):
    """The ssh transport's command lines, run by sh -c as sshd would (no sshd
    here): the remote quoting and the same steps."""
    fifth, fifth_sum = build(root, "fifth", [old_item(i) for i in range(N_OLD)] +
                             [new_item(i) for i in range(N_NEW)] + ["fifth.example"])
    ssh = os.path.join(root, "ssh-here")
    with open(ssh, "w") as f:
        f.write(SSH_HERE)
    os.chmod(ssh, 0o755)
    specs = [f"host=bg{i + 1}.example," + rep.spec("hup" if i == 0 else "http")
             for i, rep in enumerate(reps)]
    r = subprocess.run(["bash", SHIP, "--bloomgate", BG, "--ssh", ssh, "urls", fifth, *specs],
                       capture_output=True, text=True)
    print(r.stdout + r.stderr, end="", flush=True)
    check(r.returncode == 0, f"ship over the ssh stand-in: status {r.returncode}")
    hosts = open(os.path.join(root, "ssh-hosts")).read().split()
    check(set(hosts) == {"bg1.example", "bg2.example"}, f"ssh was asked for {set(hosts)}")
    for rep in reps:
        i = info(rep.line)
        check(i and i["checksum"] == fifth_sum and i["generation"] == 3,
              f"{rep.name} after the ssh ship: {i}")
        check(line_request(rep.line, "CHECK urls fifth.example") == "YES",
              f"{rep.name} does not answer from the shipped file")


def test_kill(reps, hap):
    r1, r2 = reps
    load = Load(hap, line_conns=6, http_conns=2)
    load.mark(True)
    load.wait_answered(20, "load before the kill")
    with load.lock:
        on_r1 = sum(1 for _, p in load.conns if p == r1.proc.pid)
    check(on_r1 > 0, f"no line connection reached r1 before the kill: {load.conns}")
    killed = r1.proc.pid
    t0 = time.monotonic()
    r1.proc.send_signal(signal.SIGKILL)
    r1.proc.wait()
    load.mark(True)  # phase 2: every connection made from here on was made after the kill
    hap.wait_status("r1", "DOWN")
    print(f"kill: HAProxy marked r1 down {time.monotonic() - t0:.1f} s after SIGKILL "
          f"(check inter 300ms fall 2)", flush=True)
    load.wait_answered(30, "load after r1 went down")
    # New connections go to the survivor.
    pids = {json.loads(line_request(hap.line, "INFO"))["pid"] for _ in range(4)}
    check(pids == {r2.proc.pid}, f"new connections after the kill reached {pids}, "
          f"survivor {r2.proc.pid}")
    with load.lock:
        failed = dict(load.failed_line)
        broken = dict(load.broken)
        no_info = list(load.no_info)
        after_conns = [p for ph, p in load.conns if ph >= 2]
    print(f"kill: {on_r1} line connections were on r1; {broken.get(killed, 0)} broke, "
          f"losing {failed.get(killed, 0)} requests in flight (at most {DEPTH} each); "
          f"{len(no_info)} reconnections reached r1 while it died; "
          f"HTTP failed {load.failed_http}; failures by replica {failed}", flush=True)
    check(set(failed) <= {killed}, f"line requests failed on other than the killed replica: {failed}")
    # A worker whose connection broke reconnects at once: while the killed
    # process is torn down (long for a sanitizer build) its listening socket
    # still completes handshakes, and such a connection closes before its
    # first answer. That must happen only before the kill completed.
    check(all(ph < 2 for ph in no_info), f"a connection made after the kill broke: {no_info}")
    check(broken.get(killed, 0) <= on_r1, f"broken {broken} > connections on r1 {on_r1}")
    check(failed.get(killed, 0) <= DEPTH * broken.get(killed, 0), f"lost {failed} > in flight")
    check(load.failed_http == 0, f"HTTP requests failed despite retry-on: {load.wrong[:3]}")
    check(killed not in after_conns, "a connection made after the kill reached r1")
    # (Every worker reconnected: wait_answered above needs answers from each
    # after the kill. Counting reconnections here would race: a worker may
    # reconnect before mark() runs.)
    # Restarted, it comes back by itself; leastconn sends it the next connection.
    new_pid = r1.start()
    hap.wait_status("r1", "UP")
    got = json.loads(line_request(hap.line, "INFO"))["pid"]
    check(got == new_pid, f"a new connection after r1 came back reached {got}, r1 is {new_pid}")
    load.stop()
    check(not [w for w in load.wrong if not w.startswith("http worker")],
          f"wrong answers: {load.wrong[:5]}")


def test_nginx(root, reps):
    """The nginx configs under load, a replica killed: line requests in flight
    on it fail (counted), HTTP requests are passed to the other replica
    (proxy_next_upstream), and the restarted replica is used again."""
    r1, r2 = reps
    ngx = Nginx(root, reps)
    try:
        load = Load(ngx, line_conns=4, http_conns=2)
        load.mark(True)
        load.wait_answered(20, "load through nginx")
        with load.lock:
            on_r2 = sum(1 for _, p in load.conns if p == r2.proc.pid)
        check(on_r2 > 0, f"no line connection through nginx reached r2: {load.conns}")
        killed = r2.proc.pid
        r2.proc.send_signal(signal.SIGKILL)
        r2.proc.wait()
        load.mark(True)
        load.wait_answered(30, "load through nginx after the kill")
        with load.lock:
            failed = dict(load.failed_line)
            broken = dict(load.broken)
            no_info = list(load.no_info)
            after_conns = [p for ph, p in load.conns if ph >= 2]
        print(f"nginx kill: {on_r2} line connections were on r2; {broken.get(killed, 0)} broke, "
              f"losing {failed.get(killed, 0)} requests in flight; {len(no_info)} reconnections "
              f"reached r2 while it died; HTTP failed {load.failed_http}", flush=True)
        check(set(failed) <= {killed}, f"nginx: line requests failed elsewhere: {failed}")
        check(all(ph < 2 for ph in no_info), f"nginx: a connection made after the kill broke")
        check(failed.get(killed, 0) <= DEPTH * broken.get(killed, 0), f"nginx: lost {failed}")
        check(killed not in after_conns, "nginx: a connection made after the kill reached r2")
        check(load.failed_http == 0, f"nginx: HTTP requests failed: {load.wrong[:3]}")
        new_pid = r2.start()
        # No active check: once fail_timeout has passed, least_conn tries it again.
        wait_for(lambda: json.loads(line_request(ngx.line, "INFO") or "{}").get("pid") == new_pid,
                 "nginx to send a connection to the restarted replica")
        load.stop()
        check(not [w for w in load.wrong if not w.startswith("http worker")],
              f"nginx: wrong answers: {load.wrong[:5]}")
    finally:
        ngx.stop()


def main():
    if not shutil.which("haproxy"):
        print("FAIL: haproxy is not installed (scripts/deps.sh installs it)", file=sys.stderr)
        return 1
    root = tempfile.mkdtemp(prefix="bloomgate-scale.")
    reps, hap = [], None
    try:
        old_bloom, old_sum = build(root, "old", [old_item(i) for i in range(N_OLD)])
        new_bloom, new_sum = build(root, "new", [old_item(i) for i in range(N_OLD)] +
                                   [new_item(i) for i in range(N_NEW)])
        reps = [Replica(root, "r1", old_bloom), Replica(root, "r2", old_bloom)]
        for r in reps:
            r.start()
        hap = HAProxy(root, reps)
        for r in reps:
            hap.wait_status(r.name, "UP")
        test_rolling_ship(root, reps, hap, new_bloom, new_sum, old_sum)
        test_corrupt_ship(root, reps, new_bloom, new_sum)
        test_reload_fails(root, reps, new_bloom, new_sum)
        test_ship_over_ssh(root, reps, new_sum)
        test_kill(reps, hap)
        test_nginx(root, reps)
        # Clean stops, and no sanitizer report (the sanitizer build runs this too).
        for r in reps:
            rc = r.stop()
            check(rc == 0, f"{r.name}: exit status {rc} on SIGTERM")
            log = r.log_text()
            check("Sanitizer" not in log and "runtime error" not in log,
                  f"{r.name}: sanitizer report in its log: {log[-2000:]}")
    except Exception as e:  # a setup step or a wait that timed out
        failures.append(f"{type(e).__name__}: {e}")
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        for name in ("haproxy.log", "nginx.err", "r1/log", "r2/log"):
            p = os.path.join(root, name)
            if os.path.exists(p):
                print(f"--- {name}\n" + open(p).read()[-3000:], file=sys.stderr)
    finally:
        if hap:
            hap.stop()
        for r in reps:
            r.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"scale_test: {passes} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
