/*
 * libFuzzer target: the receive parser (wsproto.h), as each client runs it.
 *
 * Input: one config byte (the maximum message size, from a list), the split
 * points (fuzz_common.h), then the bytes a server sends.  Properties:
 *   - whole vs split: the same events (frame headers, messages, controls,
 *     errors) whether the stream comes whole or cut at the chosen points;
 *   - the chunk contract: first/final/binary/remain agree with the frames;
 *   - agreement with an independent reference (ref_frames.h): the parser
 *     run as the load generator runs it (its order and words for a
 *     violation) finds exactly the reference's messages, controls and errors,
 *     with the same words, whole and split; run as the module runs it, the
 *     same messages, controls and errors (the module fails a masked frame at
 *     its second header byte);
 *   - memory: the module's receive logic (limits, accumulator growth and
 *     UTF-8 validation, emulated with the same functions) never allocates
 *     past the configured maximum, whatever a header declares.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "ref_frames.h"
#include "utf8_core.h"
#include "wsproto.h"

/* the two clients' words and orders (quickjs-websocket/src/rx.c, clients/loadgen/conn.c) */
static const char *const MODULE_WHY[WSP_VIOLATIONS] = {
    [WSP_MASKED] = "masked frame from server",
    [WSP_LENGTH] = "bad frame length",
    [WSP_RESERVED_BITS] = "reserved bits set",
    [WSP_CONTROL_OPCODE] = "bad control frame",
    [WSP_CONTROL_FRAGMENTED] = "bad control frame",
    [WSP_CONTROL_LONG] = "bad control frame",
    [WSP_CONTINUATION] = "unexpected continuation",
    [WSP_NOT_CONTINUATION] = "expected continuation",
    [WSP_OPCODE] = "unknown opcode",
};

static const char *const LOADGEN_WHY[WSP_VIOLATIONS] = {
    [WSP_MASKED] = "masked frame from server",
    [WSP_LENGTH] = "frame length has the top bit set",
    [WSP_RESERVED_BITS] = "reserved bits set (no extension negotiated)",
    [WSP_CONTROL_OPCODE] = "reserved opcode",
    [WSP_CONTROL_FRAGMENTED] = "fragmented control frame",
    [WSP_CONTROL_LONG] = "control frame longer than 125 bytes",
    [WSP_CONTINUATION] = "continuation frame without a message",
    [WSP_NOT_CONTINUATION] = "new message inside a fragmented one",
    [WSP_OPCODE] = "reserved opcode",
};

static const size_t MAXES[8] = { 0, 1, 125, 126, 65535, 65536, 1 << 20, (size_t)256 << 20 };

/* ------------------------------------------------------------------ */
/* the QuickJS parser, raw: every event logged                          */

struct qctx {
    struct evlog full;   /* with frame headers */
    struct evlog msgs;   /* messages, controls, errors only (to compare with loadgen) */
    struct evlog msg;    /* the message so far */
    int in_msg, msg_op, cur_fin, chunks;
    uint64_t frame_left;
    int stopped, err;
};

static int q_frame(void *ctx, int op, int fin, uint64_t len)
{
    struct qctx *q = ctx;
    ev_tag(&q->full, 'F', (uint64_t)op << 8 | (uint64_t)fin);
    ev_u64(&q->full, len);
    if (op < 8) {
        if (op)
            CHECK(!q->in_msg);
        else
            CHECK(q->in_msg);
        if (op)
            q->msg_op = op;
        q->cur_fin = fin;
        q->frame_left = len;
        q->in_msg = 1;
    }
    return 0;
}

