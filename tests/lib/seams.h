/* seams: the tests' side of src/base/seam.h. A test program that links
 * tests/lib/seams.c gets these switches, and the seam functions that read
 * them in place of the daemon's empty ones (link-time substitution: the
 * library's seam.o is then never pulled in). Set them from the test's
 * thread before the code under test runs. */
#ifndef BLOOMGATE_TEST_SEAMS_H
#define BLOOMGATE_TEST_SEAMS_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/seam.h"

/* Called by seam_gate_after_append when set. */
extern void (*gate_test_after_append)(void);
/* Called by seam_reload_after_swap when set. */
extern void (*reload_test_after_swap)(const char *filter);
/* Called by seam_reload_before_publish when set. */
extern void (*reload_test_before_publish)(void);
/* The next n deliveries of a reload's report fail as if out of memory. */
extern _Atomic unsigned reload_fault_delivery;
/* The next server_fault_thread_fail worker threads from number
 * server_fault_thread_after on fail to start (EAGAIN). */
extern unsigned server_fault_thread_after, server_fault_thread_fail;
/* Called by seam_loader_idle when set. */
extern void (*loader_test_idle_hook)(void);
/* Called by seam_journal_compact when set. */
extern void (*journal_test_compact_hook)(struct journal *j, int stage);
/* Illegal connection state transitions seen (seam_conn_illegal); each aborts
 * the test program unless conn_illegal_expected is set. */
extern _Atomic unsigned conn_illegal_seen;
extern atomic_bool conn_illegal_expected;
/* The fuse build's memory budget when not 0 (else the production one). */
extern uint64_t build_fuse_mem_bytes;

#endif
