/*
 * The receive path: what our parser (wsproto.h) and lws' report, checked
 * (size limit, UTF-8 as it arrives), assembled (opt "join") and delivered to
 * JS as a string or ArrayBuffer.  Per message: parser -> rx_data ->
 * conn_deliver -> deliver_message -> dispatch_js, all direct calls (wsp_feed
 * is inlined with the constant table rx_cb).
 */
#include "rx.h"
#include "jsev.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

#define NO_MEMORY_TEXT "out of memory for the message"

/* a message's string or ArrayBuffer could not be created (out of memory,
 * or past QuickJS' own limits): drop the pending exception, fail with 1009 */
static void fail_no_memory(conn *c)
{
    JS_FreeValue(c->jsctx, JS_GetException(c->jsctx));
    sm_fail(&c->sm, 1009, NO_MEMORY_TEXT);
}

static void deliver_message(conn *c, JSValue v)
{
    JSContext *ctx = c->jsctx;
    if (JS_IsException(v)) {
        fail_no_memory(c);
        return;
    }
    if (OPT(OPT_DIRECT))
        ev_message(c, v);
    else
        dispatch_js(c, JSB.msgfn, 1, (JSValueConst *)&v);
    JS_FreeValue(ctx, v);
}

static void free_rx(JSRuntime *rt, void *opaque, void *ptr)
{
    UNUSED(rt);
    UNUSED(opaque);
    free(ptr);
}

static void free_js(JSRuntime *rt, void *opaque, void *ptr)
{
    UNUSED(opaque);
    js_free_rt(rt, ptr);
}

/*
 * An ArrayBuffer holding a copy of p: JS_NewArrayBufferCopy() without its
 * zero fill (it takes js_mallocz(), then copies over the zeros): the same
 * allocation from the runtime (counted, under its memory limit), written once.
 */
static JSValue array_buffer_copy(JSContext *ctx, const uint8_t *p, size_t len)
{
    uint8_t *buf = js_malloc(ctx, len ? len : 1);
    JSValue v;
    if (!buf)
        return JS_EXCEPTION;
    memcpy(buf, p, len);
    v = JS_NewArrayBuffer(ctx, buf, len, free_js, NULL, 0);
    if (JS_IsException(v))
        js_free(ctx, buf); /* not taken */
    return v;
}

/*
 * One chunk of a data message.  `remain` is what the current frame still
 * owes after this chunk.  Returns -1 when the connection was failed
 * (sm_fail).  Nothing is delivered once the connection is closing
 * (close() called, a close frame received, or failed), as in browsers.
 * Inlined where it is called: the parser's data callback (rx_data) is the hot
 * path, which ran it as one function with the parser before permessage-deflate
 * gave it three more (cold) callers and the compiler a reason to call it.
 */
