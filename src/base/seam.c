/* The seams as they ship: nothing happens at any of them (see seam.h). */
#include "config.h"

#include "base/seam.h"

void seam_gate_after_append(void) {}

void seam_reload_after_swap(const char *filter)
{
    (void)filter;
}

void seam_reload_before_publish(void) {}

bool seam_reload_fail_delivery(void)
{
    return false;
}

bool seam_server_fail_thread(unsigned t)
{
    (void)t;
    return false;
}

void seam_loader_idle(void) {}

void seam_journal_compact(struct journal *j, int stage)
{
    (void)j;
    (void)stage;
}

void seam_conn_illegal(const char *from, const char *to)
{
    (void)from;
    (void)to;
}

uint64_t seam_build_fuse_mem_bytes(uint64_t budget)
{
    return budget;
}
