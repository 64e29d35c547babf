/*
 * Drives the wire protocol room's URL parser (wsproto/url_core.c, the
 * module's) and the load generator's --url check (http.c) for
 * tests/test_loadgen_url.py: one URL per input
 * line, hex-encoded; per line out: "<module> | <loadgen>", each "bad" or
 * "ok SECURE PORT HOSTHEX PATHHEX".
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../http.h"
#include "url_core.h"

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
        struct url lg;
        const char *why;
        for (i = 0; line[i] && line[i + 1] && line[i] != '\n'; i += 2) {
            unsigned v;
            sscanf(line + i, "%2x", &v);
            s[n++] = (char)v;
        }
        s[n] = 0;
        if (ws_url_parse(s, n, &u) == 0) {
            printf("ok %d %d ", u.secure, u.port);
            hex(u.host, strlen(u.host));
            putchar(' ');
            hex(u.path, strlen(u.path));
        } else {
            printf("bad");
        }
        printf(" | ");
        why = memchr(s, 0, n) ? "NUL" : url_parse_str(&lg, s);
        if (!why) {
            printf("ok 0 %d ", ntohs(lg.addr.sin_port));
            hex(lg.host, strcspn(lg.host, ":"));
            putchar(' ');
            hex(lg.target, strlen(lg.target));
        } else {
            printf("bad");
        }
        putchar('\n');
    }
    return 0;
}
