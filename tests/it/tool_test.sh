#!/usr/bin/env bash
# End-to-end tests of the `bloomgate` tool: build from files and stdin, CRLF,
# comments, empty and unreadable input, dry run, info, verify, check, journal
# dump, build --journal, and the exit codes (0 ok, 1 runtime error, 2 usage error).
set -u
BG=${BLOOMGATE:-./bloomgate}
MJ=${MAKE_JOURNAL:-./tests/lib/make_journal} # writes journals: a shell cannot compute XXH3
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
for f in keys layout capacity fpr_target fpr_estimated items k shards bytes seed; do
    grep -q "^  \"$f\": " "$T/out" && ok || bad "info lacks $f"
done
[ "$(json "$T/out" keys)" = exact ] && ok || bad "info keys: $(json "$T/out" keys), wanted exact"
[ "$(json "$T/out" format_version)" = 1 ] && ok || bad "an exact filter is not format version 1"
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
expect 2 "counting layout" -- "$BG" build -o "$T/x.bloom" --layout counting "$SAMPLE"
contains "$T/err" "filled at run time" "counting layout message"
expect 2 "bad shards" -- "$BG" build -o "$T/x.bloom" --shards 3 "$SAMPLE"
expect 2 "bad capacity" -- "$BG" build -o "$T/x.bloom" --capacity -5 "$SAMPLE"
expect 2 "bad keys" -- "$BG" build -o "$T/x.bloom" --keys domain "$SAMPLE"
contains "$T/err" "exact, host, url, adblock or words" "bad keys message"
expect 2 "bad format" -- "$BG" build -o "$T/x.bloom" --format csv "$SAMPLE"
expect 2 "words settings without words" -- "$BG" build -o "$T/x.bloom" --zh off "$SAMPLE"
contains "$T/err" "--format words" "words settings message"
expect 2 "words setting not on or off" -- "$BG" build -o "$T/x.bloom" --format words --nfkc maybe "$SAMPLE"
expect 2 "adblock as exact items" -- "$BG" build -o "$T/x.bloom" --format adblock --keys exact "$SAMPLE"
contains "$T/err" "not exact items" "adblock as exact message"
expect 2 "urls as host keys" -- "$BG" build -o "$T/x.bloom" --format urls --keys host "$SAMPLE"
expect 2 "journal into url keys" -- "$BG" build -o "$T/x.bloom" --keys url --journal "$T/j" "$SAMPLE"
[ ! -e "$T/x.bloom" ] && ok || bad "a refused combination left an output file"
# plain hosts as host keys: canonical, so EXAMPLE.COM. and example.com are one key
printf 'Example.COM.\nexample.com\nhttp://example.com/x\n# c\n\n' >"$T/hl.txt"
expect 0 "plain list as host keys" -- "$BG" build --seed 2 -o "$T/hl.bloom" --keys host --rejects "$T/hl.rej" "$T/hl.txt"
contains "$T/out" "keys host, format plain" "summary names keys and format"
contains "$T/out" "lines: 5 read: 2 kept, 1 blank, 1 comment, 0 ignored, 1 rejected" "summary lines"
contains "$T/out" "keys: 2 kept, 1 new, 1 merged as duplicates" "summary merges the duplicate"
contains "$T/out" "rejected: 1 lines (written to $T/hl.rej): path-for-host 1" "summary rejects"
# A fuse build merges duplicates by hash as each shard is built: the same
# two keys are one new and one merged, in total (not by form).
expect 0 "plain list as host keys, fuse" -- "$BG" build --seed 2 -o "$T/hlf.bloom" --keys host --layout fuse "$T/hl.txt"
contains "$T/out" "keys: 2 kept, 1 new, 1 merged as duplicates (fuse: by hash" "fuse summary merges the duplicate"
contains "$T/out" "  host  2 kept" "fuse summary by form"
[ "$(cut -f2,4 "$T/hl.rej")" = "$(printf 'path-for-host\thttp://example.com/x')" ] && ok || bad "rejects file: $(cat "$T/hl.rej")"
expect 0 "info host keys" -- "$BG" info "$T/hl.bloom"
[ "$(json "$T/out" keys)" = host ] && ok || bad "info keys: $(json "$T/out" keys), wanted host"
[ "$(json "$T/out" format_version)" = 2 ] && ok || bad "a host filter is not format version 2"
# check applies the file's key kind; --match names the expression
expect 0 "check host keys" -- "$BG" check --match "$T/hl.bloom" "http://WWW.Example.COM:8080/a?b" "bob@mail.example.com" "example.org"
[ "$(cat "$T/out" | tr '\n\t' '|,')" = "YES,example.com|YES,example.com|NO|" ] && ok || bad "check host keys: $(cat "$T/out")"
expect 1 "check a bad host" -- "$BG" check --with-items "$T/hl.bloom" "http://example.com:99999/" "example.com"
[ "$(cut -f1 "$T/out" | tr '\n' ' ')" = "ERROR YES " ] && ok || bad "check a bad host: $(cat "$T/out")"
contains "$T/out" "port" "check names why an item is bad"
contains "$T/err" "1 item could not be read as host keys" "check bad item summary"
# url canon and url expressions
expect 0 "url canon" -- "$BG" url canon "HTTP://Login.EVIL.com.:8080/a/./b/../c?x=1#top" "http://%31%30.0.0.1/"
[ "$(cat "$T/out" | tr '\n' ' ')" = "http://login.evil.com/a/c?x=1 http://10.0.0.1/ " ] && ok || bad "url canon: $(cat "$T/out")"
expect 1 "url canon bad" -- "$BG" url canon "http://a.example/" "mailto:bob@example.org" "b.example"
[ "$(cat "$T/out" | tr '\n' ' ')" = "http://a.example/ http://b.example/ " ] && ok || bad "url canon bad: $(cat "$T/out")"
contains "$T/err" "mailto:bob@example.org" "url canon names the bad URL"
expect 0 "url expressions" -- "$BG" url expressions "http://a.b.c/1/2.html?param=1"
[ "$(cat "$T/out" | tr '\n' ' ')" = "a.b.c/1/2.html?param=1 a.b.c/1/2.html a.b.c/ a.b.c/1/ b.c/1/2.html?param=1 b.c/1/2.html b.c/ b.c/1/ " ] && ok || bad "url expressions: $(cat "$T/out")"
expect 0 "url expressions --keys host" -- "$BG" url expressions --keys host "bob@mx.sub.spam.example"
[ "$(cat "$T/out" | tr '\n' ' ')" = "mx.sub.spam.example sub.spam.example spam.example example " ] && ok || bad "url expressions host: $(cat "$T/out")"
expect 2 "url expressions two URLs" -- "$BG" url expressions a.example b.example
expect 2 "url unknown subcommand" -- "$BG" url frob
expect 0 "help url canon" -- "$BG" help url canon
contains "$T/out" "usage: bloomgate url canon" "help url canon"
expect 2 "unknown command" -- "$BG" frobnicate
expect 2 "no command" -- "$BG"
expect 2 "info without file" -- "$BG" info
expect 1 "info missing file" -- "$BG" info "$T/nope.bloom"
contains "$T/err" "nope.bloom" "info missing file message"
expect 0 "help" -- "$BG" --help
contains "$T/out" "usage" "help text"
expect 0 "version" -- "$BG" --version
contains "$T/out" "bloomgate" "version text"

