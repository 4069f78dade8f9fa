# src/front/: one folder per protocol: a pure parser over bytes and its glue
# to net/ and core/.
#
# The parsers go to libparse.la: bytes in, a request (or a reply's bytes) out.
# It links no libevent, no jansson and no daemon code, and its tests link only
# it (tests/unit/local.mk, PARSE_TEST_LIBS), so the build itself keeps the
# parsers pure, as it does the filter library and the URL code. The glue
# beside each parser goes to the daemon's archive (Makefile.am).
noinst_LTLIBRARIES += libparse.la
libparse_la_CPPFLAGS = $(PURE_CPPFLAGS)
libparse_la_SOURCES = %reldir%/errcodes.h
libbloomgate_la_LIBADD += libparse.la

libbloomgate_la_SOURCES += \
	%reldir%/fronts.c %reldir%/fronts.h

# The line protocol.
libparse_la_SOURCES += \
	%reldir%/line/proto.c %reldir%/line/proto.h %reldir%/line/proto_fast.h \
	%reldir%/line/proto_verbs.h
libbloomgate_la_SOURCES += \
	%reldir%/line/line.c %reldir%/line/line_scan.c %reldir%/line/line.h %reldir%/line/line_int.h \
	%reldir%/line/line_admin.c %reldir%/line/line_verbs.c

# HTTP: the API and the authorization endpoint.
libparse_la_SOURCES += \
	%reldir%/http/httpparse.c %reldir%/http/httpparse.h \
	%reldir%/http/authz.c %reldir%/http/authz.h
libbloomgate_la_SOURCES += \
	%reldir%/http/http.h %reldir%/http/http_int.h \
	%reldir%/http/http_conn.c \
	%reldir%/http/http_api.c %reldir%/http/http_admin.c %reldir%/http/http_scan.c \
	%reldir%/http/http_context.c \
	%reldir%/http/http_resp.c \
	%reldir%/http/http_authz.c

# The Redis protocol (RESP2).
libparse_la_SOURCES += \
	%reldir%/resp/respparse.c %reldir%/resp/respparse.h
libbloomgate_la_SOURCES += \
	%reldir%/resp/resp.c %reldir%/resp/resp.h \
	%reldir%/resp/resp_info.c %reldir%/resp/resp_info.h \
	%reldir%/resp/resp_int.h %reldir%/resp/resp_multi.c %reldir%/resp/resp_admin.c %reldir%/resp/resp_call.c %reldir%/resp/resp_keys.c

# bloomd's text protocol (armon/bloomd's clients and tests).
libparse_la_SOURCES += \
	%reldir%/bloomd/bloomd_proto.c %reldir%/bloomd/bloomd_proto.h
libbloomgate_la_SOURCES += \
	%reldir%/bloomd/bloomd.c %reldir%/bloomd/bloomd.h

# Postfix: tcp_table(5) and policy delegation.
libparse_la_SOURCES += \
	%reldir%/postfix/tcptable.c %reldir%/postfix/tcptable.h \
	%reldir%/postfix/policy.c %reldir%/postfix/policy.h
libbloomgate_la_SOURCES += \
	%reldir%/postfix/postfix.h \
	%reldir%/postfix/tcptable_conn.c \
	%reldir%/postfix/policy_conn.c

# A DNS blocklist zone (RFC 5782).
libparse_la_SOURCES += \
	%reldir%/dns/dnswire.c %reldir%/dns/dnswire.h \
	%reldir%/dns/dnsbl.c %reldir%/dns/dnsbl.h
libbloomgate_la_SOURCES += \
	%reldir%/dns/dns.h %reldir%/dns/dnsbl_conn.c
