#!/usr/bin/env bash
# Keys created at run time through redis-py (r.bf(), MULTI/EXEC and plain
# pipelines) and redis-cli (one-shot, interactive, --pipe) against a real
# bloomgated: tests/resp/clients_test.py. Skipped (77) without python3-redis;
# the redis-cli part is skipped (and says so) without redis-tools.
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import redis' 2>/dev/null || { echo "python3-redis not installed: skipped"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
export BLOOMGATED="${BLOOMGATED:-$PWD/bloomgated}"
exec timeout 600 "$PY" "${srcdir:-.}/tests/resp/clients_test.py"