# --- per-command help: `help CMD` and `CMD --help` print the same text to
# stdout and exit 0; the overview is built from the same per-command texts.
expect 0 "help (command)" -- "$BG" help
cp "$T/out" "$T/overview"
expect 0 "--help" -- "$BG" --help
cmp -s "$T/out" "$T/overview" && ok || bad "help and --help differ"
for cmd in build info verify check url journal help; do
    expect 0 "help $cmd" -- "$BG" help "$cmd"
    cp "$T/out" "$T/help-$cmd"
    contains "$T/out" "^usage: bloomgate $cmd" "help $cmd usage line"
    [ ! -s "$T/err" ] && ok || bad "help $cmd wrote to stderr: $(cat "$T/err")"
    # Every option line of the command's help is in the overview, word for word.
    grep -e '^ *-' "$T/help-$cmd" | sed 's/^ *//' >"$T/opts-$cmd"
    while IFS= read -r line; do
        grep -qF -- "$line" "$T/overview" && ok || bad "overview lacks '$line' of help $cmd"
    done <"$T/opts-$cmd"
done
for cmd in build info verify check journal; do
    expect 0 "$cmd --help" -- "$BG" "$cmd" --help
    cmp -s "$T/out" "$T/help-$cmd" && ok || bad "$cmd --help differs from help $cmd"
    expect 0 "$cmd -h" -- "$BG" "$cmd" -h
    cmp -s "$T/out" "$T/help-$cmd" && ok || bad "$cmd -h differs from help $cmd"
