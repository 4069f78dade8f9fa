#!/bin/sh
# Known bug, an expected failure in sanitizer builds only (see Makefile.am).
# reader_next (src/build.c) calls memcpy with a NULL source or destination
# when the carry buffer has never been allocated (rd->carry is NULL, length
# 0): undefined behaviour, which UBSan stops at on the first read of every
# build_run. Runs the build_run cases ("run") of check_build.
test -x ./tests/check_build || exit 99
unset CK_EXCLUDE_TAGS
CK_RUN_CASE=run exec ./tests/check_build
