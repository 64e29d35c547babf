/*
 * Connections we set up ourselves (opt "connect", ws:// only): the TCP
 * connect and the opening handshake without libwebsockets, and the pieces of
 * a connection's life lws would otherwise run for it (writable interest,
 * timeouts, the final close).  Such a conn has no wsi; c->raw is set from
 * connect() until the socket is closed.
 */
#ifndef QJSWS_DIAL_H
#define QJSWS_DIAL_H

#include "qjsws.h"

#pragma GCC visibility push(hidden)

/* does connect() set this connection up itself? */
int dial_wanted(int secure);

/* start connecting; 0 started (events follow from the event loop), -1 failed
 * at once (*why says why; nothing is registered, no event was raised) */
int dial_start(conn *c, const char *host, int port, const char *path, const char *hosthdr,
               const char *protos, const char **why);

/* the socket of a raw conn is ready (from service_one) */
void raw_service(conn *c, short revents);

/* what lws does for a wsi, for either kind of conn */
void conn_want_write(conn *c);        /* a writable notification, please */
void conn_written(conn *c);           /* nothing queued any more */
void conn_close_timeout(conn *c, int secs); /* drop TCP if the close is not answered */
void conn_kill_now(conn *c);          /* drop TCP now, outside lws callbacks; may free c */

/* the housekeeping tick: connect and close-ack timeouts of raw conns */
void raw_expire(void);

/* runtime teardown (conn finalizer): close the socket, raise nothing */
void raw_abandon(conn *c);

#pragma GCC visibility pop

#endif
