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

#pragma GCC visibility pop

#endif
