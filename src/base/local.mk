# src/base/: the helpers every layer stands on (log, sd_notify, util, the
# clock). Pure: no libevent, no jansson, no filter code.
noinst_LTLIBRARIES += libbase.la
libbase_la_CPPFLAGS = $(PURE_CPPFLAGS)
libbase_la_SOURCES = \
	%reldir%/log.c %reldir%/log.h \
	%reldir%/notify.c %reldir%/notify.h \
	%reldir%/util.c %reldir%/util.h %reldir%/fname.h \
	%reldir%/clock.c %reldir%/clock.h \
	%reldir%/seam.c %reldir%/seam.h
