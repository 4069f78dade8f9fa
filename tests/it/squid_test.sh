#!/usr/bin/env bash
# End to end with Debian's real Squid: bloomgate-squid as an external ACL
# helper (concurrency on, the squid.conf lines of docs/gateways.md) between
# Squid and a real bloomgated, Squid in front of a local upstream (Python's
# http.server), curl -x through the proxy:
# - a clean URL on the upstream passes (200, the upstream's body);
# - a URL the URLhaus list blocks, and a URL ADDed to the url filter at run
#   time, are refused (403) though the upstream serves the latter, and
#   access.log shows the helper's message= (filter and key);
# - a client address on an exact filter (%SRC) is refused;
# - with bloomgated stopped, the default helper (BH) makes Squid refuse even a
#   clean URL (fail-closed), while a second helper with --on-down err lets it
#   through (fail-open); after bloomgated returns, blocking works again.
# Skips (exit 77) only when squid is not installed.
set -u
SQUID=$(command -v squid || echo /usr/sbin/squid)
[ -x "$SQUID" ] || { echo "squid_test: squid is not installed: skipped"; exit 77; }
BG=${BLOOMGATE:-./bloomgate}
BGD=${BLOOMGATED:-./bloomgated}
BGS=${BLOOMGATE_SQUID:-./bloomgate-squid}
PY=/usr/bin/python3
LIST=${srcdir:-.}/data/urlhaus-filter-online.txt

T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-squid.XXXXXX")
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
# One line-protocol request to bloomgated; prints the reply.
bg_cmd() {
    exec 3<>"/dev/tcp/127.0.0.1/$dport" || return 1
    printf '%s\nQUIT\n' "$1" >&3
    IFS= read -r reply <&3
    exec 3<&-
    echo "$reply"
}
dport=$(free_port) uport=$(free_port) sport=$(free_port) oport=$(free_port)

# --- bloomgated: urls (the URLhaus list as url keys, journaled so a runtime
# ADD survives the restart below) and clients (exact: IP addresses).
"$BG" build --seed 7 --format adblock --keys url -o "$T/urls.bloom" "$LIST" >"$T/build.log" 2>&1 ||
    { cat "$T/build.log"; exit 1; }
printf '192.0.2.1\n' | "$BG" build -o "$T/clients.bloom" - >>"$T/build.log" 2>&1 ||
    { cat "$T/build.log"; exit 1; }
cat >"$T/bloomgate.conf" <<EOF
listen 127.0.0.1:$dport
http_listen off
filter urls {
    file $T/urls.bloom
    keys url
    journal $T/urls.journal
}
filter clients {
    file $T/clients.bloom
    journal $T/clients.journal
}
EOF
start_daemon() {
    "$BGD" --foreground -c "$T/bloomgate.conf" >>"$T/bloomgated.log" 2>&1 &
    dpid=$!
    wait_port "$dport" 30 || { cat "$T/bloomgated.log"; echo "bloomgated did not start"; exit 1; }
}
start_daemon

# --- the upstream: a directory of files over HTTP.
mkdir -p "$T/www/blocked"
echo "hello from upstream" >"$T/www/ok.txt"
for f in page third fourth; do echo "nothing to see" >"$T/www/blocked/$f.html"; done
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
# The documented lines (docs/gateways.md, checked below) are the middle
# block; before it, a second port whose helper fails open, with its own rules
# first so the default helper never decides for it.
documented="external_acl_type bloomgate ttl=60 negative_ttl=60 children-max=2 children-startup=1 concurrency=100 %URI %SRC $T/bloomgate-squid --connect 127.0.0.1:$dport --filter urls --filter clients
acl bloomgate_listed external bloomgate
http_access deny bloomgate_listed"
cat >"$T/squid.conf" <<EOF
http_port 127.0.0.1:$sport
http_port 127.0.0.1:$oport name=failopen
pid_filename $T/squid.pid
cache_log $T/cache.log
logformat bloomgate %ts.%03tu %>a %rm %ru %Ss/%>Hs message=[%note{message}]
access_log stdio:$T/access.log bloomgate
coredump_dir $T
cache deny all
shutdown_lifetime 0
$user_line
acl loopback src 127.0.0.0/8
external_acl_type bloomgate_open ttl=60 negative_ttl=60 children-max=2 children-startup=1 concurrency=100 %>ru %>rd %>a $T/bloomgate-squid --connect 127.0.0.1:$dport --filter urls --filter clients --on-down err
acl bloomgate_open_listed external bloomgate_open
acl failopen myportname failopen
http_access deny failopen bloomgate_open_listed
http_access allow failopen loopback
$documented
http_access allow loopback
http_access deny all
EOF
# The documented block is what docs/gateways.md shows, with the installed
# path and the default port.
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

# curl through the proxy port $1 (more curl args after the URL); prints "status body".
through() {
    local port=$1 url=$2
    shift 2
    curl -s -m 30 -x "127.0.0.1:$port" -o "$T/body" -w '%{http_code}' "$@" "$url"
}
has_log() { grep -F -q -- "$1" "$T/access.log" 2>/dev/null; }
# access.log is written as requests finish; wait a little for a line.
wait_log() {
    for _ in $(seq 100); do has_log "$1" && return 0; sleep 0.1; done
    return 1
}

up="http://127.0.0.1:$uport"
st=$(through "$sport" "$up/ok.txt")
[ "$st" = 200 ] && grep -q "hello from upstream" "$T/body" && ok "a clean URL passes (200)" ||
    bad "a clean URL: status $st, body $(head -c 200 "$T/body")"

st=$(through "$sport" "http://www.111101111.ru:8080/some/page.html?x=1")
[ "$st" = 403 ] && ok "a URL on a host the URLhaus list blocks is refused (403)" ||
    bad "the listed URL: status $st"
