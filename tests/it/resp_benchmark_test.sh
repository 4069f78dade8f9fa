#!/usr/bin/env bash
# redis-benchmark against bloomgated's Redis protocol front: BF.EXISTS and
# BF.MEXISTS, one request per round trip and pipelined (-P 16), over 50
# connections. Each run must report its requests per second and no error
# reply ("Error from server"), and the daemon must have answered every
# request. A benchmark run here, not a measurement: no timing is asserted.
# Skipped (77) only if redis-benchmark is not installed.
command -v redis-benchmark >/dev/null || { echo "redis-benchmark not installed: skipped"; exit 77; }
. "${srcdir:-.}/tests/it/resp_lib.sh"
resp_start
N=20000
run() {
    local name=$1
    shift
    timeout 300 redis-benchmark -h 127.0.0.1 -p "$RPORT" -n "$N" -q "$@" >"$T/bench" 2>&1
    local rc=$?
    tr '\r' '\n' <"$T/bench" | grep -v 'rps=' | grep -v '^ *$' >"$T/bench2"
    cat "$T/bench2"
    [ "$rc" -eq 0 ] && ok || bad "$name: exit $rc"
    grep -q 'requests per second' "$T/bench2" && ok || bad "$name: no result: $(head -c 300 "$T/bench2")"
    grep -qi 'error from server' "$T/bench" && bad "$name: error replies: $(grep -i -m1 'error' "$T/bench")" || ok
}
before=$(line_info resp_requests)
run "BF.EXISTS" BF.EXISTS exact a
run "BF.EXISTS url" BF.EXISTS urls http://EVIL.example.com:80/dropper.exe
run "BF.MEXISTS" BF.MEXISTS exact a b zzz c
run "BF.MEXISTS pipelined" -P 16 BF.MEXISTS exact a b zzz c
after=$(line_info resp_requests)
[ $((after - before)) -ge $((4 * N)) ] && ok || bad "the daemon answered $((after - before)) of $((4 * N)) requests"
# The check is not blind: errors are seen (BF.INFO of a missing key; a
# lookup in one answers 0, as RedisBloom does).
timeout 300 redis-benchmark -h 127.0.0.1 -p "$RPORT" -n 100 -q BF.INFO nope >"$T/bench" 2>&1
grep -q "Error from server: ERR unknown_filter no such filter 'nope'" "$T/bench" && ok ||
    bad "errors not seen: $(head -c 300 "$T/bench")"
finish
