/* WebSocket URL parsing with no JS (url_core.c): parse_url()'s logic */
#ifndef QJSWS_URL_CORE_H
#define QJSWS_URL_CORE_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

struct ws_url {
    int secure;          /* wss:// (or https://) */
    int port;            /* the scheme's default where none was given */
    char host[256];      /* lower case, IPv6 without brackets */
    char path[2048];     /* path and query, at least "/" */
    char url[2 * 256 + 2048 + 16]; /* as the url attribute reports it */
};

/* s (len bytes, no NUL needed) as a ws://, wss://, http:// or https:// URL:
 * 0 and *u filled, or -1 (not a URL the client accepts) */
int ws_url_parse(const char *s, size_t len, struct ws_url *u);

#pragma GCC visibility pop

#endif
