#!/usr/bin/env bash
# redis-py's own Bloom tests (tests/resp/redispy_bloom_test.py, a port of
# its tests/test_bloom.py) against a real bloomgated, with Debian's
# python3-redis and python3-pytest under /usr/bin/python3. pytest prints
# each skip's reason (-rs) and the tests run in part (PARTIAL), each a
# documented difference (docs/resp.md). Skipped (77) without either module.
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import redis, pytest' 2>/dev/null ||
    { echo "python3-redis or python3-pytest not installed: skipped"; exit 77; }
export PYTHONDONTWRITEBYTECODE=1
export BLOOMGATED="${BLOOMGATED:-$PWD/bloomgated}"
cd "${srcdir:-.}/tests/resp" || exit 1
exec timeout 600 "$PY" -m pytest -q -s -rs -p no:cacheprovider \
    -W ignore::pytest.PytestUnknownMarkWarning redispy_bloom_test.py
