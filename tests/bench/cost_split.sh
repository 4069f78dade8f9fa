#!/usr/bin/env bash
# cost_split.sh: where a server's CPU per item goes, user space or the kernel,
# bloomgated against RedisBloom (issue 16). One bloomgated (`threads 1`, an
# exact filter of 1M items at 1e-4) and Debian's redis-server with the given
# redisbloom.so (BF.RESERVE bench 0.0001 1000000, loaded with BF.MADD), the
# same client (bench_net) alternating between them, and each server's utime
# and stime (all threads, /proc/PID/stat) read around each run, divided by the
# items answered. The null server (tests/bench/null_server, one thread: the
# line protocol parsed, every item answered NO) runs the same cases beside
# them, for the share of the line protocol itself. Not run by `make check`.
#   tests/bench/cost_split.sh BUILD_DIR REDISBLOOM_SO [ROUNDS] [SECONDS]
# Cases: MCHECK / BF.MEXISTS of 100 (4 conns x 4 in flight), pipelined CHECK /
# BF.EXISTS (4 conns x 100 in flight); half the items present.
set -euo pipefail
B=$(cd "${1:?usage: cost_split.sh BUILD_DIR REDISBLOOM_SO [ROUNDS] [SECONDS]}" && pwd)
so=$(realpath "${2:?usage: cost_split.sh BUILD_DIR REDISBLOOM_SO [ROUNDS] [SECONDS]}")
rounds=${3:-3}
dur=${4:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-split.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
bp=$(free_port)
rp=$(free_port)
np=$(free_port)
"$B/tests/bench/bench_net" --dump 1000000 --item-len 48 |
    "$B/bloomgate" build -o "$tmp/bench.bloom" --capacity 1000000 --fpr 0.0001 --quiet -
cat >"$tmp/bg.conf" <<CONF
listen 127.0.0.1:$bp
http_listen off
threads 1
log_level warn
filter bench {
    file $tmp/bench.bloom
    journal off
}
CONF
"$B/bloomgated" -c "$tmp/bg.conf" 2>"$tmp/bg.log" &
bg=$!
pids+=("$bg")
"$B/tests/bench/null_server" --port "$np" --threads 1 >"$tmp/null.log" 2>&1 &
nl=$!
pids+=("$nl")
redis-server --port "$rp" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    --dir "$tmp" --loadmodule "$so" >"$tmp/redis.log" 2>&1 &
rb=$!
pids+=("$rb")
for _ in $(seq 300); do redis-cli -p "$rp" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
for p in "$bp" "$np"; do
    for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; sleep 0.1; done
done
redis-cli -p "$rp" BF.RESERVE bench 0.0001 1000000 | grep -q OK || {
    cat "$tmp/redis.log" >&2
    echo "cost_split.sh: BF.RESERVE failed (is $so RedisBloom?)" >&2
    exit 1
}
"$B/tests/bench/bench_net" --proto resp-bf --port "$rp" --filter bench --load 1000000 --item-len 48 >/dev/null
hz=$(getconf CLK_TCK)
echo "machine: $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-8s %-11s %5s %12s %9s %9s %9s\n' case server round items/s user_ns sys_ns total_ns
for r in $(seq "$rounds"); do
    for c in mcheck check; do
        shape=(--items 100 --connections 4 --pipeline 4)
        [ $c = check ] && shape=(--items 1 --connections 4 --pipeline 100)
        for s in bloomgated redisbloom null; do
            case $s in
            bloomgated) pid=$bg; a=(--proto line --port "$bp") ;;
            redisbloom) pid=$rb; a=(--proto resp-bf --port "$rp") ;;
            null) pid=$nl; a=(--proto line --port "$np" --no-verify) ;;
            esac
            read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
            line=$("$B/tests/bench/bench_net" "${a[@]}" --filter bench --keyspace 1000000 --item-len 48 \
                --present-share 0.5 "${shape[@]}" --duration "$dur" --warmup 0.5 --label "$c-$s")
            read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
            n=$(sed -n 's/.*"items":\([0-9]*\).*/\1/p' <<<"$line")
            ips=$(sed -n 's/.*"items_per_s":\([0-9.]*\).*/\1/p' <<<"$line")
            errs=$(sed -n 's/.*"errors":\([0-9]*\).*/\1/p' <<<"$line")
            [ "$errs" = 0 ] || { echo "cost_split.sh: $c on $s: $errs errors" >&2; exit 1; }
            # The warm-up's items are not counted in n: scale n by (d + 0.5) / d.
            awk -v c=$c -v s=$s -v r="$r" -v u=$((u1 - u0)) -v y=$((s1 - s0)) -v hz="$hz" -v n="$n" \
                -v d="$dur" -v ips="$ips" 'BEGIN {
                    n = n * (d + 0.5) / d
                    printf "%-8s %-11s %5d %12.0f %9.1f %9.1f %9.1f\n", c, s, r, ips,
                        u / hz / n * 1e9, y / hz / n * 1e9, (u + y) / hz / n * 1e9 }'
        done
    done
done
