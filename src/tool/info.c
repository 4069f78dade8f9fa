/* bloomgate info and verify: what a filter file holds, and whether every
 * checksum in it (and the sections and tables it names) holds; and the JSON
 * and option helpers the build's dry run shares with them. Main thread. */
#include "config.h"


#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adblock/adblock.h"
#include "tool/build.h"
#include "tool/build_adblock.h"
#include "tool/build_exact.h"
#include "tool/build_words.h"
#include "core/views.h"
#include "tool/cli.h"
#include "url/lists.h"
#include "bloom/filter.h"
#include "bloom/format.h"
#include "store/journal.h"
#include "bloom/sizing.h"
#include "base/util.h"

static json_t *hex_seed(uint64_t seed)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)seed);
    return json_string(buf);
}

/* The JSON object of `info` and `build --dry-run`: the same fields for a file
 * and for a plan, so scripts can read either. */
json_t *tool_info_object(enum filter_keys keys, const struct filter_plan *p, uint64_t items,
                           uint64_t bits_set, double fpr_estimated, uint64_t seed,
                           int64_t build_time)
{
    uint64_t bytes = filter_plan_bytes(p);
    json_t *o = json_object();
    json_object_set_new(o, "keys", json_string(format_keys_name(keys)));
    json_object_set_new(o, "layout", json_string(filter_layout_name(p->layout)));
    json_object_set_new(o, "capacity", json_integer((json_int_t)p->capacity));
    json_object_set_new(o, "fpr_target", json_real(p->fpr_target));
    json_object_set_new(o, "fpr_expected", json_real(p->fpr_expected));
    json_object_set_new(o, "fpr_estimated", json_real(fpr_estimated));
    json_object_set_new(o, "items", json_integer((json_int_t)items));
    json_object_set_new(o, "k", json_integer(p->k));
    json_object_set_new(o, "shards", json_integer(p->shard_count));
    json_object_set_new(o, "bits_per_shard", json_integer((json_int_t)p->bits_per_shard));
    json_object_set_new(o, "bytes", json_integer((json_int_t)bytes));
    json_object_set_new(o, "bits_per_item", json_real((double)bytes * 8 / (double)p->capacity));
    json_object_set_new(o, "fill", json_real((double)bits_set / ((double)bytes * 8)));
    json_object_set_new(o, "seed", seed ? hex_seed(seed) : json_null());
    if (build_time > 0) {
        char ts[32];
        struct tm tm;
        time_t t = (time_t)build_time;
        gmtime_r(&t, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_set_new(o, "build_time", json_string(ts));
    }
    return o;
}

void tool_print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    if (s)
        puts(s);
    free(s);
    json_decref(o);
}

int tool_parse_threads(const char *s, unsigned *out)
{
    uint64_t v;
    if (util_parse_u64(s, &v) != 0 || v < 1 || v > 1024)
        return -1;
    *out = (unsigned)v;
    return 0;
}

