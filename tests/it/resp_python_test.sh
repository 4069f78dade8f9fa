#!/usr/bin/env bash
# Python's redis client (Debian's python3-redis, under /usr/bin/python3)
# against bloomgated's Redis protocol front: connect (with a client name and
# db 0, which it sends as CLIENT SETNAME and SELECT), execute_command for the
# BF.* commands, a pipeline, AUTH through password=, errors as ResponseError,
# INFO parsed into a dict; the default pipeline (MULTI ... EXEC), r.bf()'s
# exists/mexists/madd/info, keys, scan_iter, exists, type. Skipped (77)
# only if the module is absent.
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import redis' 2>/dev/null || { echo "python3-redis not installed: skipped"; exit 77; }
. "${srcdir:-.}/tests/it/resp_lib.sh"
resp_start "admin_token s3cret
filter grow {
    capacity 4
    fpr 0.01
    growth on
}
filter small {
    capacity 3
    fpr 0.01
    full refuse
}
filter \"seen:{sku1}:2026,v=2\" {
    capacity 100
}"
timeout 120 "$PY" - "$RPORT" >"$T/py.out" 2>&1 <<'PYEOF'
import sys
import redis

port = int(sys.argv[1])
fails = []

def same(what, got, want):
    if got != want:
        fails.append("%s: got %r, want %r" % (what, got, want))

r = redis.Redis(host="127.0.0.1", port=port, db=0, client_name="bloomgate-test",
                socket_timeout=30)
same("ping", r.ping(), True)
same("BF.EXISTS", r.execute_command("BF.EXISTS", "exact", "a"), 1)
same("BF.MEXISTS", r.execute_command("BF.MEXISTS", "exact", "a", "zzz", "c"), [1, 0, 1])
same("BF.MEXISTS url", r.execute_command("BF.MEXISTS", "urls",
                                         "http://EVIL.example.com:80/dropper.exe",
                                         "http://evil.example.com/x"), [1, 0])
same("BF.EXISTS host", r.execute_command("BF.EXISTS", "hosts", "mail@bad.example.org"), 1)

# A pipeline of 1000 lookups, sent at once, answered in order.
p = r.pipeline(transaction=False)
for i in range(500):
    p.execute_command("BF.EXISTS", "exact", "b")
    p.execute_command("BF.EXISTS", "exact", "miss%d" % i)
res = p.execute()
same("pipeline length", len(res), 1000)
same("pipeline answers", res[:4], [1, 0, 1, 0])
same("pipeline yes", sum(res), 500)

# r.bf() (RedisBloom's API) on a client of its own: it registers reply
# callbacks (BF.INFO into an object) on the client it is called on.
b = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
ab = redis.Redis(host="127.0.0.1", port=port, password="s3cret", socket_timeout=30)
# A key that names no filter holds nothing (RedisBloom's answer); BF.INFO
# of it is an error.
same("BF.EXISTS missing", r.execute_command("BF.EXISTS", "nope", "a"), 0)
same("bf().mexists missing", b.bf().mexists("nope", "a", "b"), [0, 0])
same("BF.CARD missing", r.execute_command("BF.CARD", "nope"), 0)
try:
    b.bf().info("nope")
    fails.append("BF.INFO of a missing key: no error")
except redis.ResponseError as e:
    same("unknown filter", str(e), "unknown_filter no such filter 'nope'")
try:
    r.execute_command("BF.ADD", "exact", "x")
    fails.append("BF.ADD without AUTH: no error")
except redis.exceptions.NoPermissionError as e:
    same("NOPERM", str(e), "BF.ADD needs AUTH <token> first on this connection")

a = redis.Redis(host="127.0.0.1", port=port, password="s3cret", socket_timeout=30)
same("BF.ADD", a.execute_command("BF.ADD", "exact", "pyitem"), 1)
same("BF.ADD again", a.execute_command("BF.ADD", "exact", "pyitem"), 0)
same("BF.MADD", a.execute_command("BF.MADD", "exact", "pyitem", "pyother"), [0, 1])
same("BF.CARD", r.execute_command("BF.CARD", "exact"), 5)
info = r.execute_command("BF.INFO", "exact")
same("BF.INFO", info[:8], [b"Capacity", 3, b"Size", 64, b"Number of filters", 1,
                           b"Number of items inserted", 5])
