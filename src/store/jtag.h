/* jtag: the tag that opens the payload of a journal record other than a plain
 * add (docs/file-format.md, "Record tags"). Internal to journal.c; pure
 * functions, any thread.
 *
 * A payload is a sequence of items, each a u32 length (at most 1 MiB) and
 * its bytes. A tagged payload starts instead with a u32 whose top bit is set
 * (a length no item can have): bits 24-30 are the op, bit 23 says a signed
 * 64-bit time in milliseconds follows, bits 0-22 are zero. A bloomgate that
 * predates tags reads that word as an item longer than 1 MiB and refuses the
 * journal as malformed: since the record's checksum matches it never takes
 * it for a torn tail, so nothing is cut. */
#ifndef BLOOMGATE_JTAG_H
#define BLOOMGATE_JTAG_H

#include <stddef.h>
#include <stdint.h>

#include "bloom/le.h"
#include "store/journal.h"

#define JTAG_FLAG 0x80000000u
#define JTAG_TIME 0x00800000u
#define JTAG_OP_SHIFT 24
#define JTAG_MAX 12u /* bytes: the word and a time */

/* Encode the tag of op and time_ms into out (JTAG_MAX bytes); returns its
 * length, 0 for an add without a time (no tag: the format before tags). */
static inline size_t jtag_encode(unsigned char *out, enum journal_op op, int64_t time_ms)
{
    if (op == JOURNAL_OP_ADD && time_ms == JOURNAL_NO_TIME)
        return 0;
    uint32_t w = JTAG_FLAG | ((uint32_t)op << JTAG_OP_SHIFT);
    if (time_ms == JOURNAL_NO_TIME) {
        le_put32(out, w);
        return 4;
    }
    le_put32(out, w | JTAG_TIME);
    le_put64(out + 4, (uint64_t)time_ms);
    return 12;
}

/* Decode the tag at the start of a payload of len bytes: its length (0 if
 * the payload is untagged: an add without a time), or -1 with why. */
static inline long jtag_decode(const unsigned char *p, size_t len, enum journal_op *op,
                               int64_t *time_ms, const char **why)
{
    *op = JOURNAL_OP_ADD;
    *time_ms = JOURNAL_NO_TIME;
    if (len < 4 || !(le_get32(p) & JTAG_FLAG))
        return 0;
    uint32_t w = le_get32(p);
    unsigned o = (w >> JTAG_OP_SHIFT) & 0x7fu;
    if (o >= JOURNAL_OP_COUNT || (w & ~(JTAG_FLAG | JTAG_TIME | (0x7fu << JTAG_OP_SHIFT)))) {
        *why = "malformed payload: an unknown record tag (written by a newer bloomgate?)";
        return -1;
    }
    *op = (enum journal_op)o;
    if (!(w & JTAG_TIME))
        return 4;
    if (len < 12) {
        *why = "malformed payload: a record tag cut short";
        return -1;
    }
    *time_ms = (int64_t)le_get64(p + 4);
    return 12;
}

#endif
