#!/usr/bin/env bash
# words_fold.sh: what the daemon's fold of a word list's run-time changes
# costs (docs/benchmarks.md, "Folding run-time changes", under "Word
# lists"): the 50,000-entry list of bench_words, a daemon with `threads 1`
# and `words_fold_after 2`, N new words added over the line protocol in
# batches of 1,000 (MADD), then INFO polled until the list is folded. Prints,
# for each N, the fold's wall time as INFO gives it (load, journal replay and
# compile, at the loader's low priority), the daemon's CPU over the adds and
# over the fold (from the last add's answer to the fold seen in INFO), its
# resident memory before the adds and after the fold, and the 1 KiB comment
# scan's server CPU on the line protocol before the adds, with the changes in
# the delta (a second daemon that never folds) and after the fold. Asserts
# nothing.
#
#   tests/bench/words_fold.sh [--build DIR] [N...]   (default N: 1000 10000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
B=$top/_build
if [ "${1:-}" = --build ]; then
    B=$(realpath "$2")
    shift 2
fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-wordsfold.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
WORDS_BENCH_DUMP=$tmp "$B/tests/bench/bench_words" 50000 2 >"$tmp/bench_words.out"
"$B/bloomgate" build -q --format words -o "$tmp/bad.bloom" "$tmp/list.txt"
# 2,000 comments of about 1 KiB of the English-like text, one a line.
python3 - "$tmp/english.txt" "$tmp/comments" <<'PY'
import sys
data = open(sys.argv[1], "rb").read().replace(b"\n", b" ")
open(sys.argv[2], "wb").write(b"\n".join(data[i * 1024:(i + 1) * 1024] for i in range(2000)) + b"\n")
PY
sed 's/^/SCAN bad /' "$tmp/comments" >"$tmp/req"

# start NAME FOLD_AFTER: a daemon on a copy of the list; sets port and pid.
start() {
    cp "$tmp/bad.bloom" "$tmp/$1.bloom"
    rm -f "$tmp/$1.bloom.journal"
    port=$(free_port)
    cat >"$tmp/$1.conf" <<EOC
listen 127.0.0.1:$port
http_listen 127.0.0.1:$(free_port)
threads 1
log_level info
filter bad {
    file $tmp/$1.bloom
    keys words
    words_delta_max 1000000
    words_fold_after $2
}
EOC
    "$B/bloomgated" -c "$tmp/$1.conf" >"$tmp/$1.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    wait_port "$port" "$pid" || { cat "$tmp/$1.log" >&2; exit 1; }
}

# line PORT MODE [N]: the line-protocol client. add: N new words in MADDs of
# 1,000; fold: polls INFO until the list is folded, prints its words.folded.
line() {
    python3 - "$@" <<'PY'
import json, socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")
def ask(cmd):
    s.sendall(cmd + b"\n")
    return f.readline().rstrip(b"\n")
if mode == "add":
    n = int(sys.argv[3])
    for b in range(0, n, 1000):
        r = ask(b"MADD bad " + b" ".join(b"zqfold%d" % i for i in range(b, min(n, b + 1000))))
        assert not r.startswith(b"ERR"), r
else:
    while True:
        info = json.loads(ask(b"INFO bad"))
        fo = info["words"]["folded"]
        if fo and info["words"]["delta"]["entries"] == 0:
            print(json.dumps(fo))
            break
        time.sleep(0.05)
PY
}

# scan_cpu PORT PID: the server's CPU per comment scanned, bench_net
# replaying the comments (2 connections, 4 in flight each) for SCAN_SECONDS
# (default 8).
scan_cpu() {
    local t0 t1 out
    "$B/tests/bench/bench_net" --proto line --port "$1" --replay "$tmp/req" \
        --connections 2 --pipeline 4 --duration 1 >/dev/null 2>&1 || true
    t0=$(cpu_ticks "$2")
    out=$("$B/tests/bench/bench_net" --proto line --port "$1" --replay "$tmp/req" \
        --connections 2 --pipeline 4 --duration "${SCAN_SECONDS:-8}" 2>"$tmp/bench_net.err") ||
        { echo "${0##*/}: bench_net failed:" >&2; head -5 "$tmp/bench_net.err" >&2; exit 1; }
    t1=$(cpu_ticks "$2")
    ns_per_item $((t1 - t0)) "$(jq -r .commands <<<"$out")"
}

echo "tree $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${sizes[@]}"; do
    start never 0
    nport=$port npid=$pid
    start folds 2
    rss0=$(rss_kb "$pid")
    list_ns=$(scan_cpu "$port" "$pid")
    line "$nport" add "$n"
    t0=$(cpu_ticks "$pid")
    line "$port" add "$n"
    t1=$(cpu_ticks "$pid")
    fo=$(line "$port" fold)
    t2=$(cpu_ticks "$pid")
    delta_ns=$(scan_cpu "$nport" "$npid")
    fold_ns=$(scan_cpu "$port" "$pid")
    printf '%6d changes: fold %s; daemon CPU: the adds %s ms, the fold %s ms;' "$n" "$fo" \
        "$(((t1 - t0) * 1000 / clk))" "$(((t2 - t1) * 1000 / clk))"
    printf ' RSS %d -> %d KiB\n' "$rss0" "$(rss_kb "$pid")"
    printf '        1 KiB comment, server CPU per scan: list %s ns, with the delta %s ns,' \
        "$list_ns" "$delta_ns"
    printf ' folded %s ns\n' "$fold_ns"
    kill "$pid" "$npid"
    wait "$pid" "$npid" 2>/dev/null || true
    pids=()
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
