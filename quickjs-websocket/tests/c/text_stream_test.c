/*
 * Drives text_stream() (src/utf8.c, opt strrecv) for tests/test_utf8.py, the
 * way rx.c does: the chunks of one text message are appended to an
 * accumulator and text_stream() is called after each.  One case per input
 * line: the chunks in hex, separated by spaces ("-" is an empty chunk).  One
 * output line per case: the index of the chunk after which text_stream()
 * failed, or, for a text it accepted, "same" if the string it makes equals
 * JS_NewStringLen()'s of the whole message, else "differ".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/utf8.h"

unsigned g_opts = OPT_ALL;

static int hexval(int c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

int main(void)
{
    static char line[1 << 22];
    JSRuntime *rt = JS_NewRuntime();
    JSContext *ctx = JS_NewContext(rt);
    text_scratch t = {0};
    text_string_init(ctx);
    if (!text_stream_on()) {
        puts("off");
        return 0;
    }
    while (fgets(line, sizeof(line), stdin)) {
        char *tok, *save = NULL;
        uint8_t *acc = NULL;
        size_t n = 0, cap = 0;
        int idx = 0, failed = -1, nchunks = 0;
        for (tok = line; *tok; tok++)
            nchunks += *tok == ' ';
        nchunks++;
        text_stream_start(&t);
        for (tok = strtok_r(line, " \n", &save); tok && failed < 0; tok = strtok_r(NULL, " \n", &save), idx++) {
            size_t k = strcmp(tok, "-") ? strlen(tok) / 2 : 0, j;
            if (n + k > cap) { /* grown chunk by chunk, as without fragbuf */
                cap = n + k;
                acc = realloc(acc, cap ? cap : 1);
            }
            for (j = 0; j < k; j++)
                acc[n + j] = (uint8_t)(hexval(tok[2 * j]) << 4 | hexval(tok[2 * j + 1]));
            n += k;
            if (text_stream(&t, acc, n, cap, idx == nchunks - 1) <= 0)
                failed = idx;
        }
        if (failed >= 0) {
            printf("%d\n", failed);
        } else {
            JSValue a = text_stream_string(ctx, &t, acc, n);
            JSValue b = JS_NewStringLen(ctx, (const char *)acc, n);
            puts(JS_IsString(a) && JS_StrictEq(ctx, a, b) ? "same" : "differ");
            JS_FreeValue(ctx, a);
            JS_FreeValue(ctx, b);
        }
        free(acc);
    }
    free(t.buf);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
    return 0;
}
