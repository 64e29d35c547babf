/*
 * The TLS transport (tp_tls.c): OpenSSL over our own TCP socket (tp_tcp.c's),
 * for wss:// connections with our own handshake and framing (opt "tls").
 */
#ifndef QJSWS_TP_TLS_H
#define QJSWS_TP_TLS_H

#include "tp.h"

#pragma GCC visibility push(hidden)

extern const struct tp_ops tp_tls;

void tp_tls_init(const struct tp_up *up);
/* runtime teardown: the SSL_CTX, if one was made */
void tp_tls_destroy(void);

/* counters (pool_stats()): reads that had to wait for POLLOUT (OpenSSL had to
 * write first), writes that had to wait for POLLIN, records joined across
 * blocks in the staging buffer, unread bytes moved out of the shared read
 * buffer into their connection's own (another connection read) */
struct tls_stats {
    uint64_t rd_want_write, wr_want_read, staged, kept, held_out;
    uint64_t handshakes, resumed; /* handshakes done, and of them resumed sessions */
};
void tp_tls_stats(struct tls_stats *st);

/* what the OpenSSL session ssl negotiated (a finished handshake's): also for
 * libwebsockets' sessions (tp_lws.c, the lws path over wss://) */
struct ssl_st;
void tp_tls_describe(struct ssl_st *ssl, struct tp_secinfo *out);

#pragma GCC visibility pop

#endif
