/*
 * Drives the room's URL parser (url_core.c) for tests/test_url_reference.py:
 * one URL per input line, hex-encoded; per line out: "bad REASON" or
 * "ok SECURE PORT HOSTHEX PATHHEX".
 */
#include <string.h>

#include "hexlines.h"
#include "url_core.h"

static const char *const REASON[WS_URL_ERRORS] = {
    [WS_URL_SCHEME] = "scheme",     [WS_URL_FRAGMENT] = "fragment",
    [WS_URL_USERINFO] = "userinfo", [WS_URL_NO_HOST] = "no_host",
    [WS_URL_HOST] = "host",         [WS_URL_HOST_LONG] = "host_long",
    [WS_URL_PORT] = "port",         [WS_URL_PATH] = "path",
    [WS_URL_PATH_LONG] = "path_long",
};

int main(void)
{
    static char s[10000];
    size_t n;
    while (read_hex_line(s, sizeof(s), &n)) {
        struct ws_url u;
        enum ws_url_error e = ws_url_parse(s, n, &u);
        if (e == WS_URL_OK) {
            printf("ok %d %d ", u.secure, u.port);
            put_hex(u.host, strlen(u.host));
            putchar(' ');
            put_hex(u.path, strlen(u.path));
        } else {
            printf("bad %s", e > 0 && e < WS_URL_ERRORS && REASON[e] ? REASON[e] : "?");
        }
        putchar('\n');
    }
    return 0;
}
