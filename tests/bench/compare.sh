#!/usr/bin/env bash
# compare.sh: bloomgated against Redis, nginx, a null server and, when given,
# RedisBloom and bloomd on this machine (issues #6 and #16). Starts every
# server on 127.0.0.1 in a temporary directory, loads the same items into
# each, runs the cases with one client (bench_net; wrk for HTTP against nginx)
# and the same settings, and prints one table: items/s, latency, each server's
# CPU time per item (utime + stime of all its threads and processes, from
# /proc, over exactly the measured seconds) and the client's CPU cores, a case
# flagged CLIENT when the client used ~1 core (it is one thread). The targets'
# ratios are of items/s, or of server CPU per item where the client was
# saturated. Stops everything it started. Not run by `make check`: it takes
# ~25 minutes (--quick: ~5).
#
#   tests/bench/compare.sh [--quick] [--out FILE] [--repeat N] [--build-dir DIR] [--keep]
#                          [--redisbloom PATH] [--bloomd PATH]
#   tests/bench/compare.sh --urls [--quick] [--build-dir DIR] [--keep]
#   tests/bench/compare.sh --resp [--redisbloom PATH] [--bloomd PATH] [--quick] [--repeat N]
#                          [--build-dir DIR]
#
#   --urls        only issue 11's case: MCHECK of 100 URLs against a url filter
#                 and of 100 exact items against an exact filter, one daemon
#                 serving both, the same client; items/s and the daemon's CPU
#                 time per item (/proc/PID/stat utime+stime over each run).
#                 Needs nothing beyond the build (~1 minute; --quick: ~20 s)
#
#   --resp        the Redis protocol front (resp_listen) against the line
#                 protocol, one daemon, the same client (bench_net): BF.MEXISTS
#                 of 100 against MCHECK of 100, BF.EXISTS against CHECK
#                 (pipelined), items/s and the daemon's CPU time per item,
#                 each round's and the medians; with --bloomd, then
#                 bloomd_front.sh in the same invocation (the bloomd front
#                 against bloomd, --repeat rounds)
#   --redisbloom PATH  also Redis (Debian's redis-server) with PATH, a
#                 redisbloom.so the user built (docs/benchmarks.md says how),
#                 BF.RESERVE'd and loaded with BF.MADD: BF.MEXISTS of 100 and
#                 pipelined BF.EXISTS in the full run, the BF.* cases with --resp
#   --bloomd PATH also bloomd (github.com/armon/bloomd, built with scons;
#                 docs/benchmarks.md), one worker, in memory, the filter made
#                 with "create" and loaded with bulk sets: multi ("m") of 100
#                 and pipelined check ("c") in the full run
#
#   --quick       short runs, a 20M-item filter for case 5, one repetition
#   --out FILE    also write every raw JSON line (bench_net's and wrk's) to FILE
#   --repeat N    runs per figure, the median (by items/s) is shown (default 3)
#   --build-dir   where the project is built (default _build, built if needed)
#   --keep        keep the temporary directory (configs, logs, filters)
#   --quiet-wait S  wait at most S seconds (default 120) before each figure for
#                 the CPUs to be 85% idle; on a machine shared with other work
#                 a smaller S keeps the run short (each server's CPU per item
#                 is less disturbed by other load than its items/s)
#
# Placement (2 CPUs shared by client and server): case 1 (one request per
# round trip) is run twice, "split" (server on CPU 1, client on CPU 0) and
# "shared" (both on CPU 1), because left to the scheduler it flips between the
# two from run to run. The throughput cases run unpinned: split pinning made
# the loopback TCP stall there (docs/benchmarks.md).
#
# Needs redis-server, nginx, wrk and jq: installed from Debian if missing.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$top/tests/bench/lib.sh" # free_port, wait_port, cpu_ticks, clk, median, rss_kb
quick=0
out=""
repeat=""
build_dir="$top/_build"
keep=0
urls=0
resp=0
redisbloom=""
bloomd=""
quiet_wait=120
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) quick=1 ;;
    --urls) urls=1 ;;
    --resp) resp=1 ;;
    --redisbloom) redisbloom=$(realpath -m "$2"); shift ;;
    --bloomd) bloomd=$(realpath -m "$2"); shift ;;
    --quiet-wait) quiet_wait=$2; shift ;;
    --out) out=$(realpath -m "$2"); shift ;;
    --repeat) repeat=$2; shift ;;
    --build-dir) build_dir=$(realpath -m "$2"); shift ;;
    --keep) keep=1 ;;
    -h | --help) sed -n '2,54p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

if [ "$quick" = 1 ]; then
    dur=2; warm=0.5; big=20000000; repeat=${repeat:-1}
else
    dur=10; warm=2; big=100000000; repeat=${repeat:-3}
fi
small=1000000        # items loaded everywhere
item_len=48
share=0.5
fpr=0.0001
bloom_k=13
# The hand-built Redis filter: classic sizing m = -n ln p / (ln 2)^2 for n, p.
bloom_bits=$(awk -v n=$small -v p=$fpr 'BEGIN { printf "%d", -n * log(p) / (log(2) ^ 2) + 1 }')

say() { printf '%s\n' "$*"; }
die() { printf 'compare.sh: %s\n' "$*" >&2; exit 1; }

