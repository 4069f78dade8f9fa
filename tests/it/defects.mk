# Test programs added by issue 27's defect fixes (included from Makefile.am).

# The HTTP front's status lines: every status sent has its reason phrase.
check_PROGRAMS += tests/unit/check_http_resp
tests_unit_check_http_resp_SOURCES = tests/unit/check_http_resp.c
tests_unit_check_http_resp_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_http_resp_LDADD = $(TEST_LIBS)

# Start-up fails, saying why, when libevent cannot be made thread-safe
# (evthread_use_pthreads replaced at link time by one that fails).
check_PROGRAMS += tests/unit/check_evthread
tests_unit_check_evthread_SOURCES = tests/unit/check_evthread.c
tests_unit_check_evthread_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_evthread_LDADD = $(TEST_LIBS)

# The HTTP refusal's read of what the client sent is bounded (recv replaced
# at link time by one that never runs dry).
check_PROGRAMS += tests/unit/check_http_refuse
tests_unit_check_http_refuse_SOURCES = tests/unit/check_http_refuse.c
tests_unit_check_http_refuse_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_http_refuse_LDADD = $(TEST_LIBS)

# The clock seam out of what ships: tests that move time link
# tests/lib/test_clock.c in place of src/base/clock.c (link-time
# substitution), and the integration tests of windowed filters start
# bloomgated_clock, the daemon built so.
tests_unit_check_ring_SOURCES += tests/lib/test_clock.c tests/lib/test_clock.h
noinst_PROGRAMS += tests/lib/bloomgated_clock
tests_lib_bloomgated_clock_SOURCES = src/daemon/bloomgated.c tests/lib/test_clock.c \
	tests/lib/test_clock.h
tests_lib_bloomgated_clock_LDADD = $(bloomgated_LDADD)

# The other seams out of what ships: src/base/seam.c's empty functions are the
# daemon's; the tests that act at a seam link tests/lib/seams.c instead.
libbase_la_SOURCES += src/base/seam.c src/base/seam.h
tests_unit_check_rotation_SOURCES += tests/lib/seams.c tests/lib/seams.h
tests_unit_check_compact_SOURCES += tests/lib/seams.c tests/lib/seams.h
tests_unit_check_loader_SOURCES += tests/lib/seams.c tests/lib/seams.h
tests_unit_check_build_fuse_SOURCES += tests/lib/seams.c tests/lib/seams.h
tests_it_check_http_SOURCES += tests/lib/seams.c tests/lib/seams.h
