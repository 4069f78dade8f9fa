#!/usr/bin/env python3
"""Keys created at run time through the real clients, against a real
bloomgated (tests/resp/clients_test.sh): redis-py's r.bf() API (create, add,
madd, exists, mexists, info, insert, card), its default pipeline (MULTI ...
EXEC) and a plain one, and redis-cli one-shot, interactive (under a
pseudo-terminal) and --pipe (raw RESP). Creating is an admin operation: the
daemon has an admin_token. Names as Redis keys are written, with ':' and a
{hash tag}, are created, listed, read by redis-cli and dropped.
"""
import shutil
import subprocess
import sys

import redis

import bgdaemon

fails = []


def same(what, got, want):
    if got != want:
        fails.append("%s: got %r, want %r" % (what, got, want))


def error_of(fn, *args, **kw):
    try:
        res = fn(*args, **kw)
    except redis.ResponseError as e:
        return str(e)
    return "no error (%r)" % (res,)


def bf_api(d):
    a = d.client(password="s3cret")
    b = d.client()  # no AUTH: lookups only
    # create, and an anonymous client refused.
    same("create", a.bf().create("users", 0.001, 1000), True)
    same("create again", error_of(a.bf().create, "users", 0.001, 1000), "item exists")
    same("create without AUTH", error_of(b.bf().create, "nope", 0.01, 100),
         "BF.RESERVE needs AUTH <token> first on this connection")
    same("auto-create without AUTH", error_of(b.bf().add, "nope", "x"),
         "BF.ADD needs AUTH <token> first on this connection")
    same("nothing created without AUTH", b.exists("nope"), 0)
    # add, madd, exists, mexists, card, info on the created key.
    same("add", a.bf().add("users", "u1"), 1)
    same("add again", a.bf().add("users", "u1"), 0)
    same("madd", a.bf().madd("users", "u1", "u2", "u3"), [0, 1, 1])
    same("exists", (b.bf().exists("users", "u2"), b.bf().exists("users", "u9")), (1, 0))
    same("mexists", b.bf().mexists("users", "u3", "u9", "u1"), [1, 0, 1])
    same("card", b.execute_command("BF.CARD", "users"), 3)
    i = b.bf().info("users")
    same("info", (i.capacity, i.filterNum, i.insertedNum, i.expansionRate), (1000, 1, 3, 2))
    # BF.ADD on a new key: RedisBloom's defaults, capacity 100, scaling.
    same("auto-create add", a.bf().add("auto1", "x"), 1)
    i = b.bf().info("auto1")
    same("auto-created info", (i.capacity, i.filterNum, i.insertedNum, i.expansionRate),
         (100, 1, 1, 2))
    same("auto-create madd", a.bf().madd("auto2", "x", "y", "x"), [1, 1, 0])
    # insert with options, NOCREATE, NONSCALING and its full filter.
    same("insert creating", a.bf().insert("ins", ["a", "b"], capacity=500, error=0.001), [1, 1])
    same("insert capacity", b.bf().info("ins").capacity, 500)
    same("insert existing", a.bf().insert("ins", ["b", "c"]), [0, 1])
    same("insert NOCREATE", error_of(a.bf().insert, "ins2", ["a"], noCreate=True), "not found")
    same("insert NONSCALING", a.bf().insert("fixed", ["a", "b", "c"], capacity=3, noScale=True),
         [1, 1, 1])
    same("fixed info", b.bf().info("fixed").expansionRate, None)
    same("fixed full", error_of(a.bf().add, "fixed", "d"), "non scaling filter is full")
    same("fixed holds", a.bf().add("fixed", "a"), 0)
    # RedisBloom's arity and ranges (a fix of this branch: ITEMS with no item).
    same("insert ITEMS alone", error_of(a.execute_command, "BF.INSERT", "ins", "ITEMS"),
         "wrong number of arguments for 'bf.insert' command")
    same("EXPANSION 0", error_of(a.execute_command, "BF.RESERVE", "e0", 0.01, 10, "EXPANSION", 0),
         "expansion must be in the range [1, 32768]")
    same("EXPANSION 4", "EXPANSION 2 only" in error_of(a.bf().create, "e4", 0.01, 10,
                                                          expansion=4), True)
    same("EXPANSION 2", a.bf().create("e2", 0.01, 4, expansion=2), True)
    a.bf().madd("e2", *[str(k) for k in range(100)])
    i = b.bf().info("e2")
    same("growing info", (i.capacity, i.filterNum, i.expansionRate), (124, 5, 2))
    # The key space sees the created keys; DEL drops them.
    same("keys", sorted(b.keys("*")), [b"auto1", b"auto2", b"e2", b"fixed", b"ins", b"users"])
    same("scan", sorted(b.scan_iter(match="auto*")), [b"auto1", b"auto2"])
    same("type", (b.type("users"), b.type("nope")), (b"MBbloom--", b"none"))
    same("DEL without AUTH", error_of(b.delete, "users"),
         "DEL needs AUTH <token> first on this connection")
    same("DEL", a.delete("auto1", "auto2", "nope"), 2)
    same("gone", (b.exists("auto1"), b.bf().exists("auto1", "x")), (0, 0))
    same("re-created empty", (a.bf().create("auto1", 0.01, 50), b.bf().exists("auto1", "x")),
         (True, 0))