wait_log "message=[bloomgate: listed in urls as 111101111.ru/]" &&
    ok "access.log names the filter and the key" ||
    bad "no message in access.log: $(tail -3 "$T/access.log")"

# Blocked at run time: ADD to the url filter, and the upstream still serves it.
r=$(bg_cmd "ADD urls $up/blocked/")
[ "$r" = NEW ] && ok "ADD urls $up/blocked/" || bad "ADD: $r"
st=$(curl -s -m 30 -o /dev/null -w '%{http_code}' "$up/blocked/page.html")
[ "$st" = 200 ] && ok "the upstream serves /blocked/page.html directly" || bad "direct: $st"
st=$(through "$sport" "$up/blocked/page.html")
[ "$st" = 403 ] && ok "through the proxy it is refused (403)" || bad "blocked page via proxy: $st"
wait_log "$up/blocked/page.html TCP_DENIED/403 message=[bloomgate: listed in urls as 127.0.0.1/blocked/]" &&
    ok "access.log: TCP_DENIED with the added key" || bad "access.log: $(tail -3 "$T/access.log")"
st=$(through "$sport" "$up/ok.txt?again")
[ "$st" = 200 ] && ok "other URLs on that upstream still pass" || bad "ok.txt?again: $st"

# A client address (%SRC) on the exact filter.
r=$(bg_cmd "ADD clients 127.0.0.2")
[ "$r" = NEW ] && ok "ADD clients 127.0.0.2" || bad "ADD clients: $r"
st=$(through "$sport" "$up/ok.txt?from2" --interface 127.0.0.2)
[ "$st" = 403 ] && ok "a listed client address is refused (403)" || bad "client 127.0.0.2: $st"
wait_log "message=[bloomgate: listed in clients as 127.0.0.2]" && ok "access.log names clients" ||
    bad "access.log: $(tail -3 "$T/access.log")"

# The fail-open port's helper (FORMAT %>ru %>rd %>a) blocks the same way.
st=$(through "$oport" "http://WWW.111101111.RU/x")
[ "$st" = 403 ] && ok "the %>ru %>rd %>a helper refuses the listed host too" || bad "fail-open port, listed: $st"

# CONNECT: %URI is host:port.
st=$(curl -s -m 30 -o /dev/null -w '%{http_connect}' -p -x "127.0.0.1:$sport" "http://111101111.ru:443/")
[ "$st" = 403 ] && ok "CONNECT to a listed host is refused" || bad "CONNECT listed: $st"

# --- bloomgated down: fail-closed by default, fail-open with --on-down err.
kill "$dpid"
wait "$dpid"
dpid=""
st=$(through "$sport" "$up/ok.txt?down1")
[ "$st" = 403 ] && ok "daemon down: the default helper's BH makes Squid refuse (fail-closed)" ||
    bad "daemon down, default helper: $st"
grep -q "result=BH, notes={message: bloomgate: bloomgated at 127.0.0.1:$dport unreachable" "$T/cache.log" &&
    ok "cache.log has Squid's record of the BH, naming the cause" || bad "cache.log: $(tail -5 "$T/cache.log")"
st=$(through "$oport" "$up/ok.txt?down2")
[ "$st" = 200 ] && ok "daemon down: --on-down err lets it through (fail-open)" ||
    bad "daemon down, --on-down err: $st"
wait_log "message=[bloomgate: not checked: bloomgated at 127.0.0.1:$dport unreachable" &&
    ok "the fail-open ERR says it was not checked" || bad "access.log: $(tail -3 "$T/access.log")"

# Fail-open lets a listed URL through while the daemon is down...
st=$(through "$oport" "$up/blocked/third.html")
[ "$st" = 200 ] && ok "daemon down, fail-open: even a listed URL passes" || bad "fail-open, listed, down: $st"

# --- back: the helpers reconnect (within their backoff, 1 s at most). The
# URL refused while down passes now: Squid did not cache the BH.
start_daemon
ok_again=""
for i in $(seq 100); do
    st=$(through "$sport" "$up/ok.txt?down1")
    [ "$st" = 200 ] && { ok_again=1; break; }
    sleep 0.2
done
[ "$ok_again" ] && ok "after the daemon is back, the URL refused while down passes (BH not cached)" ||
    bad "still $st after the restart"
# ...and Squid keeps that ERR for negative_ttl (60 s) after the daemon is back,
# while a listed URL not asked before is refused on the same port.
# That port's helpers reconnect on their own backoff, which the wait above did
# not watch: until they have, a lookup is answered ERR (fail-open) and Squid
# caches that answer, so each try asks a listed URL not asked before.
st=""
for i in $(seq 100); do
    st=$(through "$oport" "$up/blocked/fourth-$i.html")
    [ "$st" = 403 ] && break
    sleep 0.2
done
[ "$st" = 403 ] && ok "fail-open port, daemon back: a listed URL is refused" || bad "fail-open, back: $st"
st=$(through "$oport" "$up/blocked/third.html")
[ "$st" = 200 ] && ok "but the one answered ERR while down stays allowed (cached for negative_ttl)" ||
    bad "fail-open, cached ERR: $st"
st=$(through "$sport" "$up/blocked/other.html")
[ "$st" = 403 ] && ok "and the added block holds (journal replayed)" || bad "blocked after restart: $st"

grep -E "Sanitizer|runtime error:" "$T/cache.log" "$T/bloomgated.log" >/dev/null &&
    bad "sanitizer report: $(grep -E 'Sanitizer|runtime error:' "$T/cache.log" "$T/bloomgated.log" | head -3)"
echo "squid_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || { echo "--- access.log"; cat "$T/access.log"; echo "--- cache.log"; tail -30 "$T/cache.log"; }
[ "$fail" -eq 0 ]
