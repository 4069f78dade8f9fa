#!/usr/bin/env bash
# bloomd's NodeJS driver (npm `bloomd` 0.2.6, tests/bloomd_client/, installed
# by scripts/deps.sh) run unchanged against bloomgated's bloomd front:
# starts the real daemon in a temporary directory with bloomd_listen on a port
# the kernel picks and a state_dir (for create and drop), runs
# tests/bloomd_client/client_test.js on it, and stops it. Skipped (77) without
# node or without tests/bloomd_client/node_modules/bloomd.
set -u
client=$(cd "${srcdir:-.}/tests/bloomd_client" && pwd)
command -v node >/dev/null 2>&1 || { echo "node not installed: skipped"; exit 77; }
[ -f "$client/node_modules/bloomd/index.js" ] || {
    echo "no $client/node_modules/bloomd (scripts/deps.sh installs it): skipped"
    exit 77
}
bgd=${BLOOMGATED:-./bloomgated}
bgd=$(cd "$(dirname "$bgd")" && pwd)/$(basename "$bgd")
[ -x "$bgd" ] || { echo "no bloomgated at $bgd"; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bloomd-client.XXXXXX")
PID=""
status=1
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -TERM "$PID" 2>/dev/null
        for _ in $(seq 1 600); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$PID" 2>/dev/null
    fi
    if [ "$status" -ne 0 ] && [ -f "$T/daemon.log" ]; then
        echo "--- daemon log (end)"
        tail -20 "$T/daemon.log"
    fi
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
cat >"$T/bloomgate.conf" <<CONF
listen 127.0.0.1:0
http_listen off
bloomd_listen 127.0.0.1:0
threads 2
state_dir $T/state
CONF
"$bgd" -c "$T/bloomgate.conf" >"$T/daemon.log" 2>&1 &
PID=$!
# A generous deadline: the machine may be loaded.
for _ in $(seq 1 600); do
    grep -q ' ready: ' "$T/daemon.log" && break
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
done
grep -q ' ready: ' "$T/daemon.log" || { echo "FAIL: bloomgated did not start"; exit 1; }
port=$(sed -n 's/.*bloomd protocol listening on .* (port \([0-9]*\)).*/\1/p' "$T/daemon.log" | head -1)
[ -n "$port" ] || { echo "FAIL: no bloomd port in the log"; exit 1; }
timeout 300 node "$client/client_test.js" 127.0.0.1 "$port"
status=$?
[ "$status" -eq 0 ] || echo "FAIL: client_test.js exited $status"
exit "$status"
