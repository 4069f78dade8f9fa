# The configuration layer (src/conf/): the directive table, its parser and the
# listener addresses. It sits below store, net and front, which all read
# settings, and includes nothing but base/util.h and bloom/filter.h (for the
# layout and key enums it mirrors), so its archive links no libevent, jansson
# or filter code.
noinst_LTLIBRARIES += libconf.la
libconf_la_CPPFLAGS = $(PURE_CPPFLAGS)
libconf_la_SOURCES = \
	%reldir%/addr.c %reldir%/addr.h \
	%reldir%/conf.c %reldir%/conf.h %reldir%/conf_table.h \
	%reldir%/conf_parse.c %reldir%/conf_file.c %reldir%/conf_fronts.c %reldir%/conf_values.c
libconf_la_LIBADD = libbase.la
