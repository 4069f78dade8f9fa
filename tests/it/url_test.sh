#!/usr/bin/env bash
# The shipped URLhaus list (data/urlhaus-filter-online.txt, Adblock form, CC0)
# built as url keys and as host keys, then looked up the way a gateway and a
# mail server see things: every listed URL and host in five other spellings
# must be found (upper-case host, a port, an extra path or query, a trailing
# dot, a percent-escaped character), and 10,000 clean URLs made up here must
# not be, beyond the false positives the filter's rate allows. Fixed seeds:
# the result is the same on every run.
set -u
BG=${BLOOMGATE:-./bloomgate}
LIST=${srcdir:-.}/data/urlhaus-filter-online.txt
T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-url.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
contains() { if grep -q -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 400 "$1")"; fi; }
json() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1"; }

# --- build it both ways
"$BG" build --seed 7 --format adblock --keys url -o "$T/url.bloom" --rejects "$T/url.rej" "$LIST" >"$T/url.sum" 2>"$T/err" &&
    ok || bad "build --keys url: $(cat "$T/err")"
"$BG" build --seed 7 --format adblock --keys host -o "$T/host.bloom" --rejects "$T/host.rej" "$LIST" >"$T/host.sum" 2>"$T/err" &&
    ok || bad "build --keys host: $(cat "$T/err")"
cat "$T/url.sum" "$T/host.sum"
# The counts docs/url-matching.md gives for this list.
contains "$T/url.sum" "lines: 6260 read: 6254 kept, 0 blank, 6 comment, 0 ignored, 0 rejected" "url summary lines"
contains "$T/url.sum" "keys: 6254 kept, 6239 new, 15 merged" "url summary keys"
contains "$T/host.sum" "lines: 6260 read: 2909 kept, 0 blank, 6 comment, 0 ignored, 3345 rejected" "host summary lines"
contains "$T/host.sum" "path-for-host 3345" "host summary reasons"
[ "$(wc -l <"$T/host.rej")" -eq 3345 ] && ok || bad "host rejects file: $(wc -l <"$T/host.rej") lines"
[ ! -s "$T/url.rej" ] && ok || bad "url rejects file not empty"
"$BG" info "$T/url.bloom" >"$T/url.info" && [ "$(json "$T/url.info" keys)" = url ] && ok || bad "info keys url"
"$BG" info "$T/host.bloom" >"$T/host.info" && [ "$(json "$T/host.info" keys)" = host ] && ok || bad "info keys host"

# --- what the list names: host[/path], from `||host/path^$opts` and bare lines
awk '/^!/ || /^\[/ || /^[[:space:]]*$/ { next }
     { t = $0; sub(/^\|\|/, "", t); sub(/\$[^\/]*$/, "", t); sub(/\^$/, "", t); print t }' "$LIST" >"$T/targets"
n_targets=$(wc -l <"$T/targets")
[ "$n_targets" -eq 6254 ] && ok || bad "targets read from the list: $n_targets, wanted 6254"

# Five spellings of each target as a URL. ord[] gives a byte's value for %XX.
spell='BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i }
{
    t = $0; s = index(t, "/")
    host = s ? substr(t, 1, s - 1) : t; path = s ? substr(t, s) : ""
    esc = sprintf("%%%02X", ord[substr(host, 1, 1)]) substr(host, 2)
    print "http://" toupper(host) path
    print "http://" host ":8080" path
    if (path == "") print "https://" host "/extra/dir/file.html?x=1"
    else if (index(path, "?")) print "http://" host path "#fragment"
    else print "http://" host path "?utm_source=x"
    print "http://" host "." path
    print "http://" esc path
}'
awk "$spell" "$T/targets" >"$T/listed-urls"
n=$(wc -l <"$T/listed-urls")
"$BG" check --with-items "$T/url.bloom" <"$T/listed-urls" >"$T/ans" 2>"$T/err"
yes=$(grep -c '^YES' "$T/ans")
[ "$yes" -eq "$n" ] && ok || bad "url keys: $yes of $n listed spellings found; first misses: $(grep -v '^YES' "$T/ans" | head -5)"
echo "url keys: $yes of $n spellings of the $n_targets listed URLs found"

