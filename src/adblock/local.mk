# src/adblock/: the Adblock network-filter engine (docs/design.md, "The Adblock
# engine"): the rule parser, the compiled index and the matcher. A pure archive:
# libpsl and PCRE2 only, no libevent, no jansson; its tests
# (tests/unit/local.mk, ADBLOCK_TEST_LIBS) link only it.
noinst_LTLIBRARIES += libadblock.la
libadblock_la_CPPFLAGS = $(PURE_CPPFLAGS) $(LIBPSL_CFLAGS) $(PCRE2_CFLAGS)
libadblock_la_SOURCES = \
	%reldir%/adblock.h %reldir%/engine_int.h \
	%reldir%/rule.c %reldir%/rule.h %reldir%/syntax.h \
	%reldir%/options.c %reldir%/options.h \
	%reldir%/request.c %reldir%/context.c \
	%reldir%/match.c \
	%reldir%/engine.c %reldir%/build_index.c %reldir%/build_int.h \
	%reldir%/tokens.c \
	%reldir%/serial.c
libadblock_la_LIBADD = $(LIBPSL_LIBS) $(PCRE2_LIBS)
