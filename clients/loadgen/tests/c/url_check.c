/*
 * Drives the load generator's --url (http.c: url_check, the room's parser and
 * our own rule, an IPv4 address or localhost) for tests/test_loadgen_url.py:
 * one URL per input line, hex-encoded; per line out: "bad MESSAGE" or
 * "ok SECURE PORT HOSTHEX PATHHEX HOSTHEADERHEX".
 */
#include <arpa/inet.h>
#include <string.h>

#include "../../http.h"
#include "../../../../wsproto/tests/c/hexlines.h"

int main(void)
{
    static char s[10000];
    size_t n;
    while (read_hex_line(s, sizeof(s), &n)) {
        struct url u;
        /* loadgen reads a C string (an argument): it never sees a NUL */
        const char *why = memchr(s, 0, n) ? "NUL" : url_check(&u, s);
        if (!why) {
            printf("ok %d %d ", u.secure, ntohs(u.addr.sin_port));
            put_hex(u.host, strlen(u.host));
            putchar(' ');
            put_hex(u.target, strlen(u.target));
            putchar(' ');
            put_hex(u.host_header, strlen(u.host_header));
        } else {
            printf("bad %s", why);
        }
        putchar('\n');
    }
    return 0;
}
