# shellcheck shell=bash
# Helpers shared by the benchmark scripts in tests/bench/ (sourced, not run):
#   . "$(dirname "$0")/lib.sh"
# Nothing here starts a process or prints on its own; each function is what
# several scripts used to carry a copy of.

# Clock ticks per second, the unit of /proc/PID/stat's utime and stime.
clk=$(getconf CLK_TCK)

# cpu_ticks PID[,PID...]: utime + stime of every thread of these processes so
# far, in clock ticks, summed. The fields are counted after the last ')', so
# a command name holding spaces or parentheses cannot shift them.
cpu_ticks() {
    local p t=0
    for p in ${1//,/ }; do
        t=$((t + $(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$p/stat")))
    done
    echo "$t"
}

# ns_per_item TICKS ITEMS: CPU time in ticks spread over ITEMS, in whole
# nanoseconds per item.
ns_per_item() {
    awk -v t="$1" -v hz="$clk" -v n="$2" 'BEGIN { printf "%.0f", t / hz * 1e9 / n }'
}

# median: the median of the numbers on stdin, one a line (the lower middle
# of an even count).
median() {
    sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

# rss_kb PID: the resident set, in KiB (VmRSS); hwm_kb PID: its peak so far
# (VmHWM).
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"; }

# free_port: a TCP port of 127.0.0.1 nothing uses now, from 20000-32767
# (below Linux's ephemeral range, so no client connection takes it later).
# The ports handed out are remembered in $tmp/.free_ports when the caller's
# $tmp is a directory, so that two calls made before any server binds never
# give the same one (a $(free_port) runs in a subshell: a variable would not
# keep them).
free_port() {
    local p seen=""
    [ -d "${tmp:-}" ] && seen="$tmp/.free_ports"
    while :; do
        p=$((20000 + RANDOM % 12768))
        [ -n "$seen" ] && grep -qx "$p" "$seen" 2>/dev/null && continue
        [ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ] || continue
        [ -n "$seen" ] && echo "$p" >>"$seen"
        echo "$p"
        return
    done
}

# wait_port PORT [PID] [SECONDS]: until something accepts on 127.0.0.1:PORT
# (default 30 s); fails at once if PID is given and has exited, or at the
# deadline.
wait_port() {
    local _ n=$((${3:-30} * 10))
    for _ in $(seq "$n"); do
        [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && return 1
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# measure_row ROWS CASE SIDE ROUND PID CMD...: runs CMD (a bench_net run,
# given --label CASE-SIDE) against the server PID and prints one row: case,
# side, round, items/s and the server's CPU ns per item over exactly that run;
# the row is appended to ROWS too. A failed request ends the script.
measure_row() {
    local rows=$1 c=$2 side=$3 r=$4 p=$5 t0 t1 line items ips errs ns
    shift 5
    t0=$(cpu_ticks "$p")
    line=$("$@" --label "$c-$side")
    t1=$(cpu_ticks "$p")
    items=$(jq -r .items <<<"$line")
    ips=$(jq -r .items_per_s <<<"$line")
    errs=$(jq -r .errors <<<"$line")
    [ "$errs" = 0 ] || { echo "${0##*/}: $c on $side: $errs errors" >&2; exit 1; }
    ns=$(ns_per_item $((t1 - t0)) "$items")
    printf '%-4s %-2s %5s %12s %14s\n' "$c" "$side" "$r" "$ips" "$ns" | tee -a "$rows"
}

# print_medians ROWS "CASES" "SIDES": each case and side's median items/s and
# server CPU per item over the rows measure_row wrote.
print_medians() {
    local c side m n
    for c in $2; do
        for side in $3; do
            m=$(awk -v c="$c" -v s="$side" '$1==c && $2==s {print $4}' "$1" | median)
            n=$(awk -v c="$c" -v s="$side" '$1==c && $2==s {print $5}' "$1" | median)
            printf '  %-4s %-2s %12s items/s %8s ns server CPU per item\n' "$c" "$side" "$m" "$n"
        done
    done
}
