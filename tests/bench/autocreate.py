#!/usr/bin/env python3
"""autocreate: filters made by BF.ADD at run time, many of them, and lookups
across them, on the Redis protocol front (issue #28). Prints figures,
asserts nothing (docs/benchmarks.md, "Filters created at run time").

    tests/bench/autocreate.py [--bloomgated _build/bloomgated] [--filters 10000]
                              [--lookups 1000000] [--depth 1000]

Starts bloomgated on ports the kernel picks in a temporary directory, with a
state_dir, `max_filters` = filters + 20 % and no filter in its config, then:
1. BF.ADD key_i item_i for i < filters, one request at a time (a create is
   a round trip through the reload thread): time per create (mean, median,
   p90, p99, max), the daemon's CPU per create, RSS (VmRSS of
   /proc/PID/status) before and after, files, bytes and descriptors;
2. BF.EXISTS on random keys among them (half the items present), pipelined
   `--depth` deep on one connection: lookups/s and CPU per lookup, the
   client's and the daemon's (utime + stime of /proc/PID/stat), then the
   same against one key only, to show what 10,000 keys cost a lookup;
3. a restart (SIGTERM, start on the same state_dir): time to ready, RSS.
The client is this script (CPython, raw sockets): it shares the 2 cores.
"""
import argparse
import os
import random
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

