/* ws:// URLs and the HTTP/1.1 upgrade handshake (RFC 6455 section 4). */
#ifndef LG_HTTP_H
#define LG_HTTP_H

#include <netinet/in.h>
#include <stddef.h>

struct url {
	struct sockaddr_in addr;
	char host[256];		/* as given, for the Host header */
	char target[2048];	/* path and query, at least "/" */
};

/* Parse ws://HOST[:PORT][/path][?query]: NULL, or why not (no side effects). */
const char *url_parse_str(struct url *u, const char *s);

/* The same; fails the run (naming the URL) on anything it does not take. */
void url_parse(struct url *u, const char *s);

/*
 * Write the upgrade request with a fresh random key into `out` (size `cap`):
 * the room's hs_request() (wsproto/handshake_core.c), no subprotocol offered.
 * Returns its length and stores the expected Sec-WebSocket-Accept (28 chars
 * + NUL) in `accept`.
 */
size_t http_request(const struct url *u, char *out, size_t cap,
		    char accept[29]);

/* The response is checked by the room's hs_check() (conn.c), with no
 * subprotocol offered. */

#endif
