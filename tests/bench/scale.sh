#!/usr/bin/env bash
# A filter of N items on this machine (issue #16; default N = 1e9, the
# reference case is ten times that): builds it at 1e-4 from a stream of
# generated URL-like items (bench_net --dump: 48 bytes each, deterministic),
# starts bloomgated on it (threads 2), and prints
#   - build items/s against reading the same stream (generator | wc -l),
#   - the time from exec to the "ready:" log line, and the daemon's own load,
#   - RSS against the file size,
#   - MCHECK of 100 items/s out of cache (bench_net, random items of the N,
#     half present, 4 connections x 4 in flight) with the server's CPU per item,
#   - a reload of the same size under that load: the file touched, SIGHUP,
#     while bench_net runs (--window-signals marks the reload's window): the
#     reload's time, the peak RSS (VmHWM, and VmRSS sampled every 20 ms), the
#     failed requests, p50/p99 before, during and after the swap,
# then each of the issue's targets, met or missed. A benchmark: it asserts
# nothing, but exits 1 if a request failed.
#   tests/bench/scale.sh [N] [BUILD_DIR] [SECONDS]
# N as bloomgate build --capacity takes it (1e9, 100M); SECONDS per measured
# part (default 10). Needs the file's size free on the temporary directory's
# file system and twice the file in available memory (checked first); stops
# the daemon and removes everything it made, also on failure or ^C.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
N=${1:-1e9}
B=$(cd "${2:-$top/_build}" && pwd)
secs=${3:-10}
command -v jq >/dev/null || { echo "scale.sh: needs jq (apt-get install jq)" >&2; exit 2; }
n=$(awk -v n="$N" 'BEGIN { m = 1; if (n ~ /[kK]$/) m = 1e3; if (n ~ /M$/) m = 1e6;
    if (n ~ /G$/) m = 1e9; printf "%.0f", (n + 0) * m }')
gen=("$B/tests/bench/bench_net" --dump "$n" --item-len 48)
mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-scale.XXXXXX")
dpid="" bpid="" spid=""
cleanup() {
    local p
    for p in $spid $bpid $dpid; do kill -TERM "$p" 2>/dev/null || true; done
    for p in $spid $bpid $dpid; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- can this machine take it? ----
file_bytes=$("$B/bloomgate" build --dry-run --capacity "$n" --fpr 0.0001 -o "$tmp/x" | jq .bytes)
disk=$(df -B1 --output=avail "$tmp" | tail -1)
mem=$(awk '/^MemAvailable:/ { printf "%.0f", $2 * 1024 }' /proc/meminfo)
if [ "$disk" -lt $((file_bytes + (256 << 20))) ]; then
    echo "scale.sh: the filter file needs $(mib "$file_bytes") (and 256 MiB to spare) on $tmp's file system, which has $(mib "$disk") free; set TMPDIR to a larger one or lower N" >&2
    exit 2
fi
if [ "$mem" -lt $((2 * file_bytes + (512 << 20))) ]; then
    echo "scale.sh: a reload holds two copies of the filter: $(mib $((2 * file_bytes))) (and 512 MiB to spare), but only $(mib "$mem") of memory is available; lower N" >&2
    exit 2
fi

echo "== bloomgate at scale (tests/bench/scale.sh $N)"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min); $n items, 1e-4, file $(mib "$file_bytes"), $(mib "$disk") free on disk, $(mib "$mem") memory available"

# ---- build against reading the stream ----
echo "  \$ bench_net --dump $n --item-len 48 | wc -l"
t=$(now)
lines=$("${gen[@]}" | wc -l)
read_s=$(since "$t")
[ "$lines" = "$n" ] || { echo "scale.sh: the generator gave $lines lines, not $n" >&2; exit 1; }
echo "  \$ bench_net --dump $n --item-len 48 | bloomgate build -o scale.bloom --capacity $n --fpr 0.0001 -"
t=$(now)
"${gen[@]}" | /usr/bin/time -f '%M %U %S' -o "$tmp/build.time" \
    "$B/bloomgate" build -o "$tmp/scale.bloom" --capacity "$n" --fpr 0.0001 - >"$tmp/build.out"
