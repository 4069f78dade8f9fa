#!/usr/bin/env bash
# docs/gateways.md against the programs it configures, so that its lines
# cannot rot: the bloomgate.conf block passes `bloomgated --check-config`
# (with its filter files built in a temporary directory), and the Postfix
# main.cf block passes `postfix check` and `postconf -n` without a warning,
# run with -c on a directory of its own (no mail system is configured).
# Blocks are the fenced ones after a `<!-- gateways-test: NAME -->` line.
set -u
BG=${BLOOMGATE:-./bloomgate}
BGD=${BLOOMGATED:-./bloomgated}
src=${srcdir:-.}
DOC=$src/docs/gateways.md
T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-gateways.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

block() {
    awk -v m="<!-- gateways-test: $1 -->" '
        $0 == m { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' "$DOC"
}

# --- bloomgate.conf
block bloomgate.conf | sed "s|/var/lib/bloomgate|$T|g" >"$T/bloomgate.conf"
[ "$(wc -l <"$T/bloomgate.conf")" -ge 20 ] && ok || bad "no bloomgate.conf block in $DOC"
printf '192.0.2.1\n2001:db8::1\n' | "$BG" build -q -o "$T/ips.bloom" - && ok || bad "build ips"
printf 'spam.example\n' | "$BG" build -q -k host -o "$T/domains.bloom" - && ok || bad "build domains"
printf 'bad@spam.example\nspam.example\n' | "$BG" build -q -o "$T/senders.bloom" - && ok ||
    bad "build senders"
if out=$("$BGD" --check-config -c "$T/bloomgate.conf" 2>&1); then ok; else
    bad "bloomgated --check-config on the bloomgate.conf block: $out"
fi

# --- Postfix main.cf
if [ -x /usr/sbin/postfix ] && [ -x /usr/sbin/postconf ]; then
    mkdir -p "$T/postfix"
    { echo "compatibility_level = 3.6"; block "postfix main.cf"; } >"$T/postfix/main.cf"
    grep -q check_policy_service "$T/postfix/main.cf" && ok || bad "no postfix main.cf block in $DOC"
    [ -f /etc/postfix/master.cf ] && cp /etc/postfix/master.cf "$T/postfix/"
    if out=$(/usr/sbin/postfix -c "$T/postfix" check 2>&1) && [ -z "$out" ]; then ok; else
        bad "postfix check: $out"
    fi
    if out=$(/usr/sbin/postconf -c "$T/postfix" -n 2>&1 >/dev/null) && [ -z "$out" ]; then ok; else
        bad "postconf -n warns: $out"
    fi
    # The check itself can fail: a misspelt parameter is reported.
    echo "smtpd_client_restriction = permit" >>"$T/postfix/main.cf"
    out=$(/usr/sbin/postconf -c "$T/postfix" -n 2>&1 >/dev/null)
    case $out in *warning*) ok ;; *) bad "postconf -n did not warn about a misspelt parameter" ;; esac
else
    echo "gateways_test: postfix not installed; its block not checked" >&2
fi

echo "gateways_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
