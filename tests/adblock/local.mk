# Adblock differential tests (issue 26): the naive matcher, the reference engine
# (node, tests/adblock/node_modules), the corpus builder and the comparisons.
# Included from Makefile.am.
# bloomgate's verdicts for a TSV of requests (url, type, from), or --bench figures;
# the comparisons run it beside the reference engine and the naive matcher.
noinst_PROGRAMS += tests/adblock/adblock_verdicts
tests_adblock_adblock_verdicts_SOURCES = tests/adblock/adblock_verdicts.c
tests_adblock_adblock_verdicts_CPPFLAGS = $(PURE_CPPFLAGS) $(LIBPSL_CFLAGS) $(PCRE2_CFLAGS)
tests_adblock_adblock_verdicts_LDADD = libadblock.la
noinst_PROGRAMS += tests/adblock/naive_verdicts
tests_adblock_naive_verdicts_SOURCES = tests/adblock/naive_verdicts.c tests/adblock/naive.c \
	tests/adblock/naive_host.c tests/adblock/naive_host.h \
	tests/adblock/naive.h
tests_adblock_naive_verdicts_CFLAGS = $(AM_CFLAGS)
tests_adblock_naive_verdicts_CPPFLAGS = $(AM_CPPFLAGS) $(PCRE2_CFLAGS) $(LIBPSL_CFLAGS)
tests_adblock_naive_verdicts_LDADD = $(PCRE2_LIBS) $(LIBPSL_LIBS)
EXTRA_DIST += tests/adblock/package.json tests/adblock/package-lock.json \
	tests/adblock/ref_verdicts.mjs
# (a) the program under test against the reference on the real lists; (b) against the
# naive matcher on random rule sets. Each skips (77) when what it needs is missing.
TESTS += tests/adblock/ref_test.sh tests/adblock/random_test.sh
# (c) the same corpus as served: the built file through `bloomgate check` and a
# real bloomgated's MATCH and MCHECK with context words, against the engine
# in-process, rule for rule.
TESTS += tests/adblock/served_test.py
AM_TESTS_ENVIRONMENT += ADBLOCK_BUILDDIR='$(abs_top_builddir)'; export ADBLOCK_BUILDDIR;
EXTRA_DIST += tests/adblock/ref_test.sh tests/adblock/random_test.sh \
	tests/adblock/make_corpus.py tests/adblock/compare.py tests/adblock/known-differences.txt \
	tests/adblock/naive-engine-differences.txt tests/adblock/served_test.py
