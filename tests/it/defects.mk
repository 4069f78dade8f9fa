# Test programs added by issue 27's defect fixes (included from Makefile.am).

# The HTTP front's status lines: every status sent has its reason phrase.
check_PROGRAMS += tests/unit/check_http_resp
tests_unit_check_http_resp_SOURCES = tests/unit/check_http_resp.c
tests_unit_check_http_resp_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_http_resp_LDADD = $(TEST_LIBS)
