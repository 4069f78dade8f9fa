#!/usr/bin/env bash
# adblock_net.sh: an Adblock filter over the network against a url-key filter
# (issue 26: "over the network with context, batched lookups at least 0.5 x the
# url-key lookups' items/s in the same run"). One bloomgated (2 worker threads)
# serves both filters:
#   ads   EasyList + EasyPrivacy, bloomgate build --format adblock
#   urls  url keys of the URLhaus list, bloomgate build --format adblock --keys url
# and one client (bench_net --replay) sends both the same requests: the corpus
# of tests/adblock/make_corpus.py (seed 26, the differential test's; `url TAB
# type TAB from` a line) less the few URLs without a host that a url filter
# refuses, written as line-protocol requests:
#   ads-mcheck       MCHECK ads type=T [from=F] u1 .., the corpus sorted by page
#                    and type (a gateway batching a page's requests), a word
#                    where the context changes
#   ads-mcheck-each  MCHECK ads type=T [from=F] u1 type=T [from=F] u2 ..: each
#                    item's own words, in the corpus's order
#   ads-check        CHECK ads u type=T [from=F]
#   url-*            the same requests' URLs to the url filter, without words:
#                    MCHECK urls u1 .. (the same batches), CHECK urls u
# A batch ends at 100 items or where the next item's words would pass 64, the
# protocol's limit of context words a request (so the batches of many pages
# are short: the figures give the mean). A request without a type is sent as
# type=document (what the engine takes it for); from=- clears a page. MCHECK: 4 connections x 4 in flight;
# CHECK: 4 x 32.
# After one warm-up pass over every case, ROUNDS rounds, each case once per
# round (alternating); for each case the best round's items/s, with that
# round's server CPU per item (utime + stime of all the daemon's threads, from
# /proc/PID/stat, by bench_net --server-pid) and client CPU per item
# (getrusage). Client and server share the machine's CPUs. HTTP is not
# measured (bench_net --replay sends line requests only). Prints figures, asserts nothing;
# not run by `make check`.
#   tests/bench/adblock_net.sh BUILD_DIR [ROUNDS] [SECONDS]
# Lists: ADBLOCK_LISTS_DIR (default scripts/adblock-lists.sh's cache); URLs:
# URL_LIST (default data/urlhaus-filter-online.txt). KEEP=1 keeps the temporary
# directory (the request files, the daemon's config).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$(cd "${1:?usage: adblock_net.sh BUILD_DIR [ROUNDS] [SECONDS]}" && pwd)
rounds=${2:-3}
dur=${3:-5}
warm=1
. "$here/lib.sh"
lists_dir=${ADBLOCK_LISTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bloomgate/adblock-lists}
url_list=${URL_LIST:-$top/data/urlhaus-filter-online.txt}
# What the url filter is built from (default: the URL list). URL_KEYS_FROM=lists
# builds it from EasyList + EasyPrivacy as url keys: the same lists read the
# way bloomgate read them before the adblock kind (hosts and URLs only).
url_keys_from=${URL_KEYS_FROM:-$url_list}
[ "$url_keys_from" = lists ] && url_keys_from="$lists_dir/easylist.txt $lists_dir/easyprivacy.txt"
for f in "$lists_dir/easylist.txt" "$lists_dir/easyprivacy.txt" "$url_list"; do
    [ -s "$f" ] || { echo "adblock_net.sh: no $f (scripts/adblock-lists.sh)" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bloomgate-abnet.XXXXXX")
pid=
cleanup() {
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    if [ -n "${KEEP:-}" ]; then echo "kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

python3 "$top/tests/adblock/make_corpus.py" --seed 26 --variants 1 --urls "$url_list" \
    "$lists_dir/easylist.txt" "$lists_dir/easyprivacy.txt" >"$tmp/corpus.tsv" 2>/dev/null
"$B/bloomgate" build --format adblock --quiet -o "$tmp/ads.bloom" \
    "$lists_dir/easylist.txt" "$lists_dir/easyprivacy.txt"
# shellcheck disable=SC2086
"$B/bloomgate" build --format adblock --keys url --quiet -o "$tmp/urls.bloom" $url_keys_from
# The requests both filters can read: the url filter refuses a few URLs of the
# corpus that have no host (data:, javascript:, http:///) and would fail their
# whole batch.
{ cut -f1 "$tmp/corpus.tsv" | "$B/bloomgate" check "$tmp/urls.bloom" 2>/dev/null || true; } |
    paste - "$tmp/corpus.tsv" | awk -F'\t' -v OFS='\t' '$1 != "ERROR" { print $2, $3, $4 }' \
    >"$tmp/requests.tsv"
# What the client's yes_share should come to (bloomgate check, the same files).
n_req=$(wc -l <"$tmp/requests.tsv")
yes_urls=$(cut -f1 "$tmp/requests.tsv" | "$B/bloomgate" check "$tmp/urls.bloom" | grep -c YES)
yes_ads=$(awk -F'\t' '{ l = $1; if ($2 != "") l = l " type=" $2; if ($3 != "") l = l " from=" $3
    print l }' "$tmp/requests.tsv" | "$B/bloomgate" check "$tmp/ads.bloom" | grep -c YES)

# The corpus as request files, one per case (see the header).
python3 - "$tmp" <<'PY'
import sys
d = sys.argv[1]
reqs = []
with open(d + '/requests.tsv') as f:
    for line in f:
        p = line.rstrip('\n').split('\t') + ['', '']
        reqs.append((p[0], p[1] or 'document', p[2]))   # no type: a document request


def words_of(r, cur, every):
    """The context words r needs after a request of context cur (from=-
    clears a page)."""
    w = ['type=' + r[1]] if every or r[1] != cur[0] else []
    return w + (['from=' + (r[2] or '-')] if every or r[2] != cur[1] else [])


def batches(rs, every):
    """rs cut into MCHECK batches of at most 100 items and 64 context words
    (the protocol's limit), each item's own words before it (every) or a word
    where the context changes."""
    batch, words, cur, n_ctx = [], [], ('', ''), 0
    for r in rs:
        w = words_of(r, cur, every)
        if len(batch) == 100 or n_ctx + len(w) > 64:
            yield batch, words
            batch, words, cur = [], [], ('', '')
            w = words_of(r, cur, every)
            n_ctx = 0
        batch.append(r)
        words += w + [r[0]]
        n_ctx += len(w)
        cur = (r[1], r[2])
    if batch:
        yield batch, words


for name, rs, every in (('mcheck', sorted(reqs, key=lambda r: (r[2] != '', r[2], r[1])), False),
                        ('mcheck-each', sorted(reqs, key=lambda r: r[2] != ''), True)):
    with open(d + '/url-' + name + '.txt', 'w') as a, open(d + '/ads-' + name + '.txt', 'w') as b:
        for batch, words in batches(rs, every):
            a.write('MCHECK urls ' + ' '.join(r[0] for r in batch) + '\n')
            b.write('MCHECK ads ' + ' '.join(words) + '\n')
with open(d + '/url-check.txt', 'w') as a, open(d + '/ads-check.txt', 'w') as b:
    for r in reqs:
        a.write('CHECK urls ' + r[0] + '\n')
        b.write('CHECK ads ' + r[0] + ' type=' + r[1] + (' from=' + r[2] if r[2] else '') + '\n')
PY

port=$(free_port)
cat >"$tmp/bg.conf" <<CONF
listen 127.0.0.1:$port
http_listen off
threads 2
log_level warn
filter ads {
    file $tmp/ads.bloom
    keys adblock
    journal off
}
filter urls {
    file $tmp/urls.bloom
    keys url
    journal off
}
CONF
"$B/bloomgated" -c "$tmp/bg.conf" 2>"$tmp/bg.log" &
pid=$!
wait_port "$port" "$pid" 60 || { cat "$tmp/bg.log" >&2; exit 1; }

cases="url-mcheck ads-mcheck url-mcheck-each ads-mcheck-each url-check ads-check"
# run CASE SECONDS WARMUP: one bench_net run, its JSON line on stdout.
run() {
    local shape=(--connections 4 --pipeline 4)
    case $1 in *-check) shape=(--connections 4 --pipeline 32) ;; esac
    "$B/tests/bench/bench_net" --proto line --port "$port" --replay "$tmp/$1.txt" \
        "${shape[@]}" --duration "$2" --warmup "$3" --server-pid "$pid" --label "$1"
}
echo "machine: $(nproc) CPUs, $(. /etc/os-release && echo "$PRETTY_NAME"); load" \
    "$(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%MZ);" \
    "tree $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "corpus: $n_req of its $(wc -l <"$tmp/corpus.tsv") requests (bloomgate check: YES share" \
    "urls $(awk -v y="$yes_urls" -v n="$n_req" 'BEGIN { printf "%.4f", y / n }')," \
    "ads $(awk -v y="$yes_ads" -v n="$n_req" 'BEGIN { printf "%.4f", y / n }')); ads.bloom $(stat -c %s "$tmp/ads.bloom")" \
    "bytes, urls.bloom $(stat -c %s "$tmp/urls.bloom") bytes"
for c in $cases; do run "$c" 1 0.5 >/dev/null; done # warm-up: every case once
printf '%-15s %5s %9s %12s %14s %14s %9s\n' case round items/req items/s server_ns/item \
    client_ns/item yes_share
: >"$tmp/rows"
for r in $(seq "$rounds"); do
    for c in $cases; do
        line=$(run "$c" "$dur" "$warm")
        errs=$(jq -r .errors <<<"$line")
        [ "$errs" = 0 ] || { echo "adblock_net.sh: $c: $errs errors: $line" >&2; exit 1; }
        jq -r --arg r "$r" '[.label, $r, (.items_per_s | round), (.server_cpu_ns_per_item | round),
            (.client_cpu_ns_per_item | round), .yes_share, .items_per_command_mean] | @tsv' \
            <<<"$line" | tee -a "$tmp/rows" |
            awk -F'\t' '{ printf "%-15s %5s %9s %12s %14s %14s %9s\n", $1, $2, $7, $3, $4, $5, $6 }'
    done
