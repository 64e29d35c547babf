#include "http.h"
#include "handshake_core.h"
#include "util.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *url_parse_str(struct url *u, const char *s)
{
	const char *host, *end, *colon, *q;
	size_t hlen;
	long port = 80;
	char hostbuf[256];

	memset(u, 0, sizeof(*u));
	/* schemes and "localhost" in any case, as URL parsers take them */
	if (!strncasecmp(s, "wss://", 6))
		return "wss:// is not supported (plain ws:// only)";
	if (strncasecmp(s, "ws://", 5))
		return "--url must start with ws://";
	host = s + 5;
	end = host + strcspn(host, "/?");
	hlen = (size_t)(end - host);
	if (!hlen || hlen >= sizeof(u->host))
		return "bad host in --url";
	memcpy(u->host, host, hlen);
	colon = memchr(host, ':', hlen);
	if (colon) {
		/* digits only (no sign, no blanks); empty: the default */
		for (q = colon + 1, port = 0; q < end; q++) {
			if (*q < '0' || *q > '9' || port > 65535)
				return "bad port in --url";
			port = port * 10 + (*q - '0');
		}
		if (q == colon + 1)
			port = 80;
		if (port < 1 || port > 65535)
			return "bad port in --url";
		hlen = (size_t)(colon - host);
	}
	memcpy(hostbuf, host, hlen);
	hostbuf[hlen] = 0;
	if (!strcasecmp(hostbuf, "localhost"))
		strcpy(hostbuf, "127.0.0.1");
	u->addr.sin_family = AF_INET;
	u->addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, hostbuf, &u->addr.sin_addr) != 1)
		return "--url host must be an IPv4 address or localhost";
	/* the request line carries the path as it is: no blanks or controls,
	 * and a fragment is never sent (WebSocket URLs have none) */
	for (q = end; *q; q++)
		if ((unsigned char)*q <= ' ' || *q == '#')
			return "bad character in the --url path";
	/* the same bound as the QuickJS client's parser (fuzz: qjs_url agreement) */
	if (strlen(end) + (*end == '?') + 1 >= sizeof(u->target))
		return "--url path too long";
	if (snprintf(u->target, sizeof(u->target), "%s%s", *end == '?' ? "/" : "",
		     *end ? end : "/") >= (int)sizeof(u->target))
		return "--url path too long";
	return NULL;
}

void url_parse(struct url *u, const char *s)
{
	const char *why = url_parse_str(u, s);

	if (why)
		fail("%s: %s", why, s);
}

size_t http_request(const struct url *u, char *out, size_t cap,
		    char accept[29])
{
	unsigned char nonce[16];
	size_t n;

	rand_bytes(nonce, sizeof(nonce));
	n = hs_request(out, cap, u->target, u->host, NULL, nonce, accept);
	if (!n)
		fail("upgrade request too long");
	return n;
}
