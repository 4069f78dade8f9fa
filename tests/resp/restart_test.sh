#!/usr/bin/env bash
# Keys created through RESP across restarts of a real bloomgated, their
# files in state_dir (tests/resp/restart_test.py). Skipped (77) without
# python3-redis.
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import redis' 2>/dev/null || { echo "python3-redis not installed: skipped"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
export BLOOMGATED="${BLOOMGATED:-$PWD/bloomgated}"
exec timeout 600 "$PY" "${srcdir:-.}/tests/resp/restart_test.py"
