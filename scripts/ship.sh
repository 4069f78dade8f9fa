#!/usr/bin/env bash
# Ship a built filter file to bloomgated replicas, one at a time, and prove
# each one serves it before touching the next (docs/scaling.md).
#
#   scripts/ship.sh [options] FILTER FILE REPLICA...
#
# FILTER is the filter's name in the replicas' configuration, FILE the file
# `bloomgate build` wrote. A REPLICA is comma-separated key=value fields:
#
#   path=LIVE      the file the replica's config names for FILTER (required)
#   host=[USER@]H  run every step over ssh on H; absent: on this machine
#   reload=HOW     hup:PIDFILE (SIGHUP to the pid in PIDFILE), systemctl[:UNIT]
#                  (systemctl reload UNIT, default bloomgated), http:ADDR
#                  (POST /v1/reload) or line:ADDR (RELOAD); default systemctl
#   line=ADDR      where to ask INFO FILTER (line protocol), or
#   http=ADDR      where to GET /v1/filters/FILTER; default: the reload's ADDR
#
# ADDR is HOST:PORT as seen from the replica (over ssh, 127.0.0.1 is the
# replica itself). A token for http:/line: reloads comes from the environment,
# BLOOMGATE_TOKEN. For each replica, in order:
#
#   1. ask it what it serves: the filter must be ready and hold the file's key
#      kind; a replica already serving the file's checksum is left alone (so a
#      second run changes nothing);
#   2. copy the file beside the live one under a temporary name (same
#      directory, so the rename is atomic), mode 0644;
#   3. `bloomgate verify` it there and compare its checksum with FILE's;
#   4. keep the live file as LIVE.ship-prev (a hard link) and rename the copy
#      into place;
#   5. send the reload;
#   6. poll INFO until the replica serves the new checksum with a higher
#      generation (--timeout seconds, default 60).
#
# The first failure stops the run: the temporary copy is removed; after step 4
# the previous file is renamed back and the replica reloaded, so it keeps
# serving the list it had. Replicas after it are not touched. The report says
# which replica, which step and why; the exit status is 0 only when every
# replica serves FILE.
#
# Options: --timeout S, --bloomgate PATH (the bloomgate binary on the
# replicas, default `bloomgate`; the local one is found the same way unless
# --local-bloomgate says otherwise), --ssh "CMD" (default "ssh -o BatchMode=yes").
set -u

timeout=60
bg_remote=bloomgate
bg_local=
ssh_cmd="ssh -o BatchMode=yes"
usage() {
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --timeout) timeout=${2:?}; shift 2 ;;
    --bloomgate) bg_remote=${2:?}; shift 2 ;;
    --local-bloomgate) bg_local=${2:?}; shift 2 ;;
    --ssh) ssh_cmd=${2:?}; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) echo "ship: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -ge 3 ] || usage
filter=$1 file=$2
shift 2
: "${bg_local:=$bg_remote}"

say() { printf 'ship: %s\n' "$*"; }
die() { printf 'ship: FAILED: %s\n' "$*" >&2; exit 1; }

# A field of a one-object JSON reply (bloomgated's compact JSON, or `bloomgate
# info`'s indented one): a string's text (none read here holds a quote), or a
# number, true, false or null as written.
field() {
    printf '%s' "$1" | tr -d '\n' |
        sed -n -e "s/.*\"$2\": *\"\([^\"]*\)\".*/\1/p" -e "t" -e "s/.*\"$2\": *\([^,}]*\).*/\1/p"
}

info=$("$bg_local" info "$file" 2>&1) || die "$file: $info"
want_sum=$(field "$info" checksum)
want_keys=$(field "$info" keys)
[ -n "$want_sum" ] || die "$file: bloomgate info printed no checksum (an older bloomgate?)"
say "$file: checksum $want_sum, $want_keys keys, $(field "$info" items) items"

