# src/squid/: the Squid external ACL helper, a client of the daemon, not part
# of it. Its pure parser (Squid's helper lines, the daemon's replies) and its
# loop use only base/: no libevent, no filter code (docs/gateways.md, "Squid").
noinst_LTLIBRARIES += libsquid.la
libsquid_la_CPPFLAGS = $(PURE_CPPFLAGS)
libsquid_la_SOURCES = \
	%reldir%/squidproto.c %reldir%/squidproto.h \
	%reldir%/helper.c %reldir%/helper.h %reldir%/helper_int.h %reldir%/helper_squid.c \
	%reldir%/helper_util.c \
	%reldir%/squid_cli.c %reldir%/squid_cli.h
libsquid_la_LIBADD = libbase.la

bin_PROGRAMS += bloomgate-squid
bloomgate_squid_SOURCES = %reldir%/bloomgate-squid.c
bloomgate_squid_LDADD = libsquid.la
