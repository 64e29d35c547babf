/*
 * Per-connection state: dispatch to JS, the lws send/receive paths, the lws
 * protocol callback and the JS "conn" class (connect() and its methods).
 */
#include "qjsws.h"
#include "conn.h"
#include "dial.h"
#include "frame.h"
#include "loop.h"
#include "pool.h"
#include "utf8.h"

JSClassID js_lws_conn_class_id;

void call_js(JSContext *ctx, JSValueConst fn, JSValueConst this_val, int argc, JSValueConst *argv)
{
    JSValue r = JS_Call(ctx, fn, this_val, argc, argv);
    if (JS_IsException(r))
        js_std_dump_error(ctx);
    JS_FreeValue(ctx, r);
}

/* ------------------------------------------------------------------ */
/* bufferedAmount as a data property (opt "buffered")                    */

/*
 * The first read of ws.bufferedAmount goes through the accessor on
 * WebSocket.prototype, which calls conn.watch(ws): from then on the
 * WebSocket has an own data property bufferedAmount (non-writable,
 * non-enumerable, configurable so that C can redefine it) that shadows
 * the accessor, and C keeps it equal to the queued bytes.  A read is then
 * a plain property lookup, no call.  The value is republished only where
 * it changed (buf_touch puts the conn on G.bdirty) and only at the points
 * where JS can look: before every event dispatched to JS, at the return
 * of send()/close()/fail(), and at the end of service()/service_fd()/tick().
 * Connections that never read it pay one flag test per queue change.
 * Close (the close event) publishes 0 and ends the watch, as the accessor
 * answers 0 once the connection is gone.
 */

static void buf_define(conn *c, size_t v)
{
    c->pub = v;
    /* no JS_PROP_THROW: a frozen WebSocket simply keeps its last value */
    JS_DefinePropertyValue(c->jsctx, c->ws, G.atom_buffered, JS_NewInt64(c->jsctx, (int64_t)v),
                           JS_PROP_CONFIGURABLE);
}

void buf_publish(void)
{
    while (G.bdirty) {
        conn *c = G.bdirty;
        size_t v;
        G.bdirty = c->bnext;
        c->bdirty = 0;
        c->bnext = NULL;
        v = conn_buffered(c);
        if (c->watch && v != c->pub)
            buf_define(c, v);
    }
}

static inline void buf_publish_pending(void)
{
    if (G.bdirty)
        buf_publish();
}

/* stop mirroring: off G.bdirty */
static void buf_unwatch(conn *c)
{
    if (c->bdirty) {
        conn **pp;
        for (pp = &G.bdirty; *pp; pp = &(*pp)->bnext) {
            if (*pp == c) {
                *pp = c->bnext;
                break;
            }
        }
        c->bdirty = 0;
        c->bnext = NULL;
    }
    c->watch = 0;
}

/* HTML's "perform a microtask checkpoint": run promise jobs until none is left */
static void run_microtasks(void)
{
    JSContext *jctx;
    G.dispatch_depth++; /* an event raised from a job gets no checkpoint of its own */
    while (JS_IsJobPending(G.rt)) {
        if (JS_ExecutePendingJob(G.rt, &jctx) < 0)
            js_std_dump_error(jctx);
    }
    G.dispatch_depth--;
}

/*
 * Dispatch one event (open, message, naive chunk, error, close) to the JS
 * side.  After each outermost dispatch from the event loop, the promise
 * jobs it queued run before anything else, as browsers and Node do after
 * every event: one service call can dispatch thousands of messages, and an
 * `await` or `.then` in onmessage must see each message's continuation
 * before the next message.  Nested dispatches (an event raised while JS is
 * on the stack, e.g. error from conn.fail()) and calls outside service
 * (qjs runs the jobs itself after every handler) are left alone.  With no
 * job pending the cost is one JS_IsJobPending() call.
 */
static void dispatch_js(conn *c, JSValueConst fn, int argc, JSValueConst *argv)
{
    buf_publish_pending(); /* every bufferedAmount is current when JS runs */
    G.dispatch_depth++;
    call_js(c->jsctx, fn, c->ws, argc, argv);
    if (--G.dispatch_depth == 0 && G.in_service && JS_IsJobPending(G.rt))
        run_microtasks();
}

void conn_dispatch_close(conn *c, int code, const char *reason, size_t rlen, int clean)
{
    JSContext *ctx = c->jsctx;
    JSValue argv[4];
    if (c->closed_dispatched)
        return;
    c->closed_dispatched = 1;
    c->state = ST_CLOSED;
    if (c->watch) {
        /* gone: 0 from the close event on (the accessor's answer too) */
        if (c->pub != 0)
            buf_define(c, 0);
        buf_unwatch(c);
    }
    argv[0] = JS_NewInt32(ctx, EV_CLOSE);
    argv[1] = JS_NewInt32(ctx, code);
    argv[2] = JS_NewStringLen(ctx, reason ? reason : "", reason ? rlen : 0);
    argv[3] = JS_NewBool(ctx, clean);
    dispatch_js(c, G.evfn, 4, (JSValueConst *)argv);
    JS_FreeValue(ctx, argv[2]);
}

