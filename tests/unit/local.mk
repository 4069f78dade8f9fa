# tests/unit/: one Check suite per module, over code without sockets or a
# daemon (docs/testing.md). Folders mirror src/: the test of src/LAYER/NAME.c
# is %reldir%/LAYER/check_NAME.c. A test of the daemon's archive is one line
# (it links LDADD, Makefile.am):
#   check_PROGRAMS += %reldir%/core/check_foo
# A test of a pure archive links that archive alone, one line more:
#   %canon_reldir%_bloom_check_foo_LDADD = $(BLOOM_TEST_LIBS)
BLOOM_TEST_LIBS = libbloom.la $(CHECK_LIBS) -lm
URL_TEST_LIBS = liburl.la $(CHECK_LIBS)
PARSE_TEST_LIBS = libparse.la $(CHECK_LIBS)
SQUID_TEST_LIBS = libsquid.la $(CHECK_LIBS)
ADBLOCK_TEST_LIBS = libadblock.la $(CHECK_LIBS)
WORDS_TEST_LIBS = libwords.la $(CHECK_LIBS)

# base/
check_PROGRAMS += %reldir%/base/check_log
check_PROGRAMS += %reldir%/base/check_util

# bloom/: the filter library alone.
check_PROGRAMS += %reldir%/bloom/check_sizing
%canon_reldir%_bloom_check_sizing_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/bloom/check_filter
%canon_reldir%_bloom_check_filter_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/bloom/check_counting
%canon_reldir%_bloom_check_counting_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/bloom/check_fuse
%canon_reldir%_bloom_check_fuse_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/bloom/check_ring
%canon_reldir%_bloom_check_ring_LDADD = $(BLOOM_TEST_LIBS)
# It moves time: the clock with a seam, in place of src/base/clock.c (link-time
# substitution; what ships has none).
%canon_reldir%_bloom_check_ring_SOURCES = %reldir%/bloom/check_ring.c $(TEST_CLOCK)
check_PROGRAMS += %reldir%/bloom/check_grow
%canon_reldir%_bloom_check_grow_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/bloom/check_grow_file
%canon_reldir%_bloom_check_grow_file_LDADD = $(BLOOM_TEST_LIBS)
check_PROGRAMS += %reldir%/bloom/check_format
%canon_reldir%_bloom_check_format_LDADD = $(BLOOM_TEST_LIBS)

# url/: URL matching alone.
check_PROGRAMS += %reldir%/url/check_canon
%canon_reldir%_url_check_canon_LDADD = $(URL_TEST_LIBS)
check_PROGRAMS += %reldir%/url/check_expr
%canon_reldir%_url_check_expr_LDADD = $(URL_TEST_LIBS)
check_PROGRAMS += %reldir%/url/check_keys
%canon_reldir%_url_check_keys_LDADD = $(URL_TEST_LIBS)
check_PROGRAMS += %reldir%/url/check_lists
%canon_reldir%_url_check_lists_LDADD = $(URL_TEST_LIBS)

# adblock/: the engine's archive alone.
check_PROGRAMS += %reldir%/adblock/check_rule
%canon_reldir%_adblock_check_rule_LDADD = $(ADBLOCK_TEST_LIBS)
check_PROGRAMS += %reldir%/adblock/check_match
%canon_reldir%_adblock_check_match_LDADD = $(ADBLOCK_TEST_LIBS)

# words/: the word-list archive alone.
check_PROGRAMS += %reldir%/words/check_words
%canon_reldir%_words_check_words_LDADD = $(WORDS_TEST_LIBS)
# The automaton against a naive matcher on random lists and texts.
check_PROGRAMS += %reldir%/words/check_naive
%canon_reldir%_words_check_naive_LDADD = $(WORDS_TEST_LIBS)
check_PROGRAMS += %reldir%/words/check_delta
%canon_reldir%_words_check_delta_LDADD = $(WORDS_TEST_LIBS)
# exact/: the exact table's archive, with the base helpers it stands on.
EXACT_TEST_LIBS = libexact.la libbase.la $(CHECK_LIBS)
check_PROGRAMS += %reldir%/exact/check_table
%canon_reldir%_exact_check_table_LDADD = $(EXACT_TEST_LIBS)
check_PROGRAMS += %reldir%/exact/check_delta
%canon_reldir%_exact_check_delta_LDADD = $(EXACT_TEST_LIBS)