# ---- --urls: URL items on a url filter against exact items on an exact filter ----
# One daemon (2 worker threads, unpinned, as the throughput cases) serves
# `exact`, built from bench_net --dump (plain items), and `urls`, built from
# the same dump with --format urls --keys url (each item's canonical
# expression). bench_net sends MCHECKs of 100 items, half present; with
# --url-items every item is respelled (upper-case host, port 8080), so the url
# filter finds the present ones only through canonicalisation and expansion.
# The daemon's CPU time (utime + stime from /proc/PID/stat) is read before
# and after each run (warm-up included), so each figure is the daemon's own
# cost per item answered.
urls_case() {
    local B=$build_dir n=1000000 d=10 w=2 tmp pid port hz f c0 c1 line ips all
    local -a cmd extra
    [ "$quick" = 1 ] && { d=3; w=0.5; }
    if [ ! -x "$B/bloomgated" ] || [ ! -x "$B/tests/bench/bench_net" ]; then
        (cd "$top" && scripts/build.sh "$(realpath --relative-to="$top" "$B")")
    fi
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-urls.XXXXXX")
    "$B/tests/bench/bench_net" --dump "$n" >"$tmp/items.txt"
    "$B/bloomgate" build -o "$tmp/exact.bloom" "$tmp/items.txt" >/dev/null
    "$B/bloomgate" build --format urls --keys url -o "$tmp/urls.bloom" "$tmp/items.txt" >/dev/null
    port=$(free_port)
    cat >"$tmp/bg.conf" <<EOF
listen 127.0.0.1:$port
http_listen off
threads 2
log_level warn
filter exact {
    file $tmp/exact.bloom
    journal off
}
filter urls {
    file $tmp/urls.bloom
    journal off
}
EOF
    "$B/bloomgated" -c "$tmp/bg.conf" 2>"$tmp/bg.log" &
    pid=$!
    wait_port "$port" "$pid" 30 || { cat "$tmp/bg.log" >&2; die "bloomgated did not start"; }
    hz=$clk
    say "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
    say "date: $(date -u +%Y-%m-%dT%H:%MZ); $n items of 48 bytes loaded in each filter, half of those queried present"
    for f in exact urls; do
        extra=()
        [ "$f" = urls ] && extra=(--url-items)
        cmd=("$B/tests/bench/bench_net" --proto line --port "$port" --filter "$f" --keyspace "$n"
            --items 100 --connections 4 --pipeline 4 --duration "$d" --warmup "$w" "${extra[@]}"
            --label "$f")
        say "  \$ ${cmd[*]#"$B"/}"
        c0=$(cpu_ticks "$pid")
        line=$("${cmd[@]}")
        c1=$(cpu_ticks "$pid")
        [ -n "$out" ] && printf '%s\n' "$line" >>"$out"
        ips=$(sed -n 's/.*"items_per_s":\([0-9.]*\).*/\1/p' <<<"$line")
        all=$(awk -v i="$ips" -v d="$d" -v w="$w" 'BEGIN { printf "%.0f", i * (d + w) }')
        awk -v f="$f" -v i="$ips" -v c="$((c1 - c0))" -v hz="$hz" -v n="$all" 'BEGIN {
            printf "%-6s %10.0f items/s   server CPU %.2f s over about %d items: %.0f ns per item\n",
                f, i, c / hz, n, c / hz / n * 1e9 }'
        say "       $(grep -o '"client_cpu_cores":[0-9.]*\|"errors":[0-9]*\|"false_positives":[0-9]*\|"p50_us":[0-9.]*\|"p99_us":[0-9.]*' <<<"$line" | tr '\n' ' ')"
        printf -v "ips_$f" '%s' "$ips"
    done
    awk -v u="$ips_urls" -v e="$ips_exact" 'BEGIN { printf "urls / exact: %.2f x items/s (target >= 0.4)\n", u / e }'
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    if [ "$keep" = 1 ]; then say "kept $tmp"; else rm -rf "$tmp"; fi
}
if [ "$urls" = 1 ]; then
    urls_case
    exit 0
fi

# ---- --resp: the Redis protocol front against the line protocol (and RedisBloom) ----
# One daemon (2 worker threads) serves `exact`, built from bench_net --dump,
# on its line port and its resp_listen port; bench_net sends the same items
# with the same settings to each (MCHECK or BF.MEXISTS of 100; CHECK or
# BF.EXISTS of one, 32 in flight a connection), alternating, --repeat times.
# With --redisbloom, redis-server with the module gets BF.RESERVE exact 0.0001
# N and the same items by BF.MADD, then the same BF.* runs. Each server's CPU
# time (utime + stime from /proc/PID/stat) is read around each run, warm-up
# included, so each figure is that server's own cost per item.
resp_run() { # resp_run LABEL PID ARGS...: one bench_net run, one output line
    local label=$1 rpid=$2 c0 c1 line ips all hz ns
    shift 2
    hz=$clk
    c0=$(cpu_ticks "$rpid")
    line=$("$build_dir/tests/bench/bench_net" "$@" --label "$label")
    c1=$(cpu_ticks "$rpid")
    [ -n "$out" ] && printf '%s\n' "$line" >>"$out"
    ips=$(sed -n 's/.*"items_per_s":\([0-9.]*\).*/\1/p' <<<"$line")
    all=$(awk -v i="$ips" -v d="$rdur" -v w="$rwarm" 'BEGIN { printf "%.0f", i * (d + w) }')
    ns=$(awk -v c="$((c1 - c0))" -v hz="$hz" -v n="$all" 'BEGIN { printf "%.0f", c / hz / n * 1e9 }')
    awk -v f="$label" -v i="$ips" -v c="$((c1 - c0))" -v hz="$hz" -v ns="$ns" 'BEGIN {
        printf "%-26s %10.0f items/s   server CPU %.2f s: %s ns per item\n", f, i, c / hz, ns }'
    say "       $(grep -o '"client_cpu_cores":[0-9.]*\|"errors":[0-9]*\|"error_replies":[0-9]*\|"false_positives":[0-9]*\|"p50_us":[0-9.]*\|"p99_us":[0-9.]*' <<<"$line" | tr '\n' ' ')"
    printf '%s|%s|%s\n' "$label" "$ips" "$ns" >>"$rtmp/ips"
}
resp_case() {
    local B=$build_dir n=1000000 lport rport pid rbport="" rbpid="" r
    rdur=10; rwarm=2
    [ "$quick" = 1 ] && { rdur=3; rwarm=0.5; }
    if [ ! -x "$B/bloomgated" ] || [ ! -x "$B/tests/bench/bench_net" ]; then
        (cd "$top" && scripts/build.sh "$(realpath --relative-to="$top" "$B")")
    fi
    rtmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-resp.XXXXXX")
    local tmp=$rtmp # where free_port remembers the ports it gave
    "$B/tests/bench/bench_net" --dump "$n" >"$rtmp/items.txt"
    "$B/bloomgate" build -q -o "$rtmp/exact.bloom" "$rtmp/items.txt"
    lport=$(free_port)
    rport=$(free_port)
    printf '%s\n' "listen 127.0.0.1:$lport" "resp_listen 127.0.0.1:$rport" "http_listen off" \
        "threads 2" "log_level warn" "filter exact {" "    file $rtmp/exact.bloom" \
        "    journal off" "}" >"$rtmp/bg.conf"
    "$B/bloomgated" -c "$rtmp/bg.conf" 2>"$rtmp/bg.log" &
    pid=$!
    # Whatever fails from here, the servers started go too.
    trap "kill $pid 2>/dev/null || true" EXIT
    wait_port "$rport" "$pid" 30 || { cat "$rtmp/bg.log" >&2; die "bloomgated did not start"; }
    if [ -n "$redisbloom" ]; then
        [ -f "$redisbloom" ] || die "--redisbloom: no such file $redisbloom"
        rbport=$(free_port)
        redis-server --port "$rbport" --bind 127.0.0.1 --save "" --appendonly no \
            --loadmodule "$redisbloom" --dir "$rtmp" >"$rtmp/redis.log" 2>&1 &
        rbpid=$!
        trap "kill $pid $rbpid 2>/dev/null || true" EXIT
        for _ in $(seq 100); do
            redis-cli -p "$rbport" PING >/dev/null 2>&1 && break
            sleep 0.1
        done
        redis-cli -p "$rbport" BF.RESERVE exact 0.0001 "$n" | grep -q OK ||
            die "RedisBloom: BF.RESERVE failed (is $redisbloom RedisBloom? see $rtmp/redis.log)"
        "$B/tests/bench/bench_net" --proto resp-bf --port "$rbport" --filter exact --load "$n" >/dev/null
    fi
    say "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
    say "date: $(date -u +%Y-%m-%dT%H:%MZ); $n items of 48 bytes, half of those queried present; $repeat round(s)"
    local common=(--filter exact --keyspace "$n" --connections 4 --duration "$rdur" --warmup "$rwarm")
    say "  \$ tests/bench/bench_net --proto line|resp-bf --port P ${common[*]} --items 100 --pipeline 4"
    say "  \$ tests/bench/bench_net --proto line|resp-bf --port P ${common[*]} --items 1 --pipeline 32"
    for r in $(seq "$repeat"); do
        resp_run "line-MCHECK-100" "$pid" --proto line --port "$lport" "${common[@]}" --items 100 --pipeline 4
        resp_run "resp-BF.MEXISTS-100" "$pid" --proto resp-bf --port "$rport" "${common[@]}" --items 100 --pipeline 4
        if [ -n "$redisbloom" ]; then
            resp_run "redisbloom-BF.MEXISTS-100" "$rbpid" --proto resp-bf --port "$rbport" "${common[@]}" --items 100 --pipeline 4
        fi
        resp_run "line-CHECK" "$pid" --proto line --port "$lport" "${common[@]}" --items 1 --pipeline 32
        resp_run "resp-BF.EXISTS" "$pid" --proto resp-bf --port "$rport" "${common[@]}" --items 1 --pipeline 32
        if [ -n "$redisbloom" ]; then
            resp_run "redisbloom-BF.EXISTS" "$rbpid" --proto resp-bf --port "$rbport" "${common[@]}" --items 1 --pipeline 32
        fi
    done
    # Medians over the rounds (sort, no gawk needed), each label's items/s
    # and server CPU per item apart, and the ratios.
    rmed() { grep "^$1|" "$rtmp/ips" | cut -d'|' -f2 | median; }
    cmed() { grep "^$1|" "$rtmp/ips" | cut -d'|' -f3 | median; }
    local l
    while read -r l; do
        printf 'median %-26s %10.0f items/s   %s ns server CPU per item\n' "$l" "$(rmed "$l")" "$(cmed "$l")"
    done < <(cut -d'|' -f1 "$rtmp/ips" | awk '!seen[$0]++')
    awk -v m="$(rmed resp-BF.MEXISTS-100)" -v l="$(rmed line-MCHECK-100)" \
        -v e="$(rmed resp-BF.EXISTS)" -v c="$(rmed line-CHECK)" 'BEGIN {
        printf "medians: resp BF.MEXISTS / line MCHECK %.2f x items/s (target >= 0.85)\n", m / l
        printf "         resp BF.EXISTS / line CHECK %.2f x\n", e / c }'
    if [ -n "$redisbloom" ]; then
        awk -v m="$(rmed resp-BF.MEXISTS-100)" -v rm="$(rmed redisbloom-BF.MEXISTS-100)" \
            -v e="$(rmed resp-BF.EXISTS)" -v re="$(rmed redisbloom-BF.EXISTS)" 'BEGIN {
            printf "         bloomgate / RedisBloom: BF.MEXISTS %.2f x, BF.EXISTS %.2f x\n", m / rm, e / re }'
        kill "$rbpid"
        wait "$rbpid" 2>/dev/null || true
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    trap - EXIT
    if [ "$keep" = 1 ]; then say "kept $rtmp"; else rm -rf "$rtmp"; fi
}
[ -z "$redisbloom" ] || [ -f "$redisbloom" ] || die "--redisbloom: no such file $redisbloom"
[ -z "$bloomd" ] || [ -x "$bloomd" ] || die "--bloomd: $bloomd is not an executable"
if [ "$resp" = 1 ]; then
    repeat=${repeat:-3}
    say "tree: $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$top" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
    resp_case
    # --bloomd: the bloomd front against bloomd, right after, in the same
    # invocation (bloomd_front.sh, the same client and build).
    if [ -n "$bloomd" ]; then
        say "the bloomd front against bloomd; load $(cut -d' ' -f1-3 /proc/loadavg)"
        say "  \$ B=$build_dir tests/bench/bloomd_front.sh --bloomd $bloomd --rounds $repeat --seconds $([ "$quick" = 1 ] && echo 2 || echo 5)"
        B=$build_dir "$top/tests/bench/bloomd_front.sh" --bloomd "$bloomd" --rounds "$repeat" \
            --seconds "$([ "$quick" = 1 ] && echo 2 || echo 5)"
    fi
    say "end: $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
    exit 0
