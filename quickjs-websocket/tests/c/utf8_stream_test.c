/*
 * Drives utf8_stream() (src/utf8.c) for tests/test_utf8.py.  One case per
 * input line: the chunks of one text message in hex, separated by spaces
 * ("-" is an empty chunk).  One output line per case: the index of the
 * chunk in which validation failed, "end" if only the end-of-message check
 * failed (a sequence left open), or "ok".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/utf8.h"

unsigned g_opts = OPT_ALL; /* utf8.c reads the switches (strrecv) */

static int hexval(int c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

int main(void)
{
    static char line[1 << 20];
    static uint8_t buf[1 << 19];
    while (fgets(line, sizeof(line), stdin)) {
        char *tok, *save = NULL;
        uint32_t st = 0;
        int idx = 0, failed = -1;
        for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), idx++) {
            size_t n = 0;
            if (strcmp(tok, "-") != 0) {
                for (; tok[2 * n] && tok[2 * n + 1]; n++)
                    buf[n] = (uint8_t)(hexval(tok[2 * n]) << 4 | hexval(tok[2 * n + 1]));
            }
            if (failed < 0 && !utf8_stream(&st, buf, n))
                failed = idx;
        }
        if (failed >= 0)
            printf("%d\n", failed);
        else
            puts(st ? "end" : "ok");
    }
    return 0;
}
