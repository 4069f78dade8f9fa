#!/usr/bin/env bash
# words_http.sh: scans per second over HTTP (POST /v1/filters/bad/scan,
# text/plain) for comments of about 1 KiB, and the server's CPU per scan, the
# HTTP counterpart of the line-protocol figure in docs/benchmarks.md ("Word
# lists served"): the same 50,000-entry list and texts (bench_words's
# WORDS_BENCH_DUMP), 2,000 comments cut from each text at UTF-8 boundaries
# (line feeds as spaces), one daemon with `threads 1`, wrk (Debian's) with
# tests/bench/words_http.lua on 2 threads and 8 connections, client and
# server on the same CPUs. CPU is the daemon's utime + stime from /proc over
# the measured run alone (the warm-up before it is not counted). The same
# comments are then replayed over the line protocol by bench_net, for the
# two fronts side by side under the same load. Prints
# figures, asserts nothing; fails if any answer is not a 200.
#
#   tests/bench/words_http.sh [--build DIR] [--duration S] [--connections C]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
B=$top/_build dur=8 conns=8 warm=2
while [ $# -gt 0 ]; do
    case $1 in
    --build) B=$(realpath "$2"); shift 2 ;;
    --duration) dur=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--duration S] [--connections C]" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "${0##*/}: needs wrk (apt-get install wrk)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-wordshttp.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
WORDS_BENCH_DUMP=$tmp "$B/tests/bench/bench_words" 50000 2 >"$tmp/bench_words.out"
"$B/bloomgate" build -q --format words -o "$tmp/bad.bloom" "$tmp/list.txt"
# 2,000 comments of 1,024 bytes or a little less (cut back to a UTF-8 start).
for t in english mixed; do
    python3 - "$tmp/$t.txt" "$tmp/$t.bodies" <<'PY'
import sys
data = open(sys.argv[1], "rb").read().replace(b"\n", b" ").replace(b"\r", b" ")
out, at = [], 0
while len(out) < 2000 and at + 1024 <= len(data):
    end = at + 1024
    while end > at and (data[end] & 0xC0) == 0x80:
        end -= 1
    out.append(data[at:end])
    at = end
open(sys.argv[2], "wb").write(b"\n".join(out) + b"\n")
PY
done
port=$(free_port) lport=$(free_port)
cat >"$tmp/bg.conf" <<EOC
listen 127.0.0.1:$lport
http_listen 127.0.0.1:$port
threads 1
log_level warn
filter bad {
    file $tmp/bad.bloom
    keys words
}
EOC
"$B/bloomgated" -c "$tmp/bg.conf" >"$tmp/daemon.log" 2>&1 &
pid=$!
wait_port "$port" "$pid" || { cat "$tmp/daemon.log" >&2; exit 1; }
echo "tree $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for t in english mixed; do
    url=http://127.0.0.1:$port
    wrk -t2 -c"$conns" -d"${warm}s" -s "$here/words_http.lua" "$url" -- "$tmp/$t.bodies" bad >/dev/null
    t0=$(cpu_ticks "$pid")
    wrk -t2 -c"$conns" -d"${dur}s" --latency -s "$here/words_http.lua" "$url" \
        -- "$tmp/$t.bodies" bad >"$tmp/$t.wrk"
    t1=$(cpu_ticks "$pid")
    n=$(awk '/requests in/ { print $1 }' "$tmp/$t.wrk")
    rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$tmp/$t.wrk")
    line=$(grep '^wrk: ' "$tmp/$t.wrk")
    case $line in *"not 200 0,"*) ;; *) echo "${0##*/}: $t: $line" >&2; exit 1 ;; esac
    printf '%-8s http %8s scans/s  %6s ns server CPU per scan  (%s)\n' "$t" "$rps" \
        "$(ns_per_item $((t1 - t0)) "$n")" "${line#wrk: }"
    # The same comments over the line protocol, beside it (the earlier
    # figure's replay: 2 connections, 4 in flight each).
    sed 's/^/SCAN bad /' "$tmp/$t.bodies" >"$tmp/$t.req"
    "$B/tests/bench/bench_net" --proto line --port "$lport" --replay "$tmp/$t.req" \
        --connections 2 --pipeline 4 --duration "$warm" >/dev/null 2>&1 || true
    t0=$(cpu_ticks "$pid")
    # bench_net counts a SCAN as one item answered by one CLEAN or FOUND line
    # (yes_share: the share FOUND); any other answer fails the run.
    out=$("$B/tests/bench/bench_net" --proto line --port "$lport" --replay "$tmp/$t.req" \
        --connections 2 --pipeline 4 --duration "$dur" 2>"$tmp/$t.bench_net.err") ||
        { echo "${0##*/}: $t: bench_net failed:" >&2; head -5 "$tmp/$t.bench_net.err" >&2; exit 1; }
    t1=$(cpu_ticks "$pid")
    n=$(jq -r .commands <<<"$out")
    printf '%-8s line %8.0f scans/s  %6s ns server CPU per scan  (%.0f%% blocked)\n' "$t" \
        "$(jq -r .commands_per_s <<<"$out")" "$(ns_per_item $((t1 - t0)) "$n")" \
        "$(jq -r '.yes_share * 100' <<<"$out")"
done
