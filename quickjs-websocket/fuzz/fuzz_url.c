/*
 * libFuzzer target: the module's WebSocket URL parser (src/url_core.c) and
 * the load generator's (clients/loadgen/http.c, url_parse_str).
 *
 * Input: the URL.  Properties:
 *   - what the module accepts is well formed: a host of allowed characters
 *     (lower case, no NUL), a port 0..65535, a path starting with '/' with
 *     no blank, control or '#';
 *   - its serialization (the url attribute) parses back to the same URL;
 *   - whatever loadgen accepts, the module accepts with the same host, port
 *     and path;
 *   - whatever the module accepts that loadgen can connect to (ws://, an
 *     IPv4 address or localhost, a port other than 0, given without
 *     surrounding blanks), loadgen accepts.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../wsproto/url_core.h"
#include "../../clients/loadgen/http.h"
#include "fuzz_common.h"

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ws_url *u, *again;
    struct url *lg;
    char *s;
    int ok;

    if (size > 4096)
        return 0;
    u = malloc(sizeof(*u));
    again = malloc(sizeof(*again));
    lg = malloc(sizeof(*lg));
    s = malloc(size + 1);
    CHECK(u && again && lg && s);
    memcpy(s, data, size);
    s[size] = 0;

    /* exactly size bytes, not NUL-terminated: ASan sees any over-read */
    {
        char *exact = malloc(size ? size : 1);
        CHECK(exact != NULL);
        memcpy(exact, data, size);
        ok = ws_url_parse(exact, size, u) == 0;
        free(exact);
    }
    if (ok) {
        well_formed(u);
        CHECK(ws_url_parse(u->url, strlen(u->url), again) == 0);
        CHECK(again->secure == u->secure && again->port == u->port);
        CHECK(!strcmp(again->host, u->host) && !strcmp(again->path, u->path));
        CHECK(!strcmp(again->url, u->url));
    }

    /* loadgen reads a C string: compare only inputs without a NUL */
    if (!memchr(data, 0, size)) {
        const char *why = url_parse_str(lg, s);
        if (!why && !ok && strlen(lg->target) + 4 >= sizeof(u->path)) {
            /* beyond the module's path limit (2,045 bytes, README "API"); loadgen has none */
        } else if (!why) {
            char host[256];
            size_t hl = strcspn(lg->host, ":"), i;
            CHECK(ok);
            CHECK(!u->secure);
            CHECK(u->port == ntohs(lg->addr.sin_port));
            CHECK(!strcmp(u->path, lg->target));
            CHECK(hl < sizeof(host));
            for (i = 0; i < hl; i++)
                host[i] = (char)tolower((unsigned char)lg->host[i]);
            host[hl] = 0;
            CHECK(!strcmp(u->host, host));
        } else if (ok && size >= 5 && !strncasecmp(s, "ws://", 5) && !blank(s[size - 1]) &&
                   u->port != 0 && strlen(u->path) < 2000) {
            struct in_addr a;
            if (!strcmp(u->host, "localhost") || inet_pton(AF_INET, u->host, &a) == 1) {
                fprintf(stderr, "loadgen rejects %s: %s\n", s, why);
                CHECK(!"loadgen accepts what the module accepts and it can reach");
            }
        }
    }
    free(u);
    free(again);
    free(lg);
    free(s);
    return 0;
}
