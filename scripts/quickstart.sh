#!/usr/bin/env bash
# Quick start: install what is missing, build, then build a filter from the
# bundled sample blocklist and query it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
scripts/build.sh _build
bg=_build/bloomgate
mkdir -p _demo
echo "== building a filter from data/sample-blocklist.txt"
$bg build -o _demo/sample.bloom data/sample-blocklist.txt
echo "== bloomgate info"
$bg info _demo/sample.bloom
echo "== bloomgate check (one listed host, one that is not)"
listed=$(grep -v '^#' data/sample-blocklist.txt | head -1)
$bg check --with-items _demo/sample.bloom "$listed" www.debian.org
