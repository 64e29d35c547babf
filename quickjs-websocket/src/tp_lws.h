/*
 * The libwebsockets adapter (tp_lws.c): the process-wide lws context, its
 * protocol and poll callbacks, and what it offers a connection:
 *   fr_lws  lws frames the connection (fr_lws.h: the lws path, wss://,
 *           "framing" off, and ws:// until the hand-over); here, the pongs
 *           lws answers;
 *   tp_lws  a transport for our framing over lws' socket once it is handed
 *           over (lws keeps the wsi: writable notifications, timeouts, the
 *           final close).
 * What lws reports goes up through struct tp_up's lws part, set at init.
 */
#ifndef QJSWS_TP_LWS_H
#define QJSWS_TP_LWS_H

#include "tp.h"

#pragma GCC visibility push(hidden)

struct lws_context;

extern const struct tp_ops tp_lws;

/* tp_up.lws.status(): the connection as the state machine sees it */
enum {
    LWS_ST_OPEN = 1,            /* open (not closing) */
    LWS_ST_CLOSING = 2,
    LWS_ST_CLOSE_REQUESTED = 4, /* close() was called */
    LWS_ST_FAILED = 8,          /* failed (RFC 6455 7.1.7) */
    LWS_ST_PEER_CLOSED = 16,    /* the peer's close frame came */
};

void tp_lws_log_level(const char *level); /* QJSWS_LWS_LOG, or NULL */
/* the transport layer's upward interface, whose lws part the adapter reports
 * through (set at init by service.c; the context is made at the first
 * connection lws sets up) */
void tp_lws_init(const struct tp_up *up);
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
