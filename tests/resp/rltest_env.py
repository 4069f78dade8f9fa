"""rltest_env: the part of RLTest (RedisBloom's test framework) that
RedisBloom's tests/flow use, over a real bloomgated (bgdaemon.py), so that
tests/resp/redisbloom_flow_test.py keeps their code as written.

Env.cmd sends a command (redis-py splits "bf.add key" at spaces, as RLTest
does); assertions record a failure and go on, as RLTest's do; dumpAndReload
restarts the daemon on its state_dir (RedisBloom saves and reloads an RDB);
FLUSHALL and FLUSHDB, which bloomgate does not serve, drop every key with DEL.
A test skipped for a difference is decorated @skip_for("key") (differences.py);
a line not run is under `if differs("key"):` and counted as a partial run.
"""
import inspect
import sys
import traceback

from redis import ResponseError  # noqa: F401 (the tests import it from here)

import bgdaemon
from differences import DIFF

VALGRIND = False
_daemon = None
_current = {"test": None}
_partial = {}


class SkipTest(Exception):
    pass


def skip_for(key):
    def mark(fn):
        fn.skip_reason = key
        return fn
    return mark


def differs(key):
    """True: the lines under it are not run, for the difference key."""
    _partial.setdefault(_current["test"], set()).add(key)
    return True


def server_version_at_least(env, ver):
    return True


def server_version_less_than(env, ver):
    return False


class _Expect:
    def __init__(self, env, args):
        self.env, self.err, self.res = env, None, None
        try:
            self.res = env.cmd(*args)
        except ResponseError as e:
            self.err = e

    def error(self):
        self.env._check(self.err is not None, "expected an error, got %r" % (self.res,))
        return self

    def contains(self, s):
        got = str(self.err) if self.err is not None else str(self.res)
        self.env._check(s in got, "%r does not contain %r" % (got, s))
        return self

    def equal(self, v):
        self.env._check(self.err is None and self.res == v, "got %r / %r, want %r" %
                        (self.res, self.err, v))
        return self

    def true(self):
        self.env._check(self.err is None and bool(self.res), "got %r / %r" % (self.res, self.err))
        return self

    def ok(self):
        return self.equal("OK" if self.env.decode else b"OK")


class _RaisesResponseError:
    def __init__(self, env):
        self.env = env

    def __enter__(self):
        return self

    def __exit__(self, typ, val, tb):
        if typ is None:
            self.env._check(False, "expected a ResponseError, none raised")
            return False
        return issubclass(typ, ResponseError)


class Env:
    def __init__(self, decodeResponses=False, **_):
        self.decode = decodeResponses
        self.failures = []
        self._connect()

    def _connect(self):
        self.con = _daemon.client(decode_responses=self.decode)

    def _check(self, cond, what):
        if not cond:
            frame = inspect.stack()[2]
            self.failures.append("%s:%d: %s" % (_current["test"], frame.lineno, what))

    def cmd(self, *args):
        if isinstance(args[0], str) and args[0].upper() in ("FLUSHALL", "FLUSHDB"):
            bgdaemon.drop_all(self.con)
            return "OK" if self.decode else b"OK"
        return self.con.execute_command(*args)

    execute_command = cmd

    def expect(self, *args):
        return _Expect(self, args)

    def assertOk(self, v):
        self._check(v in ("OK", b"OK", True), "%r is not OK" % (v,))

    def assertEqual(self, a, b):
        self._check(a == b, "%r != %r" % (a, b))

    def assertTrue(self, v):
        self._check(bool(v), "%r is not true" % (v,))

    def assertLess(self, a, b):
        self._check(a < b, "%r is not < %r" % (a, b))

    def assertLessEqual(self, a, b):
        self._check(a <= b, "%r is not <= %r" % (a, b))

    def assertGreaterEqual(self, a, b):
        self._check(a >= b, "%r is not >= %r" % (a, b))

    def assertRaises(self, exc, fn, *args):
        try:
            fn(*args)
        except exc:
            return
        self._check(False, "%s not raised by %r" % (exc.__name__, args))

    def assertResponseError(self):
        return _RaisesResponseError(self)

    def dumpAndReload(self):
        self.con.close()
        _daemon.restart()
        self._connect()

    def skip(self):
        raise SkipTest()

    def skipOnVersionSmaller(self, _):
        pass

    def debugPrint(self, *_):
        pass


def run(classes):
    """Run every test_* method of each class in the order written; print one
    line a test (PASS, PARTIAL, SKIP, FAIL) and exit 1 if one failed."""
    global _daemon
    _daemon = bgdaemon.Daemon(
        # test_issue178 makes a 1.5 GB filter (never touched: no memory used),
        # past the default budget (a quarter of memory) on a small machine.
        "max_filters 200\nmax_created_memory 4g").start()
    failed = skipped = partial = passed = 0
    try:
        for cls in classes:
            obj = cls()
            names = [n for n, _ in inspect.getmembers(cls, inspect.isfunction)
                     if n.startswith("test")]
            names.sort(key=lambda n: getattr(cls, n).__code__.co_firstlineno)
            for name in names:
                fn = getattr(obj, name)
                _current["test"] = name
                if getattr(fn, "skip_reason", None):
                    print("SKIP %s.%s: %s" % (cls.__name__, name, DIFF[fn.skip_reason]))
                    skipped += 1
                    continue
                obj.env.failures = []
                err = None
                try:
                    res = fn()
                    if inspect.isgenerator(res):
                        for _ in res:
                            pass
                except SkipTest:
                    print("SKIP %s.%s: skipped upstream too" % (cls.__name__, name))
                    skipped += 1
                    continue
                except Exception:
                    err = traceback.format_exc(limit=3)
                if err or obj.env.failures:
                    failed += 1
                    print("FAIL %s.%s" % (cls.__name__, name))
                    for f in obj.env.failures:
                        print("    " + f)
                    if err:
                        print("    " + err.replace("\n", "\n    "))
                elif name in _partial:
                    partial += 1
                    print("PARTIAL %s.%s: lines not run: %s" % (
                        cls.__name__, name, "; ".join(DIFF[k] for k in sorted(_partial[name]))))
                else:
                    passed += 1
                    print("PASS %s.%s" % (cls.__name__, name))
    finally:
        if failed:
            print("--- daemon log (end)\n" + _daemon.log_tail())
        _daemon.stop()
    print("%d passed, %d partial, %d skipped, %d failed" % (passed, partial, skipped, failed))
    sys.exit(1 if failed else 0)