# The helpers every step runs on the replica, as one line of shell so the same
# text works through ssh (whose remote shell may be sh) and here (bash):
# info ADDR-KIND ADDR FILTER prints INFO's JSON; reload HOW prints its answer.
# /dev/tcp is bash's, so the line-protocol client runs under bash -c.
# shellcheck disable=SC2016
lib='q() { case $1 in
 line) bash -c '\''exec 3<>/dev/tcp/${1%:*}/${1##*:} || exit 1; printf "%s\r\n" "$2" >&3; IFS= read -r -t 30 l <&3 || exit 1; printf "%s\n" "${l%$(printf "\r")}"'\'' _ "$2" "$3" ;;
 http) curl -sS --max-time 30 -X "$3" ${BLOOMGATE_TOKEN:+-H "Authorization: Bearer $BLOOMGATE_TOKEN"} "http://$2$4" ;;
 esac; }'
lib=$(printf '%s' "$lib" | tr '\n' ' ')

# Run a command line (already quoted) on the replica: here, or over ssh.
on() {
    if [ -n "$host" ]; then
        # shellcheck disable=SC2086
        $ssh_cmd "$host" "$1"
    else
        bash -c "$1"
    fi
}
# The same, with FILE on its standard input (the copy).
on_in() {
    if [ -n "$host" ]; then
        # shellcheck disable=SC2086
        $ssh_cmd "$host" "$1" <"$file"
    else
        bash -c "$1" <"$file"
    fi
}
qa() { printf '%q ' "$@"; } # quote arguments for a command line

# INFO FILTER on the replica, one line of JSON (or the error).
replica_info() {
    case $qkind in
    line) on "$lib; q line $(qa "$qaddr" "INFO $filter")" ;;
    http) on "$lib; q http $(qa "$qaddr" GET "/v1/filters/$filter")" ;;
    esac
}

# Send the reload; non-zero with its answer when it says it failed.
replica_reload() {
    local out
    case $reload in
    hup:*) out=$(on "p=\$(cat $(qa "${reload#hup:}")) && kill -HUP \"\$p\"" 2>&1) ;;
    systemctl) out=$(on "systemctl reload bloomgated" 2>&1) ;;
    systemctl:*) out=$(on "systemctl reload $(qa "${reload#systemctl:}")" 2>&1) ;;
    line:*)
        out=$(on "$lib; q line $(qa "${reload#line:}" RELOAD)" 2>&1)
        case $out in OK*) ;; *) printf '%s' "$out"; return 1 ;; esac ;;
    http:*)
        out=$(on "$lib; q http $(qa "${reload#http:}" POST /v1/reload)" 2>&1)
        case $out in *'"ok":true'*) ;; *) printf '%s' "$out"; return 1 ;; esac ;;
    *) printf 'unknown reload method %s' "$reload"; return 1 ;;
    esac
    local rc=$?
    printf '%s' "$out"
    return $rc
}