fi

# ---- dependencies ----
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v redis-cli >/dev/null || need+=(redis-tools)
command -v nginx >/dev/null || need+=(nginx-light)
command -v wrk >/dev/null || need+=(wrk)
command -v jq >/dev/null || need+=(jq)
command -v taskset >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    say "installing ${need[*]}"
    # Keep the packages' services from starting (and taking ports): the same
    # policy-rc.d that Debian container images ship, only if there is none.
    made_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
        $sudo chmod 755 /usr/sbin/policy-rc.d
        made_policy=1
    fi
    $sudo apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null ||
        { [ $made_policy = 1 ] && $sudo rm -f /usr/sbin/policy-rc.d; die "apt-get install failed"; }
    [ $made_policy = 1 ] && $sudo rm -f /usr/sbin/policy-rc.d
fi

# ---- build ----
if [ -f "$build_dir/Makefile" ]; then
    make -s -C "$build_dir" -j2 >/dev/null
else
    "$top/scripts/build.sh" "$build_dir" >/dev/null
fi
B=$build_dir
for p in bloomgate bloomgated tests/bench/bench_net tests/bench/null_server; do
    [ -x "$B/$p" ] || die "$B/$p was not built"
done
if grep -q -- '-fsanitize' "$B/Makefile" 2>/dev/null && grep -q '^SAN_CFLAGS = -f' "$B/Makefile"; then
    say "WARNING: $B is a sanitizer build; figures from it are not benchmarks"
fi

# ---- temporary directory, processes, clean-up ----
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-compare.XXXXXX")
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    if [ "$keep" = 1 ]; then say "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$tmp/results"
[ -n "$out" ] && : >"$out"

# place PLACEMENT SERVER: pin a server's threads for one figure and set the
# client's prefix (cli); unplace undoes it.
cli=()
all_cpus="0-$(($(nproc) - 1))"
place() {
    cli=()
    case "$1" in
    split) cli=(taskset -c 0) ;;
    shared) cli=(taskset -c 1) ;;
    *) return 0 ;;
    esac
    taskset -apc 1 "${pid[$2]}" >/dev/null
}
unplace() {
    [ "$1" = none ] || taskset -apc "$all_cpus" "${pid[$2]}" >/dev/null
    cli=()
}

# server_pids NAME: the processes whose CPU time is a server's (nginx: the
# master and its workers), comma-separated for bench_net --server-pid.
server_pids() {
    local p=${pid[$1]} kids
    kids=$(pgrep -P "$p" | paste -sd, -)
    echo "$p${kids:+,$kids}"
}
hz=$clk

# Every command that produces a figure is echoed before it runs.
show_raw() { printf '  $ %s\n' "$*"; }
show() { # CMD ARGS...: shell-quoted, so it can be pasted back
    local q
    q=$(printf '%q ' "$@")
    show_raw "${q% }"
}

