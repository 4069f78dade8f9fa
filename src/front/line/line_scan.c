/* The line protocol's SCAN (docs/protocol.md): the text read by proto.c,
 * scanned by the command table's SCAN (core/cmd_words.c), the matches
 * written as one line. Worker thread that owns the connection. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "front/line/line_int.h"
#include "words/words.h"

/* A listed word as one token of the reply: bytes that would split or end
 * the line (space, controls, DEL) and '%' itself as %XX. */
static void out_word(struct conn *c, const char *w, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && (unsigned char)w[j] > ' ' && w[j] != '%' && w[j] != 0x7f)
            j++;
        conn_out_add(c, w + i, j - i);
        if (j < n) {
            unsigned char b = (unsigned char)w[j];
            char esc[3] = {'%', hex[b >> 4], hex[b & 15]};
            conn_out_add(c, esc, 3);
        }
        i = j + 1;
    }
}

/* SCAN <filter> <text>: `CLEAN`, or `FOUND <n> <word> <start> <end> ...`
 * with `<n>+` when more than scan_max_matches were found. Written past the
 * reply batch (flushed first, to keep the order): a reply's length follows
 * the matches, not the batch's room. */
void line_verb_scan(struct conn *c, const struct catalog *cat, const struct proto_request *r,
                    const struct line_verb *v)
{
    struct cmd_call call;
    cmd_call_init(&call, cat, NULL, 0, c->loopback, CMD_CRED_NONE);
    call.filter = r->filter.p;
    call.filter_len = r->filter.len;
    call.text = r->arg.p;
    call.text_len = r->arg.len;
    cmd_run(&((struct conn_worker *)c->fw)->env, v->id, NULL, &call);
    if (call.err != CMD_OK) {
        line_reply_err(c, line_err(call.err), call.msg);
        return;
    }
    conn_reply_flush(c);
    if (call.n_matches == 0) {
        conn_out_add(c, "CLEAN\n", 6);
        return;
    }
    char num[64];
    int k = snprintf(num, sizeof(num), "FOUND %zu%s", call.n_matches, call.capped ? "+" : "");
    conn_out_add(c, num, (size_t)k);
    for (size_t i = 0; i < call.n_matches; i++) {
        size_t wl;
        const char *w = cmd_scan_word(&call, i, &wl);
        conn_out_add(c, " ", 1);
        out_word(c, w, wl);
        k = snprintf(num, sizeof(num), " %zu %zu", call.matches[i].start, call.matches[i].end);
        conn_out_add(c, num, (size_t)k);
    }
    conn_out_add(c, "\n", 1);
}
