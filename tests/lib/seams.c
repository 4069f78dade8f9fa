/* The tests' seams, see seams.h: every function of src/base/seam.h, driven
 * by the switches a test sets. */
#include "config.h"

#include "lib/seams.h"

#include <stdio.h>
#include <stdlib.h>

void (*gate_test_after_append)(void);
void (*reload_test_after_swap)(const char *filter);
void (*reload_test_before_publish)(void);
_Atomic unsigned reload_fault_delivery;
unsigned server_fault_thread_after, server_fault_thread_fail;
void (*loader_test_idle_hook)(void);
void (*journal_test_compact_hook)(struct journal *j, int stage);
uint64_t build_fuse_mem_bytes;
_Atomic unsigned conn_illegal_seen;
atomic_bool conn_illegal_expected;

void seam_gate_after_append(void)
{
    if (gate_test_after_append)
        gate_test_after_append();
}

void seam_reload_after_swap(const char *filter)
{
    if (reload_test_after_swap)
        reload_test_after_swap(filter);
}

void seam_reload_before_publish(void)
{
    if (reload_test_before_publish)
        reload_test_before_publish();
}

bool seam_reload_fail_delivery(void)
{
    unsigned f = atomic_load(&reload_fault_delivery);
    return f && atomic_compare_exchange_strong(&reload_fault_delivery, &f, f - 1);
}

bool seam_server_fail_thread(unsigned t)
{
    if (server_fault_thread_fail && t >= server_fault_thread_after) {
        server_fault_thread_fail--;
        return true;
    }
    return false;
}

void seam_loader_idle(void)
{
    if (loader_test_idle_hook)
        loader_test_idle_hook();
}

void seam_journal_compact(struct journal *j, int stage)
{
    if (journal_test_compact_hook)
        journal_test_compact_hook(j, stage);
}

/* An illegal connection state transition is a bug: a test stops at it (the
 * daemon closes the connection and goes on), unless it drives one on purpose. */
void seam_conn_illegal(const char *from, const char *to)
{
    atomic_fetch_add(&conn_illegal_seen, 1);
    if (!atomic_load(&conn_illegal_expected)) {
        fprintf(stderr, "illegal connection state transition %s -> %s\n", from, to);
        abort();
    }
}

uint64_t seam_build_fuse_mem_bytes(uint64_t budget)
{
    return build_fuse_mem_bytes ? build_fuse_mem_bytes : budget;
}
