/* ref: how a filter file names the exact table built with it (its section of
 * kind FORMAT_SECTION_EXACT, docs/file-format.md): the table's file name,
 * beside the filter file, its kind, count and header checksum, so that a
 * loader opens that table and no other. A pure encoder and a checked decoder
 * of outside bytes. Any thread. */
#ifndef BLOOMGATE_EXACT_REF_H
#define BLOOMGATE_EXACT_REF_H

#include <stddef.h>
#include <stdint.h>

#include "exact/exact.h"

#define EXACT_REF_MAGIC "BGXREF01"
#define EXACT_REF_HEAD 40u      /* magic, kind, name length, count, checksum, reserved */
#define EXACT_REF_NAME_MAX 255u /* a file name (no '/'): one path component */

struct exact_ref {
    enum exact_kind kind;
    uint64_t count;                    /* the table's distinct entries */
    uint64_t checksum;                 /* the table's header checksum (exact_info.checksum) */
    char name[EXACT_REF_NAME_MAX + 1]; /* the table's file name, in the filter file's directory */
};

/* The body for r into buf (EXACT_REF_HEAD + strlen(name) bytes at most
 * EXACT_REF_HEAD + EXACT_REF_NAME_MAX): its length, or 0 if r's name is not
 * one path component of 1 to EXACT_REF_NAME_MAX bytes. */
size_t exact_ref_encode(const struct exact_ref *r, unsigned char *buf, size_t cap);

/* Read a body of len bytes (outside bytes: every field checked). 0, or -1
 * with the fault in err. */
int exact_ref_decode(const void *body, size_t len, struct exact_ref *r, char *err, size_t errlen);

/* The table's path: the directory of filter_path joined with r->name, into
 * buf. 0, or -1 if it does not fit. */
int exact_ref_path(const struct exact_ref *r, const char *filter_path, char *buf, size_t cap);

#endif