build_s=$(since "$t")
read -r build_kb build_user build_sys <"$tmp/build.time"
sed 's/^/    /' "$tmp/build.out"
size=$(stat -c %s "$tmp/scale.bloom")
awk -v n="$n" -v r="$read_s" -v b="$build_s" -v kb="$build_kb" -v u="$build_user" -v s="$build_sys" 'BEGIN {
    printf "read:  %.2f M items/s (%.1f s; the generator and wc)\n", n / r / 1e6, r
    printf "build: %.2f M items/s (%.1f s; generator and build on the same CPUs), %.2f of the reading speed (target >= 0.33); build CPU %.0f s, peak RSS %.0f MiB\n",
        n / b / 1e6, b, r / b, u + s, kb / 1024 }'
echo "load at the end of the build: $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- start-up ----
port=$(free_port)
cat >"$tmp/d.conf" <<CONF
listen 127.0.0.1:$port
http_listen off
threads 2
log_level info
filter scale {
    file $tmp/scale.bloom
    journal off
}
CONF
t=$(now)
"$B/bloomgated" -c "$tmp/d.conf" 2>"$tmp/d.log" &
dpid=$!
for _ in $(seq 6000); do # 300 s
    grep -q ' ready: ' "$tmp/d.log" && break
    kill -0 "$dpid" 2>/dev/null || { cat "$tmp/d.log" >&2; echo "scale.sh: bloomgated exited" >&2; exit 1; }
    sleep 0.05
done
ready_s=$(since "$t")
grep -q ' ready: ' "$tmp/d.log" || { cat "$tmp/d.log" >&2; echo "scale.sh: not ready in 300 s" >&2; exit 1; }
wait_port "$port" "$dpid" 30 || { echo "scale.sh: port $port not accepting" >&2; exit 1; }
load_s=$(sed -n 's/.*filter scale: loaded .*(\([0-9.]*\) s)$/\1/p' "$tmp/d.log" | tail -1)
rss0=$(($(rss_kb "$dpid") * 1024))
echo "start: ready ${ready_s} s after exec (the filter's load ${load_s} s, as the daemon logs it)"
echo "rss:   $(mib "$rss0") against the file's $(mib "$size") (target <= file + 64 MiB: $([ "$rss0" -le $((size + (64 << 20))) ] && echo met || echo MISSED))"

# ---- MCHECK out of cache ----
bn=("$B/tests/bench/bench_net" --proto line --port "$port" --filter scale --keyspace "$n"
    --item-len 48 --present-share 0.5 --items 100 --connections 4 --pipeline 4 --server-pid "$dpid")
echo "  \$ bench_net --proto line --filter scale --keyspace $n --items 100 --connections 4 --pipeline 4 --duration $secs --warmup 2"
line=$("${bn[@]}" --duration "$secs" --warmup 2 --label scale-mcheck) || true
echo "$line" >"$tmp/mcheck.json"
jq -r '"mcheck: \(.items_per_s / 1e6 * 100 | round / 100) M items/s, server CPU \(.server_cpu_ns_per_item | round) ns/item, client \(.client_cpu_cores) cores, p50 \(.p50_us) us, p99 \(.p99_us) us, errors \(.errors), false-positive rate \(.false_positive_rate)"' <<<"$line"

