#!/usr/bin/env bash
# bloomd_front: lookups over bloomd's text protocol, on bloomgated's bloomd
# front (bloomd_listen, threads 1) and, given --bloomd PATH, on bloomd itself
# (one worker, in memory), in one run with the same client (bench_net
# --proto bloomd) and the same 1M items loaded into each with bulk sets; the
# line protocol's MCHECK on the same bloomgated beside them. Prints each
# round's items/s and the server's CPU ns per item, then the medians; asserts
# nothing (docs/benchmarks.md holds what it printed).
#   tests/bench/bloomd_front.sh [--bloomd PATH] [--rounds N] [--seconds S]
# B names the build directory (default _build in the tree).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${B:-$top/_build}
. "$top/tests/bench/lib.sh"
bloomd="" rounds=3 secs=5
while [ $# -gt 0 ]; do
    case $1 in
    --bloomd) bloomd=$(realpath "$2"); shift ;;
    --rounds) rounds=$2; shift ;;
    --seconds) secs=$2; shift ;;
    *) echo "usage: ${0##*/} [--bloomd PATH] [--rounds N] [--seconds S]" >&2; exit 2 ;;
    esac
    shift
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomd-front.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
n=1000000
net=("$B/tests/bench/bench_net")
common=(--item-len 48 --present-share 0.5 --duration "$secs" --warmup 1 --filter bench
    --keyspace $n)

pl=$(free_port) pb=$(free_port)
cat >"$tmp/bg.conf" <<CONF
listen 127.0.0.1:$pl
http_listen off
bloomd_listen 127.0.0.1:$pb
threads 1
log_level warn
filter bench {
    capacity $n
    fpr 0.0001
    journal off
}
CONF
"$B/bloomgated" -c "$tmp/bg.conf" >"$tmp/bg.log" 2>&1 &
bg=$!
pids+=("$bg")
wait_port "$pb" "$bg" 60 || { cat "$tmp/bg.log" >&2; exit 1; }
"${net[@]}" --proto bloomd --port "$pb" --filter bench --load $n --item-len 48 >/dev/null

if [ -n "$bloomd" ]; then
    pd=$(free_port)
    mkdir -p "$tmp/bloomd"
    printf '%s\n' "[bloomd]" "tcp_port = $pd" "udp_port = $(free_port)" \
        "bind_address = 127.0.0.1" "data_dir = $tmp/bloomd" "log_level = WARN" "workers = 1" \
        "flush_interval = 0" "in_memory = 1" >"$tmp/bloomd.conf"
    "$bloomd" -f "$tmp/bloomd.conf" >"$tmp/bloomd.log" 2>&1 &
    bd=$!
    pids+=("$bd")
    wait_port "$pd" "$bd" 60 || { cat "$tmp/bloomd.log" >&2; exit 1; }
    exec 3<>"/dev/tcp/127.0.0.1/$pd"
    printf 'create bench capacity=%s prob=0.0001 in_memory=1\n' $n >&3
    read -r -t 30 reply <&3 || reply="(no answer)"
    exec 3>&-
    [ "${reply%$'\r'}" = Done ] || { echo "bloomd: create answered '$reply'" >&2; exit 1; }
    "${net[@]}" --proto bloomd --port "$pd" --filter bench --load $n --item-len 48 >/dev/null
fi

# m: multi of 100 keys, 4 connections x 4 in flight; c: one key a check,
# 4 connections x 100 in flight; M: the line protocol's MCHECK of 100.
rows=$tmp/rows
echo "case side round      items/s  server_ns/item   (bg: bloomgated's bloomd front, bd: bloomd, ln: bloomgated's line protocol)"
for r in $(seq "$rounds"); do
    measure_row "$rows" m bg "$r" "$bg" "${net[@]}" --proto bloomd --port "$pb" --items 100 \
        --connections 4 --pipeline 4 "${common[@]}"
    [ -z "$bloomd" ] || measure_row "$rows" m bd "$r" "$bd" "${net[@]}" --proto bloomd \
        --port "$pd" --items 100 --connections 4 --pipeline 4 "${common[@]}"
    measure_row "$rows" M ln "$r" "$bg" "${net[@]}" --proto line --port "$pl" --items 100 \
        --connections 4 --pipeline 4 "${common[@]}"
    measure_row "$rows" c bg "$r" "$bg" "${net[@]}" --proto bloomd --port "$pb" \
        --connections 4 --pipeline 100 "${common[@]}"
    [ -z "$bloomd" ] || measure_row "$rows" c bd "$r" "$bd" "${net[@]}" --proto bloomd \
        --port "$pd" --connections 4 --pipeline 100 "${common[@]}"
done
echo "medians over $rounds rounds:"
print_medians "$rows" "m M c" "bg bd ln" | grep -v ' 0 items/s\|  items/s'
