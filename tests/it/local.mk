# tests/it/: tests that start the real daemon (and the real tool, gateway or
# client beside it) on 127.0.0.1 in a temporary directory. A Check program
# links the harness (tests/lib/local.mk), two lines, its source
# %reldir%/check_foo.c:
#   check_PROGRAMS += %reldir%/check_foo
#   %canon_reldir%_check_foo_LDADD = $(IT_LIBS)
# A script is a line in it_scripts (exit 77 means SKIP).
check_PROGRAMS += %reldir%/check_daemon
%canon_reldir%_check_daemon_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_http
%canon_reldir%_check_http_LDADD = $(IT_LIBS)
%canon_reldir%_check_http_SOURCES = %reldir%/check_http.c $(SEAMS)
check_PROGRAMS += %reldir%/check_authz
%canon_reldir%_check_authz_LDADD = $(IT_LIBS)
# The authorization endpoint behind the real nginx (skipped without nginx).
check_PROGRAMS += %reldir%/check_authz_nginx
%canon_reldir%_check_authz_nginx_LDADD = $(IT_LIBS)
# The request context over HTTP and the authorization endpoint, on an adblock filter.
check_PROGRAMS += %reldir%/check_adblock_http
%canon_reldir%_check_adblock_http_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_resp
%canon_reldir%_check_resp_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_bloomd
%canon_reldir%_check_bloomd_LDADD = $(IT_LIBS)
# Filter names of the wider rule through the config and every front.
check_PROGRAMS += %reldir%/check_names
%canon_reldir%_check_names_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_keys
%canon_reldir%_check_keys_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_postfix
%canon_reldir%_check_postfix_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_dnsbl
%canon_reldir%_check_dnsbl_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_lists
%canon_reldir%_check_lists_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_reload
%canon_reldir%_check_reload_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_limits
%canon_reldir%_check_limits_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_lifecycle
%canon_reldir%_check_lifecycle_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_fusedelta
%canon_reldir%_check_fusedelta_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_window
%canon_reldir%_check_window_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_growth
%canon_reldir%_check_growth_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_privileges
%canon_reldir%_check_privileges_LDADD = $(IT_LIBS)
check_PROGRAMS += %reldir%/check_output_budget
%canon_reldir%_check_output_budget_LDADD = $(IT_LIBS)
# A word list built by the real tool, scanned over the line protocol and HTTP.
check_PROGRAMS += %reldir%/check_words
%canon_reldir%_check_words_LDADD = $(IT_LIBS)
# Real public word lists (tests/words/, installed by scripts/deps.sh) built
# and scanned; skipped without them.
check_PROGRAMS += %reldir%/check_wordlists
%canon_reldir%_check_wordlists_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS) $(UTF8PROC_CFLAGS) \
	$(OPENCC_CFLAGS)
%canon_reldir%_check_wordlists_LDADD = $(IT_LIBS) $(JANSSON_LIBS) $(UTF8PROC_LIBS) $(OPENCC_LIBS)
EXTRA_DIST += tests/words/package.json tests/words/package-lock.json tests/words/README.md
# A word list changed at run time (ADD, REMOVE, ALLOW) across a restart and a SIGHUP.
check_PROGRAMS += %reldir%/check_words_delta
%canon_reldir%_check_words_delta_LDADD = $(IT_LIBS)
# The real bloomgate-squid against the real daemon.
check_PROGRAMS += %reldir%/check_squid
%canon_reldir%_check_squid_LDADD = $(IT_LIBS)

it_scripts = \
	%reldir%/tool_test.sh \
	%reldir%/url_test.sh \
	%reldir%/install_test.sh \
	%reldir%/man_test.sh \
	%reldir%/scale_test.py \
	%reldir%/gateways_test.sh
# The Redis protocol front with the real clients (each skips, 77, without its client).
it_scripts += %reldir%/resp_cli_test.sh %reldir%/resp_python_test.sh %reldir%/resp_benchmark_test.sh
# bloomd's own integration tests against the bloomd front (exit 77 without python3-pytest).
it_scripts += %reldir%/bloomd_integ_test.sh
EXTRA_DIST += %reldir%/bloomd_integ
# bloomd's NodeJS driver (npm bloomd, tests/bloomd_client/) against the bloomd
# front (exit 77 without node or its node_modules).
it_scripts += %reldir%/bloomd_client_test.sh
EXTRA_DIST += tests/bloomd_client/package.json tests/bloomd_client/package-lock.json \
	tests/bloomd_client/client_test.js
# Real Squid (Debian's) in front of a local upstream; exit 77 without squid.
it_scripts += %reldir%/squid_test.sh %reldir%/squid_adblock_test.sh
TESTS += $(it_scripts)
EXTRA_DIST += $(it_scripts) %reldir%/resp_lib.sh tests/pkg/install_test.sh

# An adblock filter served (build --format adblock, context words, tiers).
check_PROGRAMS += %reldir%/check_adblock
%canon_reldir%_check_adblock_LDADD = $(IT_LIBS)
# Filters created at run time: CREATE/DROP/CLEAR, restart, reload, SIGKILL.
check_PROGRAMS += %reldir%/check_created
%canon_reldir%_check_created_LDADD = $(IT_LIBS)
# The exact phase: filters built with --exact confirm every YES (issue 30).
check_PROGRAMS += %reldir%/check_exact
%canon_reldir%_check_exact_LDADD = $(IT_LIBS)
