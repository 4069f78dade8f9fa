/* Unit tests for the offline builder (src/tool/build.c): the line scanner as a pure
 * function, then build_run end to end on temporary files: what goes in comes
 * out of format_load, sizing from the input, several inputs, empty and bad
 * inputs, the line-length limit, and thread counts not changing the bits. */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "store/loader.h"
#include "store/registry.h"
#include "tool/build.h"
#include "bloom/filter.h"
#include "bloom/format.h"
#include "lib/testutil.h"

#define SEED 0xb0115eedull

/* ---- build_next_item ---- */

struct want {
    const char *data;
    size_t len;
};
/* clang-format off */
#define W(s) {s, sizeof(s) - 1}
/* clang-format on */

/* Scan buf to the end with repeated calls; compare the items with want[] and
 * the final position with end_pos. */
static void scan_expect(const char *buf, size_t len, bool last, const struct want *want, size_t n,
                        size_t end_pos)
{
    size_t pos = 0, got = 0;
    struct filter_key it;
    while (build_next_item(buf, len, last, &pos, &it)) {
        ck_assert_msg(got < n, "buffer %zu bytes: more than %zu items", len, n);
        ck_assert_msg(it.len == want[got].len && memcmp(it.data, want[got].data, it.len) == 0,
                      "item %zu: got %zu bytes \"%.*s\", want \"%s\"", got, it.len, (int)it.len,
                      (const char *)it.data, want[got].data);
        /* The item points into the buffer; pos is past its line. */
        ck_assert((const char *)it.data >= buf && (const char *)it.data + it.len <= buf + len);
        ck_assert_uint_le(pos, len);
        ck_assert_uint_gt(pos, (size_t)((const char *)it.data - buf));
        got++;
    }
    ck_assert_msg(got == n, "%zu items, want %zu", got, n);
    ck_assert_msg(pos == end_pos, "ended at %zu, want %zu", pos, end_pos);
    /* Once done, done: another call finds nothing and stays put. */
    ck_assert_int_eq(build_next_item(buf, len, last, &pos, &it), 0);
    ck_assert_uint_eq(pos, end_pos);
}

/* end_pos END: the whole buffer consumed. */
#define END ((size_t)-1)
#define SCAN(lit, last, end_pos, ...)                                                              \
    do {                                                                                           \
        static const struct want w_[] = {__VA_ARGS__};                                             \
        scan_expect(lit, sizeof(lit) - 1, last, w_, sizeof(w_) / sizeof(w_[0]),                    \
                    (end_pos) == END ? sizeof(lit) - 1 : (end_pos));                               \
    } while (0)
#define SCAN_NONE(lit, last, end_pos)                                                              \
    scan_expect(lit, sizeof(lit) - 1, last, NULL, 0, (end_pos) == END ? sizeof(lit) - 1 : (end_pos))

START_TEST(test_next_item_lines)
{
    SCAN("a\nbc\n", false, END, W("a"), W("bc"));
    SCAN("a\r\nbc\r\n", false, END, W("a"), W("bc")); /* CRLF */
    SCAN("a \t\nb\t \r\n", false, END, W("a"), W("b"));
    SCAN("x\v\f\n", false, END, W("x"));
    SCAN("  a\n\tb\n", false, END, W("  a"), W("\tb")); /* leading blanks are kept */
    SCAN("a b  c \n", false, END, W("a b  c"));
    SCAN("\n\n \n\t\r\n# comment\n#\na\n", false, END, W("a"));
    SCAN(" #x\na#b\n", false, END, W(" #x"), W("a#b")); /* '#' only first */
    SCAN("a\nb\n", true, END, W("a"), W("b"));
    SCAN_NONE("", false, 0);
    SCAN_NONE("", true, 0);
    SCAN_NONE("\n\n\n", false, END);
}
END_TEST

START_TEST(test_next_item_last_line)
{
    /* Without `last` an unterminated line is not an item yet: pos stays at its
     * start so the caller can carry it. */
    SCAN("a\nb", false, 2, W("a"));
    SCAN("a\nb", true, 3, W("a"), W("b"));
    SCAN("a\nb \r", true, 5, W("a"), W("b"));
    SCAN("a\n\n\nb", false, 4, W("a"));
    SCAN("a\n", true, 2, W("a"));
    SCAN_NONE("#only", false, 0);
    SCAN_NONE("#only", true, 5);
    SCAN_NONE("   ", true, 3);
    SCAN_NONE("abc", false, 0);
    SCAN("abc", true, 3, W("abc"));
}
END_TEST