static int q_data(void *ctx, const uint8_t *p, size_t n, int first, int final, int binary,
                  size_t remain)
{
    struct qctx *q = ctx;
    CHECK(q->in_msg);
    CHECK(first == (q->chunks == 0));
    q->chunks++;
    CHECK(n + (uint64_t)remain == q->frame_left);
    CHECK(final == (q->cur_fin && remain == 0));
    CHECK(binary == (q->msg_op == 2));
    q->frame_left = remain;
    ev_put(&q->msg, p, n);
    if (final) {
        ev_tag(&q->full, 'M', (uint64_t)q->msg_op);
        ev_u64(&q->full, q->msg.n);
        ev_put(&q->full, q->msg.b, q->msg.n);
        ev_tag(&q->msgs, 'M', (uint64_t)q->msg_op);
        ev_u64(&q->msgs, q->msg.n);
        ev_put(&q->msgs, q->msg.b, q->msg.n);
        q->msg.n = 0;
        q->in_msg = 0;
        q->msg_op = 0;
        q->chunks = 0;
    }
    return 0;
}

static int q_control(void *ctx, int op, const uint8_t *p, size_t n)
{
    struct qctx *q = ctx;
    CHECK(op >= 8 && op <= 10 && n <= 125);
    ev_tag(&q->full, 'C', (uint64_t)op);
    ev_tag(&q->full, 'n', n);
    ev_put(&q->full, p, n);
    ev_tag(&q->msgs, 'C', (uint64_t)op);
    ev_tag(&q->msgs, 'n', n);
    ev_put(&q->msgs, p, n);
    return op == 8; /* nothing is parsed after a close frame (as in the module) */
}

static void q_error(void *ctx, int code, const char *why)
{
    struct qctx *q = ctx;
    CHECK(code == 1002 && why && *why);
    ev_tag(&q->full, 'E', (uint64_t)code);
    ev_put(&q->full, why, strlen(why));
    ev_tag(&q->msgs, 'E', 0);
    q->err = 1;
}

static const struct wsp_cb q_cb = { q_frame, q_data, q_control, q_error, MODULE_WHY,
                                    WSP_ORDER_MASK_FIRST };

/* feed the stream in pieces (cuts: sorted offsets); the tail of an
 * unfinished message is logged at the end */
static void run_q(struct qctx *q, const uint8_t *s, size_t n, const size_t *cuts, int k)
{
    struct wsp w;
    size_t at = 0;
    int i;
    memset(&w, 0, sizeof(w));
    for (i = 0; i <= k && !q->stopped; i++) {
        size_t to = i < k ? cuts[i] : n;
        if (wsp_feed(&w, s + at, to - at, &q_cb, q))
            q->stopped = 1;
        at = to;
    }
    ev_tag(&q->full, 'P', q->msg.n);
    ev_put(&q->full, q->msg.b, q->msg.n);
}

/* ------------------------------------------------------------------ */
/* the module's receive logic on top (rx.c: frame limit, chunk limit,    */
/* accumulator growth, UTF-8), with real allocations                     */

struct bctx {
    struct evlog log;
    size_t max, msg_len;
    uint8_t *rx;
    size_t rxlen, rxcap;
    uint32_t u8;
    int stopped, err;
};

static int b_frame(void *ctx, int op, int fin, uint64_t len)
{
    struct bctx *b = ctx;
    (void)fin;
    if (wsp_frame_over(op, len, b->msg_len, b->max)) {
        ev_tag(&b->log, 'E', 1009);
        b->err = 1;
        return 1;
    }
    return 0;
}

static int b_data(void *ctx, const uint8_t *p, size_t n, int first, int final, int binary,
                  size_t remain)
{
    struct bctx *b = ctx;
    if (first) {
        b->msg_len = 0;
        b->u8 = 0;
    }
    if (wsp_chunk_over(b->msg_len, n, remain, b->max)) {
        ev_tag(&b->log, 'E', 1009);
        b->err = 1;
        return 1;
    }
    b->msg_len += n;
    CHECK(b->msg_len <= b->max);
    if (!binary && (!utf8_stream(&b->u8, p, n) || (final && b->u8))) {
        ev_tag(&b->log, 'E', 1007);
        b->err = 1;
        return 1;
    }
    if (b->rxlen + n > b->rxcap) {
        size_t need = b->rxlen + n;
        size_t ncap = wsp_rx_cap(need, remain, first, b->rxcap, b->max);
        uint8_t *nb;
        /* the property: never past the limit, whatever the header said */
        CHECK(ncap <= b->max);
        CHECK(ncap >= need);
        nb = realloc(b->rx, ncap ? ncap : 1);
        CHECK(nb != NULL);
        b->rx = nb;
        b->rxcap = ncap;
    }
    if (n)
        memcpy(b->rx + b->rxlen, p, n);
    b->rxlen += n;
    if (final) {
        ev_tag(&b->log, 'M', binary ? 2 : 1);
        ev_u64(&b->log, b->rxlen);
        ev_put(&b->log, b->rx, b->rxlen);
        b->rxlen = 0;
        /* kept for the next message up to 1 MiB, as fragbuf does */
        if (b->rxcap > (1u << 20)) {
            free(b->rx);
            b->rx = NULL;
            b->rxcap = 0;
        }
    }
    return 0;
}

