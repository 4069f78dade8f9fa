#!/usr/bin/env bash
# The authorization endpoint against GET .../check on the same run: one
# bloomgated (threads 1) serving a url filter built from bench_net's dump,
# the same client (bench_net, --url-items: every URL respelled, upper-case
# host and a port, so a present one is found only through canonicalisation),
# the two cases alternated round by round, and the server's own CPU time per
# request (utime + stime of every thread, /proc/PID/stat) beside the
# throughput.
#   check: GET /v1/filters/urls/check?item=URL         (JSON body back)
#   authz: GET /v1/authz/urls with X-Forwarded-Proto, X-Forwarded-Host and
#          X-Original-URI, as nginx's auth_request sends (204 / 403 back)
#   tests/bench/authz.sh [BUILD_DIR] [ROUNDS] [SECONDS] [CONNECTIONS]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh" # free_port, wait_port, cpu_ticks, ns_per_item, median
B=$(cd "${1:-_build}" && pwd)
rounds=${2:-5}
dur=${3:-4}
conns=${4:-50}
command -v jq >/dev/null || { echo "authz.sh: needs jq (apt-get install jq)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-authz.XXXXXX")
dpid=
cleanup() {
    if [ -n "$dpid" ]; then kill -TERM "$dpid" 2>/dev/null || true; wait "$dpid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

"$B/tests/bench/bench_net" --dump 1000000 --item-len 48 |
    "$B/bloomgate" build -o "$tmp/urls.bloom" --format urls --keys url --capacity 1000000 \
        --fpr 0.0001 --quiet -
hport=$(free_port)
cat >"$tmp/d.conf" <<CONF
listen 127.0.0.1:0
http_listen 127.0.0.1:$hport
threads 1
log_level warn
filter urls {
    file $tmp/urls.bloom
    keys url
}
CONF
"$B/bloomgated" -c "$tmp/d.conf" 2>"$tmp/d.log" &
dpid=$!
wait_port "$hport" "$dpid" 30 || { cat "$tmp/d.log" >&2; echo "authz.sh: bloomgated did not start" >&2; exit 1; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u +%Y-%m-%dT%H:%MZ); bloomgated threads 1; $conns connections; $dur s per run"
common="--proto http --port $hport --filter urls --keyspace 1000000 --item-len 48 --present-share 0.5 --url-items --connections $conns --duration $dur --warmup 0"
echo "  check: bench_net $common"
echo "  authz: bench_net $common --http-authz"
printf '%-6s %5s %12s %16s %8s\n' case round requests/s "cpu ns/request" p99_us
for r in $(seq "$rounds"); do
    for c in check authz; do
        extra=""
        [ $c = authz ] && extra="--http-authz"
        t0=$(cpu_ticks "$dpid")
        # shellcheck disable=SC2086
        line=$("$B/tests/bench/bench_net" $common $extra --label "$c-$r")
        t1=$(cpu_ticks "$dpid")
        n=$(jq -r .items <<<"$line"); rps=$(jq -r .items_per_s <<<"$line")
        errs=$(jq -r .errors <<<"$line"); p99=$(jq -r .p99_us <<<"$line")
        [ "$errs" = 0 ] || { echo "authz.sh: $c: $errs errors: $line" >&2; exit 1; }
        ns=$(ns_per_item $((t1 - t0)) "$n")
        printf '%-6s %5s %12s %16s %8s\n' "$c" "$r" "$rps" "$ns" "$p99" | tee -a "$tmp/rows" >/dev/null
        printf '%-6s %5s %12s %16s %8s\n' "$c" "$r" "$rps" "$ns" "$p99"
        echo "$line" >>"$tmp/json"
    done
done
med() { awk -v c="$1" -v k="$2" '$1==c {print $k}' "$tmp/rows" | median; }
echo "medians over $rounds rounds:"
for c in check authz; do
    printf '  %-6s %10s requests/s %6s ns server CPU per request\n' "$c" "$(med $c 3)" "$(med $c 4)"
done
awk -v a="$(med authz 3)" -v c="$(med check 3)" -v an="$(med authz 4)" -v cn="$(med check 4)" \
    'BEGIN{printf "authz / check: %.2f x requests/s (target >= 0.9), %.2f x server CPU per request\n", a / c, an / cn}'
echo "raw JSON lines:"
cat "$tmp/json"
