#!/usr/bin/env bash
# End to end with Debian's real Squid and an adblock filter: bloomgate-squid
# --context (the squid.conf lines of docs/gateways.md, "Request context")
# between Squid and a real bloomgated serving two rules,
#   ||tracker.example^$third-party,script
#   ||ads.example^$image
# built with `bloomgate build --format adblock`. Squid, a forward proxy, sends
# the helper each request's Referer, Origin, Sec-Fetch-Dest and method; the
# origin servers are one local upstream (Python's http.server on 127.0.0.1)
# that Squid's hosts_file names tracker.example, ads.example, news.example and
# www.tracker.example. curl -x through the proxy, with the headers a browser
# sends:
# - the tracker's script loaded by a third-party page is refused (403) and
#   access.log names the rule; so is it when only the Origin names the page;
# - the tracker's page as a document, its script loaded by its own site, and
#   the script without any header (no context: a top-level document with no
#   initiator) are served (200, the upstream's body);
# - an image from ads.example is refused, from any page or none; its page as a
#   document is served; a destination the daemon does not know (json) is
#   answered (served), not refused by a BH.
# Skips (exit 77) only when squid is not installed.
set -u
SQUID=$(command -v squid || echo /usr/sbin/squid)
[ -x "$SQUID" ] || { echo "squid_adblock_test: squid is not installed: skipped"; exit 77; }
BG=${BLOOMGATE:-./bloomgate}
BGD=${BLOOMGATED:-./bloomgated}
BGS=${BLOOMGATE_SQUID:-./bloomgate-squid}
PY=/usr/bin/python3

T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-squidab.XXXXXX")
chmod 755 "$T"
dpid="" upid="" spid=""
cleanup() {
    for p in $spid $upid $dpid; do kill "$p" 2>/dev/null; done
    for p in $spid $upid $dpid; do wait "$p" 2>/dev/null; done
    if [ "${KEEP:-}" ]; then echo "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1" >&2; }