declare -A pid
# start NAME CMD...: start a server in the background, logs in $tmp.
start() {
    local name=$1
    shift
    local cmd=("$@")
    show "${cmd[@]}"
    "${cmd[@]}" >"$tmp/$name.log" 2>&1 &
    pids+=($!)
    pid[$name]=$!
}

say "== bloomgate network benchmark (tests/bench/compare.sh)"
say "date:     $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "machine:  $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
say "loopback: TCP congestion control $(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo '?')"
say "tree:     $(git -C "$top" describe --always --dirty 2>/dev/null || echo '?') ($(git -C "$top" rev-parse --abbrev-ref HEAD 2>/dev/null || echo '?'))"
say "servers:  $(redis-server --version | awk '{print $1, $2, $3}'), $(nginx -v 2>&1 | sed 's/.*: //'), $(wrk -v 2>&1 | head -1 | awk '{print $1, $2}')"
[ -z "$redisbloom" ] || say "          RedisBloom: $redisbloom"
[ -z "$bloomd" ] || say "          bloomd: $bloomd ($(git -C "$(dirname "$bloomd")" describe --always 2>/dev/null || echo 'version unknown'))"
say "settings: runs of ${dur} s after ${warm} s warm-up, median of $repeat; items of $item_len bytes, present share $share; client: bench_net, 1 thread"
say "placement: case 1 pinned two ways (split: server CPU 1, client CPU 0; shared: both CPU 1,"
say "           with taskset), every other case unpinned"
say "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) before the run"
say "temp dir: $tmp"
say

# ---- data ----
say "== loading the same items everywhere"
show_raw "$B/tests/bench/bench_net --dump $small --item-len $item_len | $B/bloomgate build -o $tmp/bench.bloom --capacity $small --fpr $fpr --quiet -"
"$B/tests/bench/bench_net" --dump $small --item-len $item_len |
    "$B/bloomgate" build -o "$tmp/bench.bloom" --capacity $small --fpr $fpr --quiet -
show_raw "$B/tests/bench/bench_net --dump $big --item-len $item_len | $B/bloomgate build -o $tmp/big.bloom --capacity $big --fpr $fpr --quiet -"
t0=$(date +%s)
"$B/tests/bench/bench_net" --dump $big --item-len $item_len |
    "$B/bloomgate" build -o "$tmp/big.bloom" --capacity $big --fpr $fpr --quiet -
say "  (built in $(($(date +%s) - t0)) s)"

# ---- servers ----
say
say "== servers (127.0.0.1, temporary directory)"
bg_conf() { # FILE PORT HTTP_PORT THREADS FILTER_FILE RESP_PORT
    cat >"$1" <<EOF
listen 127.0.0.1:$2
http_listen 127.0.0.1:$3
resp_listen 127.0.0.1:$6
threads $4
log_level warn
filter bench {
    file $5
    journal off
}
EOF
}
declare -A port
for s in bg1 bg2 big1 big2; do
    port[$s]=$(free_port)
    port[${s}_http]=$(free_port)
    port[${s}_resp]=$(free_port)
done
for s in redis nginx null1 null2; do port[$s]=$(free_port); done
bg_conf "$tmp/bg1.conf" "${port[bg1]}" "${port[bg1_http]}" 1 "$tmp/bench.bloom" "${port[bg1_resp]}"
bg_conf "$tmp/bg2.conf" "${port[bg2]}" "${port[bg2_http]}" 2 "$tmp/bench.bloom" "${port[bg2_resp]}"
bg_conf "$tmp/big1.conf" "${port[big1]}" "${port[big1_http]}" 1 "$tmp/big.bloom" "${port[big1_resp]}"
bg_conf "$tmp/big2.conf" "${port[big2]}" "${port[big2_http]}" 2 "$tmp/big.bloom" "${port[big2_resp]}"
start bg1 "$B/bloomgated" -c "$tmp/bg1.conf"
start bg2 "$B/bloomgated" -c "$tmp/bg2.conf"
start redis redis-server --port "${port[redis]}" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no --dir "$tmp" --logfile "$tmp/redis-server.log"
mkdir -p "$tmp/nginx"
nginx_user=""
[ "$(id -u)" = 0 ] && nginx_user="user $(id -un) $(id -gn);"
cat >"$tmp/nginx/nginx.conf" <<EOF
# One worker, like bloomgated with threads 1; keep-alive for wrk.
$nginx_user
worker_processes 1;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $tmp/nginx/body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    keepalive_requests 100000000;
    keepalive_timeout 300s;
    server {
        listen 127.0.0.1:${port[nginx]};
        location / { return 204; }
    }
}
EOF
start nginx nginx -p "$tmp/nginx" -e "$tmp/nginx/error.log" -c "$tmp/nginx/nginx.conf"
start null1 "$B/tests/bench/null_server" --port "${port[null1]}" --threads 1
start null2 "$B/tests/bench/null_server" --port "${port[null2]}" --threads 2
say "  bloomgated's configuration (bg1; bg2 differs in threads 2, big1 and big2 in big.bloom):"
sed 's/^/    /' "$tmp/bg1.conf"
say "  nginx's configuration:"
grep -v '^ *$' "$tmp/nginx/nginx.conf" | sed 's/^/    /'
for s in bg1 bg2 redis nginx null1 null2; do
    wait_port "${port[$s]}" "${pid[$s]}" 60 || { cat "$tmp/$s.log" >&2; die "$s did not start"; }
done

say
say "== loading Redis: $small keys for GET/MGET, and a bitmap Bloom filter of $bloom_bits bits, k = $bloom_k"
net() { "$B/tests/bench/bench_net" "$@"; }
record() { # KEY JSON: keep a result line
    printf '%s\n' "$2" >>"$tmp/results/$1.jsonl"
    [ -n "$out" ] && printf '%s\n' "$2" >>"$out"
    return 0
}
for mode in redis-get redis-bloom; do
    show "$B/tests/bench/bench_net" --proto $mode --port "${port[redis]}" --load $small \
        --item-len $item_len --bloom-bits "$bloom_bits" --bloom-k $bloom_k
    line=$(net --proto $mode --port "${port[redis]}" --load $small --item-len $item_len \
        --bloom-bits "$bloom_bits" --bloom-k $bloom_k --label "load-$mode") || die "loading Redis ($mode) failed"
    record load "$line"
    say "  $(jq -r '"\(.items) items in \(.seconds) s, \(.errors) errors"' <<<"$line")"
done

