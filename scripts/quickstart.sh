#!/usr/bin/env bash
# Quick start: install what is missing, build, build a filter from the bundled
# sample blocklist (exact items) and the shipped URLhaus Adblock list as url
# keys (urls.bloom) and as host keys (hosts.bloom), start bloomgated on them
# (127.0.0.1:7878 line protocol, 127.0.0.1:7879 HTTP), show a first session
# in which listed URLs written another way are found and MATCH names the list
# entry, then keep serving until Ctrl-C.
# BLOOMGATE_DEMO_SECONDS=N stops it after N seconds instead (used by CI).
# BLOOMGATE_PORT and BLOOMGATE_HTTP_PORT choose other ports.
# Every run starts from an empty _demo/ and builds with a fixed seed, so it
# prints the same thing every time (but for the timings).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
scripts/build.sh _build
rm -rf _demo
mkdir _demo
echo "== bloomgate build: a filter from data/sample-blocklist.txt"
_build/bloomgate build --seed 1 -o _demo/sample.bloom data/sample-blocklist.txt
list=data/urlhaus-filter-online.txt
echo "== bloomgate build: $list (Adblock rules) as url keys, then as host keys"
_build/bloomgate build --seed 1 --format adblock --keys url -o _demo/urls.bloom "$list"
_build/bloomgate build --seed 1 --format adblock --keys host --rejects _demo/hosts.rejects \
    -o _demo/hosts.bloom "$list"
# A listed URL (the first ||host/path^ rule without a query) written with an
# upper-case host, a port and a query; a listed host written with upper case,
# a port and an extra path; for the host filter a subdomain and an e-mail
# address of that host.
rule=$(awk '/^\|\|[^?]*\// { t = $0; sub(/^\|\|/, "", t); sub(/\^?(\$.*)?$/, "", t); print t; exit }' "$list")
host=$(awk '!/^[!|[]/ && /[a-z]/ && !/\// { print; exit }' "$list")
rhost=${rule%%/*}
upper=$(printf '%s' "$rhost" | tr '[:lower:]' '[:upper:]')
hupper=$(printf '%s' "$host" | tr '[:lower:]' '[:upper:]')
url1="http://$upper:8080/${rule#*/}?download=1"
url2="http://$hupper:8080/some/extra/path.html"
echo "> bloomgate url expressions '$url2'"
_build/bloomgate url expressions "$url2"
cat >_demo/bloomgate.conf <<CONF
listen 127.0.0.1:${BLOOMGATE_PORT:-7878}
http_listen 127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}
filter urls {
    file urls.bloom
}
filter hosts {
    file hosts.bloom
}
filter sample {
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
FILTERS
CHECK urls $url2
MATCH urls $url2
MATCH urls $url1
CHECK urls https://www.debian.org/
CHECK hosts deep.sub.$host
MATCH hosts bob@mail.$host
MCHECK hosts deep.sub.$host www.debian.org
CHECK urls mailto:bob@$host
ADD urls http://Demo.Example/Dropper.exe
MATCH urls https://cdn.demo.example:8443/Dropper.exe?id=7
CHECK sample $listed
ADD seen user@example.org
ADD seen user@example.org
QUIT"
echo "== a first session: printf '...' | nc 127.0.0.1 ${BLOOMGATE_PORT:-7878}"
printf '%s\n' "$session" | sed 's/^/> /'
printf '%s\n' "$session" | nc -q 2 127.0.0.1 "${BLOOMGATE_PORT:-7878}" | sed 's/^/< /'
if grep -q 'HTTP listening' _demo/bloomgated.log; then
    q=$(printf '%s' "$url2" | sed 's/:/%3A/g; s,/,%2F,g')
    echo "== the same over HTTP"
    echo "> curl 'http://127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}/v1/filters/urls/check?item=$q'"
    curl -s "http://127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}/v1/filters/urls/check?item=$q"; echo
    body="{\"items\":[\"$url1\",\"https://www.debian.org/\"]}"
    echo "> curl http://127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}/v1/filters/urls/check -d '$body'"
    curl -s "http://127.0.0.1:${BLOOMGATE_HTTP_PORT:-7879}/v1/filters/urls/check" -d "$body"; echo
fi
if [ -n "${BLOOMGATE_DEMO_SECONDS:-}" ]; then
    sleep "$BLOOMGATE_DEMO_SECONDS"
    exit 0
fi
echo "== bloomgated is serving on 127.0.0.1:${BLOOMGATE_PORT:-7878}; Ctrl-C stops it"
wait $pid