free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# Wait (up to $2 seconds) until something listens on 127.0.0.1:$1.
wait_port() {
    for _ in $(seq $(($2 * 10))); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
dport=$(free_port) uport=$(free_port) sport=$(free_port)

# --- bloomgated serving the two rules as the adblock filter ads.
printf '%s\n' '||tracker.example^$third-party,script' '||ads.example^$image' >"$T/ads.txt"
"$BG" build --format adblock -o "$T/ads.bloom" "$T/ads.txt" >"$T/build.log" 2>&1 ||
    { cat "$T/build.log"; exit 1; }
cat >"$T/bloomgate.conf" <<EOF
listen 127.0.0.1:$dport
http_listen off
filter ads {
    file $T/ads.bloom
}
EOF
"$BGD" --foreground -c "$T/bloomgate.conf" >"$T/bloomgated.log" 2>&1 &
dpid=$!
wait_port "$dport" 30 || { cat "$T/bloomgated.log"; echo "bloomgated did not start"; exit 1; }

# --- the upstream: every site's files, from one local server.
mkdir -p "$T/www"
echo "page body" >"$T/www/index.html"
echo "script body" >"$T/www/t.js"
echo "image body" >"$T/www/i.png"
(cd "$T/www" && exec "$PY" -m http.server "$uport" --bind 127.0.0.1) >"$T/upstream.log" 2>&1 &
upid=$!
wait_port "$uport" 30 || { cat "$T/upstream.log"; echo "the upstream did not start"; exit 1; }

# --- Squid. The helper must be readable by the user Squid runs helpers as
# (proxy, when started as root), so it is copied into the temporary dir.
cp "$BGS" "$T/bloomgate-squid"
user_line=""
if [ "$(id -u)" -eq 0 ] && id proxy >/dev/null 2>&1; then
    user_line="cache_effective_user proxy"
    chown proxy "$T"
fi
echo "127.0.0.1 tracker.example www.tracker.example ads.example news.example" >"$T/hosts"
# The documented lines (docs/gateways.md, checked below).
documented="external_acl_type bloomgate_ads ttl=60 negative_ttl=60 children-max=2 children-startup=1 concurrency=100 %URI %>{Referer} %>{Origin} %>{Sec-Fetch-Dest} %METHOD $T/bloomgate-squid --connect 127.0.0.1:$dport --filter ads --context referer,origin,dest,method
acl bloomgate_ads_listed external bloomgate_ads
http_access deny bloomgate_ads_listed"
cat >"$T/squid.conf" <<EOF
http_port 127.0.0.1:$sport
pid_filename $T/squid.pid
cache_log $T/cache.log
logformat bloomgate %ts.%03tu %>a %rm %ru %Ss/%>Hs message=[%note{message}]
access_log stdio:$T/access.log bloomgate
coredump_dir $T
cache deny all
shutdown_lifetime 0
hosts_file $T/hosts
$user_line
acl loopback src 127.0.0.0/8
$documented
http_access allow loopback
http_access deny all
EOF
doc=${srcdir:-.}/docs/gateways.md
while IFS= read -r line; do
    line=${line//$T\/bloomgate-squid//usr/bin/bloomgate-squid}
    line=${line//127.0.0.1:$dport/127.0.0.1:7878}
    grep -qxF -- "$line" "$doc" && ok "docs/gateways.md has: $line" || bad "docs/gateways.md lacks: $line"
done <<<"$documented"
"$SQUID" -k parse -f "$T/squid.conf" >"$T/parse.log" 2>&1 || { cat "$T/parse.log"; exit 1; }
"$SQUID" -N -f "$T/squid.conf" >"$T/squid.out" 2>&1 &
spid=$!
# Squid starts slowly: a generous deadline.
if ! wait_port "$sport" 60; then
    cat "$T/squid.out" "$T/cache.log" 2>/dev/null | tail -30
    echo "squid did not start"
    exit 1
fi

# curl through the proxy (more curl args after the URL); prints the status,
# the body in $T/body.
through() {
    local url=$1
    shift
    curl -s -m 30 -x "127.0.0.1:$sport" -o "$T/body" -w '%{http_code}' "$@" "$url"
}
has_log() { grep -F -q -- "$1" "$T/access.log" 2>/dev/null; }
wait_log() {
    for _ in $(seq 100); do has_log "$1" && return 0; sleep 0.1; done
    return 1
}
# expect STATUS BODY-WORD WHAT URL [curl args]: a 200 must carry the upstream's body.
expect() {
    local want=$1 word=$2 what=$3 url=$4
    shift 4
    local st
    st=$(through "$url" "$@")
    if [ "$st" = "$want" ] && { [ "$want" != 200 ] || grep -q "$word" "$T/body"; }; then
        ok "$what ($st)"
    else
        bad "$what: status $st, wanted $want; body: $(head -c 200 "$T/body")"
    fi
}

tr="http://tracker.example:$uport" ads="http://ads.example:$uport" news="http://news.example:$uport"
expect 403 - "the tracker's script from a third-party page is refused" "$tr/t.js" \
    -H "Referer: $news/article" -H "Sec-Fetch-Dest: script"
wait_log "$tr/t.js TCP_DENIED/403 message=[bloomgate: listed in ads as ||tracker.example^\$third-party,script]" &&
    ok "access.log names the rule" || bad "access.log: $(tail -3 "$T/access.log")"
expect 200 "page body" "the tracker's page as a document is served" "$tr/" \
    -H "Sec-Fetch-Dest: document"
expect 200 "script body" "the tracker's script on its own site is served" "$tr/t.js" \
    -H "Referer: http://www.tracker.example:$uport/home" -H "Sec-Fetch-Dest: script"
expect 200 "script body" "the tracker's script without headers (no context) is served" "$tr/t.js"
expect 403 - "the tracker's script with only an Origin naming a third-party page is refused" \
    "$tr/t.js?cors" -H "Origin: $news" -H "Sec-Fetch-Dest: script"
expect 403 - "an image from ads.example on a page is refused" "$ads/i.png" \
    -H "Referer: $news/article" -H "Sec-Fetch-Dest: image"
expect 403 - "an image from ads.example with no page is refused" "$ads/i.png?direct" \
    -H "Sec-Fetch-Dest: image"
expect 200 "page body" "ads.example's page as a document is served" "$ads/" \
    -H "Sec-Fetch-Dest: document" -H "Referer: $news/article"
expect 200 "image body" "a destination the daemon does not know (json) is answered, not refused" \
    "$ads/i.png?json" -H "Sec-Fetch-Dest: json" -H "Referer: $news/article"

grep -E "Sanitizer|runtime error:" "$T/cache.log" "$T/bloomgated.log" >/dev/null &&
    bad "sanitizer report: $(grep -E 'Sanitizer|runtime error:' "$T/cache.log" "$T/bloomgated.log" | head -3)"
grep -q "result=BH" "$T/cache.log" && bad "a BH in cache.log: $(grep result=BH "$T/cache.log" | head -3)"
echo "squid_adblock_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || { echo "--- access.log"; cat "$T/access.log"; echo "--- cache.log"; tail -30 "$T/cache.log"; }
[ "$fail" -eq 0 ]