done
echo "best of $rounds rounds ($dur s each, after $warm s):"
best() { awk -F'\t' -v c="$1" '$1 == c && $3 > b { b = $3; l = $0 } END { print l }' "$tmp/rows"; }
for c in $cases; do
    best "$c" | awk -F"\t" '{ printf "  %-15s %6s items/req %10s items/s %8s ns server CPU/item %8s ns client CPU/item\n", $1, $7, $3, $4, $5 }'
done
# ratio ADS URL: the ads case's best items/s over the url case's, and the same
# ratio as the CPU per item (server + client) of those rounds predicts it when
# the two processes are all that runs on the CPUs (other load makes items/s
# noisy; CPU time per item much less so).
ratio() {
    local a u
    a=$(best "$1")
    u=$(best "$2")
    awk -v a="$a" -v u="$u" -v n="$1 / $2" 'BEGIN {
        split(a, x, "\t"); split(u, y, "\t")
        printf "  %-34s %.2f   from CPU/item %.2f   (server CPU/item x %.2f)\n", n, x[3] / y[3],
            (y[4] + y[5]) / (x[4] + x[5]), x[4] / y[4] }'
}
echo "ratios, ads / url (target for batches: items/s >= 0.5):"
ratio ads-mcheck url-mcheck
ratio ads-mcheck-each url-mcheck-each
ratio ads-check url-check
