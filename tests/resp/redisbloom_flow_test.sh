#!/usr/bin/env bash
# RedisBloom's own Bloom flow tests (tests/resp/redisbloom_flow_test.py, a
# port of its tests/flow/test_overall.py) against a real bloomgated, with
# Debian's python3-redis under /usr/bin/python3. Each test prints PASS,
# PARTIAL (lines for a documented difference not run), SKIP (a documented
# difference, docs/resp.md) or FAIL. Skipped (77) without python3-redis.
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import redis' 2>/dev/null || { echo "python3-redis not installed: skipped"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
export BLOOMGATED="${BLOOMGATED:-$PWD/bloomgated}"
exec timeout 600 "$PY" "${srcdir:-.}/tests/resp/redisbloom_flow_test.py"
