#!/usr/bin/env bash
# DNSBL queries per second on one worker (dnsperf, over UDP and TCP) next to
# the same lookups over the line protocol (pipelined CHECKs from a small
# client), against one bloomgated with `threads 1` serving a filter of N IPv4
# addresses (default 10M). Half the queries are listed, half not. Beside each
# throughput: the daemon's own CPU time per query (utime + stime of all its
# threads, from /proc/PID/stat), which moves much less than throughput when
# client and server share a 2-core machine.
#   tests/bench/dnsbl_bench.sh [BUILD_DIR] [N] [SECONDS]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh" # cpu_ticks, clk
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$top/_build}" && pwd)
N=${2:-10000000}
dur=${3:-10}
PY=/usr/bin/python3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-dnsbl.XXXXXX")
pid=
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# Address i: a bijection of i over 32 bits, so listed addresses spread.
"$PY" - "$N" "$tmp" <<'PYEOF'
import sys
n, tmp = int(sys.argv[1]), sys.argv[2]
def ip(i):
    v = (i * 2654435761 + 12345) & 0xffffffff
    return "%d.%d.%d.%d" % (v >> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255)
with open(tmp + "/ips.txt", "w") as f:
    for i in range(n):
        f.write(ip(i) + "\n")
import random
random.seed(1)
qs = []
for k in range(1000000):
    i = random.randrange(n) if k % 2 == 0 else n + random.randrange(n)
    qs.append(ip(i))
with open(tmp + "/dns.txt", "w") as f:
    for a in qs:
        p = a.split(".")
        f.write("%s.%s.%s.%s.bl.bench A\n" % (p[3], p[2], p[1], p[0]))
with open(tmp + "/line.txt", "w") as f:
    for a in qs:
        f.write("CHECK ips %s\n" % a)
PYEOF
"$B/bloomgate" build -q -o "$tmp/ips.bloom" --capacity "$N" --fpr 0.0001 "$tmp/ips.txt"
rm "$tmp/ips.txt"
cat >"$tmp/bg.conf" <<CONF
listen 127.0.0.1:0
http_listen off
threads 1
filter ips {
    file $tmp/ips.bloom
    keys exact
    journal off
}
dnsbl {
    listen 127.0.0.1:0
    zone bl.bench
    filter ips
}
CONF
"$B/bloomgated" -c "$tmp/bg.conf" >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q ' ready: ' "$tmp/log" && break; sleep 0.1; done
grep -q ' ready: ' "$tmp/log" || { cat "$tmp/log"; exit 1; }
lport=$(sed -n 's/.*line protocol listening on .*(port \([0-9]*\)).*/\1/p' "$tmp/log" | head -1)
dport=$(sed -n 's/.*dnsbl bl.bench listening on .*(port \([0-9]*\),.*/\1/p' "$tmp/log" | head -1)

report() { # label queries seconds ticks
    awk -v l="$1" -v q="$2" -v s="$3" -v t="$4" -v c="$clk" \
        'BEGIN { printf "%-28s %10.0f queries/s   server CPU %6.2f us/query\n", l, q / s, t / c / q * 1e6 }'
}

for mode in udp tcp; do
    t0=$(cpu_ticks "$pid")
    dnsperf -m "$mode" -s 127.0.0.1 -p "$dport" -d "$tmp/dns.txt" -l "$dur" -c 4 -q 200 \
        >"$tmp/dnsperf.$mode" 2>&1
    t1=$(cpu_ticks "$pid")
    q=$(awk '/Queries completed:/ {print $3}' "$tmp/dnsperf.$mode")
    s=$(awk '/Run time \(s\):/ {print $4}' "$tmp/dnsperf.$mode")
    lost=$(awk '/Queries lost:/ {print $3}' "$tmp/dnsperf.$mode")
    report "dnsperf $mode (4 clients x 50)" "$q" "$s" "$((t1 - t0))"
    echo "    (lost $lost; NOERROR/NXDOMAIN: $(grep -E 'NOERROR|NXDOMAIN' "$tmp/dnsperf.$mode" | tr -s ' ' | tr '\n' ' '))"
done

# The same lookups over the line protocol: pipelined CHECKs, 1,000 in flight.
t0=$(cpu_ticks "$pid")
out=$("$PY" - "$lport" "$tmp/line.txt" "$dur" <<'PYEOF'
import socket, sys, time
port, path, dur = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
lines = open(path, "rb").read().splitlines(keepends=True)
batches = [b"".join(lines[i:i + 1000]) for i in range(0, len(lines), 1000)]
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
done = yes = 0
t0 = time.monotonic()
k = 0
while time.monotonic() - t0 < dur:
    s.sendall(batches[k % len(batches)])
    want, got = 1000, b""
    while got.count(b"\n") < want:
        got += s.recv(65536)
    yes += got.count(b"YES")
    done += want
    k += 1
el = time.monotonic() - t0
print(done, el, yes)
PYEOF
)
t1=$(cpu_ticks "$pid")
read -r q s yes <<<"$out"
report "line CHECK (1 conn x 1000)" "$q" "$s" "$((t1 - t0))"
echo "    (YES: $yes of $q)"