# The optional peers: Redis with RedisBloom (BF.RESERVE, then BF.MADD of the
# same items) and bloomd (create, then bulk sets "b" of the same items), each
# with one worker as bloomgated's threads 1.
if [ -n "$redisbloom" ]; then
    port[redisbloom]=$(free_port)
    start redisbloom redis-server --port "${port[redisbloom]}" --bind 127.0.0.1 --save '' \
        --appendonly no --daemonize no --dir "$tmp" --logfile "$tmp/redisbloom-server.log" \
        --loadmodule "$redisbloom"
    wait_port "${port[redisbloom]}" "${pid[redisbloom]}" 60 || { cat "$tmp/redisbloom-server.log" >&2; die "redis-server with $redisbloom did not start"; }
    redis-cli -p "${port[redisbloom]}" BF.RESERVE bench $fpr $small | grep -q OK ||
        die "RedisBloom: BF.RESERVE failed (is $redisbloom RedisBloom?)"
    show "$B/tests/bench/bench_net" --proto resp-bf --port "${port[redisbloom]}" --filter bench --load $small --item-len $item_len
    line=$(net --proto resp-bf --port "${port[redisbloom]}" --filter bench --load $small \
        --item-len $item_len --label load-redisbloom) || die "loading RedisBloom failed"
    record load "$line"
    say "  RedisBloom: $(jq -r '"\(.items) items in \(.seconds) s, \(.errors) errors"' <<<"$line")"
fi
if [ -n "$bloomd" ]; then
    port[bloomd]=$(free_port)
    mkdir -p "$tmp/bloomd"
    printf '%s\n' "[bloomd]" "tcp_port = ${port[bloomd]}" "udp_port = $(free_port)" \
        "bind_address = 127.0.0.1" "data_dir = $tmp/bloomd" "log_level = WARN" "workers = 1" \
        "flush_interval = 0" "in_memory = 1" >"$tmp/bloomd.conf"
    start bloomd "$bloomd" -f "$tmp/bloomd.conf"
    wait_port "${port[bloomd]}" "${pid[bloomd]}" 60 || { cat "$tmp/bloomd.log" >&2; die "bloomd did not start"; }
    exec 3<>"/dev/tcp/127.0.0.1/${port[bloomd]}"
    printf 'create bench capacity=%s prob=%s in_memory=1\n' $small $fpr >&3
    read -r -t 30 reply <&3 || reply="(no answer)"
    exec 3>&-
    [ "${reply%$'\r'}" = Done ] || die "bloomd: create answered '$reply'"
    show "$B/tests/bench/bench_net" --proto bloomd --port "${port[bloomd]}" --filter bench --load $small --item-len $item_len
    line=$(net --proto bloomd --port "${port[bloomd]}" --filter bench --load $small \
        --item-len $item_len --label load-bloomd) || die "loading bloomd failed"
    record load "$line"
    say "  bloomd: $(jq -r '"\(.items) items in \(.seconds) s, \(.errors) errors"' <<<"$line")"
fi

# Case 5's daemons load 2 x 275 MB: started now, measured later.
start big1 "$B/bloomgated" -c "$tmp/big1.conf"
start big2 "$B/bloomgated" -c "$tmp/big2.conf"
for s in big1 big2; do
    wait_port "${port[$s]}" "${pid[$s]}" 300 || { cat "$tmp/$s.log" >&2; die "$s did not start"; }
done

# Does the daemon speak HTTP (the API is being written on another branch)?
http_ok=0
probe=$("$B/tests/bench/bench_net" --dump 1 --item-len $item_len)
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' \
    "http://127.0.0.1:${port[bg1_http]}/v1/filters/bench/check?item=$probe" 2>/dev/null || true)
[ "$code" = 200 ] && http_ok=1
if [ $http_ok = 1 ]; then
    say "bloomgated answers HTTP on http_listen: case 4 runs"
else
    say "bloomgated does not answer HTTP on http_listen (GET .../check: '${code:-none}'): case 4 is skipped"
fi

# ---- the cases ----
# Common client settings; every run is bounded by --duration + --warmup.
common=(--item-len "$item_len" --present-share "$share" --duration "$dur" --warmup "$warm" --filter bench)
# Cases 3, 5 and 6 (MCHECK of 100): 4 connections, so that a 2-thread server
# gets work on both threads (SO_REUSEPORT spreads connections, not requests).
c3=(--items 100 --connections 4 --pipeline 4)
specs=()
spec() { specs+=("$*"); } # KEY PLACEMENT SERVER ARGS...
bl=(--bloom-bits "$bloom_bits" --bloom-k "$bloom_k")
for pl in split shared; do
    for c in 1 50; do
        spec "c1_${pl}_bg_$c" $pl bg1 --proto line --connections $c --keyspace $small
        spec "c1_${pl}_get_$c" $pl redis --proto redis-get --connections $c --keyspace $small
        spec "c1_${pl}_bloom_$c" $pl redis --proto redis-bloom --connections $c --keyspace $small "${bl[@]}"
        spec "c1_${pl}_null_$c" $pl null1 --proto line --connections $c --keyspace $small --no-verify
    done
done
for c in 1 4; do
    spec "c2_bg_$c" none bg1 --proto line --connections $c --pipeline 100 --keyspace $small
    spec "c2_get_$c" none redis --proto redis-get --connections $c --pipeline 100 --keyspace $small
    spec "c2_null_$c" none null1 --proto line --connections $c --pipeline 100 --keyspace $small --no-verify
done
spec c2_resp_4 none bg1_resp --proto resp-bf --connections 4 --pipeline 100 --keyspace $small
# Issue 16's round-trip target is against RedisBloom and bloomd: the gateway's
# shape, 50 connections with one request in flight each, both placements.
for pl in split shared; do
    [ -n "$redisbloom" ] && spec "c1_${pl}_redisbloom_50" $pl redisbloom --proto resp-bf --connections 50 --keyspace $small
    [ -n "$bloomd" ] && spec "c1_${pl}_bloomd_50" $pl bloomd --proto bloomd --connections 50 --keyspace $small
done
if [ -n "$redisbloom" ]; then
    spec c2_redisbloom_4 none redisbloom --proto resp-bf --connections 4 --pipeline 100 --keyspace $small
    spec c3_redisbloom none redisbloom --proto resp-bf "${c3[@]}" --keyspace $small
fi
if [ -n "$bloomd" ]; then
    spec c2_bloomd_4 none bloomd --proto bloomd --connections 4 --pipeline 100 --keyspace $small
    spec c3_bloomd none bloomd --proto bloomd "${c3[@]}" --keyspace $small
fi
spec c3_bg1 none bg1 --proto line "${c3[@]}" --keyspace $small
spec c3_bg2 none bg2 --proto line "${c3[@]}" --keyspace $small
spec c3_null1 none null1 --proto line "${c3[@]}" --keyspace $small --no-verify
spec c3_null2 none null2 --proto line "${c3[@]}" --keyspace $small --no-verify
spec c3_mget none redis --proto redis-mget "${c3[@]}" --keyspace $small
spec c3_resp1 none bg1_resp --proto resp-bf "${c3[@]}" --keyspace $small
for p in 16 64 256; do
    spec "c3_bloom_p$p" none redis --proto redis-bloom --connections 1 --pipeline $p --keyspace $small "${bl[@]}"
