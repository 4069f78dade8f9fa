# src/net/: workers, listeners and the one connection implementation. Part of
# the daemon's archive (Makefile.am).
libbloomgate_la_SOURCES += \
	%reldir%/server.h \
	%reldir%/worker.c %reldir%/worker.h %reldir%/runtime.h \
	%reldir%/listener.c %reldir%/listener.h \
	%reldir%/conn.c %reldir%/conn_front.c %reldir%/conn.h