void conn_dispatch_error(conn *c, const char *msg)
{
    JSContext *ctx = c->jsctx;
    JSValue argv[2];
    argv[0] = JS_NewInt32(ctx, EV_ERROR);
    argv[1] = JS_NewString(ctx, msg ? msg : "");
    dispatch_js(c, G.evfn, 2, (JSValueConst *)argv);
    JS_FreeValue(ctx, argv[1]);
}

void conn_free_queue(conn *c)
{
    sbuf *b = c->qhead, *n;
    while (b) {
        n = b->next;
        sbuf_free(b);
        b = n;
    }
    c->qhead = c->qtail = NULL;
    c->qbytes = 0;
    buf_touch(c);
}

/* free the send queues and the receive accumulator */
static void conn_free_buffers(conn *c)
{
    own_release(c);
    conn_free_queue(c);
    free(c->rx);
    c->rx = NULL;
    c->rxlen = c->rxcap = 0;
    free(c->t16.buf);
    c->t16.buf = NULL;
    c->t16.cap = 0;
}

/* the wsi is gone: drop everything that ties the conn to lws */
void conn_detach(conn *c)
{
    JSValue self, ws;
    conn_free_buffers(c);
    c->wsi = NULL;
    c->state = ST_CLOSED;
    G.nconns--;
    /* no event follows: release the WebSocket (breaks the ws <-> conn cycle) */
    buf_unwatch(c);
    ws = c->ws;
    c->ws = JS_UNDEFINED;
    JS_FreeValue(c->jsctx, ws);
    self = c->self;
    c->self = JS_UNDEFINED;
    /* may finalize the conn: must be last */
    JS_FreeValue(c->jsctx, self);
}

/*
 * Fail the WebSocket connection (RFC 6455 7.1.7): fire error (once), send a
 * close frame with `code` and drop the TCP connection (no waiting for the
 * answer); close then reports `code` with wasClean false.  Own framing: the
 * kill follows the flush at the end of the service call.  lws path: lws'
 * parser is paused (nothing more is parsed, however much a hostile server
 * sends) and the writable callback writes the close frame and returns -1.
 * The rx callback itself must not return nonzero: lws 4.3.5 then skips
 * resetting its frame buffer, and if it was full (a 64 KiB piece of a longer
 * frame) lws' close flow keeps parsing into it past its end.
 */
static void conn_kill_async(conn *c);

void conn_fail(conn *c, int code, const char *reason)
{
    size_t rl = strlen(reason);
    if (c->fail_code || c->closed_dispatched || !conn_live(c))
        return;
    if (rl > 123)
        rl = 123;
    c->fail_code = code;
    c->close_code = code;
    memcpy(c->close_reason, reason, rl);
    c->close_reason_len = rl;
    c->state = ST_CLOSING;
    if (c->own) {
        own_send_close(c, code, reason, rl);
        c->kill_pending = 1;
        own_kick(c);
    } else if (c->wsi) {
        lws_rx_flow_control(c->wsi, 0);
        lws_callback_on_writable(c->wsi);
    } else {
        conn_kill_async(c); /* raw, still connecting (no receive path yet) */
    }
    conn_dispatch_error(c, reason);
}

/*
 * The TCP connection is gone: report close.  wasClean only if the close
 * handshake completed (a close frame came and ours went out, RFC 6455
 * 7.1.4); without a close frame from the peer the code is 1006 (7.1.5).
 */
static void conn_closed(conn *c)
{
    if (c->closed_dispatched)
        return;
    if (c->fail_code) {
        conn_dispatch_close(c, c->fail_code, c->close_reason, c->close_reason_len, 0);
    } else if (c->peer_closed) {
        /* own framing: our close frame queued and the queue written out;
         * lws path: ours was written by us, or lws answers the peer's */
        int sent = c->own ? c->close_sent && !c->tx_failed && !c->ohead : 1;
        conn_dispatch_close(c, c->peer_code, c->peer_reason, c->peer_reason_len, sent);
    } else {
        /* an error only where nobody asked for the end */
        if (!c->aborted && !c->close_requested)
            conn_dispatch_error(c, "connection lost");
        conn_dispatch_close(c, 1006, "", 0, 0);
    }
}

/* the opening handshake succeeded: open (with the chosen subprotocol) */
void conn_opened(conn *c)
{
    JSValue argv[2];
    c->state = ST_OPEN;
    argv[0] = JS_NewInt32(c->jsctx, EV_OPEN);
    argv[1] = JS_NewString(c->jsctx, c->protocol);
    dispatch_js(c, G.evfn, 2, (JSValueConst *)argv);
    JS_FreeValue(c->jsctx, argv[1]);
}

/*
 * A connection without lws (dial.c) is over and its socket closed: the
 * events lws' CLIENT_CONNECTION_ERROR / CLIENT_CLOSED / WSI_DESTROY raise on
 * the lws path, then the conn lets go of the WebSocket.  `why`: the error
 * text of a connection that never opened.
 */
