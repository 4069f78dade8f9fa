#!/usr/bin/env python3
"""Issue 26's served test: the Adblock engine as bloomgated serves it against the
engine in-process, on the differential tests' corpus (make_corpus.py, seed 26:
EasyList + EasyPrivacy rules and the URLhaus list).

The lists are compiled by the real tool (`bloomgate build --format adblock`),
the file is checked by `bloomgate verify`, and served by a real bloomgated on a
free 127.0.0.1 port. Every request of the corpus is asked three ways:
  - in-process: tests/adblock/adblock_verdicts on the lists (BLOCK|PASS, rule),
  - `bloomgate check --match` on the built file (YES|NO, rule), each line the
    URL and its context words,
  - the daemon: MATCH over the line protocol, one a request, pipelined, with
    the context words, and MCHECK batches of 100 grouped as they come (each
    context word set before the items it applies to).
Every answer must agree with the in-process verdict, the rule named included:
the file, its loading, the tool's and the daemon's reading of the context
words and the command table's path add nothing and lose nothing.
Exit 77 (skip) without the lists (scripts/adblock-lists.sh)."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

top = os.environ.get("srcdir") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
build = os.environ.get("ADBLOCK_BUILDDIR") or os.getcwd()
lists_dir = os.environ.get("ADBLOCK_LISTS_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "bloomgate", "adblock-lists")
lists = [os.path.join(lists_dir, l) for l in
         (os.environ.get("ADBLOCK_LISTS") or "easylist.txt easyprivacy.txt").split()]
tool = os.environ.get("BLOOMGATE") or os.path.join(build, "bloomgate")
daemon = os.environ.get("BLOOMGATED") or os.path.join(build, "bloomgated")
verdicts = os.path.join(build, "tests", "adblock", "adblock_verdicts")


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


for l in lists:
    if not os.path.isfile(l) or os.path.getsize(l) == 0:
        print("SKIP: no %s (run scripts/adblock-lists.sh)" % l)
        sys.exit(77)
for p in (tool, daemon, verdicts):
    if not os.access(p, os.X_OK):
        fail("%s is not built" % p)


def words(typ, frm):
    w = []
    if typ:
        w.append("type=" + typ)
    if frm:
        w.append("from=" + frm)
    return w


def served_rule(text):
    # %20, %09 and %25 back to their bytes, in one pass (a rule may hold "%20").
    return re.sub(r"%(20|09|25)", lambda m: bytes.fromhex(m.group(1)).decode(), text)


def main():
    tmp = tempfile.mkdtemp(prefix="bloomgate-served-")
    corpus = subprocess.run([sys.executable, os.path.join(top, "tests", "adblock", "make_corpus.py"),
                             "--seed", "26", "--variants", "1", "--urls",
                             os.path.join(top, "data", "urlhaus-filter-online.txt")] + lists,
                            check=True, capture_output=True, text=True).stdout
    reqs = [(line.split("\t") + ["", ""])[:3] for line in corpus.splitlines() if line]
    # Only what the line protocol can carry: no spaces inside a token.
    reqs = [r for r in reqs if " " not in "".join(r) and "\t" not in r[0]]
    print("corpus: %d requests" % len(reqs))

    # In-process verdicts, on the URLs as a server reads them: one without a
    # scheme is https:// and the item (docs/url-matching.md).
    def schemed(u):  # adblock_needs_scheme
        i = 0
        while i < len(u) and i < 32 and u[i] not in ":/":
            i += 1
        has = i < len(u) and u[i] == ":" and (u[i + 1:i + 3] == "//" or
                                              (i == 4 and u[:4].lower() == "data"))
        return u if has else "https://" + u
    full = [(line.split("\t") + ["", ""])[:3] for line in corpus.splitlines() if line]
    fed = "".join("%s\t%s\t%s\n" % (schemed(u), t, f) for u, t, f in full)
    out = subprocess.run([verdicts] + lists, input=fed, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    ref = {}
    for r, v in zip(full, out):
        f = v.split("\t")
        ref[tuple(r)] = (f[0] == "BLOCK", f[1] if len(f) > 1 else "")
    want = [ref[tuple(r)] for r in reqs]
    print("in-process: %d blocked" % sum(1 for b, _ in want if b))

    # The file, built and verified by the tool.
    ads = os.path.join(tmp, "ads.bloom")
    subprocess.run([tool, "build", "--seed", "7", "--format", "adblock", "-q", "-o", ads] + lists,
                   check=True)
    subprocess.run([tool, "verify", ads], check=True, capture_output=True)

    # bloomgate check on stdin.
    lines = "".join(" ".join([u] + words(t, f)) + "\n" for u, t, f in reqs)
    chk = subprocess.run([tool, "check", "--match", ads], input=lines, capture_output=True,
                         text=True).stdout.splitlines()
    if len(chk) != len(reqs):
        fail("bloomgate check answered %d of %d" % (len(chk), len(reqs)))
    bad = 0
    for r, a, (b, rule) in zip(reqs, chk, want):
        f = a.split("\t")
        got = (f[0] == "YES", f[1] if len(f) > 1 else "")
        if f[0] == "ERROR" or got[0] != b or (b and got[1] != rule):
            bad += 1
            if bad <= 5:
                print("check differs: %s -> %s, in-process %s %s" % (r, a, b, rule))
    if bad:
        fail("bloomgate check: %d of %d differ" % (bad, len(reqs)))
    print("bloomgate check: %d agree" % len(reqs))

    # The daemon.
    conf = os.path.join(tmp, "bloomgate.conf")
    with open(conf, "w") as fh:
        fh.write("listen 127.0.0.1:0\nhttp_listen off\nthreads 2\nlog_level info\n"
                 "max_item 16k\nmax_line 1m\nfilter ads {\n file %s\n keys adblock\n"
                 " journal off\n}\n" % ads)
    log = open(os.path.join(tmp, "daemon.log"), "w")
    d = subprocess.Popen([daemon, "-c", conf], stdout=log, stderr=subprocess.STDOUT)
    try:
        port = 0
        deadline = time.time() + 60
        while not port and time.time() < deadline and d.poll() is None:
            time.sleep(0.05)
            for line in open(os.path.join(tmp, "daemon.log")):
                if "line protocol listening on" in line and "(port " in line:
                    port = int(line.split("(port ", 1)[1].split(")")[0])
        if not port:
            fail("the daemon did not start: " + open(os.path.join(tmp, "daemon.log")).read())
        s = socket.create_connection(("127.0.0.1", port), timeout=120)
        rf = s.makefile("r", encoding="utf-8", newline="\n")

        def ask(batch):
            s.sendall("".join(batch).encode())
            return [rf.readline().rstrip("\n") for _ in batch]

        # MATCH, one a request, 1000 pipelined at a time.
        bad = 0
        for i in range(0, len(reqs), 1000):
            part = reqs[i:i + 1000]
            got = ask(["MATCH ads %s\n" % " ".join([u] + words(t, f)) for u, t, f in part])
            for r, a, (b, rule) in zip(part, got, want[i:i + 1000]):
                w = a.split(" ")
                blocked = w[0] == "MATCH"
                named = served_rule(w[1]) if blocked else (served_rule(w[2]) if len(w) > 2 else "")
                if w[0] not in ("MATCH", "ALLOWED", "NO") or blocked != b or (b and named != rule):
                    bad += 1
                    if bad <= 5:
                        print("MATCH differs: %s -> %s, in-process %s %s" % (r, a, b, rule))
        if bad:
            fail("daemon MATCH: %d of %d differ" % (bad, len(reqs)))
        print("daemon MATCH: %d agree" % len(reqs))

        # MCHECK, up to 100 items a line, context words only where they
        # change (at most 64 a request: a line ends before it would pass).
        bad = 0
        batches = []
        i = 0
        while i < len(reqs):
            toks, cur_t, cur_f, n, nw = ["MCHECK", "ads"], None, None, 0, 0
            while i + n < len(reqs) and n < 100:
                u, t, f = reqs[i + n]
                need = (t != cur_t) + (f != cur_f)
                if nw + need > 64:
                    break
                if t != cur_t:
                    toks.append("type=" + (t or "-"))
                    cur_t = t
                if f != cur_f:
                    toks.append("from=" + (f or "-"))
                    cur_f = f
                nw += need
                toks.append(u)
                n += 1
            batches.append((reqs[i:i + n], want[i:i + n], " ".join(toks) + "\n"))
            i += n
        for j in range(0, len(batches), 50):
            group = batches[j:j + 50]
            got = ask([g[2] for g in group])
            for (part, w, _), a in zip(group, got):
                answers = a.split(" ")
                if len(answers) != len(part):
                    fail("MCHECK answered %r" % a[:200])
                for r, x, (b, _) in zip(part, answers, w):
                    if (x == "YES") != b:
                        bad += 1
                        if bad <= 5:
                            print("MCHECK differs: %s -> %s, in-process %s" % (r, x, b))
        if bad:
            fail("daemon MCHECK: %d of %d differ" % (bad, len(reqs)))
        print("daemon MCHECK: %d agree" % len(reqs))
        s.close()
    finally:
        d.terminate()
        try:
            d.wait(timeout=60)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait()
        log.close()
    subprocess.run(["rm", "-rf", tmp])
    print("PASS")


main()
