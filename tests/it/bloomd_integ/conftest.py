# Runs bloomd's own integration tests (test_integ.py, armon/bloomd's
# integ/test_integ.py as it is, BSD licence in LICENSE beside it) under
# Python 3 and a current pytest, against bloomgated's bloomd front, without
# changing a line of them. They were written for Python 2 and pytest 2:
# tests/it/bloomd_integ_test.sh rewrites the two Python 2 statements Python 3
# cannot parse (`except E, e:`, `print e`) in a copy; this file supplies the
# rest: xrange, the `servers` funcarg as a fixture (pytest 4 dropped the
# pytest_funcarg__ prefix), and sockets that take the str the tests send
# (Python 2's sendall took bytes as str). The tests start `./bloomd -f
# CONFIG` in the current directory: the runner puts its shim there, which
# starts bloomgated with bloomd_listen on the config's port.
import builtins

import pytest

builtins.xrange = range


class Py2Socket(object):
    """A socket whose sendall takes str, as Python 2's did."""

    def __init__(self, sock):
        self._sock = sock

    def sendall(self, data):
        if isinstance(data, str):
            data = data.encode("latin-1")
        return self._sock.sendall(data)

    def makefile(self, mode="r", *args, **kwargs):
        return self._sock.makefile(mode, encoding="latin-1", newline="\n")

    def __getattr__(self, name):
        return getattr(self._sock, name)


@pytest.fixture
def servers(request):
    conn, conn2 = request.module.pytest_funcarg__servers(request)
    return Py2Socket(conn), Py2Socket(conn2)
