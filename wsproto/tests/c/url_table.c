/*
 * Drives the room's URL parser (url_core.c) for tests/test_url_reference.py:
 * one URL per input line, hex-encoded; per line out: "bad REASON" or
 * "ok SECURE PORT HOSTHEX PATHHEX".
 */
#include <stdio.h>
#include <string.h>

#include "url_core.h"

static const char *const REASON[WS_URL_ERRORS] = {
    [WS_URL_SCHEME] = "scheme",     [WS_URL_FRAGMENT] = "fragment",
    [WS_URL_USERINFO] = "userinfo", [WS_URL_NO_HOST] = "no_host",
    [WS_URL_HOST] = "host",         [WS_URL_HOST_LONG] = "host_long",
    [WS_URL_PORT] = "port",         [WS_URL_PATH] = "path",
    [WS_URL_PATH_LONG] = "path_long",
};

static void hex(const char *s, size_t n)
{
    size_t i;
    if (!n)
        putchar('-');
    for (i = 0; i < n; i++)
        printf("%02x", (unsigned char)s[i]);
}

int main(void)
{
    static char line[20000], s[10000];
    while (fgets(line, sizeof(line), stdin)) {
        size_t n = 0, i;
        struct ws_url u;
        enum ws_url_error e;
        for (i = 0; line[i] && line[i + 1] && line[i] != '\n'; i += 2) {
            unsigned v;
            sscanf(line + i, "%2x", &v);
            s[n++] = (char)v;
        }
        e = ws_url_parse(s, n, &u);
        if (e == WS_URL_OK) {
            printf("ok %d %d ", u.secure, u.port);
            hex(u.host, strlen(u.host));
            putchar(' ');
            hex(u.path, strlen(u.path));
        } else {
            printf("bad %s", e > 0 && e < WS_URL_ERRORS && REASON[e] ? REASON[e] : "?");
        }
        putchar('\n');
    }
    return 0;
}
