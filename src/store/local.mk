# src/store/: what is served: the catalog (registry) and reclamation, the
# journal, loading, allow-lists and amendments, reload. Part of the daemon's
# archive (Makefile.am).

libbloomgate_la_SOURCES += \
	%reldir%/journal.c %reldir%/journal.h \
	%reldir%/journal_read.c %reldir%/journal_int.h \
	%reldir%/journal_compact.c %reldir%/wcompact.c %reldir%/wcompact.h \
	%reldir%/jtag.h \
	%reldir%/allow.c %reldir%/allow.h \
	%reldir%/amend.c %reldir%/amend.h \
	%reldir%/loader.c %reldir%/loader.h \
	%reldir%/xtable.c %reldir%/xtable.h \
	%reldir%/registry.c %reldir%/registry.h \
	%reldir%/reload.c %reldir%/reload.h %reldir%/reload_int.h \
	%reldir%/reloader.c %reldir%/created.c %reldir%/created.h \
	%reldir%/created_load.c %reldir%/created_shelf.c %reldir%/created_block.c %reldir%/created_int.h \
	%reldir%/entry.c %reldir%/entry.h %reldir%/reload_op.h \
	%reldir%/housekeep.c %reldir%/housekeep.h \
	%reldir%/wordsfold.c %reldir%/wordsfold.h
