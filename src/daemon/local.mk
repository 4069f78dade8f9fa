# src/daemon/: start-up order, config, signals; main() alone in the program.
libbloomgate_la_SOURCES += %reldir%/daemon.c %reldir%/daemon.h

bin_PROGRAMS += bloomgated
bloomgated_SOURCES = %reldir%/bloomgated.c
bloomgated_LDADD = libbloomgate.la
