/* build_lists: the inputs and the rejects file of a compiled section's
 * build (build_lists.h). Main thread of the tool. */
#include "config.h"

#include "tool/build_lists.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MAX (1ull << 31) /* a list larger than this is refused (offsets are 32-bit) */

char *build_read_whole(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *nb = cap < LIST_MAX ? realloc(buf, cap * 2) : NULL;
            if (!nb) {
                snprintf(err, errlen, "%s: %s", path,
                         cap < LIST_MAX ? "out of memory" : "larger than 2 GiB");
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0) {
            if (ferror(fp)) {
                snprintf(err, errlen, "%s: read failed: %s", path, strerror(errno));
                free(buf);
                buf = NULL;
            }
            break;
        }
    }
    if (!buf && n == 0 && !err[0])
        snprintf(err, errlen, "%s: out of memory", path);
    if (fp != stdin)
        fclose(fp);
    *len = n;
    return buf;
}

void build_rej_line(struct build_rej *r, const char *reason, const char *why, const char *line,
                    size_t n)
{
    if (!r->oom && !build_reject_append(&r->buf, &r->len, &r->cap, r->input,
                                        (uint64_t)(line - r->text), reason, why, line, n))
        r->oom = true;
    r->lines++;
}

/* The rejects of the input just added, written out: 0, or -1 with err. */
static int rej_flush(struct build_rej *r, char *err, size_t errlen)
{
    if (!r->f)
        return 0;
    bool ok = !r->oom && fwrite(r->buf, 1, r->len, r->f) == r->len;
    r->len = 0;
    if (!ok)
        snprintf(err, errlen, "%s: writing the rejects file failed: %s", r->path,
                 r->oom ? "out of memory" : strerror(errno));
    return ok ? 0 : -1;
}

int build_each_input(const struct build_opts *o, struct build_rej *r, build_add_fn *add, void *ctx,
                     char *err, size_t errlen)
{
    *r = (struct build_rej){.path = o->rejects};
    if (o->rejects && !(r->f = fopen(o->rejects, "we"))) {
        snprintf(err, errlen, "%s: cannot write the rejects file: %s", o->rejects, strerror(errno));
        return -1;
    }
    static const char *const std_in[] = {"-"};
    const char *const *in = o->n_inputs ? o->inputs : std_in;
    size_t n_in = o->n_inputs ? o->n_inputs : 1;
    for (size_t i = 0; i < n_in; i++) {
        size_t len;
        err[0] = '\0';
        char *text = build_read_whole(in[i], &len, err, errlen);
        if (!text)
            return -1;
        char why[512];
        r->input = strcmp(in[i], "-") == 0 ? "stdin" : in[i];
        r->text = text;
        int rc = add(ctx, in[i], text, len, why, sizeof(why));
        free(text);
        if (rc != 0) {
            snprintf(err, errlen, "%s: %s", in[i], why);
            return -1;
        }
        if (rej_flush(r, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int build_rej_close(struct build_rej *r, bool ok, char *err, size_t errlen)
{
    int rc = 0;
    if (r->f && fclose(r->f) != 0 && ok) {
        snprintf(err, errlen, "%s: writing the rejects file failed: %s", r->path, strerror(errno));
        rc = -1;
    }
    r->f = NULL;
    free(r->buf);
    r->buf = NULL;
    return rc;
}
