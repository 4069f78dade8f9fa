#!/usr/bin/env bash
# Build the Debian package from this checkout and check it with lintian.
#   scripts/deb.sh [--nocheck] [--install-test] [OUT_DIR]
# OUT_DIR (default _deb) receives bloomgate_*.deb and the lintian report.
# The build runs in a copy of the tracked (and untracked, not ignored) files,
# so the checkout's own out-of-tree builds (_build, _build-san) are untouched:
# Autotools refuses a VPATH build beside an in-tree configure.
# --install-test then installs the package into a fresh Debian 12 root made
# with debootstrap (tests/pkg/install_test.sh; needs Debian's archive).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
nocheck=0 install_test=0
while [ $# -gt 0 ]; do
    case $1 in
    --nocheck) nocheck=1 ;;
    --install-test) install_test=1 ;;
    -*) echo "usage: scripts/deb.sh [--nocheck] [--install-test] [OUT_DIR]" >&2; exit 2 ;;
    *) break ;;
    esac
    shift
done
out=$(mkdir -p "${1:-$top/_deb}" && cd "${1:-$top/_deb}" && pwd)

need=(debhelper dpkg-dev fakeroot lintian)
[ "$install_test" = 1 ] && need+=(debootstrap)
missing=()
for p in "${need[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
"$top/scripts/deps.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$work/bloomgate"
mkdir -p "$src"
(cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --) | tar -xf - -C "$src"
opts=()
[ "$nocheck" = 1 ] && export DEB_BUILD_OPTIONS="nocheck ${DEB_BUILD_OPTIONS:-}"
echo "== dpkg-buildpackage -us -uc -b (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b "${opts[@]}") >"$out/build.log" 2>&1; then
    tail -n 40 "$out/build.log" >&2
    exit 1
fi
rm -f "$out"/bloomgate_*.deb "$out"/bloomgate-dbgsym_*.deb
mv "$work"/bloomgate_*.deb "$out"/
mv "$work"/bloomgate-dbgsym_*.deb "$out"/ 2>/dev/null || true
deb=$(ls "$out"/bloomgate_*.deb)
echo "== built $deb"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's/^\.//' | grep -v '/$' >"$out/contents.txt"
echo "== lintian (report: $out/lintian.txt)"
lintian --tag-display-limit 0 "$deb" >"$out/lintian.txt" 2>&1 || true
cat "$out/lintian.txt"
if grep -q '^E:' "$out/lintian.txt"; then
    echo "deb: lintian reports errors" >&2
    exit 1
fi
if [ "$install_test" = 1 ]; then
    "$top/tests/pkg/install_test.sh" "$deb"
fi
echo "deb: ok"
