#!/usr/bin/env bash
# cg_lockstep.sh: instructions per request of bloomgated's front, under
# valgrind --tool=callgrind, with a client that sends the same bytes in the
# same writes every run, so the count does not move with timing (bench_net
# keeps a window of requests in flight and refills it as replies come, so a
# read brings a varying number of requests and the per-read work varies).
# bloomgated (`threads 1`, an exact filter of 1M items at 1e-4), counters
# zeroed once it listens; then ROUNDS rounds of a batch sent in one write and
# its replies read: line, 100 one-item CHECKs (half present); http, 50 GET
# .../check?item= (half present); resp, 100 BF.EXISTS (half present). Prints
# the whole process's instructions and those inside the front's process
# callback (line_process, http_process or resp_process), each per request.
# Not run by `make check`.
#   tests/bench/cg_lockstep.sh BUILD_DIR line|http|resp [ROUNDS]
set -euo pipefail
B=$(cd "${1:?usage: cg_lockstep.sh BUILD_DIR line|http|resp [ROUNDS]}" && pwd)
proto=${2:?usage: cg_lockstep.sh BUILD_DIR line|http|resp [ROUNDS]}
case $proto in
line) rounds=${3:-3000} per=100 fn=line.c:line_process ;;
http) rounds=${3:-1000} per=50 fn=http_conn.c:http_process ;;
resp) rounds=${3:-3000} per=100 fn=resp.c:resp_process ;;
*) echo "cg_lockstep.sh: line, http or resp" >&2; exit 2 ;;
esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-cg.XXXXXX")
vg=
cleanup() {
    [ -n "$vg" ] && kill -TERM "$vg" 2>/dev/null && wait "$vg" 2>/dev/null || true
    [ -n "${KEEP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
lp=$(free_port)
hp=$(free_port)
rp=$(free_port)
"$B/tests/bench/bench_net" --dump 1000000 --item-len 48 |
    "$B/bloomgate" build -o "$tmp/bench.bloom" --capacity 1000000 --fpr 0.0001 --quiet -
"$B/tests/bench/bench_net" --dump 50 --item-len 48 >"$tmp/present.txt"
cat >"$tmp/bg.conf" <<CONF
listen 127.0.0.1:$lp
http_listen 127.0.0.1:$hp
resp_listen 127.0.0.1:$rp
threads 1
log_level warn
filter bench {
    file $tmp/bench.bloom
    journal off
}
CONF
valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$B/bloomgated" -c "$tmp/bg.conf" \
    2>"$tmp/vg.log" &
vg=$!
for _ in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/$hp") 2>/dev/null && break; sleep 0.2; done
sleep 1
callgrind_control -z "$vg" >/dev/null
python3 - "$proto" "$lp" "$hp" "$rounds" "$tmp/present.txt" "$rp" <<'PY'
import socket, sys, urllib.parse
proto, lp, hp, rounds, present = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rp = int(sys.argv[6])
items = [l.strip() for l in open(present)]
if proto == 'line':
    n, port = 100, lp
    reqs = ['CHECK bench %s\n' % it for i in range(50) for it in (items[i], 'a%047d' % i)]
    done = lambda b: b.count(b'\n') >= n
elif proto == 'resp':
    n, port = 100, rp
    reqs = ['*3\r\n$9\r\nBF.EXISTS\r\n$5\r\nbench\r\n$%d\r\n%s\r\n' % (len(it), it)
            for i in range(50) for it in (items[i], 'a%047d' % i)]
    done = lambda b: b.count(b'\r\n') >= n
else:
    n, port = 50, hp
    reqs = ['GET /v1/filters/bench/check?item=%s HTTP/1.1\r\nHost: x\r\n\r\n' % urllib.parse.quote(it, safe='')
            for i in range(25) for it in (items[i], 'a%047d' % i)]
    done = lambda b: b.count(b'HTTP/1.1 200') >= n and b.endswith(b'}')
blob = ''.join(reqs).encode()
s = socket.create_connection(('127.0.0.1', port))
for _ in range(rounds):
    s.sendall(blob)
    got = b''
    while not done(got):
        got += s.recv(262144)
PY
callgrind_control -d "$vg" >/dev/null
kill -TERM "$vg"
wait "$vg" || true
vg=
n=$((rounds * per))
tot=$(cd / && callgrind_annotate "$tmp/cg.out.1" | awk '!d && /PROGRAM TOTALS/{gsub(",","",$1); print $1; d=1}')
in=$(cd / && callgrind_annotate --inclusive=yes "$tmp/cg.out.1" | awk -v f="$fn " '!d && index($0, f){gsub(",","",$1); print $1; d=1}')
echo "$proto: $n requests; per request: $(python3 -c "print(round($tot/$n,1))") instructions" \
    "(whole process), $(python3 -c "print(round($in/$n,1))") inside ${fn#*:}"
