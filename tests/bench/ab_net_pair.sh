#!/usr/bin/env bash
# ab_net_pair.sh: two trees' bloomgated side by side on adblock_net.sh's
# requests, so that a change to the Adblock path is measured against the load
# of the same minutes (on a shared machine a whole adblock_net.sh run moves
# with the load more than such a change does). Both daemons run at once
# (`threads 2`, each serving its own tree's compiled ads.bloom and the same
# urls.bloom); each round sends every CASE to A, then to B, for SECONDS (after
# 1 s not counted), with adblock_net.sh's shapes (MCHECK 4 x 4 in flight,
# CHECK 4 x 32), and prints each run's server CPU ns per item (utime + stime
# of the daemon's threads over the run) and items/s; then the medians and
# B / A. Prints figures, asserts nothing; not run by `make check`.
#   tests/bench/ab_net_pair.sh BUILD_A DIR_A BUILD_B DIR_B [ROUNDS] [SECONDS] [CASE ...]
# DIR_x: a directory `KEEP=1 tests/bench/adblock_net.sh BUILD_x` left (its
# ads.bloom, urls.bloom and CASE.txt request files; the request files of
# DIR_A are sent to both). Default cases: url-mcheck ads-mcheck.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: ab_net_pair.sh BUILD_A DIR_A BUILD_B DIR_B [ROUNDS] [SECONDS] [CASE ...]"
BA=$(cd "${1:?$usage}" && pwd)
DA=$(cd "${2:?$usage}" && pwd)
BB=$(cd "${3:?$usage}" && pwd)
DB=$(cd "${4:?$usage}" && pwd)
rounds=${5:-5}
dur=${6:-5}
shift 4
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
cases=${*:-url-mcheck ads-mcheck}
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh" # free_port, wait_port
command -v jq >/dev/null || { echo "ab_net_pair.sh: needs jq" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-abpair.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$tmp"
}
trap cleanup EXIT
declare -A pid port
for side in A B; do
    b=$BA d=$DA
    [ $side = B ] && b=$BB d=$DB
    port[$side]=$(free_port)
    cat >"$tmp/$side.conf" <<CONF
listen 127.0.0.1:${port[$side]}
http_listen off
threads 2
log_level warn
filter ads {
    file $d/ads.bloom
    keys adblock
    journal off
}
filter urls {
    file $DA/urls.bloom
    keys url
    journal off
}
CONF
    "$b/bloomgated" -c "$tmp/$side.conf" 2>"$tmp/$side.log" &
    pid[$side]=$!
    pids+=("$!")
done
for side in A B; do
    wait_port "${port[$side]}" "${pid[$side]}" 60 || { cat "$tmp/$side.log" >&2; exit 1; }
done
run() { # SIDE CASE SECONDS WARMUP
    local shape=(--connections 4 --pipeline 4)
    case $2 in *-check) shape=(--connections 4 --pipeline 32) ;; esac
    "$BA/tests/bench/bench_net" --proto line --port "${port[$1]}" --replay "$DA/$2.txt" \
        "${shape[@]}" --duration "$3" --warmup "$4" --server-pid "${pid[$1]}" --label "$2"
}
echo "machine: $(nproc) CPUs, $(. /etc/os-release && echo "$PRETTY_NAME"); load" \
    "$(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ)"
for c in $cases; do for side in A B; do run $side "$c" 1 0.5 >/dev/null; done; done
: >"$tmp/rows"
printf '%-16s %4s %5s %14s %12s\n' case side round server_ns/item items/s
for r in $(seq "$rounds"); do
    for c in $cases; do
        for side in A B; do
            line=$(run $side "$c" "$dur" 1)
            [ "$(jq -r .errors <<<"$line")" = 0 ] || { echo "ab_net_pair.sh: errors: $line" >&2; exit 1; }
            jq -r --arg s $side --arg r "$r" '[.label, $s, $r, (.server_cpu_ns_per_item | round),
                (.items_per_s | round)] | @tsv' <<<"$line" | tee -a "$tmp/rows" |
                awk -F'\t' '{ printf "%-16s %4s %5s %14s %12s\n", $1, $2, $3, $4, $5 }'
        done
    done
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians of $rounds rounds ($dur s each), server CPU ns per item (A: $BA, B: $BB):"
med() { awk -F'\t' -v c="$1" -v s="$2" '$1 == c && $2 == s { print $4 }' "$tmp/rows" | sort -n |
    awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for c in $cases; do
    a=$(med "$c" A)
    b=$(med "$c" B)
    printf '  %-16s A %6s   B %6s   B / A %.3f\n' "$c" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN { print b / a }')"
done
# shellcheck disable=SC2086 # the cases, one a word
set -- $cases
if [ "$#" -ge 2 ]; then
    echo "  ratio $2 / $1 (server CPU per item): A $(awk -v x="$(med "$2" A)" -v y="$(med "$1" A)" \
        'BEGIN { printf "%.2f", x / y }'), B $(awk -v x="$(med "$2" B)" -v y="$(med "$1" B)" \
        'BEGIN { printf "%.2f", x / y }')"
fi
