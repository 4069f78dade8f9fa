#!/usr/bin/env bash
# Paired A/B benchmark of two bloomgated builds: the same client (A's
# bench_net), the same filter file, both daemons running at once with
# `threads 1`, the cases alternated A B A B, and each server's own CPU time per
# item (utime + stime of every thread, from /proc/PID/stat) beside its
# throughput. On a shared 2-core machine throughput moves with the load; the
# CPU time per item moves much less, and the pairing cancels drift.
#   tests/bench/ab.sh BUILD_DIR_A BUILD_DIR_B [ROUNDS] [SECONDS]
# Cases: pipelined CHECK (1 conn x 100), MCHECK of 100 (4 conns x 4), MCHECK
# of 100 URLs on a url filter (4 conns x 4; issue 11: the items respelled so
# that only canonicalisation finds them), HTTP GET check (50 conns). Prints
# one line per run and the medians.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh" # free_port, wait_port, cpu_ticks, ns_per_item, median
A=$(cd "${1:?usage: ab.sh BUILD_A BUILD_B [ROUNDS] [SECONDS]}" && pwd)
Bd=$(cd "${2:?usage: ab.sh BUILD_A BUILD_B [ROUNDS] [SECONDS]}" && pwd)
rounds=${3:-3}
dur=${4:-3}
command -v jq >/dev/null || { echo "ab.sh: needs jq (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-ab.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

"$A/tests/bench/bench_net" --dump 1000000 --item-len 48 |
    "$A/bloomgate" build -o "$tmp/bench.bloom" --capacity 1000000 --fpr 0.0001 --quiet -
"$A/tests/bench/bench_net" --dump 1000000 --item-len 48 >"$tmp/items.txt"
"$A/bloomgate" build --format urls --keys url -o "$tmp/urls.bloom" --capacity 1000000 \
    --fpr 0.0001 --quiet "$tmp/items.txt"
declare -A pid lport hport
for side in A B; do
    dir=$A; [ $side = B ] && dir=$Bd
    lport[$side]=$(free_port); hport[$side]=$(free_port)
    cat >"$tmp/$side.conf" <<CONF
listen 127.0.0.1:${lport[$side]}
http_listen 127.0.0.1:${hport[$side]}
threads 1
log_level warn
filter bench {
    file $tmp/bench.bloom
    journal off
}
filter urls {
    file $tmp/urls.bloom
    journal off
}
CONF
    "$dir/bloomgated" -c "$tmp/$side.conf" 2>"$tmp/$side.log" &
    pid[$side]=$!
    pids+=("$!")
done
for side in A B; do
    wait_port "${hport[$side]}" "${pid[$side]}" 30 || { cat "$tmp/$side.log" >&2; echo "ab.sh: $side did not start" >&2; exit 1; }
done

cases=(c2 c3 c3u c4)
args_c2="--proto line --connections 1 --pipeline 100"
args_c3="--proto line --items 100 --connections 4 --pipeline 4"
args_c3u="--proto line --items 100 --connections 4 --pipeline 4 --url-items"
args_c4="--proto http --connections 50"
printf '%-4s %-2s %5s %12s %14s\n' case bg round items/s "cpu ns/item"
for r in $(seq "$rounds"); do
    for c in "${cases[@]}"; do
        for side in A B; do
            a="args_$c"
            port=${lport[$side]}; [ $c = c4 ] && port=${hport[$side]}
            filter=bench; [ $c = c3u ] && filter=urls
            measure_row "$tmp/rows" "$c" "$side" "$r" "${pid[$side]}" "$A/tests/bench/bench_net" ${!a} \
                --port "$port" --filter $filter --keyspace 1000000 --item-len 48 \
                --present-share 0.5 --duration "$dur" --warmup 0
        done
    done
done
echo "medians over $rounds rounds of ${dur} s (A: $A, B: $Bd):"
print_medians "$tmp/rows" "${cases[*]}" "A B"
