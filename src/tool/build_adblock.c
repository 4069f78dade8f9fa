/* build_adblock: `bloomgate build --format adblock` (keys adblock): Adblock
 * lists compiled into one engine (src/adblock/) and written as the section
 * of a filter file, beside an empty host tier that takes the daemon's
 * run-time adds; and what `info`, `verify` and `check` say about such a
 * file. Main thread of the tool. */
#include "config.h"

#include "tool/build_adblock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adblock/adblock.h"
#include "base/util.h"
#include "bloom/format.h"
#include "tool/cli.h"

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

/* --rejects FILE: every line the engine will not serve, in the shape of the
 * other formats' rejects files (build_reject_append), gathered per input and
 * written in the order read. */
struct rej_sink {
    FILE *f;           /* NULL: not asked for */
    const char *input; /* the input being added, as the file names it */
    const char *text;  /* its text: a line's offset is its distance from here */
    char *buf;
    size_t len, cap;
    uint64_t lines; /* written, all inputs */
    bool oom;
};

/* adblock_reject_fn: one rejects-file line for a line of r->input. Main
 * thread. */
static void rej_line(void *ctx, const char *reason, const char *why, const char *line, size_t n)
{
    struct rej_sink *r = ctx;
    if (!r->oom && !build_reject_append(&r->buf, &r->len, &r->cap, r->input,
                                        (uint64_t)(line - r->text), reason, why, line, n))
        r->oom = true;
    r->lines++;
}

/* The rejects of the input just added, written out: 0, or -1 with err. */
static int rej_flush(struct rej_sink *r, const char *path, char *err, size_t errlen)
{
    if (!r->f)
        return 0;
    bool ok = !r->oom && fwrite(r->buf, 1, r->len, r->f) == r->len;
    r->len = 0;
    if (!ok)
        snprintf(err, errlen, "%s: writing the rejects file failed: %s", path,
                 r->oom ? "out of memory" : strerror(errno));
    return ok ? 0 : -1;
}

/* The lists, compiled: NULL with err. With o->rejects, every line not
 * served goes there too, and *rejected counts them. */
static struct adblock_engine *compile_lists(const struct build_opts *o, uint64_t *rejected,
                                            char *err, size_t errlen)
{
    struct rej_sink rej = {0};
    if (o->rejects && !(rej.f = fopen(o->rejects, "we"))) {
        snprintf(err, errlen, "%s: cannot write the rejects file: %s", o->rejects, strerror(errno));
        return NULL;
    }
    struct adblock_engine *e = NULL;
    struct adblock_builder *b = adblock_builder_new();
    if (!b) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (rej.f)
        adblock_builder_on_reject(b, rej_line, &rej);
    static const char *const std_in[] = {"-"};
    const char *const *in = o->n_inputs ? o->inputs : std_in;
    size_t n_in = o->n_inputs ? o->n_inputs : 1;
    for (size_t i = 0; i < n_in; i++) {
        size_t len;
        err[0] = '\0';
        char *text = build_read_whole(in[i], &len, err, errlen);
        if (!text)
            goto out;
        char why[512];
        rej.input = strcmp(in[i], "-") == 0 ? "stdin" : in[i];
        rej.text = text;
        int rc = adblock_builder_add(b, text, len, why, sizeof(why));
        free(text);
        if (rc != 0) {
            snprintf(err, errlen, "%s: %s", in[i], why);
            goto out;
        }
        if (rej_flush(&rej, o->rejects, err, errlen) != 0)
            goto out;
    }
    e = adblock_builder_finish(b, err, errlen);
out:
    adblock_builder_free(b);
    if (rej.f && fclose(rej.f) != 0 && e) {
        snprintf(err, errlen, "%s: writing the rejects file failed: %s", o->rejects,
                 strerror(errno));
        adblock_engine_free(e);
        e = NULL;
    }
    free(rej.buf);
    *rejected = rej.lines;
    return e;
}

