# The example config, installed as $(sysconfdir)/bloomgate/bloomgate.conf. An
# installed config is never overwritten: when one exists, the new example goes
# beside it as bloomgate.conf.dist (uninstall removes only the copy make
# installed).
bloomgateconfdir = $(sysconfdir)/bloomgate
EXTRA_DIST += %reldir%/bloomgate.conf
install-data-local:
	$(MKDIR_P) '$(DESTDIR)$(bloomgateconfdir)'
	if test -f '$(DESTDIR)$(bloomgateconfdir)/bloomgate.conf'; then \
		$(INSTALL_DATA) $(srcdir)/%reldir%/bloomgate.conf '$(DESTDIR)$(bloomgateconfdir)/bloomgate.conf.dist'; \
		echo "kept $(DESTDIR)$(bloomgateconfdir)/bloomgate.conf; the new example is bloomgate.conf.dist"; \
	else \
		$(INSTALL_DATA) $(srcdir)/%reldir%/bloomgate.conf '$(DESTDIR)$(bloomgateconfdir)/bloomgate.conf'; \
	fi
uninstall-local:
	if test -f '$(DESTDIR)$(bloomgateconfdir)/bloomgate.conf' && \
	   cmp -s $(srcdir)/%reldir%/bloomgate.conf '$(DESTDIR)$(bloomgateconfdir)/bloomgate.conf'; then \
		rm -f '$(DESTDIR)$(bloomgateconfdir)/bloomgate.conf'; fi
	rm -f '$(DESTDIR)$(bloomgateconfdir)/bloomgate.conf.dist'
