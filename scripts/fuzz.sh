#!/usr/bin/env bash
# Build the libFuzzer harnesses (make fuzz) and run each in turn, one at a time.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]
# SECONDS per harness (default 60); HARNESS names (default: every one `make
# fuzz-list` prints). Run from a configured build directory, or from anywhere
# to use _build in the source tree (configured with scripts/build.sh if it is
# not yet). Each harness starts from its seed corpus tests/fuzz/corpus/NAME
# with tests/fuzz/NAME.dict and the flags in tests/fuzz/NAME.options; what it
# finds that is new goes to $FUZZ_WORKDIR/corpus/NAME (default
# ${TMPDIR:-/tmp}/bloomgate-fuzz, kept between runs so long runs build on each
# other), never into the tree. A crash, leak, timeout or broken invariant stops
# the run with exit status 1 and the path of the input that caused it.
# FUZZ_FLAGS adds libFuzzer flags to every run (e.g. FUZZ_FLAGS=-jobs=2).
# FUZZ_SEED fixes libFuzzer's random seed, so a run follows the same path every
# time and differs only in where the clock stops it (CI sets it: a CI run that
# fails fails again; the search for new inputs is the long runs' job).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-60}
shift || true
case $secs in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [HARNESS...]" >&2; exit 2 ;; esac

# clang and its libFuzzer runtime, which scripts/deps.sh (the build's own
# dependencies) leaves out; from Debian's archive, as deps.sh does.
cc=${FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null ||
    ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
    "$cc" -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
    echo "fuzz.sh: installing clang and libclang-rt-14-dev" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi

if [ -f Makefile ] && grep -q '^fuzz-list:' Makefile; then
    build=$(pwd)
else
    build=$top/_build
    [ -f "$build/Makefile" ] || "$top/scripts/build.sh" _build --enable-werror
fi
# One compiler job per core of a small machine; never more than two.
make -s -C "$build" fuzz -j"${FUZZ_MAKE_JOBS:-2}" FUZZ_CC="$cc"
if [ $# -gt 0 ]; then
    harnesses=("$@")
else
    mapfile -t harnesses < <(make -s -C "$build" fuzz-list)
fi

work=${FUZZ_WORKDIR:-${TMPDIR:-/tmp}/bloomgate-fuzz}
mkdir -p "$work/corpus" "$work/crashes" "$work/logs"
start=$(date +%s)
printf '%-20s %10s %8s %6s %7s %s\n' harness runs exec/s cov corpus result
for h in "${harnesses[@]}"; do
    bin=$build/tests/fuzz/bin/$h
    [ -x "$bin" ] || { echo "fuzz.sh: no harness $h (is it in FUZZ_HARNESSES?)" >&2; exit 2; }
    seeds=$top/tests/fuzz/corpus/$h
    corpus=$work/corpus/$h
    mkdir -p "$corpus"
    args=(-max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix="$work/crashes/$h-")
    [ -f "$top/tests/fuzz/$h.dict" ] && args+=(-dict="$top/tests/fuzz/$h.dict")
    if [ -f "$top/tests/fuzz/$h.options" ]; then
        read -r -a extra <"$top/tests/fuzz/$h.options"
        args+=("${extra[@]}")
    fi
    [ -n "${FUZZ_SEED:-}" ] && args+=(-seed="$FUZZ_SEED")
    # shellcheck disable=SC2206
    args+=(${FUZZ_FLAGS:-})
    dirs=("$corpus")
    [ -d "$seeds" ] && dirs+=("$seeds")
    log=$work/logs/$h.log
    rc=0
    # The corpus written to comes first; the seeds in the tree are only read.
    "$bin" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    ncorp=$(find "$corpus" -type f | wc -l)
    if [ "$rc" -ne 0 ]; then
        printf '%-20s %10s %8s %6s %7s %s\n' "$h" "${runs:-?}" "${speed:-?}" "${cov:-?}" "$ncorp" FAILED
        grep -E 'ERROR|invariant failed|SUMMARY|runtime error' "$log" | head -5 >&2 || true
        artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        echo "fuzz.sh: $h failed (exit $rc); log: $log" >&2
        if [ -n "$artifact" ]; then
            echo "fuzz.sh: crashing input: $artifact" >&2
            echo "fuzz.sh: reproduce with: $bin $artifact" >&2
            # The input itself, for a log read where the file is gone (CI).
            echo "fuzz.sh: the input ($(wc -c <"$artifact") bytes, first 4 KiB):" >&2
            head -c 4096 "$artifact" | od -An -tx1 -v >&2 || true
        fi
        exit 1
    fi
    printf '%-20s %10s %8s %6s %7s %s\n' "$h" "${runs:-?}" "${speed:-?}" "${cov:-?}" "$ncorp" ok
done
echo "fuzz.sh: ${#harnesses[@]} harnesses, ${secs}s each, $(($(date +%s) - start))s in all; new corpus in $work/corpus"
