/*
 * The libwebsockets adapter (tp_lws.c): the process-wide lws context, its
 * protocol and poll callbacks, and what it offers a connection:
 *   fr_lws  lws frames the connection (the lws path: wss://, "framing" off, and
 *           ws:// until the hand-over): sends through lws_write() and our
 *           queue, our close frame, the pongs lws answers;
 *   tp_lws  a transport for our framing over lws' socket once it is handed
 *           over (lws keeps the wsi: writable notifications, timeouts, the
 *           final close).
 * What lws reports goes up through struct lws_up, set at init.
 */
#ifndef QJSWS_TP_LWS_H
#define QJSWS_TP_LWS_H

#include "tp.h"

#pragma GCC visibility push(hidden)

struct lws_context;

extern const struct tp_ops tp_lws;
extern const struct framer fr_lws;

/* lws_up.status(): the connection as the state machine sees it */
enum {
    LWS_ST_OPEN = 1,            /* open (not closing) */
    LWS_ST_CLOSING = 2,
    LWS_ST_CLOSE_REQUESTED = 4, /* close() was called */
    LWS_ST_FAILED = 8,          /* failed (RFC 6455 7.1.7) */
    LWS_ST_PEER_CLOSED = 16,    /* the peer's close frame came */
};

/* what the adapter reports upward (set at init by service.c) */
struct lws_up {
    unsigned (*status)(struct tp *t);                      /* LWS_ST_* (state machine) */
    size_t (*close_body)(struct tp *t, uint8_t out[125]); /* our close frame's body (state machine) */
    void (*established)(struct tp *t);                     /* the handshake succeeded: state open, no event yet */
    void (*opened)(struct tp *t);                          /* ... then the open event */
    /* a chunk of a data message lws parsed (as struct wsp_cb's data); < 0:
     * the connection was failed (the binding's receive path) */
    int (*receive)(struct tp *t, const uint8_t *p, size_t n, int first, int final, int binary,
                   size_t remain);
    /* the peer's close frame: 0 recorded, or the code the connection was
     * failed with (state machine) */
    int (*peer_close)(struct tp *t, const uint8_t *p, size_t n);
    void (*error)(struct tp *t, const char *why); /* the connection could not be set up */
    void (*closed)(struct tp *t);                 /* the TCP connection ended */
    void (*destroyed)(struct tp *t);              /* the wsi is gone: let go (may free t) */
    /* our framing, once handed over (frame.c): lws' writable callback (0, or
     * -1: close), and the hand-over itself */
    int (*writable)(struct tp *t);
    void (*take)(struct tp *t);
};

void tp_lws_log_level(const char *level); /* QJSWS_LWS_LOG, or NULL */
/* the callback tables (the context is made at the first connection lws sets up) */
void tp_lws_init(const struct tp_up *up, const struct lws_up *lup);
void tp_lws_destroy(void);
/* the context, once made */
extern struct lws_context *tp_lws_context;

/* start a connection lws sets up (making the context first, if needed); 0 under
 * way (events follow), -1 failed at once (lws may or may not have reported it) */
int tp_lws_connect(struct tp *t, int secure, const char *host, int port, const char *path,
                   const char *hosthdr, const char *protos);

/* a connection was started inside the current service call (clears it) */
extern int tp_lws_connected_;
static inline int tp_lws_connected(void)
{
    int c = tp_lws_connected_;
    tp_lws_connected_ = 0;
    return c;
}
/* after any servicing: hand-overs, then forced service of the rx lws holds;
 * 1 if lws wants to be serviced again at once */
int tp_lws_service_pending(void);
/* the housekeeping tick: lws' timers (and its own poll()) */
void tp_lws_service_timers(void);

#pragma GCC visibility pop

#endif
