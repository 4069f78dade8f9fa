# tests/lib/: what the tests share.
noinst_HEADERS += %reldir%/testutil.h

# The integration tests' one harness (the daemon launcher, its line client,
# the HTTP client), compiled once; an integration test links IT_LIBS.
check_LTLIBRARIES += %reldir%/libharness.la
%canon_reldir%_libharness_la_SOURCES = $(IT_LIB)
IT_LIBS = %reldir%/libharness.la libbloomgate.la $(CHECK_LIBS) -lm
# Its sources (a test with _CFLAGS of its own may still list them).
IT_LIB = \
	%reldir%/daemon_harness.c %reldir%/daemon_harness.h \
	%reldir%/line_client.c %reldir%/line_client.h \
	%reldir%/http_client.c %reldir%/http_client.h

# Filters served in process, for the unit tests of core/ and store/ (rig.h):
# such a test links RIG_LIBS.
check_LTLIBRARIES += %reldir%/librig.la
%canon_reldir%_librig_la_SOURCES = %reldir%/rig.c %reldir%/rig.h
RIG_LIBS = %reldir%/librig.la $(LDADD)

# The seams, out of what ships: src/base/seam.c's empty functions are the
# daemon's; a test that acts at a seam lists $(SEAMS) in its sources, whose
# functions read the switches (link-time substitution). One that moves time
# lists $(TEST_CLOCK) (clock_now_ms with a seam, in place of base/clock.c),
# and the integration tests of windowed filters start bloomgated_clock, the
# daemon built so.
SEAMS = %reldir%/seams.c %reldir%/seams.h
TEST_CLOCK = %reldir%/test_clock.c %reldir%/test_clock.h
noinst_PROGRAMS += %reldir%/bloomgated_clock
%canon_reldir%_bloomgated_clock_SOURCES = src/daemon/bloomgated.c $(TEST_CLOCK)
%canon_reldir%_bloomgated_clock_LDADD = libbloomgate.la

# Writes journals for tests/it/tool_test.sh (a shell cannot compute XXH3). Built
# with the programs, like the benchmarks, so it exists before the tests run.
noinst_PROGRAMS += %reldir%/make_journal
%canon_reldir%_make_journal_LDADD = libbloomgate.la

# Every test's environment: where the programs are, and Check's settings. A
# test case without a timeout of its own gets 120 s, not Check's 4 s: no test
# asserts a timing, and a loaded machine (CI beside other jobs, sanitizers)
# must not fail one.
AM_TESTS_ENVIRONMENT = \
	BLOOMGATE='$(abs_top_builddir)/bloomgate'; export BLOOMGATE; \
	BLOOMGATED='$(abs_top_builddir)/bloomgated'; export BLOOMGATED; \
	BLOOMGATE_SQUID='$(abs_top_builddir)/bloomgate-squid'; export BLOOMGATE_SQUID; \
	MAKE_JOURNAL='$(abs_top_builddir)/%reldir%/make_journal'; export MAKE_JOURNAL; \
	srcdir='$(abs_top_srcdir)'; export srcdir; \
	CK_VERBOSITY=normal; export CK_VERBOSITY; \
	CK_DEFAULT_TIMEOUT=$${CK_DEFAULT_TIMEOUT:-120}; export CK_DEFAULT_TIMEOUT;
