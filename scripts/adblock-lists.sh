#!/usr/bin/env bash
# Put the real Adblock lists the differential tests use (issue 26) in DIR: EasyList and
# EasyPrivacy, and uBlock Origin's own filters, privacy and badware lists, all from
# Debian 12's webext-ublock-origin-firefox (fetched with apt-get download, never
# installed: no Firefox comes with it). Prints DIR and the package version.
#   scripts/adblock-lists.sh [DIR]
# DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/bloomgate/adblock-lists. When DIR
# already holds the five lists and their VERSION file, nothing is fetched.
set -euo pipefail
dir=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/bloomgate/adblock-lists}
pkg=webext-ublock-origin-firefox
lists=(easylist.txt easyprivacy.txt filters.min.txt privacy.min.txt badware.min.txt)

have_all() {
    [ -s "$dir/VERSION" ] || return 1
    for f in "${lists[@]}"; do
        [ -s "$dir/$f" ] || return 1
    done
}

if ! have_all; then
    command -v apt-get >/dev/null && command -v dpkg >/dev/null || {
        echo "adblock-lists: needs apt-get and dpkg (Debian)" >&2
        exit 1
    }
    mkdir -p "$dir"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # apt-get download writes into the current directory, as the invoking user.
    if ! (cd "$tmp" && apt-get download -qq "$pkg" >/dev/null 2>"$tmp/err"); then
        cat "$tmp/err" >&2
        echo "adblock-lists: apt-get download $pkg failed (apt-get update first?)" >&2
        exit 1
    fi
    deb=$(ls "$tmp"/"$pkg"_*.deb)
    dpkg -x "$deb" "$tmp/x"
    assets=$(find "$tmp/x" -type d -path '*/uBlock0@raymondhill.net/assets' | head -n 1)
    [ -n "$assets" ] || {
        echo "adblock-lists: no uBlock0 assets folder in $deb" >&2
        exit 1
    }
    for f in easylist.txt easyprivacy.txt; do
        cp "$assets/thirdparties/easylist/$f" "$tmp/$f"
    done
    for f in filters.min.txt privacy.min.txt badware.min.txt; do
        cp "$assets/ublock/$f" "$tmp/$f"
    done
    for f in "${lists[@]}"; do
        mv "$tmp/$f" "$dir/$f"
    done
    # Written last: its presence says the five lists beside it are whole.
    dpkg-deb -f "$deb" Version >"$dir/VERSION"
fi
echo "$dir"
echo "$pkg $(cat "$dir/VERSION")"
