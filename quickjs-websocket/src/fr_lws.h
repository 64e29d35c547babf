/*
 * lws' own framing of the lws path (fr_lws.c): struct framer fr_lws, and the
 * two steps the libwebsockets adapter's writable callback takes.
 */
#ifndef QJSWS_FR_LWS_H
#define QJSWS_FR_LWS_H

#include "tp.h"

#pragma GCC visibility push(hidden)

extern const struct framer fr_lws;

/* the transport layer's upward interface (our close frame's body), from tp_lws_init() */
void fr_lws_init(const struct tp_up *up);
/* write what is queued while lws takes it: 0, or -1 the connection broke */
int fr_lws_drain(struct tp *t);
/* write our close frame: 0, or -1 the connection broke */
int fr_lws_send_close(struct tp *t);

#pragma GCC visibility pop

#endif
