# The systemd unit, with the configured paths filled in (debian/rules sets
# systemdunitdir to /lib/systemd/system).
systemdunitdir = $(prefix)/lib/systemd/system
systemdunit_DATA = %reldir%/bloomgated.service
CLEANFILES += %reldir%/bloomgated.service
EXTRA_DIST += %reldir%/bloomgated.service.in
%reldir%/bloomgated.service: $(srcdir)/%reldir%/bloomgated.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) %reldir% && \
	sed -e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
		-e 's|@docdir[@]|$(docdir)|g' \
		$(srcdir)/%reldir%/bloomgated.service.in > $@