void conn_gone(conn *c, const char *why)
{
    if (!c->closed_dispatched) {
        if (c->state == ST_CONNECTING || c->aborted) {
            conn_dispatch_error(c, why ? why : "connection failed");
            conn_dispatch_close(c, 1006, "", 0, 0);
        } else {
            conn_closed(c);
        }
    }
    conn_detach(c); /* may free c */
}

/* ------------------------------------------------------------------ */
/* sending                                                                */

/* 0 ok, -1 connection broken */
static int write_sbuf(conn *c, sbuf *b)
{
    int n = lws_write(c->wsi, b->data + LWS_PRE, b->len,
                      b->text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY);
    return n < 0 ? -1 : 0;
}

static int conn_drain(conn *c)
{
    while (c->qhead) {
        sbuf *b;
        if (lws_partial_buffered(c->wsi))
            break;
        b = c->qhead;
        c->qhead = b->next;
        if (!c->qhead)
            c->qtail = NULL;
        c->qbytes -= b->len;
        buf_touch(c);
        if (write_sbuf(c, b) < 0) {
            sbuf_free(b);
            return -1;
        }
        sbuf_free(b);
    }
    return 0;
}

static void conn_kill_async(conn *c)
{
    if (c->raw) {
        c->kill_pending = 1;
        own_kick(c);
    } else if (c->wsi) {
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
    }
}

/* a send buffer holding a copy of the message; NULL (JS exception set) on OOM */
static sbuf *sbuf_copy(JSContext *ctx, const uint8_t *p, size_t len, int text)
{
    sbuf *b = sbuf_alloc(len);
    if (!b) {
        JS_ThrowOutOfMemory(ctx);
        return NULL;
    }
    if (len)
        memcpy(b->data + LWS_PRE, p, len);
    b->text = (uint8_t)text;
    return b;
}

