/*
 * libFuzzer target: the room's WebSocket URL parser (url_core.c).
 *
 * Input: the URL.  Properties:
 *   - what the module accepts is well formed: a host of allowed characters
 *     (lower case, no NUL), a port 0..65535, a path starting with '/' with
 *     no blank, control or '#';
 *   - its serialization (the url attribute) parses back to the same URL.
 * (The load generator's --url check against it: clients/loadgen/fuzz/fuzz_url.c.)
 */
#include <arpa/inet.h>
#include <ctype.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ws_url *u, *again;
    char *s;
    int ok;

    if (size > 4096)
        return 0;
    u = malloc(sizeof(*u));
    again = malloc(sizeof(*again));
    s = malloc(size + 1);
    CHECK(u && again && s);
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

    free(u);
    free(again);
    free(s);
    return 0;
}