START_TEST(test_next_item_nul)
{
    /* NUL is an ordinary byte: neither a terminator nor trimmed. */
    SCAN("a\0b\nc\0\n\0\n", false, END, W("a\0b"), W("c\0"), W("\0"));
    SCAN("\0#\n#\0\n", false, END, W("\0#"));
    SCAN("x\0 \n", true, END, W("x\0"));
}
END_TEST

START_TEST(test_next_item_positions)
{
    static const char buf[] = "one\ntwo\n\nthree\nfour";
    const size_t len = sizeof(buf) - 1;
    struct filter_key it;
    size_t pos = 4; /* start mid-buffer, at "two" */
    ck_assert_int_eq(build_next_item(buf, len, false, &pos, &it), 1);
    ck_assert_ptr_eq(it.data, buf + 4);
    ck_assert_uint_eq(it.len, 3);
    ck_assert_uint_eq(pos, 8);
    ck_assert_int_eq(build_next_item(buf, len, false, &pos, &it), 1); /* skips the blank */
    ck_assert_ptr_eq(it.data, buf + 9);
    ck_assert_uint_eq(it.len, 5);
    ck_assert_uint_eq(pos, 15);
    it.data = NULL;
    ck_assert_int_eq(build_next_item(buf, len, false, &pos, &it), 0);
    ck_assert_uint_eq(pos, 15);
    ck_assert_ptr_null(it.data); /* untouched when there is no item */
    ck_assert_int_eq(build_next_item(buf, len, true, &pos, &it), 1);
    ck_assert_ptr_eq(it.data, buf + 15);
    ck_assert_uint_eq(it.len, 4);
    ck_assert_uint_eq(pos, len);
    /* A shorter len hides the rest: the scanner never reads past it. */
    pos = 0;
    ck_assert_int_eq(build_next_item(buf, 6, true, &pos, &it), 1);
    ck_assert_int_eq(build_next_item(buf, 6, true, &pos, &it), 1);
    ck_assert_uint_eq(it.len, 2); /* "tw" */
    ck_assert_uint_eq(pos, 6);
    /* pos at the end already. */
    pos = len;
    ck_assert_int_eq(build_next_item(buf, len, true, &pos, &it), 0);
    ck_assert_uint_eq(pos, len);
}
END_TEST

/* ---- build_run ---- */

static const char *tmp_path(const char *name)
{
    static char paths[8][4096];
    static int next;
    char *p = paths[next++ % 8];
    return tu_path(p, 4096, name);
}

static int run(const char *const *inputs, size_t n, const char *output, uint64_t capacity,
               unsigned threads, enum filter_layout layout, struct build_result *res, char *err,
               size_t errlen)
{
    struct build_opts o = {
        .inputs = inputs,
        .n_inputs = n,
        .output = output,
        .layout = layout,
        .capacity = capacity,
        .fpr = 1e-4,
        .shards = 0,
        .threads = threads,
        .seed = SEED,
        .progress = false,
    };
    err[0] = '\0';
    return build_run(&o, res, err, errlen);
}

static struct filter *load_ok(const char *path)
{
    char err[512] = "";
    struct filter *f = format_load(path, 2, err, sizeof(err));
    ck_assert_msg(f != NULL, "load %s: %s", path, err);
    return f;
}

static bool has(const struct filter *f, const char *s)
{
    return filter_check(f, s, strlen(s));
}

