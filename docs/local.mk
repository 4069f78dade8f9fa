# What a user or operator reads, installed in $(docdir). The whole folder
# ships in the tarball (testing.md and benchmarks.md too).
dist_doc_DATA = README.md \
	%reldir%/protocol.md %reldir%/http-api.md %reldir%/file-format.md %reldir%/design.md \
	%reldir%/operations.md %reldir%/url-matching.md %reldir%/packaging.md %reldir%/resp.md \
	%reldir%/gateways.md %reldir%/scaling.md %reldir%/words.md %reldir%/bloomd.md \
	%reldir%/created.md
EXTRA_DIST += %reldir%
