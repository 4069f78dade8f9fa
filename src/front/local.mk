# src/front/: one folder per protocol: a pure parser over bytes and its glue
# to net/ and core/. Part of the daemon's archive (Makefile.am).
libbloomgate_la_SOURCES += \
	%reldir%/fronts.c %reldir%/fronts.h

# The line protocol.
libbloomgate_la_SOURCES += \
	%reldir%/line/proto.c %reldir%/line/proto.h %reldir%/line/proto_fast.h \
	%reldir%/line/line.c %reldir%/line/line.h

# HTTP: the API and the authorization endpoint.
libbloomgate_la_SOURCES += \
	%reldir%/http/http.h %reldir%/http/http_int.h \
	%reldir%/http/http_conn.c \
	%reldir%/http/http_api.c \
	%reldir%/http/http_resp.c \
	%reldir%/http/httpparse.c %reldir%/http/httpparse.h \
	%reldir%/http/authz.c %reldir%/http/authz.h \
	%reldir%/http/http_authz.c

# The Redis protocol (RESP2).
libbloomgate_la_SOURCES += \
	%reldir%/resp/respparse.c %reldir%/resp/respparse.h \
	%reldir%/resp/resp.c %reldir%/resp/resp.h \
	%reldir%/resp/resp_info.c %reldir%/resp/resp_info.h

# Postfix: tcp_table(5) and policy delegation.
libbloomgate_la_SOURCES += \
	%reldir%/postfix/postfix.h \
	%reldir%/postfix/tcptable.c %reldir%/postfix/tcptable.h \
	%reldir%/postfix/tcptable_conn.c \
	%reldir%/postfix/policy.c %reldir%/postfix/policy.h \
	%reldir%/postfix/policy_conn.c

# A DNS blocklist zone (RFC 5782).
libbloomgate_la_SOURCES += \
	%reldir%/dns/dns.h %reldir%/dns/dnsbl_conn.c \
	%reldir%/dns/dnswire.c %reldir%/dns/dnswire.h \
	%reldir%/dns/dnsbl.c %reldir%/dns/dnsbl.h
