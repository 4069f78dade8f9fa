/* The builder's inputs and the line splitter (tool/build_input.h): reading,
 * spooling, counting. The calling thread opens and counts; workers call
 * build_reader_next under the reader's mutex. */
#include "config.h"

#include "tool/build_input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

#define READ_CHUNK (4u << 20)

static inline bool is_trim(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

int build_next_item(const char *buf, size_t len, bool last, size_t *pos, struct filter_key *item)
{
    size_t p = *pos;
    while (p < len) {
        const char *nl = memchr(buf + p, '\n', len - p);
        size_t end, next;
        if (nl) {
            end = (size_t)(nl - buf);
            next = end + 1;
        } else if (last) {
            end = len;
            next = len;
        } else {
            break;
        }
        size_t start = p;
        p = next;
        while (end > start && is_trim((unsigned char)buf[end - 1]))
            end--;
        if (end == start || buf[start] == '#')
            continue;
        item->data = buf + start;
        item->len = end - start;
        *pos = p;
        return 1;
    }
    *pos = p;
    return 0;
}

int build_next_line(const char *buf, size_t len, bool last, size_t *pos, struct filter_key *line)
{
    size_t p = *pos;
    if (p >= len)
        return 0;
    const char *nl = memchr(buf + p, '\n', len - p);
    size_t end;
    if (nl)
        end = (size_t)(nl - buf);
    else if (last)
        end = len;
    else
        return 0;
    line->data = buf + p;
    line->len = end - p;
    *pos = nl ? end + 1 : len;
    return 1;
}

int build_reader_fail(struct reader *rd, const char *fmt, ...)
{
    if (!rd->failed) {
        va_list ap;
        va_start(ap, fmt);
        rd->failed = true;
        vsnprintf(rd->err, sizeof(rd->err), fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Fill *buf (growing it if a line is longer than the buffer) with whole lines:
 * the carried partial line, then one read. Returns the chunk length, with
 * *last set when the chunk ends an input without a final LF; 0 at the end of
 * all inputs; -1 on error. Called with rd->mu held. Only the unfinished tail
 * is checked against BUILD_MAX_LINE here (it bounds the carry); complete lines
 * are checked by whoever scans the chunk, outside the lock. */
ssize_t build_reader_next(struct reader *rd, char **buf, size_t *cap, bool *last,
                          struct chunk_origin *origin)
{
    *last = false;
    while (rd->cur < rd->n_inputs && !rd->failed) {
        struct input *in = &rd->inputs[rd->cur];
        if (rd->carry_len + READ_CHUNK > *cap) {
            size_t ncap = rd->carry_len + READ_CHUNK;
            char *nb = realloc(*buf, ncap);
            if (!nb)
                return build_reader_fail(rd, "%s: out of memory", in->name);
            *buf = nb;
            *cap = ncap;
        }
        size_t have = rd->carry_len;
        if (have)
            memcpy(*buf, rd->carry, have);
        rd->carry_len = 0;
        ssize_t n;
        do
            n = read(in->fd, *buf + have, *cap - have);
        while (n < 0 && errno == EINTR);
        if (n < 0)
            return build_reader_fail(rd, "%s: read failed: %s", in->name, strerror(errno));
        if (n == 0) { /* end of this input: what is carried is its last line */
            origin->name = in->name;
            origin->offset = rd->cur_offset;
            rd->cur++;
            rd->cur_offset = 0;
            if (have > 0) {
                *last = true;
                return (ssize_t)have;
            }
            continue;
        }
        size_t total = have + (size_t)n;
        char *nl = memrchr(*buf, '\n', total);
        size_t cut = nl ? (size_t)(nl - *buf) + 1 : 0;
        size_t rest = total - cut;
        if (rest > BUILD_MAX_LINE) {
            return build_reader_fail(rd, "%s: the line at byte %llu is longer than 1 MiB", in->name,
                                     (unsigned long long)(rd->cur_offset + cut));
        }
        if (rest > rd->carry_cap) {
            char *nc = realloc(rd->carry, rest);
            if (!nc)
                return build_reader_fail(rd, "%s: out of memory", in->name);
            rd->carry = nc;
            rd->carry_cap = rest;
        }
        if (rest)
            memcpy(rd->carry, *buf + cut, rest);
        rd->carry_len = rest;
        origin->name = in->name;
        origin->offset = rd->cur_offset;
        rd->cur_offset += cut;
        if (cut > 0)
            return (ssize_t)cut;
    }
    return rd->failed ? -1 : 0;
}

/* Copy a non-seekable input (stdin, a pipe) to an unlinked temporary file
 * beside the output, so it can be counted and then read again. */
static int spool(struct input *in, const char *output, char *err, size_t errlen)
{
    char tmp[4096];
    int fd = util_tmpfile_beside(output, tmp, sizeof(tmp), err, errlen);
    if (fd < 0)
        return -1;
    unlink(tmp);
    char *buf = malloc(READ_CHUNK);
    if (!buf) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (;;) {
        ssize_t n = read(in->fd, buf, READ_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: read failed: %s", in->name, strerror(errno));
            goto fail;
        }
        if (n == 0)
            break;
        if (util_write_all(fd, buf, (size_t)n) != 0) {
            snprintf(err, errlen, "spooling %s to a temporary file beside %s: %s", in->name, output,
                     strerror(errno));
            goto fail;
        }
    }
    free(buf);
    if (in->fd != STDIN_FILENO)
        close(in->fd);
    in->fd = fd;
    in->spooled = true;
    lseek(fd, 0, SEEK_SET);
    return 0;
fail:
    free(buf);
    close(fd);
    return -1;
}

/* First pass when no capacity is given: count items exactly as the build will
 * see them, so the filter is sized for the list as it is. With ll (parse
 * mode) that is the keys the lines yield, a hosts line giving up to 16. */
int build_count_items(struct input *in, struct lists_line *ll, enum lists_format fmt,
                      enum url_kind kind, uint64_t *count, char *err, size_t errlen)
{
    struct reader rd = {.inputs = in, .n_inputs = 1};
    char *buf = NULL;
    size_t cap = 0;
    bool last;
    ssize_t n;
    pthread_mutex_init(&rd.mu, NULL);
    struct chunk_origin origin;
    while ((n = build_reader_next(&rd, &buf, &cap, &last, &origin)) > 0) {
        size_t pos = 0;
        struct filter_key it;
        if (ll) {
            while (build_next_line(buf, (size_t)n, last, &pos, &it))
                if (lists_parse_line(fmt, kind, it.data, it.len, ll) == LISTS_KEPT)
                    *count += ll->n;
            continue;
        }
        while (build_next_item(buf, (size_t)n, last, &pos, &it)) {
            if (it.len > BUILD_MAX_LINE) {
                build_reader_fail(
                    &rd, "%s: the line at byte %llu is longer than 1 MiB", origin.name,
                    (unsigned long long)(origin.offset + (uint64_t)((const char *)it.data - buf)));
                n = -1;
                break;
            }
            (*count)++;
        }
        if (n < 0)
            break;
    }
    free(buf);
    free(rd.carry);
    pthread_mutex_destroy(&rd.mu);
    if (n < 0) {
        snprintf(err, errlen, "%s", rd.err);
        return -1;
    }
    if (lseek(in->fd, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "%s: cannot rewind: %s", in->name, strerror(errno));
        return -1;
    }
    return 0;
}

void build_close_inputs(struct input *in, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (in[i].fd >= 0 && in[i].fd != STDIN_FILENO)
            close(in[i].fd);
    free(in);
}

/* Opens every input (n_in entries of in, fds already -1), refusing a second
 * stdin and directories; spools an input that cannot be read twice when the
 * count pass needs it. Adds what can be known of their sizes to
 * *total_bytes, for progress. Calling thread, before any worker. */
int build_open_inputs(const struct build_opts *o, const char *const *names, struct input *in,
                      size_t n_in, uint64_t *total_bytes, char *err, size_t errlen)
{
    int stdin_used = 0;
    for (size_t i = 0; i < n_in; i++) {
        in[i].name = names[i];
        if (strcmp(names[i], "-") == 0) {
            if (stdin_used++) {
                snprintf(err, errlen, "stdin (-) given more than once");
                return -1;
            }
            in[i].name = "stdin";
            in[i].fd = STDIN_FILENO;
        } else if ((in[i].fd = open(names[i], O_RDONLY | O_CLOEXEC)) < 0) {
            snprintf(err, errlen, "%s: cannot open: %s", names[i], strerror(errno));
            return -1;
        }
        struct stat st;
        if (fstat(in[i].fd, &st) == 0 && S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "%s: is a directory", names[i]);
            return -1;
        }
        if (fstat(in[i].fd, &st) == 0 && S_ISREG(st.st_mode))
            *total_bytes += (uint64_t)st.st_size;
        else if (o->capacity == 0 && spool(&in[i], o->output, err, errlen) != 0)
            return -1;
        else if (in[i].spooled && fstat(in[i].fd, &st) == 0)
            *total_bytes += (uint64_t)st.st_size;
        if (in[i].fd != STDIN_FILENO)
            (void)posix_fadvise(in[i].fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    return 0;
}