START_TEST(test_build_end_to_end)
{
    /* 10000 hosts written in every form the scanner accepts, plus noise. */
    const char *in = tmp_path("list.txt"), *out = tmp_path("list.bgf");
    FILE *fp = fopen(in, "wb");
    ck_assert_ptr_nonnull(fp);
    fputs("# blocklist\n\n", fp);
    uint64_t lines = 0;
    for (int i = 0; i < 10000; i++) {
        switch (i % 5) {
        case 0:
            fprintf(fp, "host-%d.example\n", i);
            break;
        case 1:
            fprintf(fp, "host-%d.example\r\n", i);
            break;
        case 2:
            fprintf(fp, "host-%d.example \t\n", i);
            break;
        case 3:
            fprintf(fp, "host-%d.example\n# note\n   \n", i);
            break;
        case 4:
            fprintf(fp, "host-%d.example\nhost-%d.example\n", i, i);
            lines++;
            break;
        }
        lines++;
    }
    fputs("tail.example", fp); /* no final LF */
    lines++;
    ck_assert_int_eq(fclose(fp), 0);
    struct stat st;
    ck_assert_int_eq(stat(in, &st), 0);

    struct build_result res;
    char err[512];
    ck_assert_msg(run(&in, 1, out, 0, 2, FILTER_BLOCKED, &res, err, sizeof(err)) == 0, "%s", err);
    /* Sized for what the scan counts: every item line, duplicates included. */
    ck_assert_uint_eq(res.lines, lines);
    ck_assert_uint_eq(res.plan.capacity, lines);
    ck_assert_uint_eq(res.plan.layout, FILTER_BLOCKED);
    ck_assert_double_eq(res.plan.fpr_target, 1e-4);
    ck_assert_uint_eq(res.bytes_read, (uint64_t)st.st_size);
    ck_assert_uint_eq(res.seed, SEED);
    ck_assert_uint_le(res.items, 10001);
    ck_assert_uint_ge(res.items, 10001 - 5);

    struct filter *f = load_ok(out);
    char key[64];
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof(key), "host-%d.example", i);
        ck_assert_msg(has(f, key), "%s missing", key);
    }
    ck_assert(has(f, "tail.example"));
    ck_assert(!has(f, "host-2.example \t"));
    ck_assert(!has(f, "host-1.example\r"));
    ck_assert(!has(f, "# blocklist"));
    ck_assert(!has(f, "# note"));
    ck_assert(!has(f, ""));
    ck_assert_uint_eq(filter_items(f), res.items);
    ck_assert_uint_eq(f->seed, SEED);
    struct format_info info;
    ck_assert_int_eq(format_read_info(out, &info, err, sizeof(err)), 0);
    ck_assert_uint_eq(info.plan.capacity, lines);
    ck_assert_uint_eq(info.plan.k, res.plan.k);
    ck_assert_uint_eq(info.plan.shard_count, res.plan.shard_count);
    ck_assert_uint_eq(info.plan.bits_per_shard, res.plan.bits_per_shard);
    ck_assert_uint_eq(info.items, res.items);
    format_info_free(&info);
    filter_free(f);
}
END_TEST

START_TEST(test_build_given_capacity_and_classic)
{
    const char *in = tmp_path("small.txt"), *out = tmp_path("small.bgf");
    tu_write_file(in, "a\nb\nc\n", 6);
    struct build_result res;
    char err[512];
    ck_assert_msg(run(&in, 1, out, 50000, 1, FILTER_CLASSIC, &res, err, sizeof(err)) == 0, "%s",
                  err);
    ck_assert_uint_eq(res.plan.capacity, 50000);
    ck_assert_uint_eq(res.plan.layout, FILTER_CLASSIC);
    ck_assert_double_eq(res.count_seconds, 0.0); /* no counting pass */
    ck_assert_uint_eq(res.lines, 3);
    ck_assert_uint_eq(res.items, 3);
    struct filter *f = load_ok(out);
    ck_assert_int_eq(f->layout, FILTER_CLASSIC);
    ck_assert_uint_eq(f->capacity, 50000);
    ck_assert(has(f, "a") && has(f, "b") && has(f, "c") && !has(f, "d"));
    filter_free(f);
}
END_TEST

