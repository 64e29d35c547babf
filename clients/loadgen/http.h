/* --url, and the HTTP/1.1 upgrade request (RFC 6455 section 4). */
#ifndef LG_HTTP_H
#define LG_HTTP_H

#include <netinet/in.h>
#include <stddef.h>

struct url {
	struct sockaddr_in addr;	/* the host's IPv4 address (localhost: 127.0.0.1), the port */
	int secure;			/* wss:// (or https://) */
	char host[256];			/* the host, lower case (the TLS name check, SNI) */
	char host_header[256 + 8];	/* the Host header: the host, ":port" where it is not the default */
	char target[2048];		/* path and query, at least "/" */
};

/*
 * --url: the wire protocol room's URL parser (ws_url_parse, wsproto/url_core.c)
 * decides what a URL is, and we take only an IPv4 address or localhost as its
 * host.  NULL and `u` filled, or why not, in our words (clients/loadgen/README.md).
 */
const char *url_check(struct url *u, const char *s);

/* The same; fails the run (naming the URL) on anything it does not take. */
void url_parse(struct url *u, const char *s);

/*
 * Write the upgrade request with a fresh random key into `out` (size `cap`):
 * the room's hs_request() (wsproto/handshake_core.c), no subprotocol offered, the
 * extensions `exts` offered (NULL: none).
 * Returns its length and stores the expected Sec-WebSocket-Accept (28 chars
 * + NUL) in `accept`.
 */
size_t http_request(const struct url *u, const char *exts, char *out, size_t cap,
		    char accept[29]);

/* The response is checked by the room's hs_check() (conn.c), with no
 * subprotocol offered; its extension, if any, by the room's pmd_agree(). */

#endif
