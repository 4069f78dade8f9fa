# tests/bench/: programs and scripts that print figures and assert nothing,
# run by hand (docs/benchmarks.md). The programs are built with the others so
# they never rot.
noinst_PROGRAMS += %reldir%/bench_filter
%canon_reldir%_bench_filter_LDADD = libbloomgate.la
noinst_PROGRAMS += %reldir%/bench_grow
%canon_reldir%_bench_grow_LDADD = libbloomgate.la
noinst_PROGRAMS += %reldir%/bench_allow
%canon_reldir%_bench_allow_LDADD = libbloomgate.la
noinst_PROGRAMS += %reldir%/bench_net %reldir%/null_server
%canon_reldir%_bench_net_LDADD = libbloomgate.la -lm
%canon_reldir%_null_server_LDADD = libbloomgate.la
# The Adblock engine with 10 million `||host^` rules: build, memory, lookups/s.
noinst_PROGRAMS += %reldir%/bench_adblock_hosts
%canon_reldir%_bench_adblock_hosts_CPPFLAGS = $(PURE_CPPFLAGS)
%canon_reldir%_bench_adblock_hosts_LDADD = libadblock.la
# Canonicalise + expand per second on one core (docs/url-matching.md).
noinst_PROGRAMS += %reldir%/bench_url
%canon_reldir%_bench_url_LDADD = libbloom.la liburl.la
# A word list's build and scan on one core (docs/benchmarks.md, "Word lists").
noinst_PROGRAMS += %reldir%/bench_words
%canon_reldir%_bench_words_LDADD = libwords.la
# A word list's run-time change: the list rebuilt against the delta beside it.
noinst_PROGRAMS += %reldir%/bench_words_delta
%canon_reldir%_bench_words_delta_LDADD = libwords.la
# The exact table against LMDB (docs/benchmarks.md, "Exact table"): LMDB is
# linked by this program alone (scripts/deps.sh installs liblmdb-dev), never
# by what ships, so it is built on request only (`make tests/bench/bench_exact`):
# a package build, which has no LMDB, never links it.
EXTRA_PROGRAMS = %reldir%/bench_exact
CLEANFILES += %reldir%/bench_exact
%canon_reldir%_bench_exact_LDADD = libexact.la libbase.la -llmdb

EXTRA_DIST += \
	%reldir%/words_peer.py \
	%reldir%/compare.sh \
	%reldir%/haproxy.sh \
	%reldir%/hold_bodies.py \
	%reldir%/authz.sh \
	%reldir%/dnsbl_bench.sh \
	%reldir%/lib.sh %reldir%/scale.sh \
	%reldir%/squid_helper.sh \
	%reldir%/window.sh %reldir%/ab.sh %reldir%/ab_cg.sh %reldir%/ab_net_pair.sh %reldir%/exact_net.sh \
	%reldir%/cost_split.sh %reldir%/cg_pipelined.sh %reldir%/cg_lockstep.sh \
	%reldir%/adblock_net.sh %reldir%/bloomd_front.sh \
	%reldir%/autocreate.py %reldir%/created_restart.sh \
	%reldir%/words_http.sh %reldir%/words_http.lua %reldir%/words_run.sh %reldir%/words_fold.sh
