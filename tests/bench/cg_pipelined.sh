#!/usr/bin/env bash
# cg_pipelined.sh [--build-dir DIR] [--daemon PATH] [--batches N] [--fn FUNC]:
# instructions per pipelined one-item CHECK, counted by callgrind, in a way
# that does not depend on the machine's load: bloomgated (threads 1, a 1M-item
# filter of bench_net's items) gets N batches of 100 CHECKs (half present,
# half absent), each batch one write, its 100 replies read before the next is
# sent, so each batch is one read on the server. Prints FUNC's inclusive
# instructions (default line_process; conn_read_cb adds the connection
# layer's read and flush) divided by the CHECKs. Compare two trees by running
# it with each one's --daemon on the same machine.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=$top/_build
daemon=""
batches=2000
fn=line_process
while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir) B=$(realpath -m "$2"); shift ;;
    --daemon) daemon=$(realpath -m "$2"); shift ;;
    --batches) batches=$2; shift ;;
    --fn) fn=$2; shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--daemon PATH] [--batches N] [--fn FUNC]" >&2; exit 2 ;;
    esac
    shift
done
daemon=${daemon:-$B/bloomgated}
command -v valgrind >/dev/null || { echo "needs valgrind" >&2; exit 77; }
tmp=$(mktemp -d)
vp=""
trap '[ -n "$vp" ] && kill "$vp" 2>/dev/null; rm -rf "$tmp"' EXIT
"$B/tests/bench/bench_net" --dump 1000000 --item-len 48 |
    "$B/bloomgate" build -o "$tmp/bench.bloom" --capacity 1000000 --fpr 0.01 --quiet -
"$B/tests/bench/bench_net" --dump 20000 --item-len 48 >"$tmp/present.txt"
"$B/tests/bench/bench_net" --dump-absent 20000 --item-len 48 >"$tmp/absent.txt"
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
printf 'listen 127.0.0.1:%s\nhttp_listen off\nthreads 1\nlog_level warn\nfilter bench {\n    file %s\n    journal off\n}\n' \
    "$port" "$tmp/bench.bloom" >"$tmp/bg.conf"
valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$fn" \
    --callgrind-out-file="$tmp/cg.out" "$daemon" -c "$tmp/bg.conf" 2>"$tmp/vg.log" &
vp=$!
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.5; done
checks=$(python3 - "$port" "$batches" "$tmp" <<'PY'
import random, socket, sys
port, batches, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
pres = open(tmp + "/present.txt").read().split()
absn = open(tmp + "/absent.txt").read().split()
rnd = random.Random(1)
s = socket.create_connection(("127.0.0.1", port))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for _ in range(batches):
    s.sendall(b"".join(b"CHECK bench " + rnd.choice(pres if rnd.random() < 0.5 else absn).encode()
                       + b"\n" for _ in range(100)))
    got = 0
    while got < 100:
        got += s.recv(65536).count(b"\n")
print(batches * 100)
PY
)
kill -INT "$vp"
wait "$vp" || true
vp=""
ir=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(",","",$1);print $1}')
echo "$fn: $ir instructions / $checks CHECKs = $(python3 -c "print(round($ir/$checks, 2))") a CHECK"
