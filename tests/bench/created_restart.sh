#!/usr/bin/env bash
# Restart time of a filter created at run time with N adds (default 10
# million) in its journal, before and after a checkpoint (docs/created.md):
# the daemon is started with a state_dir, `CREATE r capacity=N`, fed N items
# by MADD (1000 a line, pipelined), stopped and started again (the journal
# replayed: "before"); then FLUSH writes the checkpoint, and the next restart
# loads the file ("after"). Prints the times the daemon logs from start to
# ready, and the journal and file sizes. KIND `grow` makes r a growing
# filter with RedisBloom's defaults instead (what BF.ADD auto-creates:
# `capacity=100 fpr=0.01 growth=on`), whose checkpoint is a growing
# filter's file (bloom/grow_file.h). Usage:
#   tests/bench/created_restart.sh BUILD_DIR [N] [plain|grow]
set -eu
B=${1:?usage: $0 BUILD_DIR [N] [plain|grow]}
N=${2:-10000000}
KIND=${3:-plain}
case $KIND in
plain) OPTS="capacity=$N fpr=0.0001 fsync=no" ;;
grow) OPTS="capacity=100 fpr=0.01 growth=on fsync=no" ;;
*) echo "$0: KIND is plain or grow" >&2; exit 2 ;;
esac
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-restart.XXXXXX")
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
PORT=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$T/b.conf" <<CONF
listen 127.0.0.1:$PORT
http_listen off
state_dir $T/state
checkpoint_bytes 0
CONF
start() {
    "$B/bloomgated" -c "$T/b.conf" >>"$T/log" 2>&1 &
    PID=$!
    local t0; t0=$(date +%s.%N)
    until $PY -c "import socket; s=socket.create_connection(('127.0.0.1',$PORT)); s.sendall(b'PING\n'); assert s.recv(8)==b'PONG\n'" 2>/dev/null; do
        sleep 0.05
    done
    ELAPSED=$(echo "$(date +%s.%N) - $t0" | bc)
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; PID=; }
start
$PY - "$PORT" "$N" "$OPTS" <<'PYEOF'
import socket, sys
port, n, opts = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
f = s.makefile("rb")
def cmd(line):
    s.sendall(line.encode() + b"\n"); return f.readline().decode().strip()
assert cmd("CREATE r " + opts) == "OK"
B, W = 1000, 64
sent = got = 0
lines = (n + B - 1) // B
while got < lines:
    while sent < lines and sent - got < W:
        lo = sent * B
        s.sendall(("MADD r " + " ".join("item-%d" % i for i in range(lo, min(lo + B, n))) + "\n").encode())
        sent += 1
    r = f.readline()
    assert r and not r.startswith(b"ERR"), r
    got += 1
PYEOF
stop
J=$(du -b "$T"/state/*.journal | awk '{s+=$1} END {print s}')
start
before=$ELAPSED
stop
start
$PY -c "
import socket; s=socket.create_connection(('127.0.0.1',$PORT)); f=s.makefile('rb')
s.sendall(b'FLUSH r\nMCHECK r item-0 item-$((N - 1)) nope\n'); print('FLUSH', f.readline().decode().strip(), '; check', f.readline().decode().strip())"
stop
F=$(du -b "$T"/state/*.bloom | awk '{s+=$1} END {print s}')
start
after=$ELAPSED
$PY -c "
import socket; s=socket.create_connection(('127.0.0.1',$PORT)); f=s.makefile('rb')
s.sendall(b'MCHECK r item-0 item-$((N - 1)) nope\n'); print('after the checkpoint: check', f.readline().decode().strip())"
stop
grep -E "replayed|checkpoint" "$T/log" | sed 's/^/  log: /'
printf '%s: adds %d; journal %d bytes; restart before the checkpoint %.2f s; checkpoint file %d bytes; restart after %.2f s\n' \
    "$KIND" "$N" "$J" "$before" "$F" "$after"
