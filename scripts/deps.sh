#!/usr/bin/env bash
# Install the Debian 12 packages bloomgate needs to build and test, if missing.
# Only Debian's archive is used. Runs apt-get as root, or through sudo.
set -euo pipefail
pkgs=(build-essential autoconf automake libtool pkg-config
      libevent-dev libxxhash-dev libjansson-dev libidn2-dev check
      libpsl-dev libpcre2-dev publicsuffix
      netcat-openbsd curl
      nginx-light squid redis-server redis-tools python3-redis
      postfix bind9-dnsutils dnsperf haproxy
      libnginx-mod-stream)
missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
echo "deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
# postfix: no mail system is configured or started (postmap is all tests use).
echo "postfix postfix/main_mailer_type select No configuration" | $SUDO debconf-set-selections
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
