# The verb tables (issue 27): headers the daemon library reads, and the tests
# of the tables and of the filter-name rule. Included from Makefile.am.
libbloomgate_la_SOURCES += src/front/line/proto_verbs.h
libbloomgate_la_SOURCES += src/core/cmd_exact.h
