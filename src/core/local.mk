# src/core/: what every protocol shares: the gate (check, add, commit,
# tallies), the command table, views, stats, metrics. Part of the daemon's
# archive (Makefile.am).
libbloomgate_la_SOURCES += \
	%reldir%/gate.c %reldir%/gate.h \
	%reldir%/cmd.c %reldir%/cmd.h %reldir%/cmd_exact.h %reldir%/cmd_int.h \
	%reldir%/cmd_adblock.c %reldir%/cmd_keyed.c %reldir%/cmd_confirm.c %reldir%/cmd_words.c \
	%reldir%/stats.c %reldir%/stats.h \
	%reldir%/views.c %reldir%/views.h \
	%reldir%/metrics.c %reldir%/metrics.h
