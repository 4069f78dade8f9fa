#!/usr/bin/env bash
# Install a built bloomgate .deb into a fresh Debian 12 root and start the
# packaged daemon with the packaged config.
#   tests/pkg/install_test.sh bloomgate_VERSION_ARCH.deb
# Needs root, debootstrap and Debian's archive. The minimal root is cached as a
# tarball in ${BLOOMGATE_PKGTEST_CACHE:-/var/cache/bloomgate-pkgtest}, so a
# second run takes seconds; the root itself is new every run and removed at
# the end. The daemon runs in the chroot as `nobody` (systemd's DynamicUser
# does not exist in a chroot) on free 127.0.0.1 ports: the packaged config
# unchanged but for its two listen lines.
set -euo pipefail
deb=$(readlink -f "${1:?usage: install_test.sh PACKAGE.deb}")
[ "$(id -u)" -eq 0 ] || { echo "install_test: needs root (debootstrap, chroot)" >&2; exit 2; }
cache=${BLOOMGATE_PKGTEST_CACHE:-/var/cache/bloomgate-pkgtest}
mirror=${BLOOMGATE_PKGTEST_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache"
tarball="$cache/bookworm-minbase.tar.gz"
root=$(mktemp -d /tmp/bloomgate-root.XXXXXX)
chmod 755 "$root" # mktemp makes it 0700: nobody could not reach /usr/bin
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
    umount "$root/proc" 2>/dev/null || true
    rm -rf "$root"
}
trap cleanup EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

if [ ! -s "$tarball" ]; then
    echo "== debootstrap bookworm (minbase) into a cached tarball"
    debootstrap --variant=minbase --make-tarball="$tarball.tmp" bookworm "$root.mk" "$mirror" \
        >"$cache/debootstrap.log" 2>&1 || { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
    mv "$tarball.tmp" "$tarball"
    rm -rf "$root.mk"
fi
echo "== a fresh root from $tarball"
debootstrap --variant=minbase --unpack-tarball="$tarball" bookworm "$root" "$mirror" \
    >"$root.log" 2>&1 || { tail -20 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount -t proc proc "$root/proc"

echo "== apt-get install ./$(basename "$deb") in the fresh root"
cp "$deb" "$root/tmp/"
chroot "$root" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends /tmp/$(basename "$deb")" >"$root/tmp/apt.log" 2>&1 ||
    { tail -30 "$root/tmp/apt.log" >&2; fail "the package did not install"; }

for f in /usr/bin/bloomgate /usr/bin/bloomgated /usr/bin/bloomgate-squid \
    /usr/share/man/man1/bloomgate-squid.1.gz /etc/bloomgate/bloomgate.conf \
    /lib/systemd/system/bloomgated.service /usr/share/doc/bloomgate/operations.md; do
    [ -e "$root$f" ] || fail "$f is not installed"
done
[ -L "$root/etc/systemd/system/multi-user.target.wants/bloomgated.service" ] ||
    fail "the unit is not enabled (no multi-user.target.wants link)"
grep -q '^DynamicUser=yes' "$root/lib/systemd/system/bloomgated.service" || fail "no DynamicUser"
grep -q '^StateDirectory=bloomgate' "$root/lib/systemd/system/bloomgated.service" || fail "no StateDirectory"
grep -q 'Documentation=file:///usr/share/doc/bloomgate/' "$root/lib/systemd/system/bloomgated.service" ||
    fail "the unit's Documentation= does not follow the prefix"
echo "   installed: binaries, config, unit (enabled), docs"

echo "== bloomgated --check-config on the packaged config"
chroot "$root" /usr/bin/bloomgated --check-config -c /etc/bloomgate/bloomgate.conf ||
    fail "the packaged config does not pass --check-config"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
lp=$(free_port); hp=$(free_port)
sed -e "s/^listen 127.0.0.1:7878/listen 127.0.0.1:$lp/" -e "s/^http_listen 127.0.0.1:7879/http_listen 127.0.0.1:$hp/" \
    "$root/etc/bloomgate/bloomgate.conf" >"$root/tmp/test.conf"
grep -q "listen 127.0.0.1:$lp" "$root/tmp/test.conf" || fail "the packaged config has no listen 127.0.0.1:7878 line"
# What StateDirectory= would make, owned by the user the service runs as.
mkdir -p "$root/var/lib/bloomgate"
chroot "$root" chown nobody:nogroup /var/lib/bloomgate

echo "== the packaged daemon, as nobody, on 127.0.0.1:$lp (HTTP $hp)"
chroot --userspec=nobody:nogroup "$root" /usr/bin/bloomgated --foreground -c /tmp/test.conf \
    2>"$root/tmp/bloomgated.log" &
pid=$!
for _ in $(seq 100); do
    grep -q 'ready:' "$root/tmp/bloomgated.log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$root/tmp/bloomgated.log" >&2; fail "bloomgated exited"; }
    sleep 0.1
done
grep -q 'ready:' "$root/tmp/bloomgated.log" || { cat "$root/tmp/bloomgated.log" >&2; fail "not ready"; }
reply=$(printf 'PING\nADD urls evil.example\nCHECK urls evil.example\nCHECK urls good.example\nQUIT\n' |
    nc -q 2 127.0.0.1 "$lp" | tr '\n' ' ')
[ "$reply" = "PONG NEW YES NO BYE " ] || fail "line protocol answered '$reply'"
health=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$hp/healthz")
[ "$health" = 200 ] || fail "/healthz answered $health"
kill -TERM "$pid"
wait "$pid" || fail "bloomgated did not stop cleanly on SIGTERM"
pid=""
echo "   PING/ADD/CHECK over the line protocol and /healthz answered; SIGTERM stopped it"
echo "install_test: ok"
