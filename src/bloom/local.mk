# src/bloom/: the filter library (layouts, sizing, file format, hashing), with
# the base helpers it needs. Links no libevent, jansson or daemon code; its
# tests (tests/unit/local.mk, BLOOM_TEST_LIBS) link only it.
noinst_LTLIBRARIES += libbloom.la
libbloom_la_CPPFLAGS = $(PURE_CPPFLAGS) $(XXHASH_CFLAGS)
libbloom_la_SOURCES = \
	%reldir%/hash.h \
	%reldir%/le.h \
	%reldir%/sizing.c %reldir%/sizing.h \
	%reldir%/filter.c %reldir%/filter.h %reldir%/shape.h \
	%reldir%/ring.c %reldir%/ring.h \
	%reldir%/counting.c %reldir%/counting.h \
	%reldir%/grow.c %reldir%/grow.h \
	%reldir%/grow_file.c %reldir%/grow_file.h \
	%reldir%/fuse.c %reldir%/fuse.h \
	%reldir%/fuse_build.c %reldir%/fuse_build.h \
	%reldir%/fusedelta.c %reldir%/fusedelta.h \
	%reldir%/format.c %reldir%/format.h
libbloom_la_LIBADD = libbase.la $(XXHASH_LIBS) -lm