done
for opt in --journal --capacity --fpr --layout --shards --threads --seed --dry-run --quiet; do
    contains "$T/help-build" "$opt" "help build names $opt"
done
contains "$T/help-check" "--with-items" "help check names --with-items"
contains "$T/help-verify" "--threads" "help verify names --threads"
contains "$T/help-journal" "--count" "help journal names --count"
expect 0 "journal dump --help" -- "$BG" journal dump --help
cmp -s "$T/out" "$T/help-journal" && ok || bad "journal dump --help differs from help journal"
expect 0 "help journal dump" -- "$BG" help journal dump
cmp -s "$T/out" "$T/help-journal" && ok || bad "help journal dump differs from help journal"
# --help after other arguments still only prints help (and builds nothing).
expect 0 "build -o X --help" -- "$BG" build -o "$T/help.bloom" --help
[ ! -e "$T/help.bloom" ] && ok || bad "build --help built a file"
expect 0 "info FILE --help" -- "$BG" info "$T/s.bloom" --help
cmp -s "$T/out" "$T/help-info" && ok || bad "info FILE --help differs from help info"
expect 2 "help nosuch" -- "$BG" help nosuch
contains "$T/err" "nosuch" "help nosuch names the command"
[ ! -s "$T/out" ] && ok || bad "help nosuch wrote to stdout"
expect 2 "help build extra" -- "$BG" help build extra
expect 2 "help journal frob" -- "$BG" help journal frob

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

# --- journal dump: items one per line, exact bytes
printf 'alpha\nbeta\ngamma\n' | "$MJ" "$T/j1.journal"
expect 0 "journal dump" -- "$BG" journal dump "$T/j1.journal"
[ "$(tr '\n' ' ' <"$T/out")" = "alpha beta gamma " ] && ok || bad "journal dump: $(cat "$T/out")"
[ ! -s "$T/err" ] && ok || bad "clean journal dump wrote to stderr: $(cat "$T/err")"
expect 0 "journal dump --count" -- "$BG" journal dump --count "$T/j1.journal"
[ "$(cat "$T/out")" = 3 ] && ok || bad "journal dump --count: $(cat "$T/out")"
# Items a list file cannot carry: trailing space, LF, NUL, empty, '#'; then one that can.
printf '%s\n' 7769746820737061636520 6c660a696e73696465 6e756c0078 '' 2368617368 66696e65 |
    "$MJ" --hex --batch 2 "$T/bin.journal"
expect 0 "journal dump binary" -- "$BG" journal dump "$T/bin.journal"
printf 'with space \nlf\ninside\nnul\000x\n\n#hash\nfine\n' >"$T/bin.want"
cmp -s "$T/out" "$T/bin.want" && ok || bad "journal dump binary: bytes differ: $(od -c "$T/out" | head -5)"
contains "$T/err" "5 of 6 items cannot round-trip" "unsafe items warning"
contains "$T/err" "build --journal" "unsafe items advice"
[ "$(wc -l <"$T/err")" -eq 1 ] && ok || bad "unsafe items warning is not one line"
expect 0 "journal dump --count binary" -- "$BG" journal dump --count "$T/bin.journal"
[ "$(cat "$T/out")" = 6 ] && ok || bad "journal dump --count binary: $(cat "$T/out")"

