/*
 * The URL test drivers' lines (testkit/url_table.py): one input per line,
 * hex-encoded, in; bytes written out in hex ("-" for none).
 */
#ifndef WSPROTO_TESTS_HEXLINES_H
#define WSPROTO_TESTS_HEXLINES_H

#include <stdio.h>

/* the next input into s (room for cap bytes and a NUL): 1, or 0 at the end */
static int read_hex_line(char *s, size_t cap, size_t *n)
{
    static char line[20000];
    size_t i;
    if (!fgets(line, sizeof(line), stdin))
        return 0;
    *n = 0;
    for (i = 0; line[i] && line[i + 1] && line[i] != '\n' && *n + 1 < cap; i += 2) {
        unsigned v;
        sscanf(line + i, "%2x", &v);
        s[(*n)++] = (char)v;
    }
    s[*n] = 0;
    return 1;
}

static void put_hex(const char *s, size_t n)
{
    size_t i;
    if (!n)
        putchar('-');
    for (i = 0; i < n; i++)
        printf("%02x", (unsigned char)s[i]);
}

#endif
