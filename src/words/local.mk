# src/words/: blocked-word lists scanned in text (docs/words.md): the list
# parser and the normalisation (utf8proc; OpenCC's t2s pairs, read by the
# builder only), the Aho-Corasick compiler, the scan, the block a matcher
# serialises to. A pure archive: no libevent, no jansson; its tests
# (tests/unit/local.mk, WORDS_TEST_LIBS) link only it.
noinst_LTLIBRARIES += libwords.la
libwords_la_CPPFLAGS = $(PURE_CPPFLAGS) $(UTF8PROC_CFLAGS) $(OPENCC_CFLAGS)
libwords_la_SOURCES = \
	%reldir%/words.h %reldir%/words_int.h %reldir%/list_int.h \
	%reldir%/norm.c %reldir%/norm.h \
	%reldir%/zh.c \
	%reldir%/list.c \
	%reldir%/build.c \
	%reldir%/scan.c \
	%reldir%/skip.c %reldir%/cls.h \
	%reldir%/serial.c \
	%reldir%/delta.c %reldir%/delta.h %reldir%/delta_int.h %reldir%/delta_pre.c %reldir%/delta_scan.c \
	%reldir%/fold.c
libwords_la_LIBADD = $(UTF8PROC_LIBS) $(OPENCC_LIBS)