# conf/: the directive table and its parser (src/conf/).
check_PROGRAMS += %reldir%/conf/check_conf
check_PROGRAMS += %reldir%/conf/check_conf_fronts

# store/
check_PROGRAMS += %reldir%/store/check_journal
check_PROGRAMS += %reldir%/store/check_journal_compact
%canon_reldir%_store_check_journal_compact_SOURCES = %reldir%/store/check_journal_compact.c $(SEAMS)
check_PROGRAMS += %reldir%/store/check_allow
check_PROGRAMS += %reldir%/store/check_reload
%canon_reldir%_store_check_reload_SOURCES = %reldir%/store/check_reload.c $(SEAMS)
check_PROGRAMS += %reldir%/store/check_loader
%canon_reldir%_store_check_loader_SOURCES = %reldir%/store/check_loader.c $(SEAMS)
check_PROGRAMS += %reldir%/store/check_registry
check_PROGRAMS += %reldir%/store/check_amend

# core/
check_PROGRAMS += %reldir%/core/check_stats
check_PROGRAMS += %reldir%/core/check_cmd
%canon_reldir%_core_check_cmd_LDADD = $(RIG_LIBS)
check_PROGRAMS += %reldir%/core/check_gate
%canon_reldir%_core_check_gate_LDADD = $(RIG_LIBS)

# front/: the fronts' verb tables against the command table, and the
# filter-name rule everywhere it is applied.
check_PROGRAMS += %reldir%/front/check_verbs
# Every status the HTTP front sends has its reason phrase; its refusal's read
# of what the client sent is bounded (recv replaced at link time).
check_PROGRAMS += %reldir%/front/check_http_resp
check_PROGRAMS += %reldir%/front/check_http_refuse

# net/: the connection layer with every front on it, in process.
check_PROGRAMS += %reldir%/net/check_conn
%canon_reldir%_net_check_conn_SOURCES = %reldir%/net/check_conn.c $(SEAMS)
# Start-up fails, saying why, when libevent cannot be made thread-safe
# (evthread_use_pthreads replaced at link time by one that fails).
check_PROGRAMS += %reldir%/net/check_evthread

# front/: the parsers alone.
check_PROGRAMS += %reldir%/front/check_proto
%canon_reldir%_front_check_proto_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/front/check_httpparse
%canon_reldir%_front_check_httpparse_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/front/check_respparse
%canon_reldir%_front_check_respparse_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/front/check_authz
%canon_reldir%_front_check_authz_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/front/check_tcptable
%canon_reldir%_front_check_tcptable_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/front/check_dns
%canon_reldir%_front_check_dns_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/front/check_policy
%canon_reldir%_front_check_policy_LDADD = $(PARSE_TEST_LIBS)
check_PROGRAMS += %reldir%/front/check_bloomd_proto
%canon_reldir%_front_check_bloomd_proto_LDADD = $(PARSE_TEST_LIBS)

# tool/
check_PROGRAMS += %reldir%/tool/check_build
check_PROGRAMS += %reldir%/tool/check_build_fuse
check_PROGRAMS += %reldir%/tool/check_build_exact
check_PROGRAMS += %reldir%/tool/check_build_adblock
%canon_reldir%_tool_check_build_fuse_SOURCES = %reldir%/tool/check_build_fuse.c $(SEAMS)

# squid/: the helper's archive, and the adblock archive the test alone links to
# check that every context word the helper sends is one the daemon reads.
check_PROGRAMS += %reldir%/squid/check_squidproto
%canon_reldir%_squid_check_squidproto_LDADD = libsquid.la libadblock.la $(CHECK_LIBS)
