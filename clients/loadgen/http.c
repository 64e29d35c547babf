#include "http.h"
#include "handshake_core.h"
#include "url_core.h"
#include "util.h"

#include <arpa/inet.h>
#include <string.h>

/* our words for each refusal of the room's parser (the texts loadgen printed before it used it) */
static const char *const refusal[WS_URL_ERRORS] = {
	[WS_URL_SCHEME] = "--url must start with ws://",
	[WS_URL_FRAGMENT] = "bad character in the --url path",
	[WS_URL_USERINFO] = "--url host must be an IPv4 address or localhost",
	[WS_URL_NO_HOST] = "bad host in --url",
	[WS_URL_HOST] = "--url host must be an IPv4 address or localhost",
	[WS_URL_HOST_LONG] = "bad host in --url",
	[WS_URL_PORT] = "bad port in --url",
	[WS_URL_PATH] = "bad character in the --url path",
	[WS_URL_PATH_LONG] = "--url path too long",
};

_Static_assert(sizeof(((struct url *)0)->host) == sizeof(((struct ws_url *)0)->host) &&
	       sizeof(((struct url *)0)->target) == sizeof(((struct ws_url *)0)->path),
	       "struct url holds what struct ws_url does");

const char *url_check(struct url *u, const char *s)
{
	struct ws_url w;
	enum ws_url_error e;
	size_t at, n;

	memset(u, 0, sizeof(*u));
	e = ws_url_parse(s, strlen(s), &w);
	if (e != WS_URL_OK)
		return refusal[e];
	u->addr.sin_family = AF_INET;
	u->addr.sin_port = htons((uint16_t)w.port);
	/* the host is lower case: "localhost" in any case */
	if (inet_pton(AF_INET, strcmp(w.host, "localhost") ? w.host : "127.0.0.1",
		      &u->addr.sin_addr) != 1)
		return "--url host must be an IPv4 address or localhost";
	u->secure = w.secure;
	memcpy(u->host, w.host, sizeof(u->host));
	/* the Host header: the url as the room writes it, between its scheme and its path */
	at = w.secure ? strlen("wss://") : strlen("ws://");
	n = strlen(w.url) - at - strlen(w.path);
	memcpy(u->host_header, w.url + at, n);
	u->host_header[n] = 0;
	memcpy(u->target, w.path, sizeof(u->target));
	return NULL;
}

void url_parse(struct url *u, const char *s)
{
	const char *why = url_check(u, s);

	if (why)
		fail("%s: %s", why, s);
}

size_t http_request(const struct url *u, const char *exts, char *out, size_t cap,
		    char accept[29])
{
	unsigned char nonce[16];
	size_t n;

	rand_bytes(nonce, sizeof(nonce));
	n = hs_request(out, cap, u->target, u->host_header, NULL, exts, nonce, accept);
	if (!n)
		fail("upgrade request too long");
	return n;
}
