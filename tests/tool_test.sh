#!/usr/bin/env bash
# End-to-end tests of the `bloomgate` tool: build from files and stdin, CRLF,
# comments, empty and unreadable input, dry run, info, verify, check, and the
# exit codes (0 ok, 1 runtime error, 2 usage error).
set -u
BG=${BLOOMGATE:-./bloomgate}
SAMPLE=${srcdir:-.}/data/sample-blocklist.txt
T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-tool.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# expect CODE DESCRIPTION -- COMMAND...: run, compare the exit status.
expect() {
    local want=$1 what=$2; shift 3
    "$@" >"$T/out" 2>"$T/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then ok; else bad "$what: exit $got, wanted $want ($(head -c 300 "$T/err"))"; fi
}
contains() { if grep -q -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 300 "$1")"; fi; }
# json FILE FIELD: a top-level field of the tool's indented JSON (one per line).
json() { sed -n "s/^  \"$2\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p" "$1"; }

# --- build from a file, then info / verify / check
# A fixed seed: with a random one, an item whose bits all collide with earlier
# items (a false positive during the build, ~1 in 3 builds here) is not counted.
expect 0 "build sample" -- "$BG" build --quiet --seed 11 -o "$T/s.bloom" "$SAMPLE"
expect 0 "info" -- "$BG" info "$T/s.bloom"
items=$(grep -vc -e '^#' -e '^[[:space:]]*$' "$SAMPLE")
[ "$(json "$T/out" items)" = "$items" ] && ok || bad "info items != $items"
[ "$(json "$T/out" capacity)" = "$items" ] && ok || bad "capacity not sized from input"
for f in layout capacity fpr_target fpr_estimated items k shards bytes seed; do
    grep -q "^  \"$f\": " "$T/out" && ok || bad "info lacks $f"
done
expect 0 "verify" -- "$BG" verify "$T/s.bloom"
contains "$T/out" "ok" "verify output"
# every listed item is present
grep -v -e '^#' -e '^[[:space:]]*$' "$SAMPLE" >"$T/items"
"$BG" check "$T/s.bloom" <"$T/items" >"$T/answers"
[ "$(grep -c '^YES$' "$T/answers")" = "$items" ] && ok || bad "check from stdin: not every item YES"
expect 0 "check args" -- "$BG" check "$T/s.bloom" "$(head -1 "$T/items")" "certainly-not-listed.example"
[ "$(tr '\n' ' ' <"$T/out")" = "YES NO " ] && ok || bad "check args answers: $(cat "$T/out")"

# --- stdin, CRLF, comments, blank lines, trailing whitespace
printf 'alpha\r\n# a comment\r\n\r\nbeta  \t\r\n   \ngamma' | "$BG" build --quiet -o "$T/crlf.bloom" --seed 3 -
expect 0 "info crlf" -- "$BG" info "$T/crlf.bloom"
[ "$(json "$T/out" items)" = 3 ] && ok || bad "CRLF/comment input: items $(json "$T/out" items) != 3"
printf 'alpha\nbeta\ngamma\n# a comment\n' | "$BG" check --with-items "$T/crlf.bloom" >"$T/out"
[ "$(cut -f1 "$T/out" | tr '\n' ' ')" = "YES YES YES " ] && ok || bad "CRLF items not found: $(cat "$T/out")"
printf 'alpha\nbeta\ngamma\n' | "$BG" build --quiet -o "$T/lf.bloom" --seed 3
cmp -s <(tail -c +4097 "$T/lf.bloom") <(tail -c +4097 "$T/crlf.bloom") && ok || bad "CRLF and LF builds differ"

# --- empty input gives a valid empty filter
: | "$BG" build --quiet -o "$T/empty.bloom" -
expect 0 "verify empty" -- "$BG" verify "$T/empty.bloom"
expect 0 "check empty" -- "$BG" check "$T/empty.bloom" anything
[ "$(cat "$T/out")" = NO ] && ok || bad "empty filter answered $(cat "$T/out")"

# --- errors: runtime (1) and usage (2), each with a one-line message naming the cause
expect 1 "unreadable input" -- "$BG" build -o "$T/x.bloom" "$T/does-not-exist.txt"
contains "$T/err" "does-not-exist.txt" "unreadable input message"
[ ! -e "$T/x.bloom" ] && ok || bad "failed build left an output file"
expect 1 "directory input" -- "$BG" build -o "$T/x.bloom" "$T"
expect 1 "unwritable output" -- "$BG" build --quiet -o "$T/no/such/dir/x.bloom" "$SAMPLE"
expect 2 "no output" -- "$BG" build "$SAMPLE"
expect 2 "bad fpr" -- "$BG" build -o "$T/x.bloom" --fpr 2 "$SAMPLE"
contains "$T/err" "fpr" "bad fpr message"
expect 2 "bad layout" -- "$BG" build -o "$T/x.bloom" --layout fancy "$SAMPLE"
expect 2 "bad shards" -- "$BG" build -o "$T/x.bloom" --shards 3 "$SAMPLE"
expect 2 "bad capacity" -- "$BG" build -o "$T/x.bloom" --capacity -5 "$SAMPLE"
expect 2 "unknown command" -- "$BG" frobnicate
expect 2 "no command" -- "$BG"
expect 2 "info without file" -- "$BG" info
expect 1 "info missing file" -- "$BG" info "$T/nope.bloom"
contains "$T/err" "nope.bloom" "info missing file message"
expect 0 "help" -- "$BG" --help
contains "$T/out" "usage" "help text"
expect 0 "version" -- "$BG" --version
contains "$T/out" "bloomgate" "version text"

# --- corrupt files are refused by every command
cp "$T/s.bloom" "$T/bad.bloom"
printf '\xff' | dd of="$T/bad.bloom" bs=1 seek=5000 conv=notrunc status=none
expect 1 "verify corrupt payload" -- "$BG" verify "$T/bad.bloom"
contains "$T/err" "checksum" "corrupt payload message"
expect 1 "check corrupt payload" -- "$BG" check "$T/bad.bloom" x
head -c 1000 "$T/s.bloom" >"$T/trunc.bloom"
expect 1 "info truncated" -- "$BG" info "$T/trunc.bloom"
contains "$T/err" "truncated" "truncated message"
echo "not a filter" >"$T/text.bloom"
expect 1 "wrong magic" -- "$BG" verify "$T/text.bloom"
contains "$T/err" "not a bloomgate filter" "wrong magic message"

# --- dry run: sizes without allocating; the reference case fits in 30 GB
for layout in blocked classic; do
    expect 0 "dry run $layout" -- "$BG" build --dry-run --capacity 10000000000 --fpr 0.0001 --layout "$layout"
    bytes=$(json "$T/out" bytes)
    [ "$bytes" -le 30000000000 ] && ok || bad "dry run $layout: $bytes bytes > 30 GB"
done
expect 2 "dry run without capacity" -- "$BG" build --dry-run --fpr 0.001

# --- explicit options are honoured
expect 0 "classic, 4 shards" -- "$BG" build --quiet -o "$T/c.bloom" --layout classic --shards 4 --capacity 100000 --fpr 0.001 --threads 1 "$SAMPLE"
expect 0 "info classic" -- "$BG" info "$T/c.bloom"
[ "$(json "$T/out" layout),$(json "$T/out" shards),$(json "$T/out" capacity)" = "classic,4,100000" ] && ok || bad "options not honoured: $(cat "$T/out")"
"$BG" check "$T/c.bloom" <"$T/items" | grep -c '^YES$' >"$T/n"
[ "$(cat "$T/n")" = "$items" ] && ok || bad "classic: not every item found"

echo "tool_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
