#!/usr/bin/env bash
# `make install` as an operator meets it: into a DESTDIR, twice, with the
# config edited in between. The edited config must survive (the new example
# lands beside it as bloomgate.conf.dist), the installed example must pass
# `bloomgated --check-config` as installed, and the unit's Documentation=
# must follow the prefix.
set -euo pipefail
: "${BLOOMGATED:?}"
builddir=$(cd "$(dirname "$BLOOMGATED")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }

make -s -C "$builddir" install DESTDIR="$tmp/root" >"$tmp/install1.log" 2>&1 ||
    { cat "$tmp/install1.log"; exit 1; }
prefix=$(sed -n 's/^prefix = //p' "$builddir/Makefile")
sysconfdir=$(sed -n 's/^sysconfdir = //p' "$builddir/Makefile" | sed "s|\${prefix}|$prefix|")
docdir=$(sed -n 's/^docdir = //p' "$builddir/Makefile")
docdir=${docdir//\$\{datarootdir\}/$prefix/share}
docdir=${docdir//\$\{PACKAGE_TARNAME\}/bloomgate}
conf="$tmp/root$sysconfdir/bloomgate/bloomgate.conf"
unit="$tmp/root$prefix/lib/systemd/system/bloomgated.service"

[ -f "$conf" ] && ok "the example config is installed" || bad "no $conf"
bindir=$(sed -n 's/^bindir = //p' "$builddir/Makefile" | sed "s|\${exec_prefix}|$prefix|")
mandir=$(sed -n 's/^mandir = //p' "$builddir/Makefile" | sed "s|\${datarootdir}|$prefix/share|")
[ -x "$tmp/root$bindir/bloomgate-squid" ] && ok "bloomgate-squid is installed in $bindir" ||
    bad "no $bindir/bloomgate-squid"
[ -f "$tmp/root$mandir/man1/bloomgate-squid.1" ] && ok "bloomgate-squid(1) is installed" ||
    bad "no $mandir/man1/bloomgate-squid.1"
[ -f "$tmp/root$docdir/operations.md" ] && ok "operations.md is installed in docdir" || bad "no operations.md in $docdir"
grep -q "^Documentation=file://$docdir/operations.md\$" "$unit" &&
    ok "the unit's Documentation= follows the prefix ($docdir)" || bad "Documentation= is $(grep Documentation= "$unit")"

# As installed, the example config passes --check-config (its filter file does
# not exist yet; `capacity` makes that a clear first-run start, not an error).
if "$BLOOMGATED" --check-config -c "$conf" >"$tmp/check.out" 2>&1; then
    ok "the installed example passes --check-config"
else
    bad "the installed example fails --check-config: $(cat "$tmp/check.out")"
fi

echo "threads 1   # edited by the operator" >>"$conf"
cp "$conf" "$tmp/edited"
make -s -C "$builddir" install DESTDIR="$tmp/root" >"$tmp/install2.log" 2>&1 ||
    { cat "$tmp/install2.log"; exit 1; }
cmp -s "$conf" "$tmp/edited" && ok "a second install keeps the edited config" || bad "the edited config was overwritten"
[ -f "$conf.dist" ] && ok "the new example is installed as bloomgate.conf.dist" || bad "no bloomgate.conf.dist"
grep -q 'bloomgate.conf.dist' "$tmp/install2.log" && ok "make install says so" || bad "make install said nothing"

make -s -C "$builddir" uninstall DESTDIR="$tmp/root" >/dev/null 2>&1
[ -f "$conf" ] && ok "uninstall keeps the edited config" || bad "uninstall removed the edited config"
[ ! -f "$conf.dist" ] && ok "uninstall removes bloomgate.conf.dist" || bad "bloomgate.conf.dist is left"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
