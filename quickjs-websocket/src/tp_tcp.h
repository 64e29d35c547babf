/*
 * The raw TCP transport (tp_tcp.c): our own non-blocking socket in the event
 * loop, for ws:// connections set up without libwebsockets (opt "connect").
 */
#ifndef QJSWS_TP_TCP_H
#define QJSWS_TP_TCP_H

#include "tp.h"

#pragma GCC visibility push(hidden)

extern const struct tp_ops tp_tcp;

void tp_tcp_init(const struct tp_up *up);

struct loop_handler;
/* the socket's poll events, its readiness going to h (tp_tcp's own: to
 * tp_up.io); a transport over our TCP socket (tp_tls.c) takes tp_tcp's open,
 * retry, timeout, close and abandon as they are and watches the socket itself */
void tp_tcp_watch(struct tp *t, int events, const struct loop_handler *h);

#pragma GCC visibility pop

#endif
