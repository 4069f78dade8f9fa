# The connection layer's tests (src/net/conn.[ch]): its states, a lost reply
# on every front (libevent's allocator failing on demand), per-protocol
# counters, in process; and the reply budget on the real daemon.
check_PROGRAMS += tests/unit/check_conn
tests_unit_check_conn_SOURCES = tests/unit/check_conn.c
tests_unit_check_conn_CFLAGS = $(TEST_CFLAGS)
tests_unit_check_conn_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/it/check_output_budget
tests_it_check_output_budget_SOURCES = tests/it/check_output_budget.c $(IT_LIB)
tests_it_check_output_budget_CFLAGS = $(TEST_CFLAGS)
tests_it_check_output_budget_LDADD = $(TEST_LIBS)

EXTRA_DIST += tests/bench/cg_pipelined.sh
