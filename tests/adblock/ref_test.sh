#!/bin/sh
# Issue 26's differential test: the Adblock verdict program under test against the
# reference engine (@ghostery/adblocker, pinned in tests/adblock/package-lock.json) on
# EasyList + EasyPrivacy and a corpus built from them and the URLhaus list
# (make_corpus.py, fixed seed). Fails below ADBLOCK_THRESHOLD percent agreement (99.9)
# or on a disagreement outside tests/adblock/known-differences.txt.
# Skips (77) without node, tests/adblock/node_modules (scripts/deps.sh) or the lists
# (scripts/adblock-lists.sh).
#   ADBLOCK_VERDICTS  program under test (default: tests/adblock/adblock_verdicts, else
#                     the naive matcher, tests/adblock/naive_verdicts)
#   ADBLOCK_LISTS_DIR where the lists are (default: scripts/adblock-lists.sh's cache)
#   ADBLOCK_LISTS     which of them (default: easylist.txt easyprivacy.txt)
#   ADBLOCK_VARIANTS  must/must-not variants per rule in the corpus (default 1)
set -eu
top=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${ADBLOCK_BUILDDIR:-$top}
here=$top/tests/adblock
lists_dir=${ADBLOCK_LISTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bloomgate/adblock-lists}
lists=${ADBLOCK_LISTS:-easylist.txt easyprivacy.txt}
threshold=${ADBLOCK_THRESHOLD:-99.9}

command -v node >/dev/null 2>&1 || { echo "SKIP: no node (scripts/deps.sh)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
[ -d "$here/node_modules/@ghostery/adblocker" ] ||
    { echo "SKIP: no reference engine in tests/adblock/node_modules (scripts/deps.sh)"; exit 77; }
paths=
for l in $lists; do
    [ -s "$lists_dir/$l" ] ||
        { echo "SKIP: no $lists_dir/$l (run scripts/adblock-lists.sh)"; exit 77; }
    paths="$paths $lists_dir/$l"
done
prog=${ADBLOCK_VERDICTS:-}
if [ -z "$prog" ]; then
    prog=$build/tests/adblock/adblock_verdicts
    if [ ! -x "$prog" ]; then
        prog=$build/tests/adblock/naive_verdicts
        echo "note: no adblock_verdicts yet: testing the naive matcher in its place"
    fi
fi
[ -x "$prog" ] || { echo "FAIL: $prog is not built"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "lists: $lists_dir ($(cat "$lists_dir/VERSION" 2>/dev/null || echo '?')):$lists"
echo "reference: @ghostery/adblocker $(node "$here/ref_verdicts.mjs" --version)"
python3 "$here/make_corpus.py" --seed 26 --variants "${ADBLOCK_VARIANTS:-1}" --urls "$top/data/urlhaus-filter-online.txt" \
    $paths >"$tmp/corpus.tsv"
# shellcheck disable=SC2086
python3 "$here/compare.py" --a "node $here/ref_verdicts.mjs" --b "$prog" \
    --corpus "$tmp/corpus.tsv" --threshold "$threshold" \
    --known "$here/known-differences.txt" $paths
