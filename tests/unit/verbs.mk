# The verb tables (issue 27): headers the daemon library reads, and the tests
# of the tables and of the filter-name rule. Included from Makefile.am.
libbloomgate_la_SOURCES += src/front/line/proto_verbs.h
libbloomgate_la_SOURCES += src/core/cmd_exact.h
libbloomgate_la_SOURCES += src/base/fname.h

check_PROGRAMS += tests/unit/check_verbs
tests_unit_check_verbs_SOURCES = tests/unit/check_verbs.c
tests_unit_check_verbs_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_verbs_LDADD = $(TEST_LIBS)

EXTRA_DIST += tests/bench/cg_lockstep.sh
