"""bgdaemon: start the real bloomgated for the tests in tests/resp/.

A daemon on ports the kernel picks (127.0.0.1:0), in a temporary directory
holding its config, log and state_dir (filters created at run time), with no
filter in its config: every key a test uses is created through RESP. The
binary is $BLOOMGATED (the build's ./bloomgated by default). restart() stops
it (SIGTERM, as systemd does) and starts it again on the same state_dir, as
RedisBloom's tests reload an RDB. stop() removes the directory.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import redis

BLOOMGATED = os.environ.get("BLOOMGATED", "./bloomgated")
DEADLINE = 60.0  # seconds to start or stop: generous, the machine may be loaded


class Daemon:
    def __init__(self, extra_conf=""):
        self.dir = tempfile.mkdtemp(prefix="bloomgate-rbt.", dir=os.environ.get("TMPDIR"))
        self.state = os.path.join(self.dir, "state")
        os.mkdir(self.state)
        self.conf = os.path.join(self.dir, "bloomgate.conf")
        with open(self.conf, "w") as f:
            f.write("listen 127.0.0.1:0\nhttp_listen off\nresp_listen 127.0.0.1:0\n"
                    "state_dir %s\n%s\n" % (self.state, extra_conf))
        self.proc = None
        self.port = None
        self.starts = 0

    def start(self):
        self.starts += 1
        self.log = os.path.join(self.dir, "daemon%d.log" % self.starts)
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([BLOOMGATED, "-c", self.conf], stdout=out,
                                         stderr=subprocess.STDOUT)
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            text = open(self.log).read()
            if " ready: " in text:
                m = re.search(r"Redis protocol listening on .* \(port (\d+)\)", text)
                self.port = int(m.group(1))
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("bloomgated did not start:\n" + open(self.log).read()[-2000:])

    def client(self, **kw):
        kw.setdefault("socket_timeout", 60)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def pid(self):
        return self.proc.pid

    def halt(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("bloomgated did not stop on SIGTERM")
        self.proc = None

    def restart(self):
        self.halt()
        return self.start()

    def stop(self, keep=False):
        """Stop the daemon and remove its directory; RuntimeError if a log of
        any of its runs holds a sanitizer report (an --enable-sanitizers
        build), as the C harness checks."""
        try:
            self.halt()
            reports = self.sanitizer_reports()
            if reports:
                raise RuntimeError("sanitizer report in the daemon's log:\n" + reports)
        finally:
            if keep:
                print("daemon directory kept:", self.dir)
            else:
                shutil.rmtree(self.dir, ignore_errors=True)

    def sanitizer_reports(self):
        found = []
        for n in range(1, self.starts + 1):
            path = os.path.join(self.dir, "daemon%d.log" % n)
            try:
                text = open(path, errors="replace").read()
            except OSError:
                continue
            for pat in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
                at = text.find(pat)
                if at >= 0:
                    found.append(text[max(0, at - 200):at + 1500])
        return "\n".join(found)

    def log_tail(self, n=20):
        try:
            return "".join(open(self.log).readlines()[-n:])
        except OSError:
            return ""


def drop_all(r):
    """What FLUSHALL/FLUSHDB do here (bloomgate serves neither, docs/resp.md):
    DEL every key, all of them created through RESP in these tests."""
    keys = r.keys("*")
    if keys:
        r.delete(*keys)
