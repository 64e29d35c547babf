/*
 * The connection's state machine (sm.c): CONNECTING, OPEN, CLOSING, CLOSED;
 * close() and its codes, failing (RFC 6455 7.1.7), the peer's close frame,
 * and what is reported when a connection ends (code, reason, wasClean).  It
 * acts through the connection's framer (tp.h) and reports events upward
 * through struct sm_up.  No JS, sockets or libwebsockets.
 *
 * struct sm is a connection's state part; it embeds the framing part
 * (frame.h) and is embedded by the binding's struct conn (conn.h).
 */
#ifndef QJSWS_SM_H
#define QJSWS_SM_H

#include "frame.h"

#pragma GCC visibility push(hidden)

enum { ST_CONNECTING, ST_OPEN, ST_CLOSING, ST_CLOSED };

struct sm {
    struct fr fr;            /* first */
    int state;
    int close_requested;     /* close() was called */
    int close_code;          /* our close frame's code (1005: no body) ... */
    char close_reason[124];  /* ... and reason */
    size_t close_reason_len;
    int peer_closed;         /* the peer's close frame came ... */
    int peer_code;           /* ... with this code (1005: none) ... */
    char peer_reason[128];   /* ... and reason */
    size_t peer_reason_len;
    int fail_code;           /* the connection was failed with this code (sm_fail) */
    int closed_dispatched;   /* close was reported */
    int aborted;             /* close() while connecting */
    int detached;            /* the binding let go (sm_release) */
};

static inline struct sm *sm_of(struct tp *t)
{
    return container_of(fr_of(t), struct sm, fr);
}

/* what the state machine reports (set at init by service.c) */
struct sm_up {
    void (*open)(struct sm *s); /* the open event (s->fr.tp.protocol: the subprotocol) */
    void (*error)(struct sm *s, const char *msg);
    void (*close)(struct sm *s, int code, const char *reason, size_t rlen, int clean);
    /* the connection is over: the binding lets go of JS (may free s) */
    void (*detach)(struct sm *s);
};

void sm_init(const struct sm_up *up);

/* a new connection: CONNECTING, no socket, transport `ops` and framer `fr` */
void sm_start(struct sm *s, const struct tp_ops *ops, const struct framer *fr);

static inline int sm_live(const struct sm *s)
{
    return tp_live(&s->fr.tp);
}

/* send() goes to the framer (browsers silently discard otherwise) */
static inline int sm_sendable(const struct sm *s)
{
    return sm_live(s) && s->state == ST_OPEN && !s->close_requested;
}

/* close() has something to do */
static inline int sm_closable(const struct sm *s)
{
    return sm_live(s) && !s->close_requested && !s->closed_dispatched && !s->fail_code &&
           !s->peer_closed;
}

/* close(code, reason): validated by the caller (JS), reason at most 123 bytes */
void sm_close(struct sm *s, int code, const char *reason, size_t rlen);

/* Fail the connection (RFC 6455 7.1.7): error (once), our close frame with
 * code, TCP dropped without waiting; close then reports code, not clean. */
void sm_fail(struct sm *s, int code, const char *reason);
/* the error text of a failure code */
const char *fail_text(int code);

/* the peer's close frame (either parser): 0 recorded, or the code the
 * connection was failed with (a body no server may send) */
int sm_peer_close(struct sm *s, const uint8_t *p, size_t n);

/* the opening handshake succeeded: open */
void sm_opened(struct sm *s);

/* report close (once): CLOSED, then the event */
void sm_report_close(struct sm *s, int code, const char *reason, size_t rlen, int clean);

/* the TCP connection is gone: report close as it ended */
void sm_closed(struct sm *s);

/* the binding lets go: the lower layers' buffers freed, CLOSED */
void sm_release(struct sm *s);

/* the targets of the callback tables below the state machine */
void sm_tp_gone(struct tp *t, const char *why);            /* tp_up.gone */
void sm_fr_opened(struct fr *f);                            /* fr_up.opened */
unsigned sm_tp_status(struct tp *t);                        /* tp_up.lws.status */
size_t sm_tp_close_body(struct tp *t, uint8_t out[125]);   /* tp_up.lws.close_body */
void sm_tp_established(struct tp *t);                       /* tp_up.lws.established */
void sm_tp_opened(struct tp *t);                            /* tp_up.lws.opened */
int sm_tp_peer_close(struct tp *t, const uint8_t *p, size_t n); /* tp_up.lws.peer_close */
void sm_tp_error(struct tp *t, const char *why);            /* tp_up.lws.error */
void sm_tp_closed(struct tp *t);                            /* tp_up.lws.closed */
void sm_tp_destroyed(struct tp *t);                         /* tp_up.lws.destroyed */

#pragma GCC visibility pop

#endif