# A torn tail is reported with its offset (exit 0); the file is not modified.
size=$(wc -c <"$T/j1.journal")
head -c $((size - 3)) "$T/j1.journal" >"$T/torn.journal"
expect 0 "journal dump torn" -- "$BG" journal dump "$T/torn.journal"
[ "$(tr '\n' ' ' <"$T/out")" = "alpha beta " ] && ok || bad "torn dump: $(cat "$T/out")"
contains "$T/err" "torn tail at offset [0-9]" "torn tail message"
[ "$(wc -c <"$T/torn.journal")" -eq $((size - 3)) ] && ok || bad "journal dump modified the file"
# A bad record with valid ones after it is not a torn tail: exit 1, naming it.
cp "$T/j1.journal" "$T/mid.journal"
printf '\xff' | dd of="$T/mid.journal" bs=1 seek=53 conv=notrunc status=none
expect 1 "journal dump corrupt" -- "$BG" journal dump "$T/mid.journal"
contains "$T/err" "corrupt record at offset 32" "corrupt journal message"
contains "$T/err" "not a torn tail" "corrupt journal message"
expect 1 "journal dump not a journal" -- "$BG" journal dump "$SAMPLE"
contains "$T/err" "not a bloomgate journal" "wrong magic journal message"
expect 1 "journal dump missing" -- "$BG" journal dump "$T/nope.journal"
contains "$T/err" "nope.journal" "missing journal message"
expect 2 "journal without subcommand" -- "$BG" journal
expect 2 "journal unknown subcommand" -- "$BG" journal frob "$T/j1.journal"
expect 2 "journal dump without file" -- "$BG" journal dump
expect 2 "journal dump two files" -- "$BG" journal dump "$T/j1.journal" "$T/j1.journal"

# --- build --journal: exact bytes, sized with the lists
expect 0 "build --journal" -- "$BG" build --quiet --seed 11 -o "$T/j.bloom" --journal "$T/bin.journal" --journal "$T/j1.journal" "$SAMPLE"
expect 0 "info build --journal" -- "$BG" info "$T/j.bloom"
[ "$(json "$T/out" capacity)" = $((items + 9)) ] && ok || bad "journal items not in the sized capacity: $(json "$T/out" capacity)"
expect 0 "check journal items" -- "$BG" check "$T/j.bloom" "with space " "$(printf 'lf\ninside')" "#hash" fine alpha "$(head -1 "$T/items")" "certainly-not-listed.example"
[ "$(tr '\n' ' ' <"$T/out")" = "YES YES YES YES YES YES NO " ] && ok || bad "journal items not found: $(cat "$T/out")"
# Journal only: no INPUT does not mean stdin when there are journals.
expect 0 "build journal only" -- "$BG" build --seed 3 -o "$T/jo.bloom" --journal "$T/j1.journal" <"$T/items"
contains "$T/out" "3 journal items" "build summary counts journal items"
expect 0 "info journal only" -- "$BG" info "$T/jo.bloom"
[ "$(json "$T/out" items),$(json "$T/out" capacity)" = "3,3" ] && ok || bad "journal-only build: $(cat "$T/out")"
# An explicit capacity wins; a torn journal builds with a warning.
expect 0 "build torn journal" -- "$BG" build --quiet --capacity 1000 -o "$T/jt.bloom" --journal "$T/torn.journal"
contains "$T/err" "torn tail at offset" "build torn journal warning"
expect 0 "check torn journal build" -- "$BG" check "$T/jt.bloom" alpha beta gamma
[ "$(tr '\n' ' ' <"$T/out")" = "YES YES NO " ] && ok || bad "torn journal build: $(cat "$T/out")"
# A corrupt journal fails the build and leaves no output.
expect 1 "build corrupt journal" -- "$BG" build --quiet -o "$T/jc.bloom" --journal "$T/mid.journal" "$SAMPLE"
contains "$T/err" "mid.journal: corrupt record at offset 32" "build corrupt journal message"
[ ! -e "$T/jc.bloom" ] && ok || bad "failed journal build left an output file"
expect 1 "build missing journal" -- "$BG" build --quiet -o "$T/jc.bloom" --journal "$T/nope.journal" "$SAMPLE"
expect 2 "dry run with journal" -- "$BG" build --dry-run --capacity 10 --journal "$T/j1.journal"

# --- the fuse layout: a list with every line twice, journals, an Adblock list,
# an empty input; its dry run; a capacity too small for the list
ADB=${srcdir:-.}/data/urlhaus-filter-online.txt
cat "$SAMPLE" "$SAMPLE" >"$T/twice.txt"
expect 0 "build fuse" -- "$BG" build --quiet --seed 5 --layout fuse -o "$T/f.bloom" "$T/twice.txt"
expect 0 "info fuse" -- "$BG" info "$T/f.bloom"
[ "$(json "$T/out" layout),$(json "$T/out" format_version),$(json "$T/out" items),$(json "$T/out" k)" = "fuse,3,$items,14" ] &&
    ok || bad "fuse info: $(cat "$T/out")"
