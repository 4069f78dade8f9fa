#!/usr/bin/env bash
# Quick start: install what is missing, build, build a filter from the bundled
# sample blocklist, build the shipped URLhaus Adblock list as url keys (filter
# file urls.bloom) and as host keys (hosts.bloom) and look URLs up in them,
# start bloomgated on the sample (127.0.0.1:7878 line protocol, 127.0.0.1:7879
# HTTP), show a first session, then keep serving until Ctrl-C.
# The daemon does not apply key kinds yet (its query side comes after the
# network restructuring), so the url and host lookups are shown with
# `bloomgate check --match` on the files, and the daemon serves exact items.
# BLOOMGATE_DEMO_SECONDS=N stops it after N seconds instead (used by CI).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
scripts/build.sh _build
mkdir -p _demo
echo "== bloomgate build: a filter from data/sample-blocklist.txt"
_build/bloomgate build -o _demo/sample.bloom data/sample-blocklist.txt
list=data/urlhaus-filter-online.txt
echo "== bloomgate build: $list (Adblock rules) as url keys, then as host keys"
_build/bloomgate build --format adblock --keys url -o _demo/urls.bloom "$list"
_build/bloomgate build --format adblock --keys host --rejects _demo/hosts.rejects -o _demo/hosts.bloom "$list"
# A listed URL (the first ||host/path^ rule without a query) written with an
# upper-case host, a port and a query; a listed host with an extra path; and
# in the host filter, a subdomain of a listed host and an e-mail address there.
rule=$(awk '/^\|\|[^?]*\// { t = $0; sub(/^\|\|/, "", t); sub(/\^?(\$.*)?$/, "", t); print t; exit }' "$list")
host=$(awk '!/^[!|[]/ && /[a-z]/ && !/\// { print; exit }' "$list")
rhost=${rule%%/*}
upper=$(printf '%s' "$rhost" | tr '[:lower:]' '[:upper:]')
url1="http://$upper:8080/${rule#*/}?download=1"
url2="http://$host:81/some/extra/path.html"
echo "> bloomgate check --match _demo/urls.bloom '$url1' '$url2' 'https://www.debian.org/'"
_build/bloomgate check --match _demo/urls.bloom "$url1" "$url2" "https://www.debian.org/"
echo "> bloomgate check --match _demo/hosts.bloom 'deep.sub.$host' 'bob@mail.$host' 'www.debian.org'"
_build/bloomgate check --match _demo/hosts.bloom "deep.sub.$host" "bob@mail.$host" "www.debian.org"
echo "> bloomgate url expressions '$url1'"
_build/bloomgate url expressions "$url1"
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