# Host keys: each listed host (not the path rules) as a subdomain, upper
# case, a URL with port, path and trailing dot, an e-mail address, escaped.
grep -v / "$T/targets" >"$T/hosts"
awk 'BEGIN { for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i }
{
    h = $0; ip = h ~ /^[0-9.]+$/
    print toupper(h)
    print (ip ? "http://" h ":8080/x" : "deep.sub." h)
    print "http://" h ".:8080/some/path?q=1"
    print "bob@" h
    print sprintf("%%%02X", ord[substr(h, 1, 1)]) substr(h, 2)
}' "$T/hosts" >"$T/listed-hosts"
n=$(wc -l <"$T/listed-hosts")
"$BG" check --with-items "$T/host.bloom" <"$T/listed-hosts" >"$T/ans" 2>"$T/err"
yes=$(grep -c '^YES' "$T/ans")
[ "$yes" -eq "$n" ] && ok || bad "host keys: $yes of $n listed spellings found; first misses: $(grep -v '^YES' "$T/ans" | head -5)"
echo "host keys: $yes of $n spellings of the $(wc -l <"$T/hosts") listed hosts found"

# --match names the listed expression, most specific first.
first=$(grep -m1 '^2024\.sci-hub\.se/' "$T/targets")
"$BG" check --match "$T/url.bloom" "HTTP://2024.SCI-HUB.SE.:443/${first#*/}?download=1" >"$T/ans"
[ "$(cat "$T/ans")" = "$(printf 'YES\t%s' "$first")" ] && ok || bad "--match: $(cat "$T/ans"), wanted $first"

# --- 10,000 clean URLs in three shapes (a third each), every host and path
# distinct. How many expressions each shape probes is taken from
# `url expressions`, so the bound follows the code.
awk 'BEGIN {
    for (i = 0; i < 10000; i++) {
        if (i % 3 == 0) printf "http://www.clean%d-site.test/a%d/page.html?id=%d\n", i, i % 7, i
        else if (i % 3 == 1) printf "https://shop%d.clean-store%d.test/p/%d/item.html\n", i, i, i
        else printf "http://a%d.b.c.d.clean%d.test/x/y/z/w/%d.html?s=%d\n", i, i, i, i
    }
}' >"$T/clean"
for kind in url host; do
    ms=""
    for shape in 1 2 3; do
        u=$(sed -n "${shape}p" "$T/clean")
        ms="$ms $("$BG" url expressions --keys $kind "$u" | wc -l)"
    done
    "$BG" check "$T/$kind.bloom" <"$T/clean" >"$T/ans" 2>"$T/err" || bad "check clean ($kind): $(cat "$T/err")"
    [ "$(wc -l <"$T/ans")" -eq 10000 ] && ok || bad "clean ($kind): $(wc -l <"$T/ans") answers"
    fp=$(grep -c '^YES' "$T/ans")
    p=$(json "$T/$kind.info" fpr_estimated)
    # A clean URL is a false positive when any of its m probes is, each with
    # the filter's rate p: 1 - (1 - p)^m. (Host keys: the TLD probe is shared
    # by all, so their false positives are correlated; the seed is fixed.)
    read -r expect bound < <(awk -v p="$p" -v ms="$ms" 'BEGIN {
        split(ms, m, " "); e = 0
        for (i = 1; i <= 3; i++) e += 10000 / 3 * (1 - (1 - p) ^ m[i])
        # Generous: the mean plus ten standard deviations (Poisson), plus 5.
        printf "%.2f %d\n", e, e + 10 * sqrt(e) + 5 }')
    echo "clean URLs, $kind keys ($ms probes by shape): $fp false positives of 10000 (rate $p per probe: $expect expected, at most $bound allowed)"
    [ "$fp" -le "$bound" ] && ok || bad "clean URLs ($kind keys): $fp false positives, more than $bound"
done

echo "url_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