static inline __attribute__((always_inline)) int conn_deliver(conn *c, const uint8_t *in, size_t len,
                                                              int first, int final, int binary,
                                                              size_t remain)
{
    JSContext *ctx = c->jsctx;

    if (c->sm.state != ST_OPEN)
        return 0;

    if (first) {
        c->msg_len = 0;
        c->u8 = 0;
        /* a long text that comes in several chunks: validated and decoded
         * into UTF-16 in one pass as it arrives (strrecv) */
        c->t16_stream = !binary && !final && OPT(OPT_JOIN) && text_stream_on() &&
                        len + remain >= TEXT_FAST_MIN;
        if (c->t16_stream)
            text_stream_start(&c->t16);
    }
    /* the size limit, before anything is allocated: what came so far, this
     * chunk, and what the frame still owes (its header announced it) */
    if (wsp_chunk_over(c->msg_len, len, remain, g_max_message)) {
        sm_fail(&c->sm, 1009, fail_text(1009));
        return -1;
    }
    c->msg_len += len;

    /* text is validated as it arrives, on every path: an invalid sequence
     * fails the connection at once, and the work overlaps reception */
    if (!binary && !c->t16_stream && (!utf8_stream(&c->u8, in, len) || (final && c->u8))) {
        sm_fail(&c->sm, 1007, fail_text(1007));
        return -1;
    }

    if (!OPT(OPT_JOIN)) {
        /* naive path: hand every chunk to JS, which collects and joins */
        JSValue argv[5];
        argv[0] = JS_NewInt32(ctx, EV_CHUNK);
        argv[1] = JS_NewArrayBufferCopy(ctx, in, len);
        if (JS_IsException(argv[1])) {
            fail_no_memory(c);
            goto check_fail;
        }
        argv[2] = JS_NewBool(ctx, first);
        argv[3] = JS_NewBool(ctx, final);
        argv[4] = JS_NewBool(ctx, binary);
        dispatch_js(c, JSB.evfn, 5, (JSValueConst *)argv);
        JS_FreeValue(ctx, argv[1]);
        goto check_fail;
    }

    if (first && final && !c->rxlen && in != c->rx) {
        /* whole message in one chunk: one copy, straight from lws' buffer
         * (or the read buffer; but read into the accumulator: none) */
        if (binary)
            deliver_message(c, array_buffer_copy(ctx, in, len));
        else
            deliver_message(c, text_string(ctx, &c->t16, in, len));
        goto check_fail;
    }

    if (first)
        c->rxlen = 0;

    if (c->rxlen + len > c->rxcap) {
        size_t need = c->rxlen + len, ncap;
        uint8_t *nb;
        if (OPT(OPT_FRAGBUF)) {
            /* size from the frame header: what we have + what this frame
             * still owes; doubling for later frames, never past the limit */
            ncap = wsp_rx_cap(need, remain, first, c->rxcap, g_max_message);
        } else {
            ncap = need; /* naive: grow to exactly what is needed, every chunk */
        }
        nb = realloc(c->rx, ncap ? ncap : 1);
        if (!nb) {
            sm_fail(&c->sm, 1009, NO_MEMORY_TEXT);
            goto check_fail;
        }
        c->rx = nb;
        c->rxcap = ncap;
    }
    if (len && in != c->rx + c->rxlen) /* (else read there: conn_rx_sink) */
        memcpy(c->rx + c->rxlen, in, len);
    c->rxlen += len;
    if (c->t16_stream) {
        int r = text_stream(&c->t16, c->rx, c->rxlen, c->rxcap, final);
        if (r <= 0) {
            sm_fail(&c->sm, r < 0 ? 1009 : 1007, r < 0 ? NO_MEMORY_TEXT : fail_text(1007));
            goto check_fail;
        }
    }

    if (final) {
        size_t mlen = c->rxlen;
        c->rxlen = 0;
        if (binary) {
            /* hand the accumulator itself to the ArrayBuffer: no copy */
            uint8_t *buf = c->rx;
            JSValue v;
            c->rx = NULL;
            c->rxcap = 0;
            v = JS_NewArrayBuffer(ctx, buf, mlen, free_rx, NULL, 0);
            if (JS_IsException(v))
                free(buf); /* not taken: QuickJS frees it only once it owns it */
            deliver_message(c, v);
        } else {
            deliver_message(c, c->t16_stream ? text_stream_string(ctx, &c->t16, c->rx, mlen)
                                             : text_string(ctx, &c->t16, c->rx, mlen));
            /* kept for the next text: up to 1 MiB (fragbuf), or while texts stay
             * long (strrecv: a fresh 16 MiB buffer is page-faulted in each time) */
            if (!OPT(OPT_FRAGBUF) ||
                (c->rxcap > (1u << 20) && (!OPT(OPT_STRRECV) || mlen < c->rxcap / 8))) {
                free(c->rx);
                c->rx = NULL;
                c->rxcap = 0;
                free(c->t16.buf); /* and its UTF-16, sized like it */
                c->t16.buf = NULL;
                c->t16.cap = 0;
            }
        }
    }

check_fail:
    return c->sm.fail_code ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* what our own receive parser (wsproto.h) reports                       */

static int rx_frame(void *ctx, int op, int fin, uint64_t len)
{
    conn *c = ctx;
    UNUSED(fin);
    if (c->sm.state == ST_OPEN && wsp_frame_over(op, len, c->msg_len, g_max_message)) {
        sm_fail(&c->sm, 1009, fail_text(1009));
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* permessage-deflate (deflate_core.h): a compressed message inflated     */

/* where pmd_inflate() puts what it inflates, piece by piece: one for the
 * process (each piece is copied out of it before the next) */
#define INFLATE_SCRATCH (16 * 1024)
static uint8_t inflate_scratch[INFLATE_SCRATCH];

struct inflating {
    conn *c;
    int binary;
};

/* pmd_inflate's sink: an inflated piece goes the way an uncompressed chunk
 * goes (size limit, UTF-8, the accumulator); the message's end is delivered
 * once the last compressed chunk is inflated (rx_inflate) */
static int inflated_piece(void *ctx, const uint8_t *p, size_t n)
{
    struct inflating *in = ctx;
    conn *c = in->c;
    int first = c->sm.fr.pmd->rx_first;
    c->sm.fr.pmd->rx_first = 0;
    return conn_deliver(c, p, n, first, 0, in->binary, 0) < 0 ? 1 : 0;
}

/*
 * A chunk of a data message on a connection that agreed to deflate: a message
 * whose first frame had RSV1 (the parser marks it: msg_rsv1) is inflated, no
 * more than the size limit of it ever (a bomb fails with 1009 before more is
 * allocated), invalid DEFLATE data fails with 1007; any other message goes
 * its usual way (RFC 7692 lets a side send a message uncompressed).
 */
static __attribute__((noinline)) int rx_inflate(conn *c, const uint8_t *p, size_t n, int first,
                                                int final, int binary, size_t remain)
{
    struct pmd_conn *pc = c->sm.fr.pmd;
    struct inflating in = { c, binary };
    int r;
    if (first) {
        pc->rx_msg = c->rxp.msg_rsv1;
        pc->rx_first = 1;
        c->rxp.msg_rsv1 = 0;
        if (pc->rx_msg)
            c->msg_len = 0; /* (its frames' size checks count from here) */
    }
    if (!pc->rx_msg)
        return conn_deliver(c, p, n, first, final, binary, remain);
    if (c->sm.state != ST_OPEN)
        return 0; /* dropped, as every message once closing (the stream matters no more) */
    r = pmd_inflate(&pc->rx, p, n, final, g_max_message, inflate_scratch, INFLATE_SCRATCH,
                    inflated_piece, &in);
    if (r > 0)
        return -1; /* the receive path failed the connection */
    if (r < 0) {
        if (r == PMD_TOO_BIG)
            sm_fail(&c->sm, 1009, fail_text(1009));
        else if (r == PMD_BAD_DATA)
            sm_fail(&c->sm, 1007, "invalid compressed data");
        else
            sm_fail(&c->sm, 1009, NO_MEMORY_TEXT);
        return -1;
    }
    if (!final)
        return 0;
    pc->rx_msg = 0;
    return conn_deliver(c, p, 0, pc->rx_first, 1, binary, 0);
}

static inline __attribute__((always_inline)) int rx_data(void *ctx, const uint8_t *p, size_t n,
                                                         int first, int final, int binary,
                                                         size_t remain)
{
    conn *c = ctx;
    int r;
    if (__builtin_expect(c->sm.fr.pmd != NULL, 0))
        r = rx_inflate(c, p, n, first, final, binary, remain);
    else
        r = conn_deliver(c, p, n, first, final, binary, remain);
    return r < 0 || c->sm.fr.kill_pending;
}

static int rx_control(void *ctx, int op, const uint8_t *p, size_t n)
{
    conn *c = ctx;
    switch (op) {
    case 9: /* ping -> pong */
        fr_pong(&c->sm.fr, p, n);
        break;
    case 10: /* pong */
        break;
    case 8: /* close: recorded (or failed), our answer echoes its code */
        if (!sm_peer_close(&c->sm, p, n))
            fr_close_reply(&c->sm.fr, c->sm.peer_code);
        break;
    }
    return c->sm.fr.kill_pending || c->sm.fail_code;
}

static void rx_error(void *ctx, int code, const char *why)
{
    conn *c = ctx;
    sm_fail(&c->sm, code, why);
}

/* our words for a frame header's protocol violations (the reason of our close
 * frame and the message of the error event) */
static const char *const rx_why[WSP_VIOLATIONS] = {
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

static const struct wsp_cb rx_cb = { rx_frame, rx_data, rx_control, rx_error, rx_why,
                                     WSP_ORDER_MASK_FIRST };

void conn_rx(struct fr *f, const uint8_t *p, size_t n)
{
    conn *c = conn_of_fr(f);
    if (!f->kill_pending && !c->sm.fail_code)
        wsp_feed(&c->rxp, p, n, &rx_cb, c);
}

/*
 * Opt "rxdirect": once a large frame's header came, the rest of its payload
 * is read straight into the message's accumulator instead of into the read
 * buffer and then copied (frame.c reads it, conn_rx parses it in place:
 * conn_deliver finds the bytes already where they belong, and a binary
 * message's accumulator becomes its ArrayBuffer).  The accumulator is sized
 * here for a message's first frame (what its header announced, which the size
 * limit checked: rx_frame), and by conn_deliver for the frames after (what
 * came + what the frame owes).  Only uncompressed data frames of an open
 * connection that joins in C, and only what fits.
 */
#define SINK_MIN 4096 /* smaller rests are read with what follows them */

uint8_t *conn_rx_sink(struct fr *f, size_t *n)
{
    conn *c = conn_of_fr(f);
    const struct wsp *w = &c->rxp;
    size_t room;
    *n = 0;
    if (!OPT(OPT_RXDIRECT) || !w->in_payload || w->f_op >= 8 || f->pmd || c->sm.state != ST_OPEN ||
        !OPT(OPT_JOIN) || f->kill_pending || c->sm.fail_code)
        return NULL;
    if (w->f_left < SINK_MIN) {
        if (!w->msg_first && c->msg_len + w->f_left >= SINK_MIN)
            *n = (size_t)w->f_left; /* (the end of a large frame) */
        return NULL;
    }
    if (w->msg_first) { /* the message's first bytes: its accumulator from 0 */
        if (c->rxcap < w->f_left) {
            size_t cap = wsp_rx_cap(0, (size_t)w->f_left, 1, c->rxcap, g_max_message);
            uint8_t *nb = realloc(c->rx, cap ? cap : 1);
            if (!nb)
                return NULL; /* (conn_deliver finds out, and fails the connection) */
            c->rx = nb;
            c->rxcap = cap;
        }
        c->rxlen = 0;
    } else if (!c->rx) {
        return NULL;
    }
    room = c->rxcap - c->rxlen;
    if (room < SINK_MIN) {
        *n = (size_t)w->f_left;
        return NULL;
    }
    *n = w->f_left < room ? (size_t)w->f_left : room;
    return c->rx + c->rxlen;
}

/* lws path: a chunk lws parsed */
int rx_lws_receive(struct tp *t, const uint8_t *p, size_t n, int first, int final, int binary,
                   size_t remain)
{
    return conn_deliver(conn_of_tp(t), p, n, first, final, binary, remain);
}

void rx_free(conn *c)
{
    free(c->rx);
    c->rx = NULL;
    c->rxlen = c->rxcap = 0;
    free(c->t16.buf);
    c->t16.buf = NULL;
    c->t16.cap = 0;
}
