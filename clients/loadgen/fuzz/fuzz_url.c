/*
 * libFuzzer target: the load generator's --url check (http.c, url_parse_str:
 * ws:// only, an IPv4 address or localhost, its own messages) against the
 * wire protocol room's URL parser (url_core.c, fuzzed on its own as
 * wsproto_url).
 *
 * Input: the URL.  Properties:
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

#include "../http.h"
#include "fuzz_common.h"
#include "url_core.h"

static int blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
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
