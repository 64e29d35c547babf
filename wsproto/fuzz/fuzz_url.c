/*
 * libFuzzer target: the room's WebSocket URL parser (url_core.c).
 *
 * Input: the URL.  Properties:
 *   - what it accepts is well formed: a host of allowed characters (lower
 *     case, no NUL), a port 0..65535, a path starting with '/' with no
 *     blank, control or '#';
 *   - its serialization (the url attribute) parses back to the same URL;
 *   - a refusal's reason is one of the enum's, and one the input bears out
 *     (a fragment has a '#', a user name an '@', a bad port a ':', a bad
 *     path a blank, a control or a NUL, a long path or host that many bytes;
 *     a bad scheme, none of the four schemes after the leading blanks).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "url_core.h"
#include "fuzz_common.h"

static void well_formed(const struct ws_url *u)
{
    size_t i, hl = strlen(u->host), pl = strlen(u->path);
    CHECK(hl > 0 && hl < sizeof(u->host));
    for (i = 0; i < hl; i++) {
        unsigned char ch = (unsigned char)u->host[i];
        CHECK(ch > ' ' && !strchr("%<>\\^|/?#@", ch) && !(ch >= 'A' && ch <= 'Z'));
    }
    CHECK(u->port >= 0 && u->port <= 65535);
    CHECK(pl >= 1 && u->path[0] == '/');
    for (i = 0; i < pl; i++)
        CHECK((unsigned char)u->path[i] > ' ' && u->path[i] != '#');
}

static int has_byte_at_most(const uint8_t *p, size_t n, uint8_t max)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] <= max)
            return 1;
    return 0;
}

static void bears_out(enum ws_url_error e, const uint8_t *p, size_t n)
{
    static const char *const schemes[] = { "ws://", "wss://", "http://", "https://" };
    size_t i, k = 0;
    CHECK(e > WS_URL_OK && e < WS_URL_ERRORS);
    while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\n' || p[k] == '\r'))
        k++;
    switch (e) {
    case WS_URL_SCHEME:
        for (i = 0; i < 4; i++)
            CHECK(n - k < strlen(schemes[i]) ||
                  strncasecmp((const char *)p + k, schemes[i], strlen(schemes[i])));
        break;
    case WS_URL_FRAGMENT:
        CHECK(memchr(p, '#', n) != NULL);
        break;
    case WS_URL_USERINFO:
        CHECK(memchr(p, '@', n) != NULL);
        break;
    case WS_URL_PORT:
        CHECK(memchr(p, ':', n) != NULL);
        break;
    case WS_URL_PATH:
        CHECK(has_byte_at_most(p, n, ' '));
        break;
    case WS_URL_HOST_LONG:
        CHECK(n >= 256 + strlen("ws://"));
        break;
    case WS_URL_PATH_LONG:
        CHECK(n >= 2046 + strlen("ws://h"));
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ws_url *u, *again;
    enum ws_url_error e;
    char *exact;

    if (size > 4096)
        return 0;
    u = malloc(sizeof(*u));
    again = malloc(sizeof(*again));
    /* exactly size bytes, not NUL-terminated: ASan sees any over-read */
    exact = malloc(size ? size : 1);
    CHECK(u && again && exact);
    memcpy(exact, data, size);
    e = ws_url_parse(exact, size, u);
    free(exact);
    if (e == WS_URL_OK) {
        well_formed(u);
        CHECK(ws_url_parse(u->url, strlen(u->url), again) == WS_URL_OK);
        CHECK(again->secure == u->secure && again->port == u->port);
        CHECK(!strcmp(again->host, u->host) && !strcmp(again->path, u->path));
        CHECK(!strcmp(again->url, u->url));
    } else {
        bears_out(e, data, size);
    }
    free(u);
    free(again);
    return 0;
}
