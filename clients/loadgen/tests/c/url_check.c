/*
 * Drives the load generator's --url (http.c: url_check, the room's parser and
 * our own rule, an IPv4 address or localhost) for tests/test_loadgen_url.py:
 * one URL per input line, hex-encoded; per line out: "bad MESSAGE" or
 * "ok SECURE PORT HOSTHEX PATHHEX HOSTHEADERHEX".
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "../../http.h"

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
        struct url u;
        const char *why;
        for (i = 0; line[i] && line[i + 1] && line[i] != '\n'; i += 2) {
            unsigned v;
            sscanf(line + i, "%2x", &v);
            s[n++] = (char)v;
        }
        s[n] = 0;
        /* loadgen reads a C string (an argument): it never sees a NUL */
        why = memchr(s, 0, n) ? "NUL" : url_check(&u, s);
        if (!why) {
            printf("ok %d %d ", u.secure, ntohs(u.addr.sin_port));
            hex(u.host, strlen(u.host));
            putchar(' ');
            hex(u.target, strlen(u.target));
            putchar(' ');
            hex(u.host_header, strlen(u.host_header));
        } else {
            printf("bad %s", why);
        }
        putchar('\n');
    }
    return 0;
}
