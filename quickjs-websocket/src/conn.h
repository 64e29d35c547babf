/*
 * A connection as the JS binding holds it (header-only): the state machine's
 * part (and inside it the framing's and the transport's, sm.h, frame.h,
 * tp.h) followed by what only the binding uses: the JS objects, the
 * published bufferedAmount and the receive path's message assembly (rx.c).
 * A JS "conn" object (jsconn.c) owns one.
 */
#ifndef QJSWS_CONN_H
#define QJSWS_CONN_H

#include <quickjs.h>

#include "sm.h"
#include "utf8_core.h"
#include "wsproto.h"

#pragma GCC visibility push(hidden)

typedef struct conn {
    struct sm sm;      /* first: state machine, framing, transport */
    JSContext *jsctx;
    JSValue self;      /* strong ref held while the connection lives */
    JSValue ws;        /* the WebSocket: `this` of every event (released at detach) */
    size_t pub;        /* opt "buffered": the value the bufferedAmount property holds */
    /* opt "direct": what websocket.js tells of the message handlers (conn.onmessage()),
     * and the pooled message event (opt "eventpool"); zeroed: none (not objects) */
    JSValue onmsg;     /* the WebSocket's onmessage, or not an object: none */
    int nlisten;       /* its "message" listeners (addEventListener) */
    JSValue evmsg;     /* the message event, made at the first message (eventpool) */
    /* receive (rx.c) */
    struct wsp rxp;    /* our parser's state (wsproto.h) */
    uint32_t u8;       /* UTF-8 validation state of the text message (utf8_stream) */
    size_t msg_len;    /* bytes of the current data message so far */
    uint8_t *rx;       /* receive accumulator (opt "join") */
    size_t rxlen, rxcap;
    text_scratch t16;  /* UTF-16 of a long received text, reused by the next one (opt "strrecv") */
    int t16_stream;    /* this text is validated and decoded as it arrives */
} conn;

static inline conn *conn_of_sm(struct sm *s)
{
    return container_of(s, conn, sm);
}

static inline conn *conn_of_fr(struct fr *f)
{
    return conn_of_sm(container_of(f, struct sm, fr));
}

static inline conn *conn_of_tp(struct tp *t)
{
    return conn_of_sm(sm_of(t));
}

static inline struct tp *conn_tp(conn *c)
{
    return &c->sm.fr.tp;
}

/* the kinds of event C raises (websocket.js, WebSocket.prototype._event) */
enum { EV_OPEN = 1, EV_CHUNK = 2, EV_ERROR = 3, EV_CLOSE = 4 };

#pragma GCC visibility pop

#endif