# ---- a reload of the same size under that load ----
# The same client with --window-signals: SIGUSR1 opens the window as the
# SIGHUP goes, SIGUSR2 closes it when the daemon logs the reload's end.
echo "  \$ bench_net ... --window-signals (touch the file, SIGHUP the daemon ${secs} s into the run)"
"${bn[@]}" --duration 86400 --warmup 2 --window-signals --label scale-reload >"$tmp/reload.json" &
bpid=$!
sleep $((2 + secs))
echo 5 >"/proc/$dpid/clear_refs" # VmHWM := VmRSS: the peak from here on
# The sampler: shell builtins only, so it costs little of the CPUs measured.
(
    exec {never}<> <(:) # read -t on it is a 20 ms sleep without a fork
    peak=0
    while :; do
        while read -r k v _; do
            [ "$k" = VmRSS: ] && [ "$v" -gt "$peak" ] && { peak=$v; echo "$peak" >"$tmp/peak"; }
        done <"/proc/$dpid/status"
        read -r -t 0.02 -u "$never" _ || true
    done
) 2>/dev/null &
spid=$!
touch "$tmp/scale.bloom"
kill -USR1 "$bpid"
t=$(now)
kill -HUP "$dpid"
for _ in $(seq 12000); do # 600 s
    grep -q 'reload \(done\|finished with errors\) in' "$tmp/d.log" && break
    sleep 0.05
done
reload_wall=$(since "$t")
kill -USR2 "$bpid"
reload_log=$(grep -o 'reload \(done\|finished with errors\) in [0-9.]* s' "$tmp/d.log" | tail -1)
[ -n "$reload_log" ] || { echo "scale.sh: no reload end in 600 s" >&2; exit 1; }
# After: until the old version is freed (the grace period), then a part as
# long as the before part.
sleep "$secs"
rss1=$(($(rss_kb "$dpid") * 1024))
hwm=$(($(hwm_kb "$dpid") * 1024))
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
spid=""
sampled=$(($(cat "$tmp/peak" 2>/dev/null || echo 0) * 1024))
kill -TERM "$bpid"
wait "$bpid" || true
bpid=""
r=$(cat "$tmp/reload.json")
echo "reload: $reload_log (the daemon's log), ${reload_wall} s from SIGHUP to that line"
echo "        the line: $(grep 'filter scale: loaded' "$tmp/d.log" | tail -1 | sed 's/.*filter scale: //')"
for part in before window after; do
    jq -r --arg p "$part" '.[$p] | "  \($p | . + "      " | .[0:7]) \(.seconds) s: \(.items_per_s / 1e6 * 100 | round / 100) M items/s, p50 \(.p50_us) us, p99 \(.p99_us) us, p99.9 \(.p999_us) us, max ~\(.max_us) us, over 100 ms \(.over_100ms), errors \(.errors)"' <<<"$r"
done
echo "rss:   peak $(mib "$hwm") (VmHWM; sampled every 20 ms: $(mib "$sampled")), after $(mib "$rss1")"

# ---- the targets ----
ok() { if [ "$1" = 1 ]; then echo met; else echo MISSED; fi; }
errs=$(jq '.errors' <<<"$r")
p99b=$(jq '.before.p99_us' <<<"$r")
p99w=$(jq '.window.p99_us' <<<"$r")
echo "targets:"
echo "  build >= 1/3 of reading: $(ok "$(awk -v r="$read_s" -v b="$build_s" 'BEGIN { print (r / b >= 1 / 3) }')")"
echo "  RSS <= file + 64 MiB before ($(mib "$rss0")) and after ($(mib "$rss1")) the reload: $(ok "$(( rss0 <= size + (64 << 20) && rss1 <= size + (64 << 20) ))")"
echo "  0 failed requests during the reload run ($errs): $(ok "$((errs == 0))")"
echo "  p99 during the swap <= 2 x before ($p99w us against $p99b us): $(ok "$(awk -v w="$p99w" -v b="$p99b" 'BEGIN { print (w <= 2 * b) }')")"
echo "  peak RSS <= 2 x file + 64 MiB ($(mib "$hwm") against $(mib $((2 * size + (64 << 20))))): $(ok "$((hwm <= 2 * size + (64 << 20)))")"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "raw:"
cat "$tmp/mcheck.json" "$tmp/reload.json"
[ "$errs" = 0 ]
