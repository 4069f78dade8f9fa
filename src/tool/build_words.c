/* build_words: `bloomgate build --format words` (keys words): word lists
 * compiled into one automaton (src/words/) and written as the section of a
 * filter file, beside a minimal Bloom part that nothing reads (the file
 * format wants one); and what `info` and `verify` say about such a file.
 * Main thread of the tool. */
#include "config.h"

#include "tool/build_words.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "core/views.h"
#include "bloom/format.h"
#include "store/amend.h"
#include "store/journal.h"
#include "tool/build_adblock.h"
#include "tool/build_lists.h"
#include "tool/cli.h"
#include "words/delta.h"

#define TIER_CAPACITY 1024 /* the unused Bloom part: the smallest plan worth a name */

/* The rejects input `name` added to the summary's kept ones, from `from`. */
static void print_rejects(const struct words_summary *s, size_t from, const char *name)
{
    for (size_t i = from; i < s->nkept; i++)
        fprintf(stderr, "bloomgate: %s:%zu: rejected: %s\n", name, s->first[i].line,
                s->first[i].reason);
}

/* words_reject_fn: a rejected line, into the rejects file. */
static void rej_line(void *ctx, size_t line, enum words_reject reason, const char *why,
                     const char *text, size_t len)
{
    (void)line; /* the offset names the line, as for the other formats */
    build_rej_line(ctx, words_reject_name(reason), why, text, len);
}

/* build_add_fn: one input's lines into the builder, its rejects named on
 * stderr (the first WORDS_REJECTS_KEPT of the build). */
static int add_input(void *ctx, const char *input, const char *text, size_t len, char *why,
                     size_t whylen)
{
    struct words_builder *b = ctx;
    size_t before = words_builder_summary(b)->nkept;
    if (words_builder_add(b, text, len, why, whylen) != 0)
        return -1;
    print_rejects(words_builder_summary(b), before, input);
    return 0;
}

/* The lists, compiled: NULL with err. Rejected lines go to stderr as they
 * are found (the first WORDS_REJECTS_KEPT), each with its input and line,
 * and every one to o->rejects when asked. */
static struct words_matcher *compile_lists(const struct build_opts *o, const struct words_opts *w,
                                           struct words_summary *sum, char *err, size_t errlen)
{
    struct build_rej rej = {0};
    struct words_builder *b = words_builder_new(w, err, errlen);
    struct words_matcher *m = NULL;
    if (!b)
        return NULL;
    if (o->rejects)
        words_builder_on_reject(b, rej_line, &rej);
    if (build_each_input(o, &rej, add_input, b, err, errlen) == 0 &&
        (m = words_builder_compile(b, err, errlen)))
        *sum = *words_builder_summary(b);
    words_builder_free(b);
    if (build_rej_close(&rej, m != NULL, err, errlen) != 0) {
        words_matcher_free(m);
        m = NULL;
    }
    return m;
}

/* --journal: a words filter's journals replayed onto the compiled lists as
 * the daemon replays them (into a delta over the list: store/amend.c's op
 * for each record), then the list compiled again with the changes in it. */
struct jfold {
    struct words_delta *d;
    uint64_t items, changed, unread;
    char why[256]; /* the first item the list's settings could not read */
};

/* journal_op_fn: one record's item. Main thread. */
static int jfold_item(void *ctx, enum journal_op op, int64_t time_ms, const void *item, size_t len)
{
    struct jfold *j = ctx;
    char why[256];
    (void)time_ms;
    j->items++;
    int rc = words_delta_apply(j->d, amend_words_op(op), item, len, why, sizeof(why));
    if (rc > 0)
        j->changed++;
    if (rc < 0 && j->unread++ == 0)
        snprintf(j->why, sizeof(j->why), "%s", why);
    return 0;
}

/* The list m with the journals of o in it: a new matcher (m is freed), *sum
 * its counts, *j what the journals held. NULL with err (m freed). A torn
 * tail is left out with a warning, as for the other kinds. */
static struct words_matcher *fold_journals(const struct build_opts *o, struct words_matcher *m,
                                           struct words_summary *sum, struct jfold *j, char *err,
                                           size_t errlen)
{
    struct words_matcher *out = NULL;
    if (!(j->d = words_delta_new(m, SIZE_MAX, err, errlen)))
        goto done;
    for (size_t i = 0; i < o->n_journals; i++) {
        struct journal_scan js;
        if (journal_read_file_ops(o->journals[i], jfold_item, j, &js, err, errlen) < 0)
            goto done;
        if (js.torn_at != JOURNAL_NO_TEAR)
            fprintf(stderr, "bloomgate: %s: torn tail at offset %llu (%llu bytes: %s) left out\n",
                    o->journals[i], (unsigned long long)js.torn_at,
                    (unsigned long long)js.torn_bytes, js.torn_why);
    }
    out = words_delta_fold(j->d, sum, err, errlen);
done:
    words_delta_free(j->d);
    j->d = NULL;
    words_matcher_free(m);
    return out;
}