CLK = os.sysconf("SC_CLK_TCK")


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def self_cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class Daemon:
    def __init__(self, binary, conf_extra):
        self.dir = tempfile.mkdtemp(prefix="bloomgate-autocreate.")
        self.state = os.path.join(self.dir, "state")
        os.mkdir(self.state)
        self.conf = os.path.join(self.dir, "bloomgate.conf")
        with open(self.conf, "w") as f:
            f.write("listen 127.0.0.1:0\nhttp_listen off\nresp_listen 127.0.0.1:0\n"
                    "state_dir %s\n%s\n" % (self.state, conf_extra))
        self.binary, self.proc, self.n = binary, None, 0

    def start(self):
        self.n += 1
        log = os.path.join(self.dir, "daemon%d.log" % self.n)
        t0 = time.monotonic()
        with open(log, "w") as out:
            self.proc = subprocess.Popen([self.binary, "-c", self.conf], stdout=out,
                                         stderr=subprocess.STDOUT)
        while True:
            text = open(log).read()
            if " ready: " in text:
                break
            if self.proc.poll() is not None or time.monotonic() - t0 > 600:
                sys.exit("bloomgated did not start:\n" + text[-2000:])
            time.sleep(0.01)
        self.ready_s = time.monotonic() - t0
        self.port = int(re.search(r"Redis protocol listening on .* \(port (\d+)\)", text).group(1))
        self.pid = self.proc.pid
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(600)

    def connect(self):
        s = socket.create_connection(("127.0.0.1", self.port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s


def read_replies(s, n, buf=b""):
    """Read n one-line replies (':0', ':1', '+OK', '-ERR ...'); the count of
    ':1' and of errors, and what is left over."""
    ones = errs = 0
    while n:
        chunk = s.recv(1 << 20)
        if not chunk:
            sys.exit("connection closed by the daemon")
        buf += chunk
        lines = buf.split(b"\r\n")
        buf = lines.pop()
        n -= len(lines)
        ones += sum(1 for l in lines if l == b":1")
        errs += sum(1 for l in lines if l.startswith(b"-"))
        if errs:
            sys.exit("error reply: %r" % [l for l in lines if l.startswith(b"-")][:1])
    return ones, errs, buf


def lookups(d, keys, items_of, total, depth):
    """BF.EXISTS pipelined depth deep: (lookups/s, client us/lookup, daemon us/lookup, hits)."""
    rnd = random.Random(7)
    reqs = []  # 20 batches of distinct requests: the keys' filters are not all in cache
    for _ in range(depth * 20):
        k = rnd.randrange(len(keys))
        item = items_of(k) if rnd.random() < 0.5 else "absent%d" % rnd.randrange(10 ** 9)
        reqs.append(resp("BF.EXISTS", keys[k], item))
    batches = [b"".join(reqs[i:i + depth]) for i in range(0, len(reqs), depth)]
    s = d.connect()
    done = hits = 0
    c0, d0, t0 = self_cpu(), cpu_s(d.pid), time.monotonic()
    buf = b""
    i = 0
    while done < total:
        s.sendall(batches[i % len(batches)])
        ones, _, buf = read_replies(s, depth, buf)
        hits += ones
        done += depth
        i += 1
    t = time.monotonic() - t0
    c, dd = self_cpu() - c0, cpu_s(d.pid) - d0
    s.close()
    return done / t, c / done * 1e6, dd / done * 1e6, hits / done


def main():
    # SIGTERM (timeout, a kill) ends through the finally below: the daemon stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("autocreate: terminated"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bloomgated", default="_build/bloomgated")
    ap.add_argument("--filters", type=int, default=10000)
    ap.add_argument("--lookups", type=int, default=1000000)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    o = ap.parse_args()
    maxf = o.filters + o.filters // 5
    d = Daemon(os.path.abspath(o.bloomgated), "max_filters %d" % maxf).start()
    try:
        print("bloomgated %s, max_filters %d, load average %s" % (
            o.bloomgated, maxf, open("/proc/loadavg").read().split()[:3]))
        rss0 = status_kb(d.pid, "VmRSS")
        keys = ["k%06d" % i for i in range(o.filters)]
        s = d.connect()
        lat = []
        c0, d0, t0 = self_cpu(), cpu_s(d.pid), time.monotonic()
        for i, k in enumerate(keys):
            t = time.monotonic()
            s.sendall(resp("BF.ADD", k, "item%d" % i))
            ones, _, left = read_replies(s, 1)
            lat.append(time.monotonic() - t)
            if ones != 1 or left:
                sys.exit("BF.ADD %s: unexpected reply" % k)
        wall = time.monotonic() - t0
        dcpu, ccpu = cpu_s(d.pid) - d0, self_cpu() - c0
        s.close()
        rss1, hwm1 = status_kb(d.pid, "VmRSS"), status_kb(d.pid, "VmHWM")
        files = os.listdir(d.state)
        disk = sum(os.path.getsize(os.path.join(d.state, f)) for f in files)
        fds = len(os.listdir("/proc/%d/fd" % d.pid))
        order = list(lat)
        lat.sort()
        q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3
        print("\n1. BF.ADD creating %d filters (capacity 100, error 0.01, scaling), one at a time"
              % o.filters)
        print("   wall %.1f s: %.0f creates/s; per create: mean %.2f ms, median %.2f, "
              "p90 %.2f, p99 %.2f, max %.1f" % (wall, o.filters / wall, statistics.mean(lat) * 1e3,
                                                 q(0.5), q(0.9), q(0.99), lat[-1] * 1e3))
        print("   daemon CPU %.1f s (%.0f us a create), client CPU %.1f s" % (
            dcpu, dcpu / o.filters * 1e6, ccpu))
        print("   RSS %.1f MiB before, %.1f MiB after (+%.1f KiB a filter), peak %.1f MiB" % (
            rss0 / 1024, rss1 / 1024, (rss1 - rss0) / o.filters, hwm1 / 1024))
        print("   state_dir: %d files, %.1f MiB; %d open descriptors" % (
            len(files), disk / 2 ** 20, fds))
        tenth = max(1, o.filters // 10)
        print("   median ms a create by tenth (in the order made): " + " ".join(
            "%.1f" % (statistics.median(order[i:i + tenth]) * 1e3)
            for i in range(0, o.filters, tenth)))

        print("\n2. BF.EXISTS pipelined %d deep on one connection, %d lookups, half present"
              % (o.depth, o.lookups))
        for n in sorted({o.filters, min(1000, o.filters), 1}, reverse=True):
            rate, c_us, d_us, hit = lookups(d, keys[:n], lambda k: "item%d" % k, o.lookups,
                                            o.depth)
            print("   across %5d keys: %7.0f lookups/s, daemon %.2f us CPU a lookup, client "
                  "%.2f us, %.3f answered 1" % (n, rate, d_us, c_us, hit))

        d.stop()
        d.start()
        print("\n3. restart on the same state_dir: ready in %.2f s, RSS %.1f MiB, "
              "%d keys served" % (d.ready_s, status_kb(d.pid, "VmRSS") / 1024,
                                  len(os.listdir(d.state)) // 2))
        print("\nload average at the end %s" % open("/proc/loadavg").read().split()[:3])
    finally:
        d.stop()
        if o.keep:
            print("kept", d.dir)
        else:
            shutil.rmtree(d.dir, ignore_errors=True)


main()
