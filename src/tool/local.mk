# src/tool/: the bloomgate command (build, journal dump, lookup, url); main()
# alone in the program.
libbloomgate_la_SOURCES += \
	%reldir%/build.c %reldir%/build.h \
	%reldir%/build_input.c %reldir%/build_input.h \
	%reldir%/build_journal.c %reldir%/build_journal.h \
	%reldir%/build_exact.c %reldir%/build_exact.h \
	%reldir%/build_fuse.c %reldir%/build_fuse.h \
	%reldir%/build_adblock.c %reldir%/build_adblock.h \
	%reldir%/build_lists.c %reldir%/build_lists.h \
	%reldir%/build_words.c %reldir%/build_words.h \
	%reldir%/jdump.c \
	%reldir%/tool.c %reldir%/tool.h %reldir%/info.c \
	%reldir%/cli.h %reldir%/cli.c %reldir%/lookup.c

bin_PROGRAMS += bloomgate
bloomgate_SOURCES = %reldir%/bloomgate.c
bloomgate_LDADD = libbloomgate.la