int build_words_main(const struct build_opts *o, const struct words_opts *w, bool quiet)
{
    char err[1024] = "", why[512];
    double t0 = util_now();
    struct words_summary s = {0};
    struct jfold j = {0};
    struct words_matcher *m = compile_lists(o, w, &s, err, sizeof(err));
    if (m && o->n_journals) {
        struct words_summary lists = s;
        m = fold_journals(o, m, &s, &j, err, sizeof(err));
        /* What the lists' lines were stays the lists' (the fold's builder
         * read none). */
        s.lines = lists.lines, s.rejects = lists.rejects, s.nkept = lists.nkept;
        memcpy(s.first, lists.first, sizeof(s.first));
    }
    if (!m)
        return tool_runtime_error(err);
    double t_compile = util_now() - t0;
    struct filter_plan plan;
    unsigned char *body = NULL;
    size_t len = 0;
    int rc = EXIT_RUNTIME;
    if (words_serialize(m, &body, &len, why, sizeof(why)) != 0) {
        snprintf(err, sizeof(err), "%s", why);
        goto out;
    }
    if (build_write_section(o, FILTER_BLOCKED, TIER_CAPACITY, 0.01, 1, FILTER_KEYS_WORDS,
                            FORMAT_SECTION_WORDS, body, len, "the Bloom part", &plan, err,
                            sizeof(err)) != 0)
        goto out;
    rc = 0;
    if (!quiet) {
        char hb[64], mb[64];
        const struct words_opts *mo = words_matcher_opts(m);
        printf("built %s: keys words, %zu entries compiled, %s in the file, %s in memory "
               "(%.3f s)\n",
               o->output, words_count(m), util_human_bytes(len, hb, sizeof(hb)),
               util_human_bytes(words_memory(m), mb, sizeof(mb)), t_compile);
        printf("lines: %zu read; words: %zu (%zu phrases, %zu substrings), %zu exceptions; "
               "%zu duplicates after normalisation; %zu rejected\n",
               s.lines, s.words, s.phrases, s.substrings, s.exceptions, s.duplicates, s.rejects);
        if (o->n_journals)
            printf("journals: %llu items, %llu changed the list%s%s\n", (unsigned long long)j.items,
                   (unsigned long long)j.changed,
                   j.unread ? "; unreadable with the list's settings, left out: " : "",
                   j.unread ? j.why : "");
        if (o->rejects && s.rejects)
            printf("rejects: every one written to %s\n", o->rejects);
        else if (s.rejects > s.nkept)
            printf("rejects: the first %zu are named above, on stderr\n", s.nkept);
        printf("settings: nfkc %s, zh %s, whole_word %s, skip \"%s\"\n", mo->nfkc ? "on" : "off",
               mo->zh ? "on" : "off", mo->whole_word ? "on" : "off",
               mo->skip ? mo->skip : WORDS_SKIP_DEFAULT);
        printf("%.3f s\n", util_now() - t0);
    }
out:
    words_matcher_free(m);
    free(body);
    return rc != 0 ? tool_runtime_error(err) : 0;
}

struct words_matcher *build_words_load(const char *path, const struct format_info *fi, char *err,
                                       size_t errlen)
{
    void *body;
    size_t len;
    char why[512];
    struct words_matcher *m = NULL;
    if (format_read_section(path, fi, &body, &len, err, errlen) == 0) {
        if (!(m = words_load(body, len, why, sizeof(why))))
            snprintf(err, errlen, "%s: the compiled word list: %s", path, why);
        free(body);
    }
    return m;
}

int build_words_opt(int c, const char *arg, struct words_opts *w)
{
    if (c == 'K') {
        w->skip = arg;
        return 0;
    }
    bool on = strcmp(arg, "on") == 0;
    if (!on && strcmp(arg, "off") != 0) {
        tool_usage_error("build: --%s: '%s' is not on or off",
                         c == 'N'   ? "nfkc"
                         : c == 'Z' ? "zh"
                                    : "whole-word",
                         arg);
        return -1;
    }
    *(c == 'N' ? &w->nfkc : c == 'Z' ? &w->zh : &w->whole_word) = on;
    return 0;
}

json_t *build_words_info_json(const char *path, const struct format_info *fi, char *err,
                              size_t errlen)
{
    struct words_matcher *m = build_words_load(path, fi, err, errlen);
    if (!m)
        return NULL;
    json_t *j = views_words_json(m);
    words_matcher_free(m);
    return j;
}

int build_words_verify(const char *path, const struct format_info *fi, double t0, char *err,
                       size_t errlen)
{
    struct words_matcher *m = build_words_load(path, fi, err, errlen);
    if (!m)
        return -1;
    printf("%s: ok: %u shards and the compiled word list (%zu entries), %llu bytes, every "
           "checksum matches (%.3f s)\n",
           path, fi->plan.shard_count, words_count(m), (unsigned long long)fi->file_size,
           util_now() - t0);
    words_matcher_free(m);
    return 0;
}

int build_words_cli(struct build_opts *o, const struct words_opts *w, bool words, bool keys_given,
                    bool dry, bool quiet, const char *const *inputs, size_t n_inputs)
{
    if (!words)
        return tool_usage_error("build: --nfkc, --zh, --whole-word and --skip are a word list's "
                                "settings (--format words)");
    if (dry)
        return tool_usage_error("build --dry-run plans a Bloom filter; a words build is sized by "
                                "its lists");
    if (!o->output)
        return tool_usage_error("build: -o FILE is required");
    if (keys_given && o->keys != FILTER_KEYS_WORDS)
        return tool_usage_error("build: --format words gives words keys, not %s",
                                format_keys_name(o->keys));
    o->keys = FILTER_KEYS_WORDS;
    o->inputs = inputs;
    o->n_inputs = n_inputs;
    return build_words_main(o, w, quiet);
}