static int b_control(void *ctx, int op, const uint8_t *p, size_t n)
{
    struct bctx *b = ctx;
    ev_tag(&b->log, 'C', (uint64_t)op);
    ev_tag(&b->log, 'n', n);
    ev_put(&b->log, p, n);
    return op == 8;
}

static void b_error(void *ctx, int code, const char *why)
{
    struct bctx *b = ctx;
    (void)why;
    ev_tag(&b->log, 'E', (uint64_t)code);
    b->err = 1;
}

static const struct wsp_cb b_cb = { b_frame, b_data, b_control, b_error, MODULE_WHY,
                                    WSP_ORDER_MASK_FIRST };

static void run_b(struct bctx *b, const uint8_t *s, size_t n, const size_t *cuts, int k)
{
    struct wsp w;
    size_t at = 0;
    int i;
    memset(&w, 0, sizeof(w));
    for (i = 0; i <= k && !b->stopped; i++) {
        size_t to = i < k ? cuts[i] : n;
        if (wsp_feed(&w, s + at, to - at, &b_cb, b))
            b->stopped = 1;
        at = to;
    }
    free(b->rx);
    b->rx = NULL;
}

/* ------------------------------------------------------------------ */
/* the reference (ref_frames.h), and the parser run as loadgen runs it   */

struct lctx {
    struct evlog msgs;
    struct evlog msg;    /* the message so far */
};

/* the room's parser with the load generator's table: logged as the reference logs */
static int g_frame(void *ctx, int op, int fin, uint64_t len)
{
    (void)ctx, (void)op, (void)fin, (void)len;
    return 0;
}

static int l_data(void *ctx, const unsigned char *p, size_t n);
static int l_message(void *ctx, int opcode, uint64_t len);
static int l_control(void *ctx, int opcode, const unsigned char *p, size_t n);

static int g_data(void *ctx, const uint8_t *p, size_t n, int first, int final, int binary,
                  size_t remain)
{
    struct lctx *l = ctx;
    (void)first, (void)remain;
    l_data(ctx, p, n);
    return final ? l_message(ctx, binary ? 2 : 1, l->msg.n) : 0;
}

static void g_error(void *ctx, int code, const char *why)
{
    struct lctx *l = ctx;
    CHECK(code == 1002);
    ev_tag(&l->msgs, 'E', 0);
    ev_put(&l->msgs, why, strlen(why));
}

static const struct wsp_cb g_cb = { g_frame, g_data, l_control, g_error, LOADGEN_WHY,
                                    WSP_ORDER_RESERVED_FIRST };

static int l_data(void *ctx, const unsigned char *p, size_t n)
{
    struct lctx *l = ctx;
    ev_put(&l->msg, p, n);
    return 0;
}

static int l_message(void *ctx, int opcode, uint64_t len)
{
    struct lctx *l = ctx;
    CHECK(len == l->msg.n);
    ev_tag(&l->msgs, 'M', (uint64_t)opcode);
    ev_u64(&l->msgs, l->msg.n);
    ev_put(&l->msgs, l->msg.b, l->msg.n);
    l->msg.n = 0;
    return 0;
}

