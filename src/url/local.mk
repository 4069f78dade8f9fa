# src/url/: URL- and domain-aware matching, pure functions over bytes
# (canonicalisation, lookup expressions, list line parsers). Links libidn2
# only, so the fuzzers and the build tool can take it without libevent or
# jansson; its tests link only it.
noinst_LTLIBRARIES += liburl.la
liburl_la_CPPFLAGS = $(PURE_CPPFLAGS) $(LIBIDN2_CFLAGS)
liburl_la_SOURCES = \
	%reldir%/canon.c %reldir%/canon.h %reldir%/canon_ip.c %reldir%/canon_ip.h \
	%reldir%/expr.c %reldir%/expr.h \
	%reldir%/lists.c %reldir%/lists.h \
	%reldir%/keys.c %reldir%/keys.h
liburl_la_LIBADD = $(LIBIDN2_LIBS)
