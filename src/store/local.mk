# src/store/: what is served: the catalog (registry) and reclamation, the
# journal, loading, allow-lists and amendments, reload. Part of the daemon's
# archive (Makefile.am).

# The config: the directive table, its parser and addresses. Depends only on
# bloom/filter.h; to become its own layer, src/conf/ (issue 27).
libbloomgate_la_SOURCES += \
	%reldir%/addr.c %reldir%/addr.h \
	%reldir%/conf.c %reldir%/conf.h %reldir%/conf_table.h \
	%reldir%/conf_parse.c %reldir%/conf_file.c %reldir%/conf_fronts.c %reldir%/conf_values.c

libbloomgate_la_SOURCES += \
	%reldir%/journal.c %reldir%/journal.h \
	%reldir%/journal_read.c %reldir%/journal_int.h \
	%reldir%/journal_compact.c %reldir%/wcompact.c %reldir%/wcompact.h \
	%reldir%/jtag.h \
	%reldir%/allow.c %reldir%/allow.h \
	%reldir%/amend.c %reldir%/amend.h \
	%reldir%/loader.c %reldir%/loader.h \
	%reldir%/registry.c %reldir%/registry.h \
	%reldir%/reload.c %reldir%/reload.h
