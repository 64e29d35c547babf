#include "http.h"
#include "util.h"

#include <arpa/inet.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char GUID[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

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
	unsigned char raw[16], digest[SHA_DIGEST_LENGTH];
	char key[25], both[64];
	int n;

	rand_bytes(raw, sizeof(raw));
	EVP_EncodeBlock((unsigned char *)key, raw, sizeof(raw));
	snprintf(both, sizeof(both), "%s%s", key, GUID);
	SHA1((const unsigned char *)both, strlen(both), digest);
	EVP_EncodeBlock((unsigned char *)accept, digest, sizeof(digest));

	n = snprintf(out, cap,
		     "GET %s HTTP/1.1\r\n"
		     "Host: %s\r\n"
		     "Upgrade: websocket\r\n"
		     "Connection: Upgrade\r\n"
		     "Sec-WebSocket-Key: %s\r\n"
		     "Sec-WebSocket-Version: 13\r\n"
		     "\r\n",
		     u->target, u->host, key);
	if (n < 0 || (size_t)n >= cap)
		fail("upgrade request too long");
	return (size_t)n;
}

/* Does the comma-separated header value contain `token` (any case)? */
static int has_token(const char *v, size_t len, const char *token)
{
	size_t tl = strlen(token), i = 0;

	while (i < len) {
		size_t s, e;

		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < len && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == tl && !strncasecmp(v + s, token, tl))
			return 1;
	}
	return 0;
}

const char *http_check_response(const char *head, size_t len,
				const char *accept)
{
	const char *p = head, *end = head + len, *eol;
	int upgrade = 0, connection = 0, accepted = 0;

	eol = memmem(p, (size_t)(end - p), "\r\n", 2);
	/* "HTTP/1.1 101", then a blank or the end of the line */
	if (!eol || eol - p < 12 || strncmp(p, "HTTP/1.1 101", 12) ||
	    (eol - p > 12 && p[12] != ' '))
		return "server did not answer 101 Switching Protocols";
	for (p = eol + 2; p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) && eol > p;
	     p = eol + 2) {
		const char *colon = memchr(p, ':', (size_t)(eol - p)), *v;
		size_t nlen, vlen;

		if (!colon || colon == p)
			return "malformed header line in the 101 response";
		nlen = (size_t)(colon - p);
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		vlen = (size_t)(eol - v);
		while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
			vlen--;
		if (nlen == 7 && !strncasecmp(p, "Upgrade", 7))
			upgrade |= has_token(v, vlen, "websocket");
		else if (nlen == 10 && !strncasecmp(p, "Connection", 10))
			connection |= has_token(v, vlen, "upgrade");
		else if (nlen == 20 && !strncasecmp(p, "Sec-WebSocket-Accept", 20))
			accepted = vlen == 28 && !memcmp(v, accept, 28);
		else if (nlen == 24 && !strncasecmp(p, "Sec-WebSocket-Extensions", 24))
			return "server negotiated an extension we did not offer";
	}
	if (!upgrade)
		return "101 response without Upgrade: websocket";
	if (!connection)
		return "101 response without Connection: Upgrade";
	if (!accepted)
		return "wrong or missing Sec-WebSocket-Accept";
	return NULL;
}