/* Queue or directly write one message. */
static int conn_send(JSContext *ctx, conn *c, const uint8_t *p, size_t len, int text)
{
    if (!conn_live(c) || c->state != ST_OPEN || c->close_requested)
        return 0; /* browsers silently discard */

    if (c->own) {
        if (c->kill_pending || c->close_sent)
            return 0;
        if (own_append(c, text ? 1 : 2, p, len) < 0) {
            JS_ThrowOutOfMemory(ctx);
            return -1;
        }
        own_kick(c);
        return 0;
    }

    /* fast path: nothing queued and socket not backed up -> write now */
    if (!c->qhead && !lws_partial_buffered(c->wsi)) {
        int n;
        if (OPT(OPT_POOL) && len <= STACK_SEND_MAX) {
            uint8_t stackbuf[LWS_PRE + STACK_SEND_MAX + 1];
            if (len)
                memcpy(stackbuf + LWS_PRE, p, len);
            n = lws_write(c->wsi, stackbuf + LWS_PRE, len,
                          text ? LWS_WRITE_TEXT : LWS_WRITE_BINARY);
        } else {
            sbuf *b = sbuf_copy(ctx, p, len, text);
            if (!b)
                return -1;
            n = write_sbuf(c, b);
            sbuf_free(b);
        }
        if (n < 0)
            conn_kill_async(c);
        else if (lws_partial_buffered(c->wsi))
            lws_callback_on_writable(c->wsi);
        return 0;
    }

    {
        sbuf *b = sbuf_copy(ctx, p, len, text);
        if (!b)
            return -1;
        if (c->qtail)
            c->qtail->next = b;
        else
            c->qhead = b;
        c->qtail = b;
        c->qbytes += len;
        buf_touch(c);
        lws_callback_on_writable(c->wsi);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* receiving                                                              */

#define NO_MEMORY_TEXT "out of memory for the message"

/* a message's string or ArrayBuffer could not be created (out of memory,
 * or past QuickJS' own limits): drop the pending exception, fail with 1009 */
static void fail_no_memory(conn *c)
{
    JS_FreeValue(c->jsctx, JS_GetException(c->jsctx));
    conn_fail(c, 1009, NO_MEMORY_TEXT);
}

static void deliver_message(conn *c, JSValue v)
{
    JSContext *ctx = c->jsctx;
    if (JS_IsException(v)) {
        fail_no_memory(c);
        return;
    }
    dispatch_js(c, G.msgfn, 1, (JSValueConst *)&v);
    JS_FreeValue(ctx, v);
}

static void free_rx(JSRuntime *rt, void *opaque, void *ptr)
{
    UNUSED(rt);
    UNUSED(opaque);
    free(ptr);
}

/*
 * One chunk of a data message.  `remain` is what the current frame still
 * owes after this chunk.  Returns -1 when the connection was failed
 * (conn_fail).  Nothing is delivered once the connection is closing
 * (close() called, a close frame received, or failed), as in browsers.
 */
static int conn_deliver(conn *c, const uint8_t *in, size_t len, int first, int final,
                        int binary, size_t remain)
{
    JSContext *ctx = c->jsctx;

    if (c->state != ST_OPEN)
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
        conn_fail(c, 1009, fail_text(1009));
        return -1;
    }
    c->msg_len += len;

    /* text is validated as it arrives, on every path: an invalid sequence
     * fails the connection at once, and the work overlaps reception */
    if (!binary && !c->t16_stream && (!utf8_stream(&c->u8, in, len) || (final && c->u8))) {
        conn_fail(c, 1007, fail_text(1007));
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
        dispatch_js(c, G.evfn, 5, (JSValueConst *)argv);
        JS_FreeValue(ctx, argv[1]);
        goto check_fail;
    }

    if (first && final && !c->rxlen) {
        /* whole message in one chunk: one copy, straight from lws' buffer */
        if (binary)
            deliver_message(c, JS_NewArrayBufferCopy(ctx, in, len));
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
            conn_fail(c, 1009, NO_MEMORY_TEXT);
            goto check_fail;
        }
        c->rx = nb;
        c->rxcap = ncap;
    }
    if (len)
        memcpy(c->rx + c->rxlen, in, len);
    c->rxlen += len;
    if (c->t16_stream) {
        int r = text_stream(&c->t16, c->rx, c->rxlen, c->rxcap, final);
        if (r <= 0) {
            conn_fail(c, r < 0 ? 1009 : 1007, r < 0 ? NO_MEMORY_TEXT : fail_text(1007));
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
    return c->fail_code ? -1 : 0;
}

const char *fail_text(int code)
{
    switch (code) {
    case 1007: return "invalid UTF-8 in text message";
    case 1009: return "message too big";
    default: return "protocol error";
    }
}

/* ------------------------------------------------------------------ */
/* opt "framing": what our own receive parser (wsproto.h) reports        */

static int close_code_ok(int code)
{
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
           (code >= 3000 && code <= 4999);
}

int close_body_problem(const uint8_t *p, size_t len, const char **why)
{
    if (len == 1) {
        *why = "bad close frame";
        return 1002;
    }
    if (len >= 2 && !close_code_ok((p[0] << 8) | p[1])) {
        *why = "bad close code";
        return 1002;
    }
    if (len > 2 && !utf8_valid(p + 2, len - 2)) {
        *why = "invalid UTF-8 in close reason";
        return 1007;
    }
    return 0;
}

static int rx_frame(void *ctx, int op, int fin, uint64_t len)
{
    conn *c = ctx;
    UNUSED(fin);
    if (c->state == ST_OPEN && wsp_frame_over(op, len, c->msg_len, g_max_message)) {
        conn_fail(c, 1009, fail_text(1009));
        return 1;
    }
    return 0;
}

static int rx_data(void *ctx, const uint8_t *p, size_t n, int first, int final, int binary,
                   size_t remain)
{
    conn *c = ctx;
    return conn_deliver(c, p, n, first, final, binary, remain) < 0 || c->kill_pending;
}

static int rx_control(void *ctx, int op, const uint8_t *p, size_t n)
{
    conn *c = ctx;
    switch (op) {
    case 9: /* ping -> pong */
        if (!c->close_sent && own_append(c, 10, p, n) < 0)
            c->kill_pending = 1;
        own_kick(c);
        break;
    case 10: /* pong */
        break;
    case 8: { /* close */
        int code = 1005, bad;
        size_t rl = 0;
        const char *why;
        if ((bad = close_body_problem(p, n, &why))) {
            conn_fail(c, bad, why);
            break;
        }
        if (n >= 2) {
            code = (p[0] << 8) | p[1];
            rl = n - 2;
        }
        c->peer_closed = 1;
        c->peer_code = code;
        memcpy(c->peer_reason, p + 2, rl);
        c->peer_reason_len = rl;
        if (c->state == ST_OPEN)
            c->state = ST_CLOSING;
        /* echo the code (RFC 6455 5.5.1), then drop the connection */
        own_send_close(c, code, NULL, 0);
        c->kill_pending = 1;
        own_kick(c);
        break;
    }
    }
    return c->kill_pending || c->fail_code;
}

static void rx_error(void *ctx, int code, const char *why)
{
    conn_fail(ctx, code, why);
}

static const struct wsp_cb rx_cb = { rx_frame, rx_data, rx_control, rx_error };

void conn_rx(conn *c, const uint8_t *p, size_t n)
{
    if (!c->kill_pending && !c->fail_code)
        wsp_feed(&c->rxp, p, n, &rx_cb, c);
}

/*
 * lws path: our close frame.  We write it ourselves instead of returning -1
 * with lws_close_reason(): lws' own close flow swallows the peer's answer,
 * so a TCP drop could not be told from a completed handshake.  This way
 * lws stays established and reports the answer (PEER_INITIATED_CLOSE).
 * lws_write() frames and masks opcode 8 for LWS_WRITE_CLOSE, whose value (4)
 * lws 4.3.5 keeps in a private header (lib/roles/ws/private-lib-roles-ws.h;
 * the public enum leaves 4 free for it).
 */
#define QJSWS_LWS_WRITE_CLOSE ((enum lws_write_protocol)4)

static int lws_path_send_close(conn *c)
{
    uint8_t b[LWS_PRE + 125];
    size_t n = 0;
    if (c->close_code != 1005) {
        b[LWS_PRE] = (uint8_t)(c->close_code >> 8);
        b[LWS_PRE + 1] = (uint8_t)c->close_code;
        memcpy(b + LWS_PRE + 2, c->close_reason, c->close_reason_len);
        n = 2 + c->close_reason_len;
    }
    if (lws_write(c->wsi, b + LWS_PRE, n, QJSWS_LWS_WRITE_CLOSE) < 0)
        return -1;
    c->close_sent = 1;
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_ACK, 5);
    return 0;
}

/* lws path: an lws rx callback (always returns 0, see conn_fail) */
static int conn_receive(conn *c, struct lws *wsi, const uint8_t *in, size_t len)
{
    int first = lws_is_first_fragment(wsi);
    int final = lws_is_final_fragment(wsi);
    int binary = lws_frame_is_binary(wsi);
    size_t remain = (size_t)lws_remaining_packet_payload(wsi);

    if (conn_deliver(c, in, len, first, final, binary, remain) < 0)
        return 0; /* failed: the writable callback closes (see conn_fail) */
    /* lws_is_final_fragment(): FIN set and no payload left in the frame,
     * so lws' parser is between frames and no message is unfinished */
    if (c->hwait && final)
        own_message_end(c);
    return 0;
}

/* ------------------------------------------------------------------ */
/* lws path: pings that lws answers                                       */

/*
 * lws parses pings itself and answers them without telling us: it keeps
 * the payload of ONE pong, asks for POLLOUT and writes the pong before our
 * writable callback.  Two cases lose a pong (RFC 6455 5.5.2: every ping is
 * answered unless a close came first; 5.5.3: of several unanswered pings
 * at least the last one):
 *  - a ping that comes while the pong of an earlier one is still pending is
 *    dropped (lws answers the first, never the last);
 *  - a close frame parsed behind a ping before the pong went out: lws sends
 *    its close answer first and then forgets the pong.
 * Both happen when lws parses a ping and more frames in one go: frames in
 * one read (baseline, wss://), and with own framing the frames that came
 * with the 101.  So lws must not parse past a ping before its pong is
 * written.  We see the ping as lws asking for POLLOUT on its own (during an
 * lws service call, G.lws_in, not from our callback) while the connection
 * is open: lws' parser is then paused (rx flow control, our own reason bit,
 * applied at once so that lws stops right behind the ping and keeps the rest
 * buffered), and resumed in our writable callback, which lws reaches only
 * once it has no pong left to write.  Anything else lws asks POLLOUT for on
 * its own at such a time costs one pause to the next writable callback.
 * No cost per message: the own receive path never gets here.
 */
#define QJSWS_RXFLOW_PONG (1 << 1) /* our rx flow reason bit (b0 is lws' bool) */

/* CHANGE_MODE_POLL_FD with POLLOUT, lws' own doing: a ping lws will answer? */
static void pong_watch(conn *c, struct lws *wsi)
{
    if (c->wsi == wsi && !c->own_rx && !c->pong_wait && !c->hpaused && !c->fail_code &&
        !c->peer_closed && !c->close_sent && (c->state == ST_OPEN || c->state == ST_CLOSING))
        G.pong_c = c;
}

/* UNLOCK_POLL of that change (the poll change itself is complete): pause */
static void pong_pause(conn *c, struct lws *wsi)
{
    G.pong_c = NULL;
    c->pong_wait = 1;
    lws_rx_flow_control(wsi, LWS_RXFLOW_REASON_APPLIES | QJSWS_RXFLOW_PONG |
                                 LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

/* our writable callback: lws has no pong to write (any more), parse on */
static void pong_resume(conn *c, struct lws *wsi)
{
    c->pong_wait = 0;
    lws_rx_flow_control(wsi, LWS_RXFLOW_REASON_APPLIES_ENABLE | QJSWS_RXFLOW_PONG |
                                 LWS_RXFLOW_REASON_FLAG_PROCESS_NOW);
}

/* ------------------------------------------------------------------ */
/* the lws protocol callback                                              */

static int conn_callback(conn *c, struct lws *wsi, enum lws_callback_reasons reason, void *in,
                         size_t len);

static int callback_ws(struct lws *wsi, enum lws_callback_reasons reason, void *user,
                       void *in, size_t len)
{
    conn *c = (conn *)user;
    int lws_in, r;

    switch (reason) {
    case LWS_CALLBACK_ADD_POLL_FD:
        poll_add((struct lws_pollargs *)in);
        return 0;
    case LWS_CALLBACK_DEL_POLL_FD:
        poll_del((struct lws_pollargs *)in);
        return 0;
    case LWS_CALLBACK_CHANGE_MODE_POLL_FD:
        poll_change((struct lws_pollargs *)in);
        if (G.lws_in && c && (((struct lws_pollargs *)in)->events & POLLOUT) && !G.destroying)
            pong_watch(c, wsi);
        return 0;
    case LWS_CALLBACK_UNLOCK_POLL:
        if (G.pong_c && G.pong_c == c)
            pong_pause(c, wsi);
        return 0;
    case LWS_CALLBACK_LOCK_POLL:
        return 0;
    default:
        break;
    }

    if (!c || G.destroying)
        return 0;

    /* our code runs: what asks for POLLOUT from here on is not lws' own doing */
    lws_in = G.lws_in;
    G.lws_in = 0;
    r = conn_callback(c, wsi, reason, in, len); /* may free c */
    G.lws_in = lws_in;
    return r;
}

static int conn_callback(conn *c, struct lws *wsi, enum lws_callback_reasons reason, void *in,
                         size_t len)
{
    switch (reason) {
    case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
        /* lws is built without extensions and then ignores the server's
         * Sec-WebSocket-Extensions; we offer none, so any is a failure (RFC
         * 6455 4.1): refuse (lws reports CLIENT_CONNECTION_ERROR) */
        if (lws_hdr_total_length(wsi, WSI_TOKEN_EXTENSIONS) > 0)
            return 1;
        /* headers are still attached here: remember the chosen subprotocol */
        if (lws_hdr_copy(wsi, c->protocol, sizeof(c->protocol), WSI_TOKEN_PROTOCOL) < 0)
            c->protocol[0] = 0;
        return 0;

    case LWS_CALLBACK_CLIENT_ESTABLISHED: {
        c->state = ST_OPEN;
        if (OPT(OPT_FRAMING) && !c->secure)
            own_established(c);
        conn_opened(c);
        /* the lws path writes queued messages and our close frame when
         * writable; with own framing, close() queued the frame and the end
         * of this service call writes it */
        if (c->qhead || (c->close_requested && !c->own))
            lws_callback_on_writable(wsi);
        return 0;
    }

    case LWS_CALLBACK_CLIENT_RECEIVE:
        return conn_receive(c, wsi, (const uint8_t *)in, len);

    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (c->pong_wait)
            pong_resume(c, wsi);
        if (c->own) {
            if (own_flush(c) < 0)
                return -1;
            if (c->ohead) {
                lws_callback_on_writable(wsi);
                return 0;
            }
            return c->kill_pending ? -1 : 0;
        }
        if (c->fail_code) {
            /* failed: our close frame (close_code is the failure's), then drop TCP */
            if (!c->close_sent)
                lws_path_send_close(c);
            return -1;
        }
        if (conn_drain(c) < 0)
            return -1;
        if (c->qhead) {
            lws_callback_on_writable(wsi);
            return 0;
        }
        if (c->close_requested && !c->close_sent && !lws_partial_buffered(wsi))
            return lws_path_send_close(c);
        return 0;

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: {
        const uint8_t *p = in;
        const char *why;
        int bad = close_body_problem(p, len, &why);
        if (bad) {
            /* lws would echo it (rewriting only some bad codes): fail instead,
             * with our close frame written now, then drop TCP */
            conn_fail(c, bad, why);
            if (!c->close_sent)
                lws_path_send_close(c);
            return -1;
        }
        c->peer_closed = 1;
        if (len >= 2) {
            size_t rl = len - 2;
            c->peer_code = (p[0] << 8) | p[1];
            if (rl > sizeof(c->peer_reason))
                rl = sizeof(c->peer_reason);
            memcpy(c->peer_reason, p + 2, rl);
            c->peer_reason_len = rl;
        } else {
            c->peer_code = 1005;
            c->peer_reason_len = 0;
        }
        if (c->state == ST_OPEN)
            c->state = ST_CLOSING;
        /* the answer to our close frame: handshake complete, drop TCP (lws
         * answers a peer-initiated close itself) */
        return c->close_sent ? -1 : 0;
    }

    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        if (!c->closed_dispatched) {
            conn_dispatch_error(c, in ? (const char *)in : "connection error");
            conn_dispatch_close(c, 1006, "", 0, 0);
        }
        return 0;

    case LWS_CALLBACK_CLIENT_CLOSED:
        conn_closed(c);
        return 0;

    case LWS_CALLBACK_WSI_DESTROY:
        UNUSED(wsi);
        if (!JS_IsUndefined(c->self)) {
            if (!c->closed_dispatched) {
                if (c->state == ST_CONNECTING || c->aborted)
                    conn_dispatch_error(c, "connection failed");
                conn_dispatch_close(c, 1006, "", 0, 0);
            }
            conn_detach(c); /* may free c */
        }
        return 0;

    default:
        break;
    }
    return 0;
}

const struct lws_protocols qjsws_protocols[] = {
    {
        .name = "qjsws",
        .callback = callback_ws,
        .per_session_data_size = 0,
        .rx_buffer_size = 65536,
        .tx_packet_size = 64u << 20,
    },
    LWS_PROTOCOL_LIST_TERM
};

/* ------------------------------------------------------------------ */
/* JS: conn class                                                         */

static void conn_finalizer(JSRuntime *rt, JSValue val)
{
    conn *c = JS_GetOpaque(val, js_lws_conn_class_id);
    if (!c)
        return;
    if (c->wsi) {
        /* only reachable at runtime teardown: disown the wsi */
        lws_set_wsi_user(c->wsi, NULL);
        c->wsi = NULL;
        G.nconns--;
    } else if (c->raw) {
        raw_abandon(c);
        G.nconns--;
    }
    conn_free_buffers(c);
    buf_unwatch(c);
    JS_FreeValueRT(rt, c->ws);
    js_free_rt(rt, c);
}

static void conn_mark(JSRuntime *rt, JSValueConst val, JS_MarkFunc *mark_func)
{
    conn *c = JS_GetOpaque(val, js_lws_conn_class_id);
    if (!c)
        return;
    JS_MarkValue(rt, c->ws, mark_func);
}

JSClassDef conn_class = {
    "LwsConn",
    .finalizer = conn_finalizer,
    .gc_mark = conn_mark,
};

static conn *get_conn(JSContext *ctx, JSValueConst v)
{
    return JS_GetOpaque2(ctx, v, js_lws_conn_class_id);
}

/* connect(secure, host, port, path, protocols, ws) -> conn; events go to
 * G.evfn/G.msgfn with this = ws */
JSValue js_connect(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    struct lws_client_connect_info ci;
    const char *host = NULL, *path = NULL, *protos = NULL;
    char hosthdr[300];
    int secure, port;
    conn *c;
    JSValue obj;
    UNUSED(this_val);
    UNUSED(argc);

    if (!G.ctx)
        return JS_ThrowInternalError(ctx, "quickjs-websocket: not initialised");
    secure = JS_ToBool(ctx, argv[0]);
    if (JS_ToInt32(ctx, &port, argv[2]))
        return JS_EXCEPTION;
    host = JS_ToCString(ctx, argv[1]);
    path = JS_ToCString(ctx, argv[3]);
    if (!JS_IsUndefined(argv[4]) && !JS_IsNull(argv[4]))
        protos = JS_ToCString(ctx, argv[4]);
    if (!host || !path) {
        obj = JS_EXCEPTION;
        goto done;
    }

    obj = JS_NewObjectClass(ctx, (int)js_lws_conn_class_id);
    if (JS_IsException(obj))
        goto done;
    c = js_mallocz(ctx, sizeof(*c));
    if (!c) {
        JS_FreeValue(ctx, obj);
        obj = JS_EXCEPTION;
        goto done;
    }
    c->jsctx = ctx;
    c->ws = JS_DupValue(ctx, argv[5]);
    c->self = JS_DupValue(ctx, obj);
    c->state = ST_CONNECTING;
    c->close_code = 1005;
    c->secure = secure;
    c->fd = -1;
    JS_SetOpaque(obj, c);
    G.nconns++;

    if (strchr(host, ':'))
        snprintf(hosthdr, sizeof(hosthdr), "[%s]", host);
    else
        snprintf(hosthdr, sizeof(hosthdr), "%s", host);
    if (port != (secure ? 443 : 80)) {
        size_t l = strlen(hosthdr);
        snprintf(hosthdr + l, sizeof(hosthdr) - l, ":%d", port);
    }

    if (dial_wanted(secure)) {
        const char *why = NULL;
        if (dial_start(c, host, port, path, hosthdr, protos, &why) < 0) {
            /* raised inside connect(): websocket.js delivers them later */
            conn_dispatch_error(c, why);
            conn_dispatch_close(c, 1006, "", 0, 0);
            conn_detach(c);
        }
        goto done;
    }

    if (G.in_service)
        G.connected = 1;
    memset(&ci, 0, sizeof(ci));
    ci.context = G.ctx;
    ci.address = host;
    ci.port = port;
    ci.path = path;
    ci.host = hosthdr;
    ci.origin = hosthdr;
    ci.protocol = protos && *protos ? protos : NULL;
    ci.local_protocol_name = "qjsws";
    ci.ssl_connection = secure ? LCCSCF_USE_SSL : 0;
    if (secure && getenv("QJSWS_INSECURE_TLS"))
        ci.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK;
    ci.userdata = c;
    ci.pwsi = &c->wsi;

    if (!lws_client_connect_via_info(&ci)) {
        /* failed synchronously; lws may or may not have reported it */
        if (!c->closed_dispatched) {
            conn_dispatch_error(c, "connect failed");
            conn_dispatch_close(c, 1006, "", 0, 0);
        }
        if (!JS_IsUndefined(c->self)) {
            c->wsi = NULL;
            conn_detach(c);
        }
    }

done:
    JS_FreeCString(ctx, host);
    JS_FreeCString(ctx, path);
    JS_FreeCString(ctx, protos);
    return obj;
}

/* conn.send(data, isText): data is a string, ArrayBuffer or a view */
JSValue js_conn_send(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    int text;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    text = JS_ToBool(ctx, argv[1]);

    if (JS_IsString(argv[0])) {
        usv_str u;
        int r;
        if (usv_utf8(ctx, argv[0], &u) < 0)
            return JS_EXCEPTION;
        r = conn_send(ctx, c, (const uint8_t *)u.p, u.len, 1);
        usv_free(ctx, &u);
        buf_publish_pending();
        return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
    } else {
        size_t size;
        int64_t off = 0, blen = -1;
        int r;
        uint8_t *p = JS_GetArrayBuffer(ctx, &size, argv[0]);
        if (!p)
            return JS_EXCEPTION;
        if (argc > 3 && !JS_IsUndefined(argv[2])) {
            if (JS_ToInt64(ctx, &off, argv[2]) || JS_ToInt64(ctx, &blen, argv[3]))
                return JS_EXCEPTION;
            if (off < 0 || blen < 0 || (uint64_t)off + (uint64_t)blen > size)
                return JS_ThrowRangeError(ctx, "send: view out of range");
        } else {
            blen = (int64_t)size;
        }
        r = conn_send(ctx, c, p + off, (size_t)blen, text);
        buf_publish_pending();
        return r < 0 ? JS_EXCEPTION : JS_UNDEFINED;
    }
}

/* conn.close(code, reason) -- validated by the caller */
JSValue js_conn_close(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    int code = 1000;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    if (!JS_IsUndefined(argv[0]) && JS_ToInt32(ctx, &code, argv[0]))
        return JS_EXCEPTION;
    if (!conn_live(c) || c->close_requested || c->closed_dispatched || c->fail_code ||
        c->peer_closed)
        return JS_UNDEFINED;
    c->close_requested = 1;
    c->close_code = code;
    c->close_reason_len = 0;
    if (JS_IsString(argv[1])) {
        usv_str u;
        size_t len;
        if (usv_utf8(ctx, argv[1], &u) < 0) {
            c->close_requested = 0;
            return JS_EXCEPTION;
        }
        len = u.len > 123 ? 123 : u.len; /* checked in JS (SyntaxError) */
        memcpy(c->close_reason, u.p, len);
        c->close_reason_len = len;
        usv_free(ctx, &u);
    }
    if (c->state == ST_CONNECTING) {
        c->aborted = 1;
        conn_kill_async(c);
    } else if (c->own) {
        c->state = ST_CLOSING;
        own_send_close(c, c->close_code, c->close_reason, c->close_reason_len);
        if (!c->kill_pending)
            conn_close_timeout(c, 5);
        own_kick(c);
    } else {
        c->state = ST_CLOSING;
        lws_callback_on_writable(c->wsi);
    }
    buf_publish_pending(); /* own framing: the close frame counts until written */
    return JS_UNDEFINED;
}

/* conn.fail(code[, reason]): from JS (naive receive path) -- fail the
 * connection with this code */
JSValue js_conn_fail(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    const char *r = NULL;
    int code;
    if (!c)
        return JS_EXCEPTION;
    if (JS_ToInt32(ctx, &code, argv[0]))
        return JS_EXCEPTION;
    if (argc > 1 && JS_IsString(argv[1])) {
        r = JS_ToCString(ctx, argv[1]);
        if (!r) /* out of memory: the default text */
            JS_FreeValue(ctx, JS_GetException(ctx));
    }
    conn_fail(c, code, r ? r : fail_text(code));
    JS_FreeCString(ctx, r);
    buf_publish_pending();
    return JS_UNDEFINED;
}

/* conn.buffered(): bytes queued in C and not yet handed to the socket */
JSValue js_conn_buffered(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    UNUSED(argc);
    UNUSED(argv);
    if (!c)
        return JS_EXCEPTION;
    if (c->own)
        return JS_NewInt64(ctx, (int64_t)c->obytes); /* framed bytes, O(1) */
    if (OPT(OPT_BUFFERED))
        return JS_NewInt64(ctx, (int64_t)c->qbytes);
    {
        /* naive: walk the queue every time */
        size_t total = 0;
        sbuf *b;
        for (b = c->qhead; b; b = b->next)
            total += b->len;
        return JS_NewInt64(ctx, (int64_t)total);
    }
}

/*
 * conn.watch(): the first read of bufferedAmount (opt "buffered"): give the
 * WebSocket its own bufferedAmount data property, kept current from C from
 * now on (see buf_publish); returns the value.  Called again only if the
 * property was deleted: it is redefined.
 */
JSValue js_conn_watch(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    conn *c = get_conn(ctx, this_val);
    size_t v;
    UNUSED(argc);
    if (!c)
        return JS_EXCEPTION;
    v = conn_buffered(c);
    UNUSED(argv);
    if (!conn_live(c) || c->closed_dispatched || !JS_IsObject(c->ws))
        return JS_NewInt64(ctx, (int64_t)v); /* nothing will change any more */
    c->watch = 1;
    buf_define(c, v);
    return JS_NewInt64(ctx, (int64_t)v);
}
