/* WebSocket URL parsing, pure (url_core.c): the module's parse_url() and the
 * load generator's --url */
#ifndef WSPROTO_URL_CORE_H
#define WSPROTO_URL_CORE_H

#include <stddef.h>

#pragma GCC visibility push(hidden)

struct ws_url {
    int secure;          /* wss:// (or https://) */
    int port;            /* the scheme's default where none was given */
    char host[256];      /* lower case, IPv6 without brackets */
    char path[2048];     /* path and query, at least "/" */
    char url[2 * 256 + 2048 + 16]; /* as the url attribute reports it */
};

/* why ws_url_parse() refuses a URL (each client says it in its own words) */
enum ws_url_error {
    WS_URL_OK = 0,
    WS_URL_SCHEME,    /* not ws://, wss://, http:// or https:// */
    WS_URL_FRAGMENT,  /* a '#' (a WebSocket URL has no fragment) */
    WS_URL_USERINFO,  /* a user name or password before the host (an '@') */
    WS_URL_NO_HOST,   /* nothing between "//" and the port, path or query */
    WS_URL_HOST,      /* a host character that is not allowed, or a bracketed
                       * host that is not an IPv6 address's ("[::1"; "[]"; "[x]";
                       * "[::1]x") */
    WS_URL_HOST_LONG, /* a host of sizeof(host) bytes or more */
    WS_URL_PORT,      /* a port that is not decimal digits, or above 65535 */
    WS_URL_PATH,      /* a blank, a control character or a NUL in the path or query */
    WS_URL_PATH_LONG, /* a path and query that do not fit path[] (with the '/'
                       * added before a bare query) */
    WS_URL_ERRORS     /* how many there are */
};

/* s (len bytes, no NUL needed) as a ws://, wss://, http:// or https:// URL,
 * ASCII blanks around it ignored: WS_URL_OK and *u filled, or why not (one
 * reason where there are several) */
enum ws_url_error ws_url_parse(const char *s, size_t len, struct ws_url *u);

#pragma GCC visibility pop

#endif
