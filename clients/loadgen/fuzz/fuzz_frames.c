/*
 * libFuzzer target: the load generator's frame parser (frame.c, wsparser).
 *
 * Input: the split points (quickjs-websocket/fuzz/fuzz_common.h), then the
 * bytes a server sends.  Properties: the same events (data chunks joined
 * into messages, message ends with their opcode and length, controls,
 * errors) whether the stream comes whole or cut at the chosen points; a
 * message's length is the sum of its chunks; `head` keeps its first bytes.
 * (Its agreement with the module's parser: quickjs-websocket/fuzz/fuzz_frames.c.)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../frame.h"
#include "fuzz_common.h"

struct lctx {
    struct evlog log, cur;
    struct wsparser *ps;
};

static int l_data(void *ctx, const unsigned char *p, size_t n)
{
    struct lctx *l = ctx;
    ev_put(&l->cur, p, n);
    return 0;
}

static int l_message(void *ctx, int opcode, uint64_t len)
{
    struct lctx *l = ctx;
    size_t h = l->cur.n < 8 ? l->cur.n : 8;
    CHECK(opcode == 1 || opcode == 2);
    CHECK(len == l->cur.n);
    CHECK(!h || !memcmp(l->ps->head, l->cur.b, h));
    ev_tag(&l->log, 'M', (uint64_t)opcode);
    ev_u64(&l->log, len);
    ev_put(&l->log, l->cur.b, l->cur.n);
    l->cur.n = 0;
    return 0;
}

static int l_control(void *ctx, int opcode, const unsigned char *p, size_t n)
{
    struct lctx *l = ctx;
    CHECK(opcode >= 8 && opcode <= 10 && n <= 125);
    ev_tag(&l->log, 'C', (uint64_t)opcode);
    ev_tag(&l->log, 'n', n);
    ev_put(&l->log, p, n);
    return 0;
}

static const struct wsparser_cb l_cb = { l_data, l_message, l_control };

static void run(struct lctx *l, const uint8_t *s, size_t n, const size_t *cuts, int k)
{
    struct wsparser ps;
    size_t at = 0;
    int i;
    memset(&ps, 0, sizeof(ps));
    l->ps = &ps;
    for (i = 0; i <= k; i++) {
        size_t to = i < k ? cuts[i] : n;
        if (wsparser_feed(&ps, s + at, to - at, &l_cb, l)) {
            CHECK(ps.error && *ps.error);
            ev_tag(&l->log, 'E', 0);
            ev_put(&l->log, ps.error, strlen(ps.error));
            break;
        }
        at = to;
    }
    ev_tag(&l->log, 'P', l->cur.n);
    ev_put(&l->log, l->cur.b, l->cur.n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct lctx whole, split;
    size_t cuts[16];
    int k = take_cuts(&data, &size, cuts);
    memset(&whole, 0, sizeof(whole));
    memset(&split, 0, sizeof(split));
    run(&whole, data, size, NULL, 0);
    run(&split, data, size, cuts, k);
    CHECK(ev_same(&whole.log, &split.log));
    ev_free(&whole.log);
    ev_free(&whole.cur);
    ev_free(&split.log);
    ev_free(&split.cur);
    return 0;
}
