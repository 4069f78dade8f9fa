# The Adblock network-filter engine (src/adblock/; docs/design.md, "The Adblock
# engine"). A pure archive: libpsl and PCRE2 only, no libevent, no jansson.
noinst_LTLIBRARIES += libadblock.la
libadblock_la_SOURCES = \
	src/adblock/adblock.h src/adblock/engine_int.h \
	src/adblock/rule.c src/adblock/rule.h \
	src/adblock/options.c \
	src/adblock/request.c \
	src/adblock/match.c \
	src/adblock/engine.c \
	src/adblock/tokens.c \
	src/adblock/serial.c
libadblock_la_CFLAGS = $(AM_CFLAGS) $(LIBPSL_CFLAGS) $(PCRE2_CFLAGS)
libadblock_la_LIBADD = $(LIBPSL_LIBS) $(PCRE2_LIBS)

ADBLOCK_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(LIBPSL_CFLAGS) $(PCRE2_CFLAGS)
ADBLOCK_TEST_LIBS = libadblock.la $(CHECK_LIBS)

check_PROGRAMS += tests/unit/adblock/check_adblock_rule
tests_unit_adblock_check_adblock_rule_SOURCES = tests/unit/adblock/check_adblock_rule.c
tests_unit_adblock_check_adblock_rule_CFLAGS = $(ADBLOCK_TEST_CFLAGS)
tests_unit_adblock_check_adblock_rule_LDADD = $(ADBLOCK_TEST_LIBS)

check_PROGRAMS += tests/unit/adblock/check_adblock_match
tests_unit_adblock_check_adblock_match_SOURCES = tests/unit/adblock/check_adblock_match.c
tests_unit_adblock_check_adblock_match_CFLAGS = $(ADBLOCK_TEST_CFLAGS)
tests_unit_adblock_check_adblock_match_LDADD = $(ADBLOCK_TEST_LIBS)

# Verdicts for a TSV of requests (url, type, from), or --bench figures; the
# comparison scripts run it beside the reference engine.
noinst_PROGRAMS += tests/adblock/adblock_verdicts
tests_adblock_adblock_verdicts_SOURCES = tests/adblock/adblock_verdicts.c
tests_adblock_adblock_verdicts_CFLAGS = $(AM_CFLAGS) $(LIBPSL_CFLAGS) $(PCRE2_CFLAGS)
tests_adblock_adblock_verdicts_LDADD = libadblock.la

FUZZ_HARNESSES += fuzz_adblock_rule fuzz_adblock_match fuzz_adblock_load
FUZZ_LIBSRC += $(libadblock_la_SOURCES)
