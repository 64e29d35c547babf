/*
 * wss:// for lws-echo: the certificate and key are checked before lws gets them
 * (a bad file is one line on stderr), and every WebSocket connection accepted
 * over TLS is reported on stdout (servers/README.md, "TLS").
 */
#ifndef WSBENCH_TLS_H
#define WSBENCH_TLS_H

#include <libwebsockets.h>
#include <stddef.h>

/*
 * Can the PEM certificate `cert` and private key `key` be loaded, and do they
 * belong together? 0, or -1 with the reason in `why`.
 */
int tls_check_files(const char *cert, const char *key, char *why, size_t len);

/*
 * Print and flush "WSBENCH-TLS version=... cipher=... group=... library=..."
 * for the connection if it runs over TLS; nothing for a plain one.
 */
void tls_report(struct lws *wsi);

#endif
