# tests/fuzz/: a libFuzzer harness per parser of outside bytes (docs/testing.md).
# `make fuzz` builds tests/fuzz/bin/<harness> with clang, whatever compiler
# configure chose, by running %reldir%/fuzz.mk; `scripts/fuzz.sh [SECONDS]`
# builds and runs them. Neither `make all` nor `make check` builds them. A
# harness is %reldir%/<harness>.c with a seed corpus in
# %reldir%/corpus/<harness>/ and an optional %reldir%/<harness>.dict and
# %reldir%/<harness>.options (extra libFuzzer flags); adding one is a line:
#   FUZZ_HARNESSES += fuzz_foo
# Every library source in FUZZ_LIBSRC is compiled into the harnesses' archive,
# so a harness can call any parser the daemon ships (a new archive adds its
# sources: FUZZ_LIBSRC += $(libfoo_la_SOURCES)).
FUZZ_HARNESSES = fuzz_proto
FUZZ_HARNESSES += fuzz_http_head
FUZZ_HARNESSES += fuzz_http_chunked
FUZZ_HARNESSES += fuzz_http_query
FUZZ_HARNESSES += fuzz_json_items
FUZZ_HARNESSES += fuzz_conf
FUZZ_HARNESSES += fuzz_filter_file
FUZZ_HARNESSES += fuzz_journal
FUZZ_HARNESSES += fuzz_url
FUZZ_HARNESSES += fuzz_lists
FUZZ_HARNESSES += fuzz_resp
FUZZ_HARNESSES += fuzz_squidproto
FUZZ_HARNESSES += fuzz_authz
FUZZ_HARNESSES += fuzz_tcptable
FUZZ_HARNESSES += fuzz_dns
FUZZ_HARNESSES += fuzz_policy
FUZZ_HARNESSES += fuzz_bloomd
FUZZ_HARNESSES += fuzz_allow
FUZZ_HARNESSES += fuzz_adblock_rule fuzz_adblock_match fuzz_adblock_load
FUZZ_HARNESSES += fuzz_words_list fuzz_words_scan fuzz_words_load fuzz_words_delta
FUZZ_HARNESSES += fuzz_created fuzz_resp_bf fuzz_grow_file
FUZZ_HARNESSES += fuzz_exact_table fuzz_exact_ref
FUZZ_CC = clang
FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=undefined
FUZZ_SANITIZE = address,undefined
FUZZ_LIBSRC = $(libbase_la_SOURCES) $(libbloom_la_SOURCES) $(liburl_la_SOURCES) \
	$(libconf_la_SOURCES) $(libadblock_la_SOURCES) $(libwords_la_SOURCES) $(libexact_la_SOURCES) $(libparse_la_SOURCES) $(libbloomgate_la_SOURCES) src/squid/squidproto.c
fuzz: config.h
	$(AM_V_at)$(MAKE) -f $(srcdir)/%reldir%/fuzz.mk \
		srcdir='$(srcdir)' top_builddir='$(top_builddir)' \
		FUZZ_CC='$(FUZZ_CC)' FUZZ_CFLAGS='$(FUZZ_CFLAGS)' FUZZ_SANITIZE='$(FUZZ_SANITIZE)' \
		FUZZ_HARNESSES='$(FUZZ_HARNESSES)' FUZZ_LIBSRC='$(FUZZ_LIBSRC)' \
		FUZZ_PKG_CFLAGS='$(LIBEVENT_CFLAGS) $(XXHASH_CFLAGS) $(JANSSON_CFLAGS) $(LIBIDN2_CFLAGS) $(LIBPSL_CFLAGS) $(PCRE2_CFLAGS) $(UTF8PROC_CFLAGS) $(OPENCC_CFLAGS)' \
		FUZZ_PKG_LIBS='$(LIBEVENT_LIBS) $(XXHASH_LIBS) $(JANSSON_LIBS) $(LIBIDN2_LIBS) $(LIBPSL_LIBS) $(PCRE2_LIBS) $(UTF8PROC_LIBS) $(OPENCC_LIBS)'
# The names scripts/fuzz.sh runs, one a line.
fuzz-list:
	@for h in $(FUZZ_HARNESSES); do echo $$h; done
.PHONY: fuzz fuzz-list fuzz-clean fuzz-dist-clean
clean-local: fuzz-clean
fuzz-clean:
	-rm -rf %reldir%/bin %reldir%/obj
# The sources, corpora and dictionaries ship; a build in the source tree must
# not ship its fuzz binaries.
EXTRA_DIST += %reldir%
dist-hook: fuzz-dist-clean
fuzz-dist-clean:
	rm -rf $(distdir)/%reldir%/bin $(distdir)/%reldir%/obj