n=0 total=$#
for spec in "$@"; do
    n=$((n + 1))
    host="" path="" reload=systemctl qkind="" qaddr=""
    IFS=, read -r -a fields <<<"$spec"
    for f in "${fields[@]}"; do
        case $f in
        host=*) host=${f#host=} ;;
        path=*) path=${f#path=} ;;
        reload=*) reload=${f#reload=} ;;
        line=*) qkind=line qaddr=${f#line=} ;;
        http=*) qkind=http qaddr=${f#http=} ;;
        *) die "replica $n: unknown field '$f' in '$spec'" ;;
        esac
    done
    [ -n "$path" ] || die "replica $n: no path= in '$spec'"
    if [ -z "$qkind" ]; then
        case $reload in
        line:* | http:*) qkind=${reload%%:*} qaddr=${reload#*:} ;;
        *) die "replica $n: say where to ask INFO (line=ADDR or http=ADDR) in '$spec'" ;;
        esac
    fi
    [ "${BLOOMGATE_TOKEN:+x}" = x ] && [ "${reload%%:*}" = line ] &&
        die "replica $n: a RELOAD with a token needs AUTH first: use reload=http: with BLOOMGATE_TOKEN"
    who="replica $n/$total (${host:-local} $path)"
    fail() { # step, why: the report, then stop
        printf 'ship: FAILED at %s, step %s: %s\n' "$who" "$1" "$2" >&2
        [ "$n" -lt "$total" ] && printf 'ship: replicas %d to %d were not touched\n' $((n + 1)) "$total" >&2
        exit 1
    }

    # 1. what it serves now
    cur=$(replica_info 2>&1) || fail "1 (ask)" "INFO $filter: ${cur:-no answer}"
    [ "$(field "$cur" ready)" = true ] || fail "1 (ask)" "filter $filter is not ready: $cur"
    cur_keys=$(field "$cur" keys) cur_sum=$(field "$cur" checksum) cur_gen=$(field "$cur" generation)
    cur_rel="$(field "$cur" last_reload_at) $(field "$cur" last_reload_status)"
    [ "$cur_keys" = "$want_keys" ] ||
        fail "1 (ask)" "it serves $filter with $cur_keys keys, the file holds $want_keys keys"
    if [ "$cur_sum" = "$want_sum" ]; then
        say "$who: already serves $want_sum (generation $cur_gen); left alone"
        continue
    fi

    # 2. copy beside the live file
    dir=$(dirname "$path") base=$(basename "$path")
    tmp="$dir/.$base.ship.$$"
    out=$(on_in "umask 022 && cat >$(qa "$tmp")" 2>&1) || {
        on "rm -f $(qa "$tmp")" >/dev/null 2>&1
        fail "2 (copy)" "to $tmp: $out"
    }

    # 3. verify the copy where it lies
    out=$(on "$(qa "$bg_remote") verify $(qa "$tmp") && $(qa "$bg_remote") info $(qa "$tmp")" 2>&1)
    got_sum=$(field "$out" checksum)
    if [ -z "$got_sum" ] || [ "$got_sum" != "$want_sum" ]; then
        on "rm -f $(qa "$tmp")" >/dev/null 2>&1
        fail "3 (verify)" "$tmp: $(printf '%s' "$out" | head -c 600) (the copy is removed; the replica is unchanged)"
    fi

    # 4. keep the live file, rename the copy into place
    prev="$path.ship-prev"
    out=$(on "if [ -e $(qa "$path") ]; then ln -f $(qa "$path" "$prev"); fi && mv -f $(qa "$tmp" "$path")" 2>&1) || {
        on "rm -f $(qa "$tmp")" >/dev/null 2>&1
        fail "4 (rename)" "$out"
    }
    # Undo step 4 and reload: the replica goes back to the file it served.
    rollback() {
        local r
        r=$(on "if [ -e $(qa "$prev") ]; then mv -f $(qa "$prev" "$path"); fi" 2>&1) || {
            printf 'ship: rollback: restoring %s: %s\n' "$path" "$r" >&2
            return
        }
        r=$(replica_reload 2>&1) || printf 'ship: rollback: reload: %s\n' "$r" >&2
        printf 'ship: rolled back: %s is the previous file again\n' "$path" >&2
    }

    # 5. reload
    out=$(replica_reload 2>&1) || {
        rollback
        fail "5 (reload)" "$out"
    }

    # 6. confirm: the new checksum, a new generation
    deadline=$((SECONDS + timeout))
    while :; do
        now=$(replica_info 2>&1) || now=
        sum=$(field "$now" checksum) gen=$(field "$now" generation)
        if [ "$sum" = "$want_sum" ] && [ "${gen:-0}" -gt "${cur_gen:-0}" ]; then
            break
        fi
        # A SIGHUP returns at once: a reload that failed shows in INFO.
        rel="$(field "$now" last_reload_at) $(field "$now" last_reload_status)"
        if [ "${rel##* }" = failed ] && [ "$rel" != "$cur_rel" ]; then
            rollback
            fail "6 (confirm)" "the reload failed: $(field "$now" last_reload_error)"
        fi
        if [ $SECONDS -ge "$deadline" ]; then
            rollback
            fail "6 (confirm)" "after ${timeout}s it still serves checksum ${sum:-?} generation ${gen:-?}; last reload: $(field "$now" last_reload_status) $(field "$now" last_reload_error)"
        fi
        sleep 0.2
    done
    on "rm -f $(qa "$prev")" >/dev/null 2>&1
    say "$who: serves $want_sum, generation $cur_gen -> $gen, loaded at $(field "$now" loaded_at)"
done
say "done: $total replicas serve $want_sum"