expect 0 "verify fuse" -- "$BG" verify "$T/f.bloom"
"$BG" check "$T/f.bloom" <"$T/items" | grep -c '^YES$' >"$T/n"
[ "$(cat "$T/n")" = "$items" ] && ok || bad "fuse: not every item found"
expect 0 "check fuse absent" -- "$BG" check "$T/f.bloom" "certainly-not-listed.example"
[ "$(cat "$T/out")" = NO ] && ok || bad "fuse answered $(cat "$T/out") for an absent item"
expect 0 "build fuse --journal" -- "$BG" build --quiet --seed 5 --layout fuse -o "$T/fj.bloom" --journal "$T/bin.journal" --journal "$T/j1.journal" "$SAMPLE"
expect 0 "check fuse journal items" -- "$BG" check "$T/fj.bloom" "with space " "#hash" fine alpha "$(head -1 "$T/items")"
[ "$(tr '\n' ' ' <"$T/out")" = "YES YES YES YES YES " ] && ok || bad "fuse journal items not found: $(cat "$T/out")"
expect 0 "build fuse adblock" -- "$BG" build --quiet --seed 5 --layout fuse --format adblock --keys url -o "$T/fa.bloom" "$ADB"
expect 0 "build blocked adblock" -- "$BG" build --quiet --seed 5 --format adblock --keys url -o "$T/ba.bloom" "$ADB"
expect 2 "compiled adblock in a fuse layout" -- "$BG" build --quiet --layout fuse --format adblock -o "$T/x.bloom" "$ADB"
contains "$T/err" "run-time adds" "fuse adblock message"
expect 0 "info fuse adblock" -- "$BG" info "$T/fa.bloom"
fitems=$(json "$T/out" items)
expect 0 "info blocked adblock" -- "$BG" info "$T/ba.bloom"
[ "$fitems" -gt 0 ] && [ "$fitems" -ge "$(json "$T/out" items)" ] && ok || bad "fuse adblock keys $fitems"
: | "$BG" build --quiet --seed 5 --layout fuse -o "$T/fe.bloom" -
expect 0 "verify empty fuse" -- "$BG" verify "$T/fe.bloom"
expect 0 "check empty fuse" -- "$BG" check "$T/fe.bloom" anything
[ "$(cat "$T/out")" = NO ] && ok || bad "empty fuse filter answered $(cat "$T/out")"
expect 0 "dry run fuse" -- "$BG" build --dry-run --capacity 10000000000 --fpr 0.0001 --layout fuse
bytes=$(json "$T/out" bytes)
[ "$bytes" -lt 20600000000 ] && ok || bad "dry run fuse: $bytes bytes, not under 20.6 GB"
expect 1 "fuse over capacity" -- "$BG" build --quiet --layout fuse --capacity 10 -o "$T/fs.bloom" "$SAMPLE"
contains "$T/err" "larger --capacity" "fuse over capacity message"
[ ! -e "$T/fs.bloom" ] && ok || bad "failed fuse build left an output file"
expect 2 "layout unknown" -- "$BG" build --layout xor -o "$T/x.bloom" "$SAMPLE"
contains "$T/err" "blocked, classic or fuse" "layout message"

# --- build --format adblock --rejects: every line the compiled engine does not
# serve, in the order read, with its byte offset; served rules, duplicates,
# comments and cosmetic filters are not in it
printf '%s\n' '[Adblock Plus 2.0]' '! Title: rejects' '||ads.example^' 'example.com##.banner' \
    'example.com#@#.ad' '||a.example^$frobnicate' '/ad(/' '' '||ads.example^' \
    '0.0.0.0 evil.example' '||b.example^$popup' '||c.example^$script,~script' \
    '||d.example^$csp=script-src none' '||e d.example^' '@@||f.example^$generichide' >"$T/ab.txt"