same("BF.INFO expansion", info[8:], [b"Expansion rate", None])
try:
    redis.Redis(host="127.0.0.1", port=port, password="wrong").ping()
    fails.append("wrong password: no error")
except (redis.exceptions.AuthenticationError, redis.ResponseError) as e:
    same("wrong password", "invalid username-password pair" in str(e), True)
# The default pipeline: MULTI ... EXEC, answered as one list.
a.execute_command("BF.MADD", "grow", *["g%d" % k for k in range(100)])
p = ab.pipeline()
p.bf().exists("exact", "a")
p.bf().madd("exact", "txa", "txb")
p.bf().mexists("exact", "txa", "zzz")
p.bf().exists("nope", "a")
p.execute_command("BF.CARD", "exact")
same("pipeline (transaction)", p.execute(), [1, [1, 1], [1, 0], 0, 7])
with ab.pipeline() as p:
    p.bf().add("exact", "txc")
    p.execute_command("NOPE")
    try:
        p.execute()
        fails.append("transaction with an unknown command: no error")
    except redis.ResponseError as e:
        same("EXECABORT", "unknown command 'NOPE'" in str(e), True)
same("aborted transaction added nothing", b.bf().exists("exact", "txc"), 0)
try:
    r.execute_command("WATCH", "exact")
    fails.append("WATCH: no error")
except redis.ResponseError as e:
    same("WATCH refused", "WATCH is not supported" in str(e), True)

# r.bf(): exists, madd, info of a growing filter as RedisBloom answers it.
same("bf().exists", b.bf().exists("exact", "txa"), 1)
gi = b.bf().info("grow")
same("bf().info growing", (gi.capacity, gi.filterNum, gi.expansionRate), (124, 5, 2))
si = b.bf().info("small")
same("bf().info fixed", (si.capacity, si.filterNum, si.expansionRate), (3, 1, None))
same("bf().madd small", ab.bf().madd("small", "x", "y", "z"), [1, 1, 1])
try:
    ab.bf().add("small", "w")
    fails.append("add to a full filter: no error")
except redis.ResponseError as e:
    same("full", str(e), "non scaling filter is full")

# A key as people write them is a filter name; one outside the rule is an
# error that names the rule.
WIDE = "seen:{sku1}:2026,v=2"
same("BF.ADD wide name", ab.execute_command("BF.ADD", WIDE, "u1"), 1)
same("bf().exists wide name", b.bf().exists(WIDE, "u1"), 1)
try:
    r.execute_command("BF.EXISTS", "a b", "x")
    fails.append("BF.EXISTS of 'a b': no error")
except redis.ResponseError as e:
    same("name outside the rule", str(e).split(":")[0], "unknown_filter invalid filter name 'a b'")

# The key space: the served filter names.
same("keys", sorted(r.keys()), [b"exact", b"grow", b"hosts", WIDE.encode(), b"small", b"urls"])
same("keys pattern", sorted(r.keys("*s")), [b"hosts", b"urls"])
same("scan_iter", sorted(r.scan_iter(match="[eg]*")), [b"exact", b"grow"])
same("exists", r.exists("exact", "nope", "urls"), 2)
same("type", (r.type("exact"), r.type("nope")), (b"MBbloom--", b"none"))

i = r.info()
same("INFO version", "bloomgate_version" in i, True)
same("INFO filter", i.get("exact", {}).get("keys"), "exact")
# A name's ':' ',' '=' escaped in its INFO line: parse_info splits there.
same("INFO wide name", i.get("seen%3A{sku1}%3A2026%2Cv%3D2", {}).get("items"), 1)

for f in fails:
    print("FAIL:", f)
print("python checks:", "ok" if not fails else "%d failed" % len(fails))
sys.exit(1 if fails else 0)
PYEOF
rc=$?
cat "$T/py.out"
[ "$rc" -eq 0 ] && ok || bad "the Python client's checks (exit $rc)"
finish
