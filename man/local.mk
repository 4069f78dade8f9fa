# Man pages: installed by make install, shipped in the tarball.
# tests/it/man_test.sh checks them against the directive table and the
# --help texts.
dist_man_MANS = \
	%reldir%/bloomgate.1 %reldir%/bloomgated.8 %reldir%/bloomgate.conf.5 \
	%reldir%/bloomgate-squid.1