static int l_control(void *ctx, int opcode, const unsigned char *p, size_t n)
{
    struct lctx *l = ctx;
    ev_tag(&l->msgs, 'C', (uint64_t)opcode);
    ev_tag(&l->msgs, 'n', n);
    ev_put(&l->msgs, p, n);
    return opcode == REF_OP_CLOSE ? 2 : 0;
}

static const struct ref_cb l_cb = { l_data, l_message, l_control };

/* both, fed at the same cuts: exactly the same events, the same words */
static void run_both(const uint8_t *s, size_t n, const size_t *cuts, int k)
{
    struct lctx ref, room;
    struct ref_parser ps;
    struct wsp w;
    size_t at = 0;
    int i, r = 0, q = 0;
    memset(&ref, 0, sizeof(ref));
    memset(&room, 0, sizeof(room));
    memset(&ps, 0, sizeof(ps));
    memset(&w, 0, sizeof(w));
    for (i = 0; i <= k; i++) {
        size_t to = i < k ? cuts[i] : n;
        if (!r && (r = ref_feed(&ps, s + at, to - at, &l_cb, &ref)) == -1) {
            ev_tag(&ref.msgs, 'E', 0);
            ev_put(&ref.msgs, ps.error, strlen(ps.error));
        }
        if (!q)
            q = wsp_feed(&w, s + at, to - at, &g_cb, &room);
        at = to;
    }
    CHECK(ev_same(&ref.msgs, &room.msgs));
    CHECK(ev_same(&ref.msg, &room.msg));
    ev_free(&ref.msgs);
    ev_free(&room.msgs);
    ev_free(&ref.msg);
    ev_free(&room.msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct qctx whole, split;
    struct bctx bw, bs;
    struct lctx lg;
    struct ref_parser ps;
    size_t cuts[16], max;
    int k, r;

    if (size < 1)
        return 0;
    max = MAXES[data[0] & 7];
    data++;
    size--;
    k = take_cuts(&data, &size, cuts);

    memset(&whole, 0, sizeof(whole));
    memset(&split, 0, sizeof(split));
    run_q(&whole, data, size, NULL, 0);
    run_q(&split, data, size, cuts, k);
    CHECK(ev_same(&whole.full, &split.full));

    memset(&bw, 0, sizeof(bw));
    memset(&bs, 0, sizeof(bs));
    bw.max = bs.max = max;
    run_b(&bw, data, size, NULL, 0);
    run_b(&bs, data, size, cuts, k);
    CHECK(ev_same(&bw.log, &bs.log));
    /* no protocol error, no limit or UTF-8 failure: the module's logic
     * delivers exactly what the parser found */
    if (!whole.err && !bw.err)
        CHECK(ev_same(&whole.msgs, &bw.log));

    memset(&lg, 0, sizeof(lg));
    memset(&ps, 0, sizeof(ps));
    r = ref_feed(&ps, data, size, &l_cb, &lg);
    if (r == -1)
        ev_tag(&lg.msgs, 'E', 0);
    if (ev_same(&whole.msgs, &lg.msgs)) {
        /* agree */
    } else {
        /* the one allowed difference: the module rejects a masked frame as
         * soon as its second header byte arrives, the reference once the whole
         * header is there; a stream ending in between leaves it waiting */
        CHECK(whole.msgs.n == lg.msgs.n + 9 && (!lg.msgs.n || !memcmp(whole.msgs.b, lg.msgs.b, lg.msgs.n)));
        CHECK(whole.msgs.b[lg.msgs.n] == 'E');
        CHECK(r == 0 && !ps.in_payload && ps.have >= 2 && ps.have < ps.need &&
              (ps.hdr[1] & 0x80));
    }

    run_both(data, size, NULL, 0);
    run_both(data, size, cuts, k);

    ev_free(&whole.full);
    ev_free(&whole.msgs);
    ev_free(&split.full);
    ev_free(&split.msgs);
    ev_free(&whole.msg);
    ev_free(&split.msg);
    ev_free(&bw.log);
    ev_free(&bs.log);
    ev_free(&lg.msgs);
    ev_free(&lg.msg);
    return 0;
}
