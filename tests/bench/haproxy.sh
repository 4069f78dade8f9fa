#!/usr/bin/env bash
# Items/s through HAProxy in front of two bloomgated replicas against one
# replica direct: the same client (bench_net), the same filter file, the same
# run, the two paths alternated round by round (docs/scaling.md). Beside each
# figure: the replicas' CPU time per item and HAProxy's, from /proc.
#   tests/bench/haproxy.sh BUILD_DIR [ROUNDS] [SECONDS]
# Cases: line, MCHECK of 100 (4 connections x 4 in flight); http, GET check
# (50 connections). Replicas run `threads 1`. On a 2-core machine client,
# proxy and replicas share two CPUs: the figure shows what the proxy costs,
# not what a second replica adds.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh" # free_port, wait_port, cpu_ticks, ns_per_item, median
B=$(cd "${1:?usage: haproxy.sh BUILD_DIR [ROUNDS] [SECONDS]}" && pwd)
rounds=${2:-3}
dur=${3:-5}
command -v jq >/dev/null || { echo "haproxy.sh: needs jq" >&2; exit 2; }
command -v haproxy >/dev/null || { echo "haproxy.sh: needs haproxy (scripts/deps.sh)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-hap.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT

"$B/tests/bench/bench_net" --dump 1000000 --item-len 48 |
    "$B/bloomgate" build -o "$tmp/bench.bloom" --capacity 1000000 --fpr 0.0001 --quiet -
declare -A pid lport hport
for r in r1 r2; do
    lport[$r]=$(free_port) hport[$r]=$(free_port)
    cat >"$tmp/$r.conf" <<CONF
listen 127.0.0.1:${lport[$r]}
http_listen 127.0.0.1:${hport[$r]}
threads 1
log_level warn
filter bench {
    file $tmp/bench.bloom
    journal off
}
CONF
    "$B/bloomgated" -c "$tmp/$r.conf" 2>"$tmp/$r.log" &
    pid[$r]=$!
    pids+=("$!")
done
hl=$(free_port) hh=$(free_port)
cat >"$tmp/haproxy.cfg" <<CONF
global
    maxconn 2000
defaults
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    timeout check 5s
frontend bg_line
    mode tcp
    bind 127.0.0.1:$hl
    default_backend bg_line
backend bg_line
    mode tcp
    balance leastconn
    option tcp-check
    tcp-check send "PING\r\n"
    tcp-check expect string PONG
    server r1 127.0.0.1:${lport[r1]} check inter 2s
    server r2 127.0.0.1:${lport[r2]} check inter 2s
frontend bg_http
    mode http
    bind 127.0.0.1:$hh
    default_backend bg_http
backend bg_http
    mode http
    balance leastconn
    option httpchk GET /healthz
    http-check expect status 200
    server r1 127.0.0.1:${hport[r1]} check inter 2s
    server r2 127.0.0.1:${hport[r2]} check inter 2s
CONF
haproxy -f "$tmp/haproxy.cfg" -db >"$tmp/haproxy.log" 2>&1 &
hpid=$!
pids+=("$hpid")
for port in "${hport[r1]}" "${hport[r2]}" "$hh"; do
    for _ in $(seq 300); do
        curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break
        sleep 0.1
    done
done
sleep 3 # both servers through the first health checks (inter 2s)

# shellcheck disable=SC2034 # read through ${!a}
args_line="--proto line --items 100 --connections 4 --pipeline 4"
# shellcheck disable=SC2034
args_http="--proto http --connections 50"
printf '%-5s %-8s %5s %12s %16s %16s\n' case path round items/s "replica ns/item" "haproxy ns/item"
for r in $(seq "$rounds"); do
    for c in line http; do
        for path in direct haproxy; do
            a="args_$c"
            if [ $path = direct ]; then
                port=${lport[r1]}; [ $c = http ] && port=${hport[r1]}
            else
                port=$hl; [ $c = http ] && port=$hh
            fi
            s0=$(($(cpu_ticks "${pid[r1]}") + $(cpu_ticks "${pid[r2]}"))) h0=$(cpu_ticks "$hpid")
            # shellcheck disable=SC2086
            line=$("$B/tests/bench/bench_net" ${!a} --port "$port" --filter bench --keyspace 1000000 \
                --item-len 48 --present-share 0.5 --duration "$dur" --warmup 1 --label "$c-$path")
            s1=$(($(cpu_ticks "${pid[r1]}") + $(cpu_ticks "${pid[r2]}"))) h1=$(cpu_ticks "$hpid")
            echo "$line" >>"$tmp/json"
            items=$(jq -r .items <<<"$line") ips=$(jq -r .items_per_s <<<"$line")
            errs=$(jq -r .errors <<<"$line")
            [ "$errs" = 0 ] || { echo "haproxy.sh: $c via $path: $errs errors" >&2; exit 1; }
            sn=$(ns_per_item $((s1 - s0)) "$items")
            hn=$(ns_per_item $((h1 - h0)) "$items")
            printf '%-5s %-8s %5s %12s %16s %16s\n' "$c" "$path" "$r" "$ips" "$sn" "$hn" | tee -a "$tmp/rows"
        done
    done
done
echo "medians over $rounds rounds of ${dur} s:"
for c in line http; do
    for path in direct haproxy; do
        m=$(awk -v c=$c -v p=$path '$1==c && $2==p {print $4}' "$tmp/rows" | median)
        s=$(awk -v c=$c -v p=$path '$1==c && $2==p {print $5}' "$tmp/rows" | median)
        h=$(awk -v c=$c -v p=$path '$1==c && $2==p {print $6}' "$tmp/rows" | median)
        printf '  %-5s %-8s %12s items/s %8s ns replicas %8s ns haproxy CPU per item\n' "$c" "$path" "$m" "$s" "$h"
    done
done
echo "raw:"
cat "$tmp/json"
