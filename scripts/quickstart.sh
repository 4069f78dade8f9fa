#!/usr/bin/env bash
# Quick start: install what is missing, build, build a filter from the bundled
# sample blocklist, start bloomgated on it (127.0.0.1:7878 line protocol,
# 127.0.0.1:7879 HTTP), show a first session, then keep serving until Ctrl-C.
# BLOOMGATE_DEMO_SECONDS=N stops it after N seconds instead (used by CI).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
scripts/build.sh _build
mkdir -p _demo
echo "== bloomgate build: a filter from data/sample-blocklist.txt"
_build/bloomgate build -o _demo/sample.bloom data/sample-blocklist.txt
cat >_demo/bloomgate.conf <<CONF
listen 127.0.0.1:${BLOOMGATE_PORT:-7878}
http_listen 127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}
filter urls {
    file sample.bloom
}
filter seen {
    capacity 1000000
    fpr 0.0001
}
CONF
echo "== starting bloomgated (config _demo/bloomgate.conf, log _demo/bloomgated.log)"
_build/bloomgated -c _demo/bloomgate.conf 2>_demo/bloomgated.log &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    grep -q 'ready:' _demo/bloomgated.log 2>/dev/null && break
    if ! kill -0 $pid 2>/dev/null; then cat _demo/bloomgated.log >&2; exit 1; fi
    sleep 0.1
done
grep -q 'ready:' _demo/bloomgated.log || { cat _demo/bloomgated.log >&2; exit 1; }
listed=$(awk '!/^#/ { print; exit }' data/sample-blocklist.txt)
session="PING
CHECK urls $listed
CHECK urls www.debian.org
MCHECK urls $listed www.debian.org example.org
ADD seen user@example.org
ADD seen user@example.org
CHECK seen user@example.org
FILTERS
QUIT"
echo "== a first session: printf '...' | nc 127.0.0.1 ${BLOOMGATE_PORT:-7878}"
printf '%s\n' "$session" | sed 's/^/> /'
printf '%s\n' "$session" | nc -q 2 127.0.0.1 "${BLOOMGATE_PORT:-7878}" | sed 's/^/< /'
if grep -q 'HTTP listening' _demo/bloomgated.log; then
    echo "== the same over HTTP"
    echo "> curl 'http://127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}/v1/filters/urls/check?item=$listed'"
    curl -s "http://127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}/v1/filters/urls/check?item=$listed"; echo
fi
if [ -n "${BLOOMGATE_DEMO_SECONDS:-}" ]; then
    sleep "$BLOOMGATE_DEMO_SECONDS"
    exit 0
fi
echo "== bloomgated is serving on 127.0.0.1:${BLOOMGATE_PORT:-7878}; Ctrl-C stops it"
wait $pid