done
spec c5_big1 none big1 --proto line "${c3[@]}" --keyspace $big
spec c5_big2 none big2 --proto line "${c3[@]}" --keyspace $big
if [ $http_ok = 1 ]; then
    spec c4_http_get none bg1_http --proto http --connections 50 --keyspace $small
    spec c4_http_post none bg1_http --proto http --items 100 --connections 1 --pipeline 1 --keyspace $small
fi

# wrk for case 4: the same 10,000 requests (half present items) for both servers.
wrk_script="$tmp/wrk.lua"
{
    "$B/tests/bench/bench_net" --dump 5000 --item-len $item_len
    "$B/tests/bench/bench_net" --dump-absent 5000 --item-len $item_len
} | sed 's|^|/v1/filters/bench/check?item=|' >"$tmp/wrk-paths.txt"
cat >"$wrk_script" <<EOF
-- Requests formatted once per thread (in init, once wrk has set the Host
-- header: nginx answers 400 to an HTTP/1.1 request without one), then sent in turn.
local reqs, i = {}, 0
function init(args)
    for path in io.lines("$tmp/wrk-paths.txt") do reqs[#reqs + 1] = wrk.format("GET", path) end
end
request = function() i = i % #reqs + 1; return reqs[i] end
EOF
# child_ticks: CPU time of this shell's finished children (wrk), in ticks.
child_ticks() {
    local t
    t=$(awk '{ sub(/.*\) /, ""); print $14 + $15 }' "/proc/$$/stat" 2>/dev/null) || t=0
    echo "${t:-0}"
}
# wrk prints text: make it one JSON line like bench_net's.
wrk_json() { # LABEL < wrk output
    awk -v label="$1" '
        function us(v) { if (v ~ /us$/) return v + 0; if (v ~ /ms$/) return v * 1000;
                         if (v ~ /s$/) return v * 1e6; return v }
        /Requests\/sec:/ { rps = $2 }
        /^ +50%/ { p50 = us($2) } /^ +99%/ { p99 = us($2) }
        /Non-2xx/ { non2xx = $NF }
        /Socket errors/ { errs = $0; sub(/.*Socket errors: /, "", errs) }
        END { printf "{\"tool\":\"wrk\",\"label\":\"%s\",\"proto\":\"http-get\",\"connections\":50,\"threads\":1,\"duration_s\":%s,\"items_per_s\":%.0f,\"commands_per_s\":%.0f,\"p50_us\":%.1f,\"p99_us\":%.1f,\"non_2xx\":%d,\"socket_errors\":\"%s\"}\n",
                     label, dur, rps, rps, p50, p99, non2xx + 0, errs }' dur="$dur"
}
wrk_run() { # KEY PORT SERVER
    local cmd=(wrk -t1 -c50 -d"${dur}s" --latency -s "$wrk_script" "http://127.0.0.1:$2/")
    local sp s0 s1 c0 c1
    [ "$rep" = 1 ] && show "${cmd[@]}"
    # wrk has no warm-up: a short unrecorded run first.
    wrk -t1 -c50 -d"${warm}s" -s "$wrk_script" "http://127.0.0.1:$2/" >/dev/null 2>&1 || true
    local txt
    wait_quiet
    sp=$(server_pids "$3")
    s0=$(cpu_ticks "$sp")
    c0=$(child_ticks)
    txt=$(timeout $((${dur%.*} + 60)) "${cmd[@]}" 2>&1) || true
    s1=$(cpu_ticks "$sp")
    c1=$(child_ticks)
    # The server's and wrk's CPU time over the run, per request answered.
    record "$1" "$(wrk_json "$1" <<<"$txt" | jq -c --argjson s $((s1 - s0)) --argjson c $((c1 - c0)) \
        --argjson hz "$hz" --argjson d "$dur" '. + {server_cpu_cores: ($s / $hz / $d * 1000 | round / 1000),
        server_cpu_ns_per_item: (if .items_per_s > 0 then $s / $hz * 1e9 / (.items_per_s * $d) else null end),
        client_cpu_cores: ($c / $hz / $d * 1000 | round / 1000)}')"
}

# Other jobs on the machine skew a figure: before each run wait (up to --quiet-wait s)
# until the CPUs are at least 85 % idle over half a second, and count the runs
# that had to start anyway.
busy_starts=0
cpu_busy() { # percent busy over 0.5 s
    local a b
    read -r -a a < <(head -1 /proc/stat)
    sleep 0.5
    read -r -a b < <(head -1 /proc/stat)
    awk -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
        n = split(a, x, " "); split(b, y, " "); t = 0
        for (i = 2; i <= n; i++) t += y[i] - x[i]
        idle = (y[5] - x[5]) + (y[6] - x[6])
        printf "%d\n", (t > 0) ? 100 * (t - idle) / t : 0 }'
}
wait_quiet() {
    local _
    local t0=$SECONDS
    while [ $((SECONDS - t0)) -lt "$quiet_wait" ]; do
        [ "$(cpu_busy)" -le 15 ] && return 0
        sleep 0.5
    done
    busy_starts=$((busy_starts + 1))
}

say
say "== running ${#specs[@]} bench_net figures$([ $http_ok = 1 ] && echo ' and 2 wrk figures') x $repeat"
for rep in $(seq "$repeat"); do
    for s in "${specs[@]}"; do
        set -- $s
        key=$1 pl=$2 srv=$3
        shift 3
        sp=${srv%_http}
        sp=${sp%_resp}
        args=(--port "${port[$srv]}" "${common[@]}" "$@" --label "$key" --server-pid "$(server_pids "$sp")")
        wait_quiet
        place "$pl" "$sp"
        if [ "$rep" = 1 ]; then
            [ "$pl" = none ] || show taskset -apc 1 "${pid[$sp]}"
            show "${cli[@]}" "$B/tests/bench/bench_net" "${args[@]}"
        fi
        line=$(timeout $((${dur%.*} + ${warm%.*} + 120)) "${cli[@]}" "$B/tests/bench/bench_net" "${args[@]}") || true
        unplace "$pl" "$sp"
        if [ -z "$line" ]; then
            say "  $key: no result (see stderr above)"
            continue
        fi
        record "$key" "$line"
    done
    if [ $http_ok = 1 ]; then
        wrk_run c4_wrk_bg "${port[bg1_http]}" bg1
        wrk_run c4_wrk_nginx "${port[nginx]}" nginx
    fi
    say "  repetition $rep of $repeat done"
done
say "  $busy_starts run(s) started while other jobs kept the CPUs over 15 % busy for $quiet_wait s"

# Case 5's memory: the daemon's resident set against the filter file.
big_file=$(stat -c %s "$tmp/big.bloom")
rss1=$(($(rss_kb "${pid[big1]}") * 1024))
rss2=$(($(rss_kb "${pid[big2]}") * 1024))
record c5_rss "{\"tool\":\"compare.sh\",\"label\":\"c5_rss\",\"file_bytes\":$big_file,\"rss_threads1_bytes\":$rss1,\"rss_threads2_bytes\":$rss2}"

