#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite.
#   scripts/test.sh              warnings as errors, build in _build
#   scripts/test.sh --sanitizers the same under ASan + UBSan, in _build-san
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
scripts/deps.sh
# The real Adblock lists for the differential tests (a cache; fetched once).
scripts/adblock-lists.sh >/dev/null
dir=_build
opts=(--enable-werror)
if [ "${1:-}" = "--sanitizers" ]; then
    dir=_build-san
    opts+=(--enable-sanitizers)
fi
scripts/build.sh "$dir" "${opts[@]}"
cd "$dir"
if ! make -s check -j"$(nproc)"; then
    # Show what failed: automake keeps each test's output in its .log.
    for f in $(grep -l -E ':test-result: (FAIL|ERROR)' tests/*/*.trs tests/*/*/*.trs 2>/dev/null); do
        echo "==== ${f%.trs}.log" >&2
        tail -n 60 "${f%.trs}.log" >&2
    done
    exit 1
fi
grep -h -E '^# (TOTAL|PASS|FAIL|ERROR|SKIP)' test-suite.log 2>/dev/null || true
