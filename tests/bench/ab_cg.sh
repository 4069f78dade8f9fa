#!/usr/bin/env bash
# ab_cg.sh: instructions per item of adblock_net.sh's cases, counted by
# callgrind (load-independent, unlike its timings). Runs bloomgated (threads 1)
# under callgrind on the filters and request files that `KEEP=1
# tests/bench/adblock_net.sh` left in DIR (ads.bloom, urls.bloom,
# CASE.txt), sends the first LINES lines of each CASE's file twice (the first
# pass warms the per-thread memos and is not counted: collection is switched
# on for the second), four requests in flight, and prints FUNC's inclusive
# instructions (default conn_read_cb: reading, parsing, matching, replying)
# per item. Asserts nothing; not run by `make check`.
#   tests/bench/ab_cg.sh BUILD_DIR DIR [LINES] [CASE ...]
# Defaults: LINES 400, cases url-mcheck ads-mcheck. FN=func to count another
# function; OUT=dir keeps each case's callgrind.out.CASE there (for
# callgrind_annotate); VG_OPTS adds valgrind options, e.g. VG_OPTS='--cache-sim=yes
# --LL=524288,8,64' for simulated cache misses (then printed per item too).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
B=$(cd "${1:?usage: ab_cg.sh BUILD_DIR DIR [LINES] [CASE ...]}" && pwd)
D=$(cd "${2:?usage: ab_cg.sh BUILD_DIR DIR [LINES] [CASE ...]}" && pwd)
lines=${3:-400}
shift 2
[ $# -gt 0 ] && shift
cases=${*:-url-mcheck ads-mcheck}
fn=${FN:-conn_read_cb}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh" # free_port, wait_port
command -v valgrind >/dev/null || { echo "ab_cg.sh: needs valgrind" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-abcg.XXXXXX")
vp=
cleanup() {
    [ -n "$vp" ] && kill -TERM "$vp" 2>/dev/null && wait "$vp" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
for c in $cases; do
    port=$(free_port)
    cat >"$tmp/bg.conf" <<CONF
listen 127.0.0.1:$port
http_listen off
threads 1
log_level warn
filter ads {
    file $D/ads.bloom
    keys adblock
    journal off
}
filter urls {
    file $D/urls.bloom
    keys url
    journal off
}
CONF
    head -n "$lines" "$D/$c.txt" >"$tmp/req.txt"
    # shellcheck disable=SC2086
    valgrind --tool=callgrind ${VG_OPTS:-} --collect-atstart=no --toggle-collect="$fn" \
        --callgrind-out-file="$tmp/cg.$c" "$B/bloomgated" -c "$tmp/bg.conf" 2>"$tmp/vg.log" &
    vp=$!
    wait_port "$port" "$vp" 120 || { cat "$tmp/vg.log" >&2; exit 1; }
    # pass 1 warms up; callgrind_control -z zeroes the counts before pass 2
    items=$(python3 - "$port" "$tmp/req.txt" "$tmp" "$vp" <<'PY'
import socket, subprocess, sys
port, path, tmp, pid = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
reqs = open(path, 'rb').read().splitlines()
def items(l):
    w = l.split()[2:] if l.startswith(b'MCHECK') else [l.split()[2]]
    return sum(1 for x in w if not (x.startswith(b'type=') or x.startswith(b'from=')
                                     or x.startswith(b'method=')))
s = socket.create_connection(('127.0.0.1', port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
def run():
    buf, sent, got, depth = b'', 0, 0, 4
    while got < len(reqs):
        while sent < len(reqs) and sent - got < depth:
            s.sendall(reqs[sent] + b'\n')
            sent += 1
        while buf.count(b'\n') == 0:
            buf += s.recv(1 << 20)
        n = buf.count(b'\n')
        for l in buf.split(b'\n')[:n]:
            if l.startswith(b'ERR'):
                sys.exit('ab_cg.sh: ' + l.decode())
        buf = buf.split(b'\n', n)[n]
        got += n
run()
subprocess.run(['callgrind_control', '-z', pid], check=True, stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
run()
print(sum(items(l) for l in reqs))
PY
    )
    kill -INT "$vp"
    wait "$vp" || true
    vp=
    tot=$(callgrind_annotate "$tmp/cg.$c" 2>/dev/null | grep 'PROGRAM TOTALS')
    ir=$(awk '{ gsub(",", "", $1); print $1 }' <<<"$tot")
    printf '%-16s %s: %s instructions / %s items = %s an item\n' "$c" "$fn" "$ir" "$items" \
        "$(awk -v a="$ir" -v b="$items" 'BEGIN { printf "%.0f", a / b }')"
    # with --cache-sim: every event's count per item, as callgrind names them
    ev=$(grep -m1 '^Events recorded:' < <(callgrind_annotate "$tmp/cg.$c" 2>/dev/null) | cut -d: -f2)
    if [ "$(wc -w <<<"$ev")" -gt 1 ]; then
        awk -v ev="$ev" -v t="$tot" -v n="$items" 'BEGIN {
            split(ev, e, " "); gsub(",", "", t); gsub(/\([^)]*\)/, "", t); split(t, v, " "); s = ""
            for (i = 1; i in e; i++) s = s sprintf(" %s %.1f", e[i], v[i] / n)
            print "  per item:" s }'
    fi
    [ -n "${OUT:-}" ] && cp "$tmp/cg.$c" "$OUT/callgrind.out.$c"
done
