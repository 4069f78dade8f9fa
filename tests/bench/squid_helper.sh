#!/usr/bin/env bash
# Throughput of bloomgate-squid as Squid drives it: a driver keeps WINDOW
# requests in flight on the helper's stdin (Squid's concurrency=WINDOW, one
# helper process), each "ID URL -", against a real bloomgated serving the
# URLhaus list as url keys (threads 1). Prints requests per second and the
# CPU time per request of the helper and of the daemon (utime + stime from
# /proc/PID/stat), for each window. A benchmark: it asserts nothing.
#   tests/bench/squid_helper.sh BUILD_DIR [REQUESTS] [WINDOW...]
# With CONTEXT=1 the list is served as an adblock filter instead and each
# request carries a context, "ID URL REFERER DEST METHOD -" (--context
# referer,dest,method): the page one of 50 sites or none (1 in 5), the
# Sec-Fetch-Dest one of script, image, document, empty or none, GET;
# CONTEXT=bare serves the adblock filter to requests without context. BATCH=N
# passes --batch N (1: one item per MCHECK, as per-item CHECKs would be).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh" # free_port, wait_port
B=$(cd "${1:?usage: squid_helper.sh BUILD_DIR [REQUESTS] [WINDOW...]}" && pwd)
n=${2:-200000}
shift 2 || shift $#
windows=("$@")
[ ${#windows[@]} -gt 0 ] || windows=(1 10 100)
src=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-squidbench.XXXXXX")
dpid=""
cleanup() {
    [ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
port=$(free_port)
context=${CONTEXT:-0}
batch=${BATCH:-500}
if [ "$context" != 0 ]; then
    "$B/bloomgate" build --quiet --format adblock -o "$tmp/urls.bloom" \
        "$src/data/urlhaus-filter-online.txt"
    keys=""
else
    "$B/bloomgate" build --quiet --seed 7 --format adblock --keys url -o "$tmp/urls.bloom" \
        "$src/data/urlhaus-filter-online.txt"
    keys="keys url"
fi
cat >"$tmp/bg.conf" <<EOF
listen 127.0.0.1:$port
http_listen off
threads 1
log_level warn
filter urls {
    file $tmp/urls.bloom
    $keys
}
EOF
"$B/bloomgated" -c "$tmp/bg.conf" 2>"$tmp/d.log" &
dpid=$!
wait_port "$port" "$dpid" 30 || { cat "$tmp/d.log" >&2; echo "squid_helper.sh: bloomgated did not start" >&2; exit 1; }

# The driver: starts the helper, keeps `window` requests in flight, checks
# every reply's channel and code (1 in 100 URLs is on a listed host: OK; a
# url probe of up to 30 expressions at 1e-4 makes a few more), and prints
# the figures.
cat >"$tmp/drive.py" <<'EOF'
import os, subprocess, sys, time
helper, port, n, window, dpid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
context, batch = sys.argv[6] == "1", sys.argv[7]
adblock = sys.argv[6] != "0"
tck = os.sysconf("SC_CLK_TCK")
def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / tck
args = [helper, "--connect", f"127.0.0.1:{port}", "--filter", "urls", "--batch", batch]
if context:
    args += ["--context", "referer,dest,method"]
p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
dests = ["script", "image", "document", "empty", "-"]
def ctx(i):
    if not context:
        return ""
    page = "-" if i % 5 == 4 else f"http://site{i % 50}.example/page{i % 7}"
    return f" {page} {dests[i % 5 if i % 3 else (i // 3) % 5]} GET"
def url(i):
    return (f"http://www.111101111.ru/p{i}" if i % 100 == 0 else f"http://host{i % 5000}.example.org/a/b{i}.html?q={i}")
out = p.stdout
buf = b""
sent = done = ok = 0
free = list(range(window))
d0, h0, t0 = cpu(dpid), cpu(p.pid), time.monotonic()
while done < n:
    chunk = []
    while free and sent < n:
        ch = free.pop()
        chunk.append(f"{ch} {url(sent)}{ctx(sent)} -\n")
        sent += 1
    if chunk:
        p.stdin.write("".join(chunk).encode())
    data = os.read(out.fileno(), 1 << 16)
    if not data:
        sys.exit("helper exited")
    buf += data
    *lines, buf = buf.split(b"\n")
    for l in lines:
        ch, code = l.split(b" ", 2)[:2]
        if code not in (b"OK", b"ERR"):
            sys.exit(f"unexpected reply {l!r}")
        ok += code == b"OK"
        free.append(int(ch))
        done += 1
t1 = time.monotonic()
d1, h1 = cpu(dpid), cpu(p.pid)
p.stdin.close(); p.wait()
el = t1 - t0
print(f"window {window:4d}: {n} requests in {el:.2f} s = {n / el:9.0f} req/s; "
      f"helper {1e6 * (h1 - h0) / n:.2f} us CPU/req, daemon {1e6 * (d1 - d0) / n:.2f} us CPU/req; "
      f"{ok} OK ({(n + 99) // 100} on a listed host" + (")" if adblock else ", the rest false positives)"))
EOF
echo "bloomgate-squid: $n requests per run, one helper, bloomgated threads 1 ($(nproc) CPUs);" \
    "CONTEXT=$context BATCH=$batch"
for w in "${windows[@]}"; do
    "$PY" "$tmp/drive.py" "$B/bloomgate-squid" "$port" "$n" "$w" "$dpid" "$context" "$batch"
done
