#!/usr/bin/env bash
# Configure and build bloomgate out of tree.
#   scripts/build.sh [BUILD_DIR] [configure options...]
# BUILD_DIR defaults to _build. Re-running reuses an existing configuration
# when the options are the same.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-_build}
shift || true
cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
    autoreconf -fi >/dev/null
fi
mkdir -p "$dir"
cd "$dir"
want="$*"
if [ ! -f Makefile ] || [ "$(cat .configure-opts 2>/dev/null)" != "$want" ]; then
    "$top/configure" -q "$@"
    echo "$want" >.configure-opts
fi
make -s -j"$(nproc)"
