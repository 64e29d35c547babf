/*
 * Drives text_string() (src/utf8.c, opt strrecv) for tests/test_utf8.py.  One
 * valid UTF-8 text per input line, in hex.  For each, the string made by
 * text_string() is compared with the one JS_NewStringLen() makes from the same
 * bytes: one output line, "same" or "differ <length of each>".  The first
 * line of output says whether the fast path is in use ("fast 1"); the scratch
 * buffer is kept across lines, as a connection keeps it across messages.
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

static int64_t str_length(JSContext *ctx, JSValueConst v)
{
    int64_t n = -1;
    JSValue len = JS_GetPropertyStr(ctx, v, "length");
    JS_ToInt64(ctx, &n, len);
    JS_FreeValue(ctx, len);
    return n;
}

int main(void)
{
    static char line[1 << 22];
    static uint8_t buf[1 << 21];
    JSRuntime *rt = JS_NewRuntime();
    JSContext *ctx = JS_NewContext(rt);
    text_scratch t = {0};
    text_string_init(ctx);
    {
        /* the fast path is taken for a long non-ASCII text: is it in use? */
        static const char probe[] = "\xc3\xa9";
        uint8_t big[2048];
        size_t i;
        JSValue a;
        for (i = 0; i < sizeof(big); i += 2)
            memcpy(big + i, probe, 2);
        a = text_string(ctx, &t, big, sizeof(big));
        printf("fast %d\n", t.buf != NULL && JS_IsString(a));
        JS_FreeValue(ctx, a);
    }
    while (fgets(line, sizeof(line), stdin)) {
        size_t n = 0;
        JSValue a, b;
        for (; line[2 * n] && line[2 * n] != '\n'; n++)
            buf[n] = (uint8_t)(hexval(line[2 * n]) << 4 | hexval(line[2 * n + 1]));
        a = text_string(ctx, &t, buf, n);
        b = JS_NewStringLen(ctx, (const char *)buf, n);
        if (JS_IsString(a) && JS_StrictEq(ctx, a, b))
            puts("same");
        else
            printf("differ %lld %lld\n", (long long)str_length(ctx, a), (long long)str_length(ctx, b));
        JS_FreeValue(ctx, a);
        JS_FreeValue(ctx, b);
    }
    free(t.buf);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
    return 0;
}