int tool_cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h')
            return tool_help("info");
        return tool_usage_error("info: bad option");
    }
    const char *file = NULL;
    if (tool_one_file_arg(argc, argv, "info", &file))
        return EXIT_USAGE;
    if (optind < argc)
        return tool_usage_error("info: one FILE only");
    struct format_info fi;
    char err[1024];
    if (format_read_info(file, &fi, err, sizeof(err)) != 0)
        return tool_runtime_error(err);
    /* The header does not store the model's expectation: recompute it. */
    struct filter_plan p = fi.plan;
    uint64_t total = filter_plan_bytes(&p) * 8;
    double est = p.layout == FILTER_FUSE ? ldexp(1.0, -(int)p.k) /* 2^-f, however full */
                 : p.layout == FILTER_BLOCKED
                     ? sizing_estimate_fpr_blocked(total, fi.bits_set, p.k)
                     : sizing_estimate_fpr_classic(total, fi.bits_set, p.k);
    p.fpr_expected = p.layout == FILTER_FUSE ? est
                     : p.layout == FILTER_BLOCKED
                         ? sizing_blocked_fpr((double)total / (double)p.capacity, p.k)
                         : sizing_classic_fpr((double)total, (double)p.capacity, p.k);
    json_t *j = json_object();
    json_object_set_new(j, "file", json_string(file));
    json_object_set_new(j, "format_version", json_integer(fi.version));
    json_t *rest = tool_info_object(fi.keys, &p, fi.items, fi.bits_set, est, fi.seed, fi.build_time);
    json_object_update(j, rest);
    json_decref(rest);
    json_object_set_new(j, "file_bytes", json_integer((json_int_t)fi.file_size));
    /* The content's name: what INFO <filter> shows as "checksum" once a
     * daemon serves this file (scripts/ship.sh compares the two). */
    char sum[17];
    snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)fi.checksum);
    json_object_set_new(j, "checksum", json_string(sum));
    if (fi.keys == FILTER_KEYS_ADBLOCK) {
        struct adblock_engine *e = build_adblock_load(file, &fi, err, sizeof(err));
        if (!e) {
            format_info_free(&fi);
            json_decref(j);
            return tool_runtime_error(err);
        }
        json_object_set_new(j, "adblock", views_adblock_json(e));
        adblock_engine_free(e);
    }
    json_t *w = NULL; /* a words file's list, loaded back */
    if (fi.keys == FILTER_KEYS_WORDS && !(w = build_words_info_json(file, &fi, err, sizeof(err)))) {
        format_info_free(&fi);
        json_decref(j);
        return tool_runtime_error(err);
    }
    if (w)
        json_object_set_new(j, "words", w);
    json_t *x = NULL; /* the exact table the file names, if any */
    if (fi.section_kind == FORMAT_SECTION_EXACT &&
        !(x = build_exact_info_json(file, &fi, err, sizeof(err)))) {
        format_info_free(&fi);
        json_decref(j);
        return tool_runtime_error(err);
    }
    json_object_set_new(j, "exact", x ? x : json_null());
    format_info_free(&fi);
    tool_print_json(j);
    return 0;
}

int tool_cmd_verify(int argc, char **argv)
{
    static const struct option opts[] = {{"threads", required_argument, NULL, 't'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    unsigned threads = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
        if (c == 't' && tool_parse_threads(optarg, &threads) == 0)
            continue;
        if (c == 'h')
            return tool_help("verify");
        return tool_usage_error("verify: bad option");
    }
    const char *file = NULL;
    if (tool_one_file_arg(argc, argv, "verify", &file))
        return EXIT_USAGE;
    if (optind < argc)
        return tool_usage_error("verify: one FILE only");
    char err[1024];
    double t0 = util_now();
    int bad = format_verify(file, threads, err, sizeof(err));
    if (bad != 0)
        return tool_runtime_error(err);
    struct format_info fi;
    if (format_read_info(file, &fi, err, sizeof(err)) != 0)
        return tool_runtime_error(err);
    /* An adblock file's engine is compiled back too: every offset checked,
     * every regex compiled, as the daemon will. */
    if (fi.keys == FILTER_KEYS_ADBLOCK) {
        struct adblock_engine *e = build_adblock_load(file, &fi, err, sizeof(err));
        if (!e) {
            format_info_free(&fi);
            return tool_runtime_error(err);
        }
        printf("%s: ok: %u shards and the compiled lists (%llu rules), %llu bytes, every "
               "checksum matches (%.3f s)\n",
               file, fi.plan.shard_count,
               (unsigned long long)(adblock_engine_summary(e)->blocks +
                                    adblock_engine_summary(e)->exceptions),
               (unsigned long long)fi.file_size, util_now() - t0);
        adblock_engine_free(e);
        format_info_free(&fi);
        return 0;
    }
    /* A words file's list is loaded back too, as the daemon will. */
    if (fi.keys == FILTER_KEYS_WORDS) {
        int rc = build_words_verify(file, &fi, t0, err, sizeof(err));
        format_info_free(&fi);
        return rc == 0 ? 0 : tool_runtime_error(err);
    }
    char xs[64] = ""; /* the exact table the file names is read whole too */
    if (build_exact_verify(file, &fi, xs, sizeof(xs), err, sizeof(err)) != 0) {
        format_info_free(&fi);
        return tool_runtime_error(err);
    }
    printf("%s: ok: %u shards%s, %llu bytes, every checksum matches (%.3f s)\n", file,
           fi.plan.shard_count, xs, (unsigned long long)fi.file_size, util_now() - t0);
    format_info_free(&fi);
    return 0;
}