def pipelines(d):
    a = d.client(password="s3cret")
    # The default pipeline: MULTI ... EXEC. BF.ADD creates its key while
    # queued; EXEC finds it.
    p = a.pipeline()
    p.bf().add("tx1", "x")
    p.bf().madd("tx1", "x", "y")
    p.bf().mexists("tx1", "x", "z")
    p.bf().add("users", "u4")
    p.execute_command("BF.CARD", "tx1")
    same("transaction", p.execute(), [1, [0, 1], [1, 0], 1, 2])
    same("transaction created", a.bf().info("tx1").capacity, 100)
    # BF.RESERVE and DEL are refused inside MULTI: the transaction aborts.
    p = a.pipeline()
    p.bf().add("users", "u5")
    p.bf().create("tx2", 0.01, 100)
    same("RESERVE in MULTI", "cannot be queued in MULTI" in error_of(p.execute), True)
    same("aborted: nothing added", a.bf().exists("users", "u5"), 0)
    same("aborted: nothing created", a.exists("tx2"), 0)
    # A plain pipeline: 1,000 adds to one key it creates, in order.
    p = a.pipeline(transaction=False)
    for k in range(1000):
        p.bf().add("plain", "i%d" % k)
    res = p.execute()
    same("plain pipeline", (len(res), sum(res) > 990), (1000, True))
    same("plain card", a.execute_command("BF.CARD", "plain"), sum(res))


def cli(d, *args, stdin=None):
    out = subprocess.run(["redis-cli", "-p", str(d.port)] + list(args), input=stdin,
                         capture_output=True, timeout=60, text=True)
    return out.stdout + out.stderr


def redis_cli(d):
    if not shutil.which("redis-cli"):
        print("SKIP redis-cli: not installed (Debian's redis-tools)")
        return
    auth = ["-a", "s3cret", "--no-auth-warning"]
    same("cli RESERVE", cli(d, *auth, "BF.RESERVE", "cli1", "0.01", "1000"), "OK\n")
    same("cli ADD", cli(d, *auth, "BF.ADD", "cli1", "x"), "1\n")
    same("cli auto ADD", cli(d, *auth, "BF.MADD", "cli2", "x", "y"), "1\n1\n")
    same("cli INFO", cli(d, "BF.INFO", "cli2", "CAPACITY"), "100\n")
    same("cli DEL", cli(d, *auth, "DEL", "cli1", "cli2"), "2\n")
    same("cli gone", cli(d, "EXISTS", "cli1", "cli2"), "0\n")
    # Interactive, under a pseudo-terminal (script, util-linux).
    if shutil.which("script"):
        typed = ("AUTH s3cret\nBF.RESERVE inter 0.01 100\nBF.MADD inter a b\n"
                 "BF.MEXISTS inter a zz\nquit\n")
        out = subprocess.run(["script", "-qec", "redis-cli -p %d" % d.port, "/dev/null"],
                             input=typed, capture_output=True, timeout=60, text=True,
                             env={"TERM": "dumb", "PATH": "/usr/bin:/bin"}).stdout
        out = out.replace("\r", "")
        same("interactive", ("OK" in out, "1) (integer) 1\n2) (integer) 1" in out,
                             "1) (integer) 1\n2) (integer) 0" in out), (True, True, True))
    # --pipe: raw RESP, redis-cli's mass insertion: a reserve, and 200 keys
    # created by BF.ADD.
    def resp(*args):
        return "*%d\r\n" % len(args) + "".join("$%d\r\n%s\r\n" % (len(s), s) for s in args)
    raw = resp("AUTH", "s3cret") + resp("BF.RESERVE", "piped", "0.001", "10000")
    raw += "".join(resp("BF.MADD", "piped", "p%d" % k, "q%d" % k) for k in range(500))
    raw += "".join(resp("BF.ADD", "pk%d" % k, "item%d" % k) for k in range(200))
    out = cli(d, "--pipe", stdin=raw)
    same("--pipe", "errors: 0, replies: 702" in out, True)
    same("--pipe keys", len(cli(d, "KEYS", "pk*").split()), 200)
    same("--pipe items", cli(d, "BF.MEXISTS", "piped", "p0", "q499", "zz"), "1\n1\n0\n")
    same("--pipe auto", cli(d, "BF.EXISTS", "pk199", "item199"), "1\n")


def wide_names(d):
    a = d.client(password="s3cret")
    same("colon add", a.bf().add("bf:blocklist", "x"), 1)
    same("hash tag", a.bf().create("seen:{sku123}:2026-11-27", 0.01, 1000), True)
    same("colon keys", sorted(a.keys("seen:*")), [b"seen:{sku123}:2026-11-27"])
    same("colon cli", cli(d, "BF.EXISTS", "bf:blocklist", "x"), "1\n")
    same("colon DEL", a.delete("bf:blocklist", "seen:{sku123}:2026-11-27"), 2)


def main():
    d = bgdaemon.Daemon("admin_token s3cret\nmax_filters 1000").start()
    try:
        for part in (bf_api, pipelines, redis_cli, wide_names):
            try:
                part(d)
            except Exception as e:  # a part that raised: the others still run
                fails.append("%s raised %r" % (part.__name__, e))
    finally:
        if fails:
            print("--- daemon log (end)\n" + d.log_tail())
        d.stop()
    for f in fails:
        print("FAIL:", f)
    print("client checks:", "ok" if not fails else "%d failed" % len(fails))
    sys.exit(1 if fails else 0)


main()
