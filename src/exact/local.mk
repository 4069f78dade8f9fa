# src/exact/: the exact second phase behind a filter (docs/design.md, "The
# exact phase"): the fingerprint (or key) table, its builder, its loader and
# verifier, batch confirmation and the run-time delta. A pure archive: xxHash
# (inline) and the base helpers, no libevent, no jansson. It does not bring
# libbase.la with it (the daemon's archive has it through libbloom.la); its
# tests (tests/unit/local.mk, EXACT_TEST_LIBS) link the two.
noinst_LTLIBRARIES += libexact.la
libexact_la_CPPFLAGS = $(PURE_CPPFLAGS) $(XXHASH_CFLAGS)
libexact_la_SOURCES = \
	%reldir%/exact.h %reldir%/exact_int.h %reldir%/fp.h \
	%reldir%/table.c %reldir%/verify.c \
	%reldir%/sort.c %reldir%/sort.h \
	%reldir%/write.c \
	%reldir%/build.c %reldir%/build.h \
	%reldir%/delta.c %reldir%/delta.h \
	%reldir%/ref.c %reldir%/ref.h
libexact_la_LIBADD = $(XXHASH_LIBS)
# The daemon's archive links it (the loader, the command path, the tool).
libbloomgate_la_LIBADD += libexact.la
