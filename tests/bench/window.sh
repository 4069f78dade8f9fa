#!/usr/bin/env bash
# A windowed filter (`window 1h`, `slices 4`: five sub-filters checked per
# item) against a plain blocked filter, in one run: both daemons at once with
# `threads 1`, both filled at run time with the same 1M items (bench_net
# --load, MADD), the cases alternated P W P W, and each server's CPU time per
# item (utime + stime, /proc/PID/stat) beside its throughput, as
# tests/bench/ab.sh does. The load takes seconds, so all of W's items land
# in one slice: W gets capacity 4M (each slice sized for 1M at fpr/5), and
# its four other slices are empty, their probes cheap; bench_filter's
# windowed figures are the steady state (five filled slices).
#   tests/bench/window.sh BUILD_DIR [ROUNDS] [SECONDS]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh" # free_port, wait_port, cpu_ticks, ns_per_item, median
B=$(cd "${1:?usage: window.sh BUILD_DIR [ROUNDS] [SECONDS]}" && pwd)
rounds=${2:-3}
dur=${3:-4}
command -v jq >/dev/null || { echo "window.sh: needs jq (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-window.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

declare -A pid lport
for side in P W; do
    lport[$side]=$(free_port)
    extra="    capacity 1000000"
    [ $side = W ] && extra=$'    capacity 4000000\n    window 1h\n    slices 4'
    cat >"$tmp/$side.conf" <<CONF
listen 127.0.0.1:${lport[$side]}
http_listen off
threads 1
log_level warn
filter bench {
    fpr 0.0001
    journal off
$extra
}
CONF
    "$B/bloomgated" -c "$tmp/$side.conf" 2>"$tmp/$side.log" &
    pid[$side]=$!
    pids+=("$!")
done
for side in P W; do
    wait_port "${lport[$side]}" "${pid[$side]}" 30 || { cat "$tmp/$side.log" >&2; echo "window.sh: $side did not start" >&2; exit 1; }
    "$B/tests/bench/bench_net" --proto line --port "${lport[$side]}" --filter bench \
        --item-len 48 --load 1000000 >/dev/null
done

cases=(c2 c3)
args_c2="--proto line --connections 1 --pipeline 100"
args_c3="--proto line --items 100 --connections 4 --pipeline 4"
printf '%-4s %-2s %5s %12s %14s\n' case side round items/s "cpu ns/item"
for r in $(seq "$rounds"); do
    for c in "${cases[@]}"; do
        for side in P W; do
            a="args_$c"
            measure_row "$tmp/rows" "$c" "$side" "$r" "${pid[$side]}" "$B/tests/bench/bench_net" ${!a} \
                --port "${lport[$side]}" --filter bench --keyspace 1000000 --item-len 48 \
                --present-share 0.5 --duration "$dur" --warmup 0
        done
    done
done
echo "medians over $rounds rounds of ${dur} s (P: plain blocked, W: window 1h, slices 4):"
print_medians "$tmp/rows" "${cases[*]}" "P W"
