#!/bin/sh
# Issue 26: the Adblock verdict program under test against the naive matcher
# (tests/adblock/naive.c) on small random rule sets and requests over the same small
# vocabulary (make_corpus.py --random, seeds 1..ADBLOCK_RANDOM_SETS): every verdict
# must agree, unless tests/adblock/naive-engine-differences.txt documents
# the class. ADBLOCK_VERDICTS as in ref_test.sh; ADBLOCK_SEED0 shifts the seeds.
set -eu
top=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${ADBLOCK_BUILDDIR:-$top}
here=$top/tests/adblock
sets=${ADBLOCK_RANDOM_SETS:-12}
seed0=${ADBLOCK_SEED0:-0}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
naive=$build/tests/adblock/naive_verdicts
[ -x "$naive" ] || { echo "FAIL: $naive is not built"; exit 1; }
prog=${ADBLOCK_VERDICTS:-$build/tests/adblock/adblock_verdicts}
if [ ! -x "$prog" ] && [ -z "${ADBLOCK_VERDICTS:-}" ]; then
    prog=$naive
    echo "note: no adblock_verdicts yet: the naive matcher against itself"
fi
known=
threshold=100
if [ -f "$here/naive-engine-differences.txt" ]; then
    known="--known $here/naive-engine-differences.txt"
    threshold=0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
i=1
while [ "$i" -le "$sets" ]; do
    seed=$((seed0 + i))
    python3 "$here/make_corpus.py" --random --seed "$seed" --rules 300 --requests 3000 "$tmp/$seed"
    # shellcheck disable=SC2086
    if ! python3 "$here/compare.py" --a "$naive" --b "$prog" --corpus "$tmp/$seed/requests.tsv" \
        --threshold "$threshold" $known "$tmp/$seed/rules.txt" >"$tmp/out" 2>&1; then
        echo "FAIL: seed $seed (rules: make_corpus.py --random --seed $seed --rules 300 --requests 3000 DIR)"
        cat "$tmp/out"
        fail=1
    else
        echo "seed $seed: $(sed -n 2p "$tmp/out")"
    fi
    i=$((i + 1))
done
exit $fail
