# tests/unit/: one Check suite per module, over code without sockets or a
# daemon (docs/testing.md). A test of the daemon's archive is one line (it
# links LDADD, Makefile.am), its source %reldir%/check_foo.c:
#   check_PROGRAMS += %reldir%/check_foo
# A test of a pure archive links that archive alone, one line more:
#   %canon_reldir%_check_foo_LDADD = $(BLOOM_TEST_LIBS)
BLOOM_TEST_LIBS = libbloom.la $(CHECK_LIBS) -lm
URL_TEST_LIBS = liburl.la $(CHECK_LIBS)
SQUID_TEST_LIBS = libsquid.la $(CHECK_LIBS)
PARSE_TEST_LIBS = libparse.la $(CHECK_LIBS)

# base/
check_PROGRAMS += %reldir%/check_log
check_PROGRAMS += %reldir%/check_random

# bloom/: the filter library alone.
check_PROGRAMS += %reldir%/check_sizing
%canon_reldir%_check_sizing_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/check_filter
%canon_reldir%_check_filter_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/check_counting
%canon_reldir%_check_counting_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/check_fuse
%canon_reldir%_check_fuse_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/check_ring
%canon_reldir%_check_ring_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/check_grow
%canon_reldir%_check_grow_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/check_format
%canon_reldir%_check_format_LDADD = $(BLOOM_TEST_LIBS)

# url/: URL matching alone.
check_PROGRAMS += %reldir%/check_url_canon
%canon_reldir%_check_url_canon_LDADD = $(URL_TEST_LIBS)
check_PROGRAMS += %reldir%/check_url_expr
%canon_reldir%_check_url_expr_LDADD = $(URL_TEST_LIBS)
check_PROGRAMS += %reldir%/check_url_keys
%canon_reldir%_check_url_keys_LDADD = $(URL_TEST_LIBS)
check_PROGRAMS += %reldir%/check_url_lists
%canon_reldir%_check_url_lists_LDADD = $(URL_TEST_LIBS)

# store/ (the config included)
check_PROGRAMS += %reldir%/check_conf
check_PROGRAMS += %reldir%/check_conf_fronts
check_PROGRAMS += %reldir%/check_journal
check_PROGRAMS += %reldir%/check_compact
check_PROGRAMS += %reldir%/check_lists
check_PROGRAMS += %reldir%/check_rotation
check_PROGRAMS += %reldir%/check_loader

# core/
check_PROGRAMS += %reldir%/check_stats

# front/: the parsers alone.
check_PROGRAMS += %reldir%/check_proto
%canon_reldir%_check_proto_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/check_httpparse
%canon_reldir%_check_httpparse_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/check_respparse
%canon_reldir%_check_respparse_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/check_authz
%canon_reldir%_check_authz_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/check_tcptable
%canon_reldir%_check_tcptable_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/check_dns
%canon_reldir%_check_dns_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/check_policy
%canon_reldir%_check_policy_LDADD = $(PARSE_TEST_LIBS)

# tool/
check_PROGRAMS += %reldir%/check_build
check_PROGRAMS += %reldir%/check_build_fuse

# squid/: the helper's archive alone.
check_PROGRAMS += %reldir%/check_squidproto
%canon_reldir%_check_squidproto_LDADD = $(SQUID_TEST_LIBS)
