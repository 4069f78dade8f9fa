/* seam: the points where a test acts inside the daemon (hold a thread at a
 * race window, fail a call that cannot fail on demand, shrink a budget).
 * What ships has no switch for them: each is a function, empty (or returning
 * the production value) in seam.c, which is alone in its file so that a test
 * program that links tests/lib/seams.c replaces them all at link time. So
 * there is no mutable hook or fault counter in the daemon, and nothing from
 * outside can reach one. Any thread (each says which calls it). */
#ifndef BLOOMGATE_SEAM_H
#define BLOOMGATE_SEAM_H

#include <stdbool.h>
#include <stdint.h>

struct journal;

/* A worker, right after an add's journal record is written and before the
 * add reaches any version (gate.c). */
void seam_gate_after_append(void);
/* The reload thread, right after a reload swapped filter's journal for a
 * new one (reload.c). */
void seam_reload_after_swap(const char *filter);
/* The reload thread, once every filter's new version is pending, right
 * before the new catalog is published (reload.c). */
void seam_reload_before_publish(void);
/* The reload thread: whether this delivery of a reload's report fails as if
 * out of memory (reload.c). */
bool seam_reload_fail_delivery(void);
/* The main thread: whether starting worker thread t fails, with EAGAIN
 * (worker.c). */
bool seam_server_fail_thread(unsigned t);
/* A filter's idle loading thread, once its policy is set, before the load
 * (loader.c). */
void seam_loader_idle(void);
/* A journal compaction: stage 1 after its records are written, stage 2
 * before it takes the journal's locks (journal_compact.c). */
void seam_journal_compact(struct journal *j, int stage);
/* A worker, at a connection state transition enum conn_state does not allow
 * (conn.c), after it was logged: the daemon then closes the connection and
 * goes on; a test build stops here (a bug). */
void seam_conn_illegal(const char *from, const char *to);
/* The memory budget of a fuse build, given the production one (build_fuse.c). */
uint64_t seam_build_fuse_mem_bytes(uint64_t budget);

#endif
