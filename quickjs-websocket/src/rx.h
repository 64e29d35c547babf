/* The receive path (rx.c): parse, check, assemble and deliver messages. */
#ifndef QJSWS_RX_H
#define QJSWS_RX_H

#include "conn.h"

#pragma GCC visibility push(hidden)

/* bytes our framing read (fr_up.rx): parse and deliver */
void conn_rx(struct fr *f, const uint8_t *p, size_t n);
/* fr_up.sink: where the rest of the current frame's payload may be read
 * straight into its message (opt "rxdirect"), or NULL */
uint8_t *conn_rx_sink(struct fr *f, size_t *n);
/* a chunk of a data message lws parsed (tp_up.lws.receive): < 0 failed */
int rx_lws_receive(struct tp *t, const uint8_t *p, size_t n, int first, int final, int binary,
                   size_t remain);
/* the receive buffers, freed */
void rx_free(conn *c);

#pragma GCC visibility pop

#endif
