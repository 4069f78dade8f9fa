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
#include "tool/build_lists.h"
#include "tool/cli.h"

/* adblock_reject_fn: a line not served, into the rejects file. */
static void rej_line(void *ctx, const char *reason, const char *why, const char *line, size_t n)
{
    build_rej_line(ctx, reason, why, line, n);
}

/* build_add_fn: one input's rules into the builder. */
static int add_input(void *ctx, const char *input, const char *text, size_t len, char *why,
                     size_t whylen)
{
    (void)input;
    return adblock_builder_add(ctx, text, len, why, whylen);
}

/* The lists, compiled: NULL with err. With o->rejects, every line not
 * served goes there too, and *rejected counts them. */
static struct adblock_engine *compile_lists(const struct build_opts *o, uint64_t *rejected,
                                            char *err, size_t errlen)
{
    struct build_rej rej = {0};
    struct adblock_engine *e = NULL;
    struct adblock_builder *b = adblock_builder_new();
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (o->rejects)
        adblock_builder_on_reject(b, rej_line, &rej);
    if (build_each_input(o, &rej, add_input, b, err, errlen) == 0)
        e = adblock_builder_finish(b, err, errlen);
    adblock_builder_free(b);
    if (build_rej_close(&rej, e != NULL, err, errlen) != 0) {
        adblock_engine_free(e);
        e = NULL;
    }
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
