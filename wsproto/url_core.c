/* WebSocket URL parsing (no JS): see url_core.h */
#include "url_core.h"

#include <string.h>
#include <strings.h>

enum ws_url_error ws_url_parse(const char *s, size_t len, struct ws_url *u)
{
    const char *p, *end, *hs, *he, *ps;
    char *hostbuf = u->host, *pathbuf = u->path, *urlbuf = u->url;
    int secure, port = -1, bracket = 0;
    end = s + len;
    /* trim ASCII whitespace like the URL parser does */
    p = s;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        end--;
    if ((size_t)(end - p) >= 5 && !strncasecmp(p, "ws://", 5)) {
        secure = 0;
        p += 5;
    } else if ((size_t)(end - p) >= 6 && !strncasecmp(p, "wss://", 6)) {
        secure = 1;
        p += 6;
    } else if ((size_t)(end - p) >= 7 && !strncasecmp(p, "http://", 7)) {
        secure = 0;
        p += 7;
    } else if ((size_t)(end - p) >= 8 && !strncasecmp(p, "https://", 8)) {
        secure = 1;
        p += 8;
    } else {
        return WS_URL_SCHEME;
    }
    if (memchr(p, '#', (size_t)(end - p)))
        return WS_URL_FRAGMENT;
    /* authority ends at / or ? */
    {
        const char *a = p;
        while (a < end && *a != '/' && *a != '?')
            a++;
        ps = a;
    }
    if (memchr(p, '@', (size_t)(ps - p)))
        return WS_URL_USERINFO;
    if (p < ps && *p == '[') {
        bracket = 1;
        hs = p + 1;
        he = memchr(hs, ']', (size_t)(ps - hs));
        if (!he || he == hs)
            return WS_URL_HOST;
        p = he + 1;
    } else {
        hs = p;
        he = p;
        while (he < ps && *he != ':')
            he++;
        p = he;
    }
    if (he == hs)
        return WS_URL_NO_HOST;
    if (p < ps) {
        long v = 0;
        if (*p != ':')
            return WS_URL_HOST; /* "[::1]x" */
        p++;
        if (p == ps) {
            port = -1;
        } else {
            while (p < ps) {
                if (*p < '0' || *p > '9')
                    return WS_URL_PORT;
                v = v * 10 + (*p - '0');
                if (v > 65535)
                    return WS_URL_PORT;
                p++;
            }
            port = (int)v;
        }
    }
    if (port < 0)
        port = secure ? 443 : 80;
    if ((size_t)(he - hs) >= sizeof(u->host))
        return WS_URL_HOST_LONG;
    memcpy(hostbuf, hs, (size_t)(he - hs));
    hostbuf[he - hs] = 0;
    {
        /* every byte of it: a NUL must not end the check early (the host
         * would be cut there when it is used, fuzz/regress/url/url-nul-host) */
        size_t i;
        if (bracket && !memchr(hs, ':', (size_t)(he - hs)))
            return WS_URL_HOST; /* [name]: not an IPv6 address */
        for (i = 0; i < (size_t)(he - hs); i++) {
            unsigned char ch = (unsigned char)hostbuf[i];
            if (bracket) {
                /* inside brackets: an IPv6 address's characters only, and a
                 * ':' (else it would not serialize back in brackets:
                 * fuzz/regress/url/url-bracket-host) */
                if (!((ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'f') ||
                      ch == ':' || ch == '.'))
                    return WS_URL_HOST;
            } else if (ch <= ' ' || ch == '%' || ch == '<' || ch == '>' || ch == '\\' ||
                       ch == '^' || ch == '|' || ch == '[' || ch == ']') {
                return WS_URL_HOST;
            }
            if (ch >= 'A' && ch <= 'Z')
                hostbuf[i] = (char)(ch + 32);
        }
    }
    if (ps == end) {
        strcpy(pathbuf, "/");
    } else {
        size_t pl = (size_t)(end - ps);
        /* the path as stored ('/' added before a bare query) and its NUL must fit;
         * bounding pl alone let "?..." make a url that did not parse back
         * (fuzz/regress/url/url-query-path-length) */
        if (pl + (*ps == '?') + 1 >= sizeof(u->path))
            return WS_URL_PATH_LONG;
        if (*ps == '?') {
            pathbuf[0] = '/';
            memcpy(pathbuf + 1, ps, pl);
            pathbuf[pl + 1] = 0;
        } else {
            memcpy(pathbuf, ps, pl);
            pathbuf[pl] = 0;
        }
        {
            size_t i, n = *ps == '?' ? pl + 1 : pl;
            for (i = 0; i < n; i++) /* every byte: a NUL is rejected too */
                if ((unsigned char)pathbuf[i] <= ' ')
                    return WS_URL_PATH;
        }
    }
    /* what the url attribute reports: IPv6 hosts in brackets, the port
     * only where it is not the scheme's default */
    {
        /* (no snprintf: it alone would cost more than the parse) */
        size_t hl = strlen(hostbuf), pl = strlen(pathbuf), n = 0;
        int v6 = memchr(hostbuf, ':', hl) != NULL;
        memcpy(urlbuf, secure ? "wss://" : "ws://", secure ? 6 : 5);
        n = secure ? 6 : 5;
        if (v6)
            urlbuf[n++] = '[';
        memcpy(urlbuf + n, hostbuf, hl);
        n += hl;
        if (v6)
            urlbuf[n++] = ']';
        if (port != (secure ? 443 : 80)) {
            char digits[8];
            int d = 0, v = port;
            urlbuf[n++] = ':';
            do {
                digits[d++] = (char)('0' + v % 10);
                v /= 10;
            } while (v);
            while (d)
                urlbuf[n++] = digits[--d];
        }
        memcpy(urlbuf + n, pathbuf, pl + 1); /* sizes: hostbuf, pathbuf bounded above */
    }
    u->secure = secure;
    u->port = port;
    return WS_URL_OK;
}