/* The summary's lines on what the lists held. */
static void print_summary(const struct adblock_summary *s)
{
    printf("lines: %llu read:", (unsigned long long)s->lines);
    const char *sep = " ";
    for (int c = 0; c < ADBLOCK_CLASS_COUNT; c++) {
        if (!s->by_class[c])
            continue;
        printf("%s%llu %s", sep, (unsigned long long)s->by_class[c],
               adblock_class_name((enum adblock_class)c));
        sep = ", ";
    }
    printf("\nrules: %llu block, %llu exception (%llu $document), %llu important, %llu regex; "
           "%llu duplicates, %llu cancelled by $badfilter, %llu tested on every request\n",
           (unsigned long long)s->blocks, (unsigned long long)s->exceptions,
           (unsigned long long)s->page_exceptions, (unsigned long long)s->important,
           (unsigned long long)s->regex, (unsigned long long)s->duplicates,
           (unsigned long long)s->cancelled, (unsigned long long)s->unindexed);
    if (s->first_reject[0])
        printf("first rejected: %s\n", s->first_reject);
}

int build_adblock_main(const struct build_opts *o, bool quiet)
{
    char err[1024] = "", why[512];
    double t0 = util_now();
    if (o->n_journals)
        return tool_usage_error("build: --journal holds exact items; an adblock filter takes "
                                "lists (its run-time adds are hosts, kept by the daemon)");
    uint64_t rejected = 0;
    struct adblock_engine *e = compile_lists(o, &rejected, err, sizeof(err));
    if (!e)
        return tool_runtime_error(err);
    double t_compile = util_now() - t0;
    /* The host tier: empty, sized for the daemon's run-time adds. */
    uint64_t cap = o->capacity ? o->capacity : BUILD_ADBLOCK_TIER_CAPACITY;
    struct filter_plan plan;
    void *body = NULL;
    size_t len = 0;
    int rc = EXIT_RUNTIME;
    if (adblock_engine_serialize(e, &body, &len, why, sizeof(why)) != 0) {
        snprintf(err, sizeof(err), "%s", why);
        goto out;
    }
    if (build_write_section(o, o->layout, cap, o->fpr, o->shards ? o->shards : 1,
                            FILTER_KEYS_ADBLOCK, FORMAT_SECTION_ADBLOCK, body, len, "the host tier",
                            &plan, err, sizeof(err)) != 0)
        goto out;
    rc = 0;
    if (!quiet) {
        char hb[64];
        printf("built %s: keys adblock, %llu rules compiled, %s (%.3f s)\n", o->output,
               (unsigned long long)(adblock_engine_summary(e)->blocks +
                                    adblock_engine_summary(e)->exceptions),
               util_human_bytes(len, hb, sizeof(hb)), t_compile);
        print_summary(adblock_engine_summary(e));
        if (o->rejects)
            printf("rejects: %llu lines not served written to %s\n", (unsigned long long)rejected,
                   o->rejects);
        printf("host tier for run-time adds: capacity %llu at fpr %g, %s, empty\n",
               (unsigned long long)plan.capacity, plan.fpr_target,
               util_human_bytes(filter_plan_bytes(&plan), hb, sizeof(hb)));
        printf("%.3f s\n", util_now() - t0);
    }
out:
    if (rc != 0)
        tool_runtime_error(err);
    free(body);
    adblock_engine_free(e);
    return rc;
}

struct adblock_engine *build_adblock_load(const char *path, const struct format_info *fi, char *err,
                                          size_t errlen)
{
    void *body;
    size_t len;
    if (format_read_section(path, fi, &body, &len, err, errlen) != 0)
        return NULL;
    char why[512];
    struct adblock_engine *e = adblock_engine_load(body, len, why, sizeof(why));
    if (!e)
        snprintf(err, errlen, "%s: the compiled lists: %s", path, why);
    free(body);
    return e;
}