# ---- the table ----
# A client (one bench_net or wrk thread) at or above this many cores is the
# bottleneck, or close to it.
saturated=0.9
# med KEY: the median run (by items/s) of a figure, as a JSON line.
med() {
    [ -s "$tmp/results/$1.jsonl" ] || { echo '{}'; return; }
    jq -s -c 'sort_by(.items_per_s) | .[(length - 1) / 2 | floor]' "$tmp/results/$1.jsonl"
}
get() { jq -r ".$2 // empty" <<<"$(med "$1")"; }
fmt_row() { # KEY DESCRIPTION
    local m f
    m=$(med "$1")
    if [ "$m" = '{}' ]; then
        printf '%-20s %-46s %s\n' "$1" "$2" "(no result)"
        return
    fi
    IFS=$'\t' read -r -a f < <(jq -r --argjson sat "$saturated" '[(.items_per_s // 0),
        (.commands_per_s // 0), (.p50_us // "-"), (.p99_us // "-"), (.errors // .non_2xx // 0),
        (.false_positive_rate // "-"),
        (if .server_cpu_ns_per_item then (.server_cpu_ns_per_item | round) else "-" end),
        (.server_cpu_cores // "-"), (.client_cpu_cores // "-"),
        (if (.client_cpu_cores // 0) >= $sat then "CLIENT" else "" end)] | @tsv' <<<"$m")
    printf '%-20s %-46s %11s %10s %8s %8s %6s %9s %8s %6s %6s %s\n' "$1" "$2" "${f[@]}"
}
say
say "== figures (median of $repeat by items/s; latency per command in microseconds)"
say "   srv ns/item: the server's CPU time (utime + stime, all threads and processes, /proc)"
say "   per item answered; srv, client: CPU cores used by the server and by the client"
say "   (one thread, so ~1 core is all it has); CLIENT: the client used >= $saturated cores,"
say "   so items/s measures the client as much as the server: compare srv ns/item instead"
printf '%-20s %-46s %11s %10s %8s %8s %6s %9s %8s %6s %6s %s\n' key case items/s cmds/s p50 p99 \
    errors fpr 'srv ns/it' srv client flag
for pl in split shared; do
    for c in 1 50; do
        fmt_row "c1_${pl}_bg_$c" "1 ($pl): CHECK, $c conn(s), 1 in flight each"
        fmt_row "c1_${pl}_get_$c" "1 ($pl): Redis GET, $c conn(s)"
        fmt_row "c1_${pl}_bloom_$c" "1 ($pl): Redis 13 GETBITs/lookup, $c conn(s)"
        fmt_row "c1_${pl}_null_$c" "1 ($pl): null server, $c conn(s)"
    done
    [ -n "$redisbloom" ] && fmt_row "c1_${pl}_redisbloom_50" "1 ($pl): RedisBloom BF.EXISTS, 50 conn(s)"
    [ -n "$bloomd" ] && fmt_row "c1_${pl}_bloomd_50" "1 ($pl): bloomd c (check), 50 conn(s)"
done
fmt_row c2_bg_1 "2: CHECK, 1 conn x 100 in flight"
fmt_row c2_get_1 "2: Redis GET, 1 conn x 100"
fmt_row c2_null_1 "6: null server, 1 conn x 100"
fmt_row c2_bg_4 "2: CHECK, 4 conns x 100 in flight"
fmt_row c2_get_4 "2: Redis GET, 4 conns x 100"
fmt_row c2_null_4 "6: null server, 4 conns x 100"
fmt_row c2_resp_4 "2: BF.EXISTS (resp_listen), 4 conns x 100"
fmt_row c3_bg1 "3: MCHECK 100, 4 conns x 4, bloomgate t1"
fmt_row c3_bg2 "3: MCHECK 100, 4 conns x 4, bloomgate t2"
fmt_row c3_null1 "6: null server t1, MCHECK 100, 4 x 4"
fmt_row c3_null2 "6: null server t2, MCHECK 100, 4 x 4"
fmt_row c3_mget "3: Redis MGET 100, 4 conns x 4"
fmt_row c3_resp1 "3: BF.MEXISTS 100 (resp_listen), t1, 4 x 4"
if [ -n "$redisbloom" ]; then
    fmt_row c3_redisbloom "3: RedisBloom BF.MEXISTS 100, 4 x 4"
    fmt_row c2_redisbloom_4 "2: RedisBloom BF.EXISTS, 4 conns x 100"
fi
if [ -n "$bloomd" ]; then
    fmt_row c3_bloomd "3: bloomd m (multi) 100, 1 worker, 4 x 4"
    fmt_row c2_bloomd_4 "2: bloomd c (check), 4 conns x 100"
fi
for p in 16 64 256; do fmt_row "c3_bloom_p$p" "3: Redis 13 GETBITs/lookup, 1 conn x $p"; done
fmt_row c5_big1 "5: MCHECK 100, ${big} items, t1, 4 x 4"
fmt_row c5_big2 "5: MCHECK 100, ${big} items, t2, 4 x 4"
if [ $http_ok = 1 ]; then
    fmt_row c4_http_get "4: HTTP GET check, 50 conns (bench_net)"
    fmt_row c4_http_post "4: HTTP POST check of 100, 1 conn"
    fmt_row c4_wrk_bg "4: wrk -t1 -c50 GET check, bloomgate t1"
    fmt_row c4_wrk_nginx "4: wrk -t1 -c50, nginx return 204, 1 worker"
else
    say "case 4 skipped: bloomgated does not answer HTTP on http_listen (GET .../check gave '${code:-no answer}'); the HTTP API is not merged in this tree"
fi
say "case 5 memory: filter file $(awk -v b=$big_file 'BEGIN { printf "%.1f MiB", b / 1048576 }'), RSS $(awk -v b=$rss1 'BEGIN { printf "%.1f MiB", b / 1048576 }') (threads 1), $(awk -v b=$rss2 'BEGIN { printf "%.1f MiB", b / 1048576 }') (threads 2)"

# ---- targets ----
best_bloom=0
best_bloom_key=""
for p in 16 64 256; do
    v=$(get "c3_bloom_p$p" items_per_s)
    if [ -n "$v" ] && awk -v a="$v" -v b="$best_bloom" 'BEGIN { exit !(a > b) }'; then
        best_bloom=$v
        best_bloom_key="c3_bloom_p$p"
    fi
done
say
say "== targets (ratios within this run)"
say "(throughput targets: the ratio of items/s, or of server CPU per item, B's / A's, where"
say " a client was saturated; the other ratio is shown last)"
printf '%-56s %-22s %-7s %-16s %s\n' target measured ratio verdict other
# tp TEXT KEY_A KEY_B MIN: a throughput target, A / B >= MIN. The ratio of
# items/s, unless the client was saturated in either run: then the ratio of
# the servers' CPU time per item (B's / A's), marked "cpu".
# Either way the other ratio is shown after the verdict, for information.
tp() {
    local a b r=""
    a=$(get "$3" server_cpu_ns_per_item)
    b=$(get "$2" server_cpu_ns_per_item)
    [ -n "$a" ] && a=$(awk -v v="$a" 'BEGIN { printf "%.1f", v }')
    [ -n "$b" ] && b=$(awk -v v="$b" 'BEGIN { printf "%.1f", v }')
    [ -n "$a" ] && [ -n "$b" ] && r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
    if [ -n "$r" ] && { sat "$2" || sat "$3"; }; then
        target "$1 [cpu/item]" "$a" "$b" "$4" "items/s: $(awk -v a="$(get "$2" items_per_s)" \
            -v b="$(get "$3" items_per_s)" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"
        return
    fi
    target "$1" "$(get "$2" items_per_s)" "$(get "$3" items_per_s)" "$4" "${r:+cpu/item: $r}"
}
sat() { awk -v c="$(get "$1" client_cpu_cores)" -v s="$saturated" 'BEGIN { exit !(c != "" && c >= s) }'; }
target() { # TEXT A B MIN [NOTE]: A / B >= MIN?
    local r verdict
    if [ -z "$2" ] || [ -z "$3" ] || [ "$3" = 0 ]; then
        printf '%-56s %-22s %-7s %s\n' "$1" "-" "-" "no figure"
        return
    fi
    r=$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", a / b }')
    verdict=$(awk -v r="$r" -v m="$4" 'BEGIN { print (r >= m ? "met" : "MISSED") }')
    printf '%-56s %-22s %-7s %-16s %s\n' "$1" "$2 / $3" "$r" "$verdict (>= $4)" "${5:-}"
}
# cpu_at_most TEXT KEY_A KEY_B MAX: A's server CPU per item / B's <= MAX?
cpu_at_most() {
    local a b r verdict
    a=$(get "$2" server_cpu_ns_per_item)
    b=$(get "$3" server_cpu_ns_per_item)
    [ -n "$a" ] && a=$(awk -v v="$a" 'BEGIN { printf "%.1f", v }')
    [ -n "$b" ] && b=$(awk -v v="$b" 'BEGIN { printf "%.1f", v }')
    if [ -z "$a" ] || [ -z "$b" ] || awk -v b="$b" 'BEGIN { exit !(b + 0 == 0) }'; then
        printf '%-56s %-22s %-7s %s\n' "$1" "-" "-" "no figure"
        return
    fi
    r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
    verdict=$(awk -v r="$r" -v m="$4" 'BEGIN { print (r <= m ? "met" : "MISSED") }')
    printf '%-56s %-22s %-7s %-16s %s\n' "$1" "$a / $b ns" "$r" "$verdict (<= $4)" ""
}
for pl in split shared; do
    for c in 1 50; do
        target "1 ($pl): CHECK/round trip vs Redis GET, $c conn(s)" "$(get "c1_${pl}_bg_$c" commands_per_s)" "$(get "c1_${pl}_get_$c" commands_per_s)" 0.95
    done
done
for pl in split shared; do
    for c in 1 50; do
        target "1 ($pl): (info) vs null server, $c conn(s)" "$(get "c1_${pl}_bg_$c" commands_per_s)" "$(get "c1_${pl}_null_$c" commands_per_s)" 0.8
    done
done
for pl in split shared; do
    target "1 ($pl): (info) vs hand-built Redis filter, 1 conn" "$(get "c1_${pl}_bg_1" commands_per_s)" "$(get "c1_${pl}_bloom_1" commands_per_s)" 1
done
tp "2: pipelined CHECK vs Redis GET, 1 conn x 100" c2_bg_1 c2_get_1 1.2
tp "2: pipelined CHECK vs Redis GET, 4 conns x 100" c2_bg_4 c2_get_4 1.2
tp "2: (info) pipelined BF.EXISTS vs Redis GET, 4 x 100" c2_resp_4 c2_get_4 1
tp "3: MCHECK vs hand-built Redis ($best_bloom_key)" c3_bg1 "$best_bloom_key" 20
tp "3: MCHECK vs Redis MGET 100" c3_bg1 c3_mget 1.5
tp "3: (info) BF.MEXISTS 100 vs Redis MGET 100" c3_resp1 c3_mget 1.5
if [ -n "$redisbloom" ]; then
    tp "3: (info) BF.MEXISTS 100 vs RedisBloom's" c3_resp1 c3_redisbloom 1
    tp "2: (info) BF.EXISTS vs RedisBloom's, 4 conns x 100" c2_resp_4 c2_redisbloom_4 1
    # Issue 16's cost targets: bloomgated's server CPU per item against
    # RedisBloom's, same client, same run (A / B <= MAX).
    cpu_at_most "16: MCHECK 100 CPU/item vs RedisBloom BF.MEXISTS 100" c3_bg1 c3_redisbloom 0.4
    cpu_at_most "16: pipelined CHECK CPU/item vs RedisBloom BF.EXISTS" c2_bg_4 c2_redisbloom_4 0.2
    for pl in split shared; do
        cpu_at_most "16: round trip ($pl, 50 conns) CPU/req vs RedisBloom" "c1_${pl}_bg_50" "c1_${pl}_redisbloom_50" 0.8
    done
fi
if [ -n "$bloomd" ]; then
    tp "3: (info) MCHECK 100 vs bloomd multi 100" c3_bg1 c3_bloomd 1
    tp "2: (info) CHECK vs bloomd check, 4 conns x 100" c2_bg_4 c2_bloomd_4 1
    for pl in split shared; do
        cpu_at_most "16: round trip ($pl, 50 conns) CPU/req vs bloomd" "c1_${pl}_bg_50" "c1_${pl}_bloomd_50" 0.8
    done
fi
target "3: MCHECK items/s, one worker, vs 3.2 M/s" "$(get c3_bg1 items_per_s)" 3200000 1
if [ $http_ok = 1 ]; then
    tp "4: wrk GET check vs nginx return 204" c4_wrk_bg c4_wrk_nginx 0.8
    tp "16: wrk GET check vs nginx return 204" c4_wrk_bg c4_wrk_nginx 1.0
    cpu_at_most "16: HTTP GET CPU/request vs nginx return 204" c4_wrk_bg c4_wrk_nginx 0.9
else
    printf '%-56s %-22s %-7s %s\n' "4: wrk GET check vs nginx return 204" "-" "-" "skipped (no HTTP API)"
fi
tp "5: ${big} items vs case 3, threads 1" c5_big1 c3_bg1 0.7
tp "5: ${big} items vs case 3, threads 2" c5_big2 c3_bg2 0.7
target "5: (file + 64 MiB) / RSS, threads 1" $((big_file + 64 * 1048576)) "$rss1" 1
target "5: (file + 64 MiB) / RSS, threads 2" $((big_file + 64 * 1048576)) "$rss2" 1
tp "6: case 2 vs null server, 1 conn x 100" c2_bg_1 c2_null_1 0.8
tp "6: case 2 vs null server, 4 conns x 100" c2_bg_4 c2_null_4 0.8
tp "6: case 3 vs null server, threads 1" c3_bg1 c3_null1 0.8
tp "6: case 3 vs null server, threads 2" c3_bg2 c3_null2 0.8

[ -n "$out" ] && say "raw JSON lines: $out"
exit 0