START_TEST(test_build_multiple_inputs)
{
    /* The unterminated last line of one input ends there: it is not joined to
     * the first line of the next. */
    const char *in[3] = {tmp_path("m1.txt"), tmp_path("m2.txt"), tmp_path("m3.txt")};
    const char *out = tmp_path("multi.bgf");
    tu_write_file(in[0], "a1\na2", 5);
    tu_write_file(in[1], "", 0);
    tu_write_file(in[2], "b1\r\nb2\n", 7);
    struct build_result res;
    char err[512];
    ck_assert_msg(run(in, 3, out, 0, 2, FILTER_BLOCKED, &res, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(res.lines, 4);
    ck_assert_uint_eq(res.plan.capacity, 4);
    ck_assert_uint_eq(res.items, 4);
    ck_assert_uint_eq(res.bytes_read, 12);
    struct filter *f = load_ok(out);
    ck_assert(has(f, "a1") && has(f, "a2") && has(f, "b1") && has(f, "b2"));
    ck_assert(!has(f, "a2b1"));
    ck_assert(!has(f, "a2\nb1"));
    filter_free(f);
}
END_TEST

START_TEST(test_build_empty_input)
{
    /* Nothing to add still makes a valid filter, sized for one item. */
    const char *ins[] = {tmp_path("empty.txt"), tmp_path("comments.txt")};
    tu_write_file(ins[0], "", 0);
    tu_write_file(ins[1], "# nothing\n\n  \n#\n", 16);
    for (int i = 0; i < 2; i++) {
        const char *out = tmp_path(i ? "comments.bgf" : "empty.bgf");
        struct build_result res;
        char err[512];
        ck_assert_msg(run(&ins[i], 1, out, 0, 2, FILTER_BLOCKED, &res, err, sizeof(err)) == 0, "%s",
                      err);
        ck_assert_uint_eq(res.plan.capacity, 1);
        ck_assert_uint_eq(res.lines, 0);
        ck_assert_uint_eq(res.items, 0);
        ck_assert_int_eq(format_verify(out, 1, err, sizeof(err)), 0);
        struct format_info info;
        ck_assert_int_eq(format_read_info(out, &info, err, sizeof(err)), 0);
        ck_assert_uint_eq(info.plan.capacity, 1);
        ck_assert_uint_eq(info.items, 0);
        ck_assert_uint_eq(info.bits_set, 0);
        format_info_free(&info);
        struct filter *f = load_ok(out);
        ck_assert(!has(f, "# nothing"));
        ck_assert_uint_eq(filter_items(f), 0);
        filter_free(f);
    }
}
END_TEST

START_TEST(test_build_bad_inputs)
{
    const char *good = tmp_path("good.txt"), *missing = tmp_path("missing.txt");
    const char *out = tmp_path("bad.bgf");
    tu_write_file(good, "x\n", 2);
    struct build_result res;
    char err[512];
    const char *one[] = {missing};
    ck_assert_int_eq(run(one, 1, out, 0, 1, FILTER_BLOCKED, &res, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, missing) && strstr(err, "cannot open"), "%s", err);
    /* The bad one is named even when it is not the first. */
    const char *two[] = {good, missing};
    ck_assert_int_eq(run(two, 2, out, 1000, 1, FILTER_BLOCKED, &res, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, missing) != NULL, "%s", err);
    const char *dir[] = {tu_dir};
    ck_assert_int_eq(run(dir, 1, out, 0, 1, FILTER_BLOCKED, &res, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, tu_dir) && strstr(err, "directory"), "%s", err);
    ck_assert_int_eq(access(out, F_OK), -1); /* nothing written */
    /* An output that cannot be written. */
    const char *nowhere = tmp_path("no-such-dir/out.bgf");
    const char *g[] = {good};
    ck_assert_int_eq(run(g, 1, nowhere, 0, 1, FILTER_BLOCKED, &res, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, nowhere) != NULL, "%s", err);
    /* A bad rate is the plan's error. */
    struct build_opts o = {.inputs = g,
                           .n_inputs = 1,
                           .output = out,
                           .layout = FILTER_BLOCKED,
                           .fpr = 0.9,
                           .threads = 1,
                           .seed = 1};
    err[0] = '\0';
    ck_assert_int_eq(build_run(&o, &res, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "rate") != NULL, "%s", err);
}
END_TEST

/* A file of `before` short lines, one line of `len` bytes of 'x' (then LF if
 * `lf`), and, if `lf`, one more short line. */
static void write_long_line_file(const char *path, size_t before, size_t len, bool lf)
{
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    for (size_t i = 0; i < before; i++)
        fprintf(fp, "short-%07zu\n", i); /* 14 bytes */
    char *line = malloc(len);
    ck_assert_ptr_nonnull(line);
    memset(line, 'x', len);
    ck_assert_uint_eq(fwrite(line, 1, len, fp), len);
    free(line);
    if (lf)
        fputs("\nafter\n", fp);
    ck_assert_int_eq(fclose(fp), 0);
}

static void expect_line_refused(const char *in, const char *out)
{
    struct build_result res;
    char err[512];
    ck_assert_msg(run(&in, 1, out, 0, 1, FILTER_BLOCKED, &res, err, sizeof(err)) == -1,
                  "%s: a line over 1 MiB was accepted", in);
    ck_assert_msg(strstr(err, in) && strstr(err, "longer than 1 MiB"), "%s", err);
    ck_assert_int_eq(access(out, F_OK), -1);
    /* Sizing given: no counting pass, the insert pass must refuse it too. */
    ck_assert_msg(run(&in, 1, out, 1000, 2, FILTER_BLOCKED, &res, err, sizeof(err)) == -1,
                  "%s: a line over 1 MiB was accepted (capacity given)", in);
    ck_assert_msg(strstr(err, in) && strstr(err, "longer than 1 MiB"), "%s", err);
    ck_assert_int_eq(access(out, F_OK), -1);
}

START_TEST(test_build_line_limit)
{
    const char *in = tmp_path("long.txt"), *out = tmp_path("long.bgf");
    /* Exactly 1 MiB: accepted, with and without a final LF. */
    for (int lf = 0; lf < 2; lf++) {
        write_long_line_file(in, 10, BUILD_MAX_LINE, lf);
        struct build_result res;
        char err[512];
        ck_assert_msg(run(&in, 1, out, 0, 1, FILTER_BLOCKED, &res, err, sizeof(err)) == 0, "%s",
                      err);
        ck_assert_uint_eq(res.lines, 10 + 1 + (uint64_t)lf);
        struct filter *f = load_ok(out);
        char *line = malloc(BUILD_MAX_LINE);
        memset(line, 'x', BUILD_MAX_LINE);
        ck_assert(filter_check(f, line, BUILD_MAX_LINE));
        free(line);
        filter_free(f);
        ck_assert_int_eq(unlink(out), 0);
    }
    /* One byte over as the unterminated last line, and 5 MiB (more than one
     * read) with its LF: refused, naming the file. */
    write_long_line_file(in, 10, BUILD_MAX_LINE + 1, false);
    expect_line_refused(in, out);
    write_long_line_file(in, 10, 5u << 20, true);
    expect_line_refused(in, out);
}
END_TEST

START_TEST(test_build_line_limit_inside_read)
{
    /* Once a bug: the limit was checked only on the unfinished tail of each
     * 4 MiB read, so a 2 MiB line ending inside a read, and a 1.5 MiB line
     * straddling two reads, both got through. */
    const char *in = tmp_path("long2.txt"), *out = tmp_path("long2.bgf");
    write_long_line_file(in, 10, 2u << 20, true);
    expect_line_refused(in, out);
    /* 3.5 MiB of short lines first: the read boundary falls inside the line. */
    write_long_line_file(in, (7u << 19) / 14, 3u << 19, true);
    expect_line_refused(in, out);
}
END_TEST

START_TEST(test_build_threads_same_bits)
{
    /* 400k items, ~9 MB: several 4 MiB reads, so lines straddle read
     * boundaries and two threads really interleave. The bits cannot depend on
     * the thread count; the item tally may (which key of a colliding pair
     * counts as new depends on the order), within the collision count. */
    const char *in = tmp_path("big.txt");
    const char *out[2] = {tmp_path("big1.bgf"), tmp_path("big2.bgf")};
    const uint64_t n = 400000;
    FILE *fp = fopen(in, "wb");
    ck_assert_ptr_nonnull(fp);
    for (uint64_t i = 0; i < n; i++)
        fprintf(fp, "item-%llu.example.org\n", (unsigned long long)i);
    ck_assert_int_eq(fclose(fp), 0);
    struct build_result res[2];
    char err[512];
    for (int t = 0; t < 2; t++)
        ck_assert_msg(
            run(&in, 1, out[t], 0, (unsigned)t + 1, FILTER_BLOCKED, &res[t], err, sizeof(err)) == 0,
            "%s", err);
    size_t len[2];
    unsigned char *buf[2];
    struct format_info info[2];
    for (int t = 0; t < 2; t++) {
        ck_assert_uint_eq(res[t].lines, n);
        ck_assert_uint_eq(res[t].plan.capacity, n);
        ck_assert_uint_le(res[t].items, n);
        ck_assert_uint_ge(res[t].items, n - n / 1000);
        buf[t] = tu_read_file(out[t], &len[t]);
        ck_assert_int_eq(format_read_info(out[t], &info[t], err, sizeof(err)), 0);
    }
    printf("build of %llu items: 1 thread %llu new, 2 threads %llu new, %u shards\n",
           (unsigned long long)n, (unsigned long long)res[0].items,
           (unsigned long long)res[1].items, info[0].plan.shard_count);
    fflush(stdout);
    ck_assert_uint_eq(len[0], len[1]);
    ck_assert_uint_eq(info[0].plan.k, info[1].plan.k);
    ck_assert_uint_eq(info[0].plan.shard_count, info[1].plan.shard_count);
    ck_assert_uint_eq(info[0].plan.bits_per_shard, info[1].plan.bits_per_shard);
    ck_assert_uint_eq(info[0].seed, info[1].seed);
    ck_assert_uint_eq(info[0].bits_set, info[1].bits_set);
    for (uint32_t s = 0; s < info[0].plan.shard_count; s++) {
        ck_assert_uint_eq(info[0].shards[s].bits_set, info[1].shards[s].bits_set);
        ck_assert_uint_eq(info[0].shards[s].checksum, info[1].shards[s].checksum);
    }
    /* The payloads, byte for byte (the header differs in build time). */
    ck_assert_int_eq(memcmp(buf[0] + info[0].payload_offset, buf[1] + info[1].payload_offset,
                            len[0] - info[0].payload_offset),
                     0);
    struct filter *f = load_ok(out[1]);
    char key[64];
    for (uint64_t i = 0; i < n; i++) {
        size_t kl = tu_key(key, "item-", i);
        memcpy(key + kl, ".example.org", 13);
        ck_assert_msg(filter_check(f, key, kl + 12), "%s missing", key);
    }
    filter_free(f);
    for (int t = 0; t < 2; t++) {
        format_info_free(&info[t]);
        free(buf[t]);
    }
}
END_TEST

/* ---- lists of host and url keys ---- */

START_TEST(test_next_line_raw)
{
    /* Nothing trimmed or skipped: url/lists classifies blank lines and
     * comments, and "##" opens an Adblock rule. */
    static const char buf[] = "##.ad\n\n# c \r\n  x\nlast";
    const char *want[] = {"##.ad", "", "# c \r", "  x", "last"};
    size_t len = sizeof(buf) - 1, pos = 0, i = 0;
    struct filter_key l;
    while (build_next_line(buf, len, false, &pos, &l)) {
        ck_assert_uint_lt(i, 4);
        ck_assert_uint_eq(l.len, strlen(want[i]));
        ck_assert_int_eq(memcmp(l.data, want[i], l.len), 0);
        i++;
    }
    ck_assert_uint_eq(i, 4); /* "last" has no LF and this is not the last chunk */
    ck_assert_int_eq(build_next_line(buf, len, true, &pos, &l), 1);
    ck_assert_uint_eq(l.len, 4);
    ck_assert_uint_eq(pos, len);
    ck_assert_int_eq(build_next_line(buf, len, true, &pos, &l), 0);
    pos = 0; /* a final LF ends the input: no empty line after it */
    ck_assert_int_eq(build_next_line("a\n", 2, true, &pos, &l), 1);
    ck_assert_int_eq(build_next_line("a\n", 2, true, &pos, &l), 0);
}
END_TEST

START_TEST(test_key_forms)
{
    static const struct {
        enum filter_keys keys;
        const char *key;
        enum build_form form;
    } c[] = {
        {FILTER_KEYS_URL, "evil.example/", BUILD_FORM_HOST},
        {FILTER_KEYS_URL, "evil.example/x.exe", BUILD_FORM_PATH},
        {FILTER_KEYS_URL, "evil.example/?q", BUILD_FORM_PATH},
        {FILTER_KEYS_URL, "1.2.3.4/", BUILD_FORM_IP},
        {FILTER_KEYS_URL, "1.2.3.4/a", BUILD_FORM_PATH},
        {FILTER_KEYS_URL, "[2001:db8::1]/", BUILD_FORM_IP},
        {FILTER_KEYS_URL, "1.2.3.4.5/", BUILD_FORM_HOST},
        {FILTER_KEYS_HOST, "evil.example", BUILD_FORM_HOST},
        {FILTER_KEYS_HOST, "10.0.0.1", BUILD_FORM_IP},
        {FILTER_KEYS_HOST, "2001:db8::1", BUILD_FORM_IP},
        {FILTER_KEYS_HOST, "123", BUILD_FORM_HOST},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
        ck_assert_msg(build_key_form(c[i].keys, c[i].key, strlen(c[i].key)) == c[i].form,
                      "%s: form %s", c[i].key,
                      build_form_name(build_key_form(c[i].keys, c[i].key, strlen(c[i].key))));
    ck_assert_str_eq(build_form_name(BUILD_FORM_PATH), "url");
}
END_TEST

/* A hosts list with every kind of line, built as host and as url keys, on
 * one thread and two: the same counts, the same keys, the rejects written. */
START_TEST(test_build_hosts_list)
{
    const char *in = tmp_path("hosts.txt"), *out = tmp_path("hosts.bgf");
    const char *rej = tmp_path("hosts.rej");
    static const char text[] = "# a hosts file\r\n"
                               "\n"
                               "127.0.0.1 localhost\n"
                               "0.0.0.0 Evil.Example.\n"
                               "0.0.0.0 a.evil.example b.example # two more\n"
                               "0.0.0.0 evil.example\n" /* a duplicate once canonical */
                               "0.0.0.0 10.1.515\n"     /* an IPv4 address as a name */
                               "0.0.0.0\n"              /* no name */
                               "evil.example\n"         /* no address */
                               "::1 ip6-localhost ip6-loopback\n"
                               "0.0.0.0 bad/host\n";
    tu_write_file(in, text, sizeof(text) - 1);
    for (int round = 0; round < 4; round++) {
        enum filter_keys keys = round & 1 ? FILTER_KEYS_URL : FILTER_KEYS_HOST;
        const char *inputs[] = {in};
        struct build_opts o = {.inputs = inputs,
                               .n_inputs = 1,
                               .output = out,
                               .layout = FILTER_BLOCKED,
                               .fpr = 1e-4,
                               .threads = round < 2 ? 1 : 2,
                               .seed = SEED,
                               .keys = keys,
                               .format = LISTS_HOSTS,
                               .rejects = rej};
        struct build_result r;
        char err[512] = "";
        ck_assert_msg(build_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
        ck_assert(r.parsed);
        const struct build_tally *t = &r.tally;
        ck_assert_uint_eq(t->lines, 11);
        ck_assert_uint_eq(r.lines, 11);
        ck_assert_uint_eq(t->cls[LISTS_KEPT], 4);
        ck_assert_uint_eq(t->cls[LISTS_BLANK], 1);
        ck_assert_uint_eq(t->cls[LISTS_COMMENT], 1);
        ck_assert_uint_eq(t->cls[LISTS_IGNORED], 2);
        ck_assert_uint_eq(t->cls[LISTS_REJECTED], 3);
        ck_assert_uint_eq(t->rejected[LISTS_REJ_NO_NAME], 1);
        ck_assert_uint_eq(t->rejected[LISTS_REJ_NO_ADDRESS], 1);
        ck_assert_uint_eq(t->rejected[LISTS_REJ_BAD_HOST], 1);
        ck_assert_uint_eq(t->ignored_names, 3);
        ck_assert_uint_eq(t->kept[BUILD_FORM_HOST], 4);
        ck_assert_uint_eq(t->fresh[BUILD_FORM_HOST], 3);
        ck_assert_uint_eq(t->kept[BUILD_FORM_IP], 1);
        ck_assert_uint_eq(t->fresh[BUILD_FORM_IP], 1);
        ck_assert_uint_eq(t->kept[BUILD_FORM_PATH], 0);
        ck_assert_uint_eq(r.plan.capacity, 5); /* sized for the keys, not the lines */
        ck_assert_uint_eq(r.items, 4);
        struct filter *f = load_ok(out);
        ck_assert_int_eq(f->keys, keys);
        bool u = keys == FILTER_KEYS_URL;
        ck_assert(has(f, u ? "evil.example/" : "evil.example"));
        ck_assert(has(f, u ? "a.evil.example/" : "a.evil.example"));
        ck_assert(has(f, u ? "b.example/" : "b.example"));
        ck_assert(has(f, u ? "10.1.2.3/" : "10.1.2.3"));
        ck_assert(!has(f, "Evil.Example."));
        ck_assert(!has(f, u ? "localhost/" : "localhost"));
        filter_free(f);
        size_t len;
        char *rt = (char *)tu_read_file(rej, &len);
        ck_assert_msg(strstr(rt, "\tno-name\t") && strstr(rt, "\t0.0.0.0\n"), "%s", rt);
        ck_assert_msg(strstr(rt, "\tno-address\t") && strstr(rt, "\tevil.example\n"), "%s", rt);
        ck_assert_msg(strstr(rt, "\tbad-host\t") && strstr(rt, "\t0.0.0.0 bad/host\n"), "%s", rt);
        int nl = 0;
        for (size_t i = 0; i < len; i++)
            nl += rt[i] == '\n';
        ck_assert_int_eq(nl, 3);
        ck_assert_msg(strncmp(rt, in, strlen(in)) == 0, "rejects line lacks the input: %s", rt);
        free(rt);
    }
}
END_TEST

START_TEST(test_build_list_combinations)
{
    /* What the tool refuses as usage errors, build_run refuses too. */
    const char *in = tmp_path("c.txt"), *out = tmp_path("c.bgf");
    tu_write_file(in, "||evil.example^\n", 16);
    const char *inputs[] = {in};
    const char *journals[] = {tmp_path("no.journal")};
    struct build_opts o = {.inputs = inputs,
                           .n_inputs = 1,
                           .output = out,
                           .layout = FILTER_BLOCKED,
                           .fpr = 1e-4,
                           .seed = SEED,
                           .keys = FILTER_KEYS_EXACT,
                           .format = LISTS_ADBLOCK};
    struct build_result r;
    char err[512] = "";
    ck_assert_int_eq(build_run(&o, &r, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "not exact items"), "%s", err);
    o.keys = FILTER_KEYS_HOST;
    o.journals = journals;
    o.n_journals = 1;
    tu_write_file(journals[0], "", 0); /* an empty journal is valid */
    ck_assert_int_eq(build_run(&o, &r, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "journals hold exact items"), "%s", err);
    o.n_journals = 0;
    o.rejects = tmp_path("no/such/dir/r.txt");
    ck_assert_int_eq(build_run(&o, &r, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "rejects file"), "%s", err);
    o.rejects = NULL;
    ck_assert_msg(build_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(r.items, 1);
}
END_TEST

/* ---- the config's `keys` against the file (store/loader.c) ---- */

static struct fversion *load_with(const char *file, const char *keys_line, char *err, size_t errlen)
{
    char text[8192];
    snprintf(text, sizeof(text), "filter f {\n    %s %s\n    %s\n}\n", file ? "file" : "capacity",
             file ? file : "1000", keys_line);
    struct conf *c = conf_parse(text, strlen(text), NULL, err, errlen);
    ck_assert_msg(c != NULL, "%s", err);
    err[0] = '\0';
    struct fversion *v = loader_load_filter(&c->filters[0], 1, err, errlen);
    conf_free(c);
    return v;
}

START_TEST(test_loader_checks_keys)
{
    const char *in = tmp_path("k.txt"), *out = tmp_path("k.bgf");
    tu_write_file(in, "||evil.example^\n", 16);
    const char *inputs[] = {in};
    struct build_opts o = {.inputs = inputs,
                           .n_inputs = 1,
                           .output = out,
                           .layout = FILTER_BLOCKED,
                           .fpr = 1e-4,
                           .seed = SEED,
                           .keys = FILTER_KEYS_URL,
                           .format = LISTS_ADBLOCK};
    struct build_result r;
    char err[1024] = "";
    ck_assert_msg(build_run(&o, &r, err, sizeof(err)) == 0, "%s", err);
    struct fversion *v = load_with(out, "keys url", err, sizeof(err));
    ck_assert_msg(v != NULL, "%s", err);
    ck_assert_int_eq(v->f->keys, FILTER_KEYS_URL);
    fversion_free(v);
    v = load_with(out, "", err, sizeof(err)); /* not given: the file decides */
    ck_assert_msg(v != NULL, "%s", err);
    ck_assert_int_eq(v->f->keys, FILTER_KEYS_URL);
    fversion_free(v);
    /* Disagreeing: refused, naming the filter, the file and both kinds. */
    v = load_with(out, "keys exact", err, sizeof(err));
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err, "filter f:") && strstr(err, out) && strstr(err, "holds url keys") &&
                      strstr(err, "says keys exact"),
                  "%s", err);
    v = load_with(out, "keys host", err, sizeof(err));
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err, "holds url keys") && strstr(err, "says keys host"), "%s", err);
    /* A filter that starts empty takes the config's kind (exact if none). */
    v = load_with(NULL, "keys host", err, sizeof(err));
    ck_assert_msg(v != NULL, "%s", err);
    ck_assert_int_eq(v->f->keys, FILTER_KEYS_HOST);
    fversion_free(v);
    v = load_with(NULL, "", err, sizeof(err));
    ck_assert_msg(v != NULL, "%s", err);
    ck_assert_int_eq(v->f->keys, FILTER_KEYS_EXACT);
    fversion_free(v);
    /* An unknown kind is a config error. */
    static const char bad[] = "filter f {\n capacity 10\n keys domain\n}\n";
    ck_assert_ptr_null(conf_parse(bad, sizeof(bad) - 1, NULL, err, sizeof(err)));
    ck_assert_msg(strstr(err, "keys"), "%s", err);
}
END_TEST

static Suite *build_suite(void)
{
    Suite *s = suite_create("build");
    TCase *tc = tcase_create("next_item");
    tcase_add_test(tc, test_next_item_lines);
    tcase_add_test(tc, test_next_item_last_line);
    tcase_add_test(tc, test_next_item_nul);
    tcase_add_test(tc, test_next_item_positions);
    tcase_add_test(tc, test_next_line_raw);
    tcase_add_test(tc, test_key_forms);
    suite_add_tcase(s, tc);

    tc = tcase_create("run");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_build_end_to_end);
    tcase_add_test(tc, test_build_given_capacity_and_classic);
    tcase_add_test(tc, test_build_multiple_inputs);
    tcase_add_test(tc, test_build_empty_input);
    tcase_add_test(tc, test_build_bad_inputs);
    tcase_add_test(tc, test_build_line_limit);
    tcase_add_test(tc, test_build_threads_same_bits);
    tcase_add_test(tc, test_build_hosts_list);
    tcase_add_test(tc, test_build_list_combinations);
    tcase_add_test(tc, test_loader_checks_keys);
    suite_add_tcase(s, tc);

    tc = tcase_create("long_line");
    tcase_add_unchecked_fixture(tc, tu_dir_setup, tu_dir_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_build_line_limit_inside_read);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run(build_suite());
}
