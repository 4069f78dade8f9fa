#!/usr/bin/env bash
# exact_net.sh: what the exact phase (issue 30, docs/design.md "The exact
# phase") costs a served CHECK. One daemon (threads 1, so that the client has
# the other core) serves `plain` and `exact`, the same N items built with the
# same seed, `exact` with `bloomgate build --exact`; bench_net sends the same
# requests to each, alternating, --repeat rounds: one-item CHECKs (32 in
# flight a connection) and MCHECKs of 100, clean traffic (no item present)
# and half present (--shares). Each line: items/s and the server's CPU ns an
# item (utime + stime around the run, warm-up included). Prints figures,
# asserts nothing.
#
# --files PLAIN EXACT serves two filter files already built from
# `bench_net --dump N` (N = --items) with the same seed, EXACT with --exact
# (say at 10^9, built from a stream as scale.sh does): nothing is built or
# removed. --confirm adds what a confirmation costs, with the table's pages
# evicted and then in the page cache: the table is dropped from the page
# cache before the daemon starts (posix_fadvise DONTNEED, `dd iflag=nocache
# count=0`; mapped pages would stay), every item present, one request in
# flight on one connection (CHECK, then MCHECK of 100), each filter in turn;
# pages read a confirmation from the daemon's /proc/PID/io read_bytes against
# INFO's confirmations, latency from bench_net's p50/p99. Then the table is
# read into the page cache (cat) and the same runs repeated. The daemon's RSS,
# anonymous against mapped file (RssAnon, RssFile), is printed after the load
# and at the end.
#
#   tests/bench/exact_net.sh [--build DIR] [--items N] [--repeat R] [--duration S]
#                            [--shares "0 0.5"] [--files PLAIN EXACT] [--confirm]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
B=$top/_build n=10000000 repeat=1 dur=8 warm=2 shares="0 0.5" pf="" xf="" confirm=0
usage="usage: $0 [--build DIR] [--items N] [--repeat R] [--duration S] [--shares LIST] [--files PLAIN EXACT] [--confirm]"
while [ $# -gt 0 ]; do
    case $1 in
    --build) B=$(realpath "$2"); shift 2 ;;
    --items) n=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --duration) dur=$2; shift 2 ;;
    --shares) shares=$2; shift 2 ;;
    --files) pf=$(realpath "$2"); xf=$(realpath "$3"); shift 3 ;;
    --confirm) confirm=1; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-exactnet.XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
n=$(awk -v n="$n" 'BEGIN { printf "%.0f", n }') # 1e9 as bench_net takes it
if [ -z "$pf" ]; then
    pf=$tmp/plain.bf xf=$tmp/exact.bf
    "$B/tests/bench/bench_net" --dump "$n" >"$tmp/items.txt"
    "$B/bloomgate" build -q --seed 77 -o "$pf" "$tmp/items.txt"
    "$B/bloomgate" build -q --seed 77 --exact -o "$xf" "$tmp/items.txt"
    rm "$tmp/items.txt"
fi
xt=$xf.exact
[ -f "$xt" ] || { echo "exact_net.sh: $xf has no table beside it ($xt)" >&2; exit 2; }
mib() { awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }
rss_line() { # rss_line WHEN: the daemon's resident set, anonymous and file-backed
    awk -v w="$1" '/^(VmRSS|RssAnon|RssFile):/ { v[$1] = $2 }
        END { printf "rss %s: %.0f MiB (anonymous %.0f MiB, mapped file %.0f MiB)\n", w,
              v["VmRSS:"] / 1024, v["RssAnon:"] / 1024, v["RssFile:"] / 1024 }' "/proc/$pid/status"
}
cached() { fincore -nb -o RES,SIZE "$xt" 2>/dev/null | awk '{ printf "%.1f %% of the table in the page cache", 100 * $1 / $2 }'; }
if [ "$confirm" = 1 ]; then
    dd if="$xt" iflag=nocache count=0 status=none
    echo "table evicted: $(cached)"
fi
port=$(free_port)
printf '%s\n' "listen 127.0.0.1:$port" "http_listen off" "threads 1" "log_level info" \
    "filter plain {" "    file $pf" "    journal off" "}" \
    "filter exact {" "    file $xf" "    journal off" "}" >"$tmp/bg.conf"
"$B/bloomgated" -c "$tmp/bg.conf" 2>"$tmp/bg.log" &
pid=$!
for _ in $(seq 6000); do # 600 s: the port accepts before the filters are loaded
    grep -q ' ready: ' "$tmp/bg.log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/bg.log" >&2; exit 1; }
    sleep 0.1
done
wait_port "$port" "$pid" 60 || { cat "$tmp/bg.log" >&2; exit 1; }
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); $n items of 48 bytes; filters $(stat -c %s "$pf") and $(stat -c %s "$xf") bytes, table $(stat -c %s "$xt") bytes"
rss_line "after the load"
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
for _ in $(seq "$repeat"); do
    for share in $shares; do
        for f in plain exact; do
            run "$f-CHECK-p$share" --filter "$f" --present-share "$share" --items 1 --pipeline 32
        done
        for f in plain exact; do
            run "$f-MCHECK100-p$share" --filter "$f" --present-share "$share" --items 100 --pipeline 4
        done
    done
done
[ "$confirm" = 1 ] || exit 0

confirmations() { # the exact filter's confirmations so far (INFO exact)
    local l
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    printf 'INFO exact\r\n' >&3
    IFS= read -r l <&3
    exec 3<&-
    sed -n 's/.*"confirmations":\([0-9]*\).*/\1/p' <<<"$l"
}
read_bytes() { awk '/^read_bytes:/ { print $2 }' "/proc/$pid/io"; }
confirm_run() { # confirm_run STATE LABEL ARGS...: every item present, one request in flight
    local state=$1 label=$2 k0 r0 k1 r1 line
    shift 2
    k0=$(confirmations) r0=$(read_bytes)
    line=$("$B/tests/bench/bench_net" --proto line --port "$port" --keyspace "$n" \
        --connections 1 --pipeline 1 --present-share 1 --duration "$dur" --warmup "$warm" \
        --server-pid "$pid" --label "$label" "$@")
    k1=$(confirmations) r1=$(read_bytes)
    jq -r --arg s "$state" --arg l "$label" --argjson k $((k1 - k0)) --argjson r $((r1 - r0)) \
        '"\($s) \($l): \(.items_per_s | round) items/s, p50 \(.p50_us) us, p99 \(.p99_us) us, server \(.server_cpu_ns_per_item | round) ns/item; confirmations \($k), pages read \($r / 4096 | round) (\(if $k > 0 then ($r / 4096 / $k * 100 | round) / 100 else 0 end) a confirmation; warm-up included)"' <<<"$line"
}
confirm_all() { # confirm_all STATE: seeds of their own, so no run reads pages another read
    confirm_run "$1" plain-CHECK-p1 --filter plain --items 1 --seed 101
    confirm_run "$1" exact-CHECK-p1 --filter exact --items 1 --seed 102
    confirm_run "$1" plain-MCHECK100-p1 --filter plain --items 100 --seed 103
    confirm_run "$1" exact-MCHECK100-p1 --filter exact --items 100 --seed 104
}
echo "before the cold runs: $(cached)"
confirm_all evicted
echo "after the cold runs: $(cached); load $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(date +%s.%N)
cat "$xt" >/dev/null
echo "table read into the page cache in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s: $(cached)"
confirm_all cached
rss_line "at the end"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
