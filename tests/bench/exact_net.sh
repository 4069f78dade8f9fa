#!/usr/bin/env bash
# exact_net.sh: what the exact phase (issue 30, docs/design.md "The exact
# phase") costs a served CHECK. One daemon (threads 1, so that the client has
# the other core) serves `plain` and `exact`, the same N items built with the
# same seed, `exact` with `bloomgate build --exact`; bench_net sends the same
# requests to each, alternating, --repeat rounds: one-item CHECKs (32 in
# flight a connection) and MCHECKs of 100, clean traffic (no item present)
# and half present. Each line: items/s and the server's CPU ns an item
# (utime + stime around the run, warm-up included). Prints figures, asserts
# nothing.
#
#   tests/bench/exact_net.sh [--build DIR] [--items N] [--repeat R] [--duration S]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
B=$top/_build n=10000000 repeat=1 dur=8 warm=2
while [ $# -gt 0 ]; do
    case $1 in
    --build) B=$(realpath "$2"); shift 2 ;;
    --items) n=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --duration) dur=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--items N] [--repeat R] [--duration S]" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-exactnet.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$B/tests/bench/bench_net" --dump "$n" >"$tmp/items.txt"
"$B/bloomgate" build -q --seed 77 -o "$tmp/plain.bf" "$tmp/items.txt"
"$B/bloomgate" build -q --seed 77 --exact -o "$tmp/exact.bf" "$tmp/items.txt"
rm "$tmp/items.txt"
port=$(free_port)
printf '%s\n' "listen 127.0.0.1:$port" "http_listen off" "threads 1" "log_level warn" \
    "filter plain {" "    file $tmp/plain.bf" "    journal off" "}" \
    "filter exact {" "    file $tmp/exact.bf" "    journal off" "}" >"$tmp/bg.conf"
"$B/bloomgated" -c "$tmp/bg.conf" 2>"$tmp/bg.log" &
pid=$!
wait_port "$port" "$pid" 60 || { cat "$tmp/bg.log" >&2; exit 1; }
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); $n items of 48 bytes, fpr 1e-4, table $(stat -c %s "$tmp/exact.bf.exact") bytes"
run() { # run LABEL ARGS...: one bench_net run, one line
    local label=$1 c0 c1 line ips all
    shift
    c0=$(cpu_ticks "$pid")
    line=$("$B/tests/bench/bench_net" --proto line --port "$port" --keyspace "$n" \
        --connections 4 --duration "$dur" --warmup "$warm" --label "$label" "$@")
    c1=$(cpu_ticks "$pid")
    ips=$(sed -n 's/.*"items_per_s":\([0-9.]*\).*/\1/p' <<<"$line")
    all=$(awk -v i="$ips" -v d="$dur" -v w="$warm" 'BEGIN { printf "%.0f", i * (d + w) }')
    printf '%-24s %10.0f items/s  server %4s ns/item  %s\n' "$label" "$ips" \
        "$(ns_per_item $((c1 - c0)) "$all")" \
        "$(grep -o '"false_positives":[0-9]*\|"p99_us":[0-9.]*' <<<"$line" | tr '\n' ' ')"
}
for r in $(seq "$repeat"); do
    for share in 0 0.5; do
        for f in plain exact; do
            run "$f-CHECK-p$share" --filter "$f" --present-share "$share" --items 1 --pipeline 32
        done
        for f in plain exact; do
            run "$f-MCHECK100-p$share" --filter "$f" --present-share "$share" --items 100 --pipeline 4
        done
    done
done
