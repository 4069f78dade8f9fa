# resp_lib.sh: sourced by the tests/it/resp_*_test.sh scripts, which drive a
# real bloomgated's Redis protocol front (resp_listen) with real Redis
# clients. resp_start builds three filters in a temporary directory (exact
# items, a URL list as url keys, a hosts list as host keys), starts the
# daemon on ports the kernel picks, and waits for it (a generous deadline: the
# machine may be loaded); an EXIT trap stops it and removes the directory,
# however the test ends. Sets T, RPORT (Redis protocol), LPORT (line
# protocol), PID.
set -u
BG=${BLOOMGATE:-./bloomgate}
BGD=${BLOOMGATED:-./bloomgated}
T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-resp.XXXXXX")
PID=""
pass=0 fail=0
resp_cleanup() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
        kill -TERM "$PID" 2>/dev/null
        for _ in $(seq 1 600); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$PID" 2>/dev/null
    fi
    if [ "$fail" -ne 0 ] && [ -f "$T/daemon.log" ]; then
        echo "--- daemon log (end)" >&2
        tail -20 "$T/daemon.log" >&2
    fi
    rm -rf "$T"
}
trap resp_cleanup EXIT
trap 'exit 1' INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# same NAME GOT WANT
same() { if [ "$2" = "$3" ]; then ok; else bad "$1: got [$2], want [$3]"; fi; }
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}

# resp_start [EXTRA CONFIG LINES]
resp_start() {
    printf 'a\nb\nc\n' >"$T/exact.txt"
    printf 'http://evil.example.com/dropper.exe\n' >"$T/urls.txt"
    printf '0.0.0.0 bad.example.org\n' >"$T/hosts.txt"
    "$BG" build -q --seed 7 -o "$T/exact.bloom" "$T/exact.txt" &&
        "$BG" build -q --seed 7 --format urls -o "$T/urls.bloom" "$T/urls.txt" &&
        "$BG" build -q --seed 7 --format hosts -o "$T/hosts.bloom" "$T/hosts.txt" ||
        { bad "bloomgate build"; exit 1; }
    cat >"$T/bloomgate.conf" <<CONF
listen 127.0.0.1:0
http_listen off
resp_listen 127.0.0.1:0
${1:-}
filter exact {
    file $T/exact.bloom
    journal $T/exact.journal
}
filter urls {
    file $T/urls.bloom
    journal $T/urls.journal
}
filter hosts {
    file $T/hosts.bloom
}
CONF
    "$BGD" -c "$T/bloomgate.conf" >"$T/daemon.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 600); do
        grep -q ' ready: ' "$T/daemon.log" && break
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1
    done
    grep -q ' ready: ' "$T/daemon.log" || { bad "bloomgated did not start"; exit 1; }
    RPORT=$(sed -n 's/.*Redis protocol listening on .* (port \([0-9]*\)).*/\1/p' "$T/daemon.log" | head -1)
    LPORT=$(sed -n 's/.*line protocol listening on .* (port \([0-9]*\)).*/\1/p' "$T/daemon.log" | head -1)
    [ -n "$RPORT" ] && [ -n "$LPORT" ] || { bad "no ports in the log"; exit 1; }
}

# line_info KEY: a counter from the line protocol's INFO (bash's /dev/tcp).
line_info() {
    local reply
    exec 3<>"/dev/tcp/127.0.0.1/$LPORT"
    printf 'INFO\nQUIT\n' >&3
    IFS= read -r reply <&3
    exec 3<&-
    printf '%s' "$reply" | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p"
}
