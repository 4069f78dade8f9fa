#!/usr/bin/env bash
# Install the Debian 12 packages bloomgate needs to build and test, if missing.
# Only Debian's archive is used. Runs apt-get as root, or through sudo.
set -euo pipefail
# liblmdb-dev: tests/bench/bench_exact only (the exact table measured against
# LMDB, docs/benchmarks.md); nothing that ships links it.
pkgs=(build-essential autoconf automake libtool pkg-config
      libevent-dev libxxhash-dev libjansson-dev libidn2-dev check
      libpsl-dev libpcre2-dev publicsuffix
      libutf8proc-dev libopencc-dev liblmdb-dev
      netcat-openbsd curl
      nginx-light squid redis-server redis-tools python3-redis python3-pytest
      postfix bind9-dnsutils dnsperf haproxy
      libnginx-mod-stream
      wrk)
# wrk: tests/bench/words_http.sh only (HTTP scans per second); no test runs it.
# The Adblock differential tests run the reference engine (tests/adblock/) with node:
# Debian's nodejs and npm, unless node and npm are already there from elsewhere.
if ! command -v node >/dev/null 2>&1; then
    pkgs+=(nodejs)
fi
if ! command -v npm >/dev/null 2>&1; then
    pkgs+=(npm)
fi
here=$(cd "$(dirname "$0")/.." && pwd)

# npm packages the tests use, each folder pinned by its package-lock.json, into
# that folder's node_modules: only when it is missing or the lockfile changed since.
#   tests/adblock: the reference Adblock engine (@ghostery/adblocker);
#   tests/words: real public word lists (tests/words/README.md);
#   tests/bloomd_client: bloomd's NodeJS driver (npm bloomd), tests/it/bloomd_client_test.sh.
npm_ci_dir() {
    local dir=$here/$1 stamp=$here/$1/node_modules/.bloomgate-lock
    [ -f "$dir/package-lock.json" ] || return 0
    command -v npm >/dev/null 2>&1 || return 0
    if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then
        return 0
    fi
    echo "deps: npm ci --prefix $1" >&2
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
    cp "$dir/package-lock.json" "$stamp"
}
npm_ci() {
    npm_ci_dir tests/adblock
    npm_ci_dir tests/words
    npm_ci_dir tests/bloomd_client
}
missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -eq 0 ]; then
    npm_ci
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
npm_ci
