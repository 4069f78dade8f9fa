#!/usr/bin/env bash
# The man pages against what ships, so that they cannot drift:
# - bloomgate.conf(5) documents exactly the directives of the table in
#   src/conf/ (each as `.It Ic NAME`): a directive added without its entry,
#   or an entry left after its directive went, fails here;
# - bloomgate(1) has a section (`.Ss`) for every command `bloomgate --help`
#   lists, and an `.It` entry for every long option of `bloomgate help CMD`;
# - bloomgated(8) has an `.It` entry for every option `bloomgated --help` prints;
# - each page renders without a warning, checked the way lintian's
#   groff-message check does (man --warnings), or with groff -ww, and with
#   mandoc -Tlint where it is installed.
set -u
BG=${BLOOMGATE:-./bloomgate}
BGD=${BLOOMGATED:-./bloomgated}
src=${srcdir:-.}
MAN=$src/man
T=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-man.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# A page's roff source with \- as a plain -, so options read as typed.
plain() { sed 's/\\-/-/g' "$MAN/$1"; }

# --- bloomgate.conf(5) and the directive table
# Table rows look like `INT(   "max_items",` or `ADDRS_OFF("http_listen",`: an
# upper-case row macro, then the name as the first argument. The table may
# move between files under src/conf/, so every .c file there is read.
find "$src/src/conf" -name '*.c' -exec cat {} + |
    sed -n 's/^[[:space:]]*[A-Z][A-Z_]*([[:space:]]*"\([a-z_][a-z0-9_]*\)",.*/\1/p' |
    sort -u >"$T/table"
sed -n 's/^\.It Ic \([a-z_][a-z0-9_]*\).*/\1/p' "$MAN/bloomgate.conf.5" | sort >"$T/documented"
# Guard the extraction itself: an empty or shrunken list would compare equal
# to a page that had lost its entries too.
if grep -qx listen "$T/table" && grep -qx fsync "$T/table" && [ "$(wc -l <"$T/table")" -ge 20 ]; then
    ok
else
    bad "could not read the directive table under $src/src/conf (got: $(tr '\n' ' ' <"$T/table"))"
fi
dups=$(uniq -d "$T/documented" | tr '\n' ' ')
[ -z "$dups" ] && ok || bad "bloomgate.conf.5 documents twice: $dups"
missing=$(comm -23 "$T/table" <(sort -u "$T/documented") | tr '\n' ' ')
extra=$(comm -13 "$T/table" <(sort -u "$T/documented") | tr '\n' ' ')
[ -z "$missing" ] && ok || bad "directives without an '.It Ic NAME' entry in bloomgate.conf.5: $missing"
[ -z "$extra" ] && ok || bad "bloomgate.conf.5 documents directives the table does not have: $extra"

# --- bloomgate(1): a section per command, an entry per long option
"$BG" --help >"$T/overview" || bad "bloomgate --help failed"
# Command lines are indented by two spaces under "commands:"; the command is
# the leading lower-case words ("journal dump"), before options and operands.
sed -n '/^commands:/,/^$/p' "$T/overview" | grep '^  [a-z]' |
    awk '{ c = $1; for (i = 2; i <= NF && $i ~ /^[a-z]+$/; i++) c = c " " $i; print c }' >"$T/commands"
[ "$(wc -l <"$T/commands")" -ge 5 ] && ok || bad "no commands read from bloomgate --help: $(cat "$T/commands")"
while IFS= read -r cmd; do
    grep -qx "\.Ss $cmd" "$MAN/bloomgate.1" && ok || bad "bloomgate.1 has no '.Ss $cmd' section"
    "$BG" help ${cmd%% *} >"$T/help" || bad "bloomgate help ${cmd%% *} failed"
    for opt in $(grep -o -- '--[a-z][a-z-]*' "$T/help" | sort -u); do
        plain bloomgate.1 | grep -q "^\.It .*Fl ${opt#-}\b" && ok ||
            bad "bloomgate.1 has no '.It' entry for $cmd $opt"
    done
done <"$T/commands"

# --- bloomgated(8): an entry per option of --help
"$BGD" --help >"$T/dhelp" || bad "bloomgated --help failed"
{
    grep -o -- '--[a-z][a-z-]*' "$T/dhelp"
    grep -oE -- '(^|[[ ,])-[a-zA-Z]($|[] ,])' "$T/dhelp" | tr -d '[], '
} | sort -u >"$T/dopts"
[ "$(wc -l <"$T/dopts")" -ge 5 ] && ok || bad "no options read from bloomgated --help: $(cat "$T/dopts")"
while IFS= read -r opt; do
    plain bloomgated.8 | grep -q "^\.It .*Fl $opt\b" && ok ||
        bad "bloomgated.8 has no '.It' entry for $opt"
done < <(sed 's/^-\([a-zA-Z]\)$/\1/; s/^--/-/' "$T/dopts")

# --- bloomgate-squid(1): an entry per option of --help
BGS=${BLOOMGATE_SQUID:-./bloomgate-squid}
"$BGS" --help >"$T/shelp" || bad "bloomgate-squid --help failed"
grep -o -- '--[a-z][a-z-]*' "$T/shelp" | sort -u >"$T/sopts"
[ "$(wc -l <"$T/sopts")" -ge 5 ] && ok || bad "no options read from bloomgate-squid --help: $(cat "$T/sopts")"
while IFS= read -r opt; do
    plain bloomgate-squid.1 | grep -q "^\.It .*Fl ${opt#-}\b" && ok ||
        bad "bloomgate-squid.1 has no '.It' entry for $opt"
done <"$T/sopts"

# --- every page renders without a warning
rendered=0
for page in bloomgate.1 bloomgated.8 bloomgate.conf.5 bloomgate-squid.1; do
    if command -v man >/dev/null 2>&1 && man -l /dev/null >/dev/null 2>&1; then
        # As lintian's groff-message check runs it.
        LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
            man --warnings -E UTF-8 -l -Tutf8 -Z "$MAN/$page" >/dev/null 2>"$T/warn"
        rc=$?
        rendered=1
    elif command -v groff >/dev/null 2>&1; then
        groff -mandoc -Tutf8 -ww -z "$MAN/$page" 2>"$T/warn"
        rc=$?
        rendered=1
    else
        continue
    fi
    [ "$rc" -eq 0 ] && [ ! -s "$T/warn" ] && ok || bad "$page: rendering warns (exit $rc): $(head -c 500 "$T/warn")"
    if command -v mandoc >/dev/null 2>&1; then
        mandoc -Tlint -Wwarning "$MAN/$page" >"$T/lint" 2>&1 && ok || bad "$page: mandoc -Tlint: $(head -c 500 "$T/lint")"
    fi
done
[ "$rendered" = 1 ] || echo "man_test: neither man nor groff is installed: rendering not checked" >&2

echo "man_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
