/*
 * The client side of the WebSocket opening handshake (RFC 6455 section 4.1)
 * with no sockets, JS or libwebsockets (handshake_core.c): the upgrade
 * request, and the check of the server's response head.  Both native clients
 * use it: the module for the connections it sets up itself (opt "connect"),
 * the load generator for every connection; the fuzz target wsproto_handshake
 * calls it directly.
 */
#ifndef WSPROTO_HANDSHAKE_CORE_H
#define WSPROTO_HANDSHAKE_CORE_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#define HS_ACCEPT_LEN 28 /* base64 of a SHA-1 digest */
#define HS_HEAD_MAX 8192 /* the longest response head taken */

/*
 * The upgrade request for `path` on `host` (the Host header's value, with the
 * port where it is not the default), offering `protos` (a comma-separated
 * list, or NULL/"" for none) and the extensions `exts` (the value of
 * Sec-WebSocket-Extensions, e.g. pmd_offer()'s, or NULL/"" for none), keyed by
 * the 16 random bytes `nonce`.  Written
 * to out (cap bytes); returns its length, or 0 if it does not fit.  The
 * Sec-WebSocket-Accept the server must answer goes to `accept` (NUL-ended).
 */
size_t hs_request(char *out, size_t cap, const char *path, const char *host,
                  const char *protos, const char *exts, const uint8_t nonce[16],
                  char accept[HS_ACCEPT_LEN + 1]);

/* the length of the response head in p[0..n) (up to and including the blank
 * line), or 0 if it is not complete yet */
size_t hs_head_len(const char *p, size_t n);

/*
 * Check a complete response head: status 101, `Upgrade: websocket`,
 * `Connection: Upgrade`, the expected accept value, and a subprotocol only if
 * it is one of `protos`.  NULL if the connection is established (the chosen
 * subprotocol, or "", is copied to proto, cap bytes), else why not.
 * Extensions: with ext NULL (none offered) any Sec-WebSocket-Extensions header
 * refuses the answer; otherwise at most one such header is taken, and its
 * value (inside head) and length go to *ext and *extlen (NULL and 0: none) for
 * the caller to check (pmd_agree).
 */
const char *hs_check(const char *head, size_t len, const char *accept, const char *protos,
                     char *proto, size_t cap, const char **ext, size_t *extlen);

#pragma GCC visibility pop

#endif
