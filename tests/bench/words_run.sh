#!/usr/bin/env bash
# words_run.sh: issue 29's word-list figures in one run (docs/benchmarks.md,
# "The figures in one run", under "Word lists"): the in-process scan of 100 MB of
# each generated text with the 50,000-entry list (bench_words, which also
# prints the list's build and memory), the same list and texts through the
# peer (Debian's python3-ahocorasick, tests/bench/words_peer.py), a real
# text (six licence texts from /usr/share/common-licenses, 40 times over:
# English prose with its punctuation), then HTTP and line-protocol scans of
# 1 KiB comments (words_http.sh). Prints figures and the load average
# between the parts; asserts nothing.
#
#   tests/bench/words_run.sh [--build DIR] [--mb N] [--duration S]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$top/_build mb=100 dur=10
while [ $# -gt 0 ]; do
    case $1 in
    --build) B=$(realpath "$2"); shift 2 ;;
    --mb) mb=$2; shift 2 ;;
    --duration) dur=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--mb N] [--duration S]" >&2; exit 2 ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-wordsrun.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
lic=/usr/share/common-licenses
for _ in $(seq 40); do
    cat "$lic/GPL-3" "$lic/LGPL-3" "$lic/Apache-2.0" "$lic/Artistic" "$lic/MPL-2.0" "$lic/GFDL-1.3"
done >"$tmp/licences.txt"
echo "== $(date -u +%FT%TZ) $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== bench_words 50000 $mb (and the licence text, $(wc -c <"$tmp/licences.txt") bytes)"
WORDS_BENCH_DUMP=$tmp WORDS_BENCH_TEXT=$tmp/licences.txt "$B/tests/bench/bench_words" 50000 "$mb"
echo "== peer: python3-ahocorasick; load: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 "$here/words_peer.py" "$tmp"
echo "== HTTP and line protocol; load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$here/words_http.sh" --build "$B" --duration "$dur"
echo "== done; load: $(cut -d' ' -f1-3 /proc/loadavg)"
