#!/usr/bin/env bash
# Python's redis client (Debian's python3-redis, under /usr/bin/python3)
# against bloomgated's Redis protocol front: connect (with a client name and
# db 0, which it sends as CLIENT SETNAME and SELECT), execute_command for the
# BF.* commands, a pipeline, AUTH through password=, errors as ResponseError,
# INFO parsed into a dict. Skipped (77) only if the module is absent.
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import redis' 2>/dev/null || { echo "python3-redis not installed: skipped"; exit 77; }
. "${srcdir:-.}/tests/it/resp_lib.sh"
resp_start "admin_token s3cret"
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

try:
    r.execute_command("BF.EXISTS", "nope", "a")
    fails.append("unknown filter: no error")
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
i = r.info()
same("INFO version", "bloomgate_version" in i, True)
same("INFO filter", i.get("exact", {}).get("keys"), "exact")

for f in fails:
    print("FAIL:", f)
print("python checks:", "ok" if not fails else "%d failed" % len(fails))
sys.exit(1 if fails else 0)
PYEOF
rc=$?
cat "$T/py.out"
[ "$rc" -eq 0 ] && ok || bad "the Python client's checks (exit $rc)"
finish