expect 0 "build adblock rejects" -- "$BG" build --seed 3 --format adblock --rejects "$T/ab.rej" -o "$T/ab.bloom" "$T/ab.txt"
contains "$T/out" "rejects: 8 lines not served written to $T/ab.rej" "adblock summary rejects"
want=""
while IFS=$'\t' read -r reason line; do
    off=$(grep -b -x -F -- "$line" "$T/ab.txt" | head -1 | cut -d: -f1)
    want+="$T/ab.txt:$off"$'\t'"$reason"$'\t'"$line"$'\n'
done <<'EOF'
unknown-option	||a.example^$frobnicate
bad-regex	/ad(/
hosts	0.0.0.0 evil.example
popup	||b.example^$popup
no-type-left	||c.example^$script,~script
csp	||d.example^$csp=script-src none
white-space	||e d.example^
page-hiding	@@||f.example^$generichide
EOF
[ "$(cut -f1,2,4 "$T/ab.rej")" = "${want%$'\n'}" ] && ok || bad "adblock rejects file: $(cat "$T/ab.rej")"
[ -z "$(awk -F'\t' 'NF < 4 || $3 == ""' "$T/ab.rej")" ] && ok || bad "adblock rejects without a why"
"$BG" build --quiet --format adblock --rejects "$T/ab2.rej" -o "$T/ab2.bloom" - <"$T/ab.txt"
[ "$(cut -f1 "$T/ab2.rej" | sed 's/:[0-9]*$//' | sort -u)" = stdin ] && ok || bad "stdin rejects: $(cat "$T/ab2.rej")"
[ "$(cut -f2- "$T/ab2.rej")" = "$(cut -f2- "$T/ab.rej")" ] && ok || bad "stdin rejects differ"
expect 1 "adblock rejects unwritable" -- "$BG" build --quiet --format adblock --rejects "$T/no/dir/r" -o "$T/ab3.bloom" "$T/ab.txt"
contains "$T/err" "rejects file" "adblock rejects unwritable message"
[ ! -e "$T/ab3.bloom" ] && ok || bad "a failed adblock build left an output file"

# --- build --exact: the table beside the filter; info, verify and check use it
seq 1 3000 | sed 's/^/listed-/' >"$T/xl.txt"
seq 1 3000 | sed 's/^/absent-/' >"$T/xa.txt"
expect 0 "build exact" -- "$BG" build --quiet --seed 7 --fpr 0.3 --exact -o "$T/x.bloom" "$T/xl.txt"
expect 0 "build plain" -- "$BG" build --quiet --seed 7 --fpr 0.3 -o "$T/xp.bloom" "$T/xl.txt"
[ -s "$T/x.bloom.exact" ] && ok || bad "no table beside the filter"
expect 0 "info exact" -- "$BG" info "$T/x.bloom"
grep -q '"entries": 3000' "$T/out" && ok || bad "info: no exact table of 3000 entries"
expect 0 "verify exact" -- "$BG" verify "$T/x.bloom"
contains "$T/out" "its exact table (3000 entries)" "verify exact output"
expect 0 "check exact absent" -- "$BG" check "$T/x.bloom" <"$T/xa.txt"
[ "$(grep -c YES "$T/out")" = 0 ] && ok || bad "check with the table: $(grep -c YES "$T/out") absent YES"
expect 0 "check exact listed" -- "$BG" check "$T/x.bloom" <"$T/xl.txt"
[ "$(grep -c YES "$T/out")" = 3000 ] && ok || bad "check with the table: a listed item NO"
expect 0 "check plain absent" -- "$BG" check "$T/xp.bloom" <"$T/xa.txt"
[ "$(grep -c YES "$T/out")" -gt 100 ] && ok || bad "at fpr 0.3 the plain filter gave no false positive"
expect 2 "exact adblock" -- "$BG" build --format adblock --exact -o "$T/xb.bloom" "$T/xl.txt"
expect 2 "exact kind" -- "$BG" build --exact=bits -o "$T/xb.bloom" "$T/xl.txt"
truncate -s 4096 "$T/x.bloom.exact"
expect 1 "verify cut table" -- "$BG" verify "$T/x.bloom"
contains "$T/err" "exact table" "cut table message"
expect 1 "check cut table" -- "$BG" check "$T/x.bloom" anything

echo "tool_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
