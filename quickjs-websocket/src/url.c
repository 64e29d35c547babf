/* WebSocket URL parsing (opt "urlparse": the native parse_url()) */
#include "qjsws.h"
#include "url.h"

/* parse_url(url) -> {secure, host, port, path}; throws SyntaxError */
JSValue js_parse_url(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, argv[0]);
    const char *p, *end, *hs, *he, *ps;
    char hostbuf[256], pathbuf[2048];
    int secure, port = -1;
    JSValue obj;
    UNUSED(this_val);
    UNUSED(argc);
    if (!s)
        return JS_EXCEPTION;
    end = s + len;
    /* trim ASCII whitespace like the URL parser does */
    p = s;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        end--;
    if ((size_t)(end - p) >= 5 && !strncasecmp(p, "ws://", 5)) {
        secure = 0;
        p += 5;
    } else if ((size_t)(end - p) >= 6 && !strncasecmp(p, "wss://", 6)) {
        secure = 1;
        p += 6;
    } else if ((size_t)(end - p) >= 7 && !strncasecmp(p, "http://", 7)) {
        secure = 0;
        p += 7;
    } else if ((size_t)(end - p) >= 8 && !strncasecmp(p, "https://", 8)) {
        secure = 1;
        p += 8;
    } else {
        goto bad;
    }
    if (memchr(p, '#', (size_t)(end - p)))
        goto bad;
    /* authority ends at / or ? */
    {
        const char *a = p;
        while (a < end && *a != '/' && *a != '?')
            a++;
        ps = a;
    }
    if (memchr(p, '@', (size_t)(ps - p)))
        goto bad; /* userinfo not supported */
    if (p < ps && *p == '[') {
        hs = p + 1;
        he = memchr(hs, ']', (size_t)(ps - hs));
        if (!he || he == hs)
            goto bad;
        p = he + 1;
    } else {
        hs = p;
        he = p;
        while (he < ps && *he != ':')
            he++;
        p = he;
    }
    if (he == hs)
        goto bad;
    if (p < ps) {
        long v = 0;
        if (*p != ':')
            goto bad;
        p++;
        if (p == ps) {
            port = -1;
        } else {
            while (p < ps) {
                if (*p < '0' || *p > '9')
                    goto bad;
                v = v * 10 + (*p - '0');
                if (v > 65535)
                    goto bad;
                p++;
            }
            port = (int)v;
        }
    }
    if (port < 0)
        port = secure ? 443 : 80;
    if ((size_t)(he - hs) >= sizeof(hostbuf))
        goto bad;
    memcpy(hostbuf, hs, (size_t)(he - hs));
    hostbuf[he - hs] = 0;
    {
        size_t i;
        for (i = 0; hostbuf[i]; i++) {
            unsigned char ch = (unsigned char)hostbuf[i];
            if (ch <= ' ' || ch == '%' || ch == '<' || ch == '>' || ch == '\\' || ch == '^' ||
                ch == '|')
                goto bad;
            if (ch >= 'A' && ch <= 'Z')
                hostbuf[i] = (char)(ch + 32);
        }
    }
    if (ps == end) {
        strcpy(pathbuf, "/");
    } else {
        size_t pl = (size_t)(end - ps);
        if (pl + 2 >= sizeof(pathbuf))
            goto bad;
        if (*ps == '?') {
            pathbuf[0] = '/';
            memcpy(pathbuf + 1, ps, pl);
            pathbuf[pl + 1] = 0;
        } else {
            memcpy(pathbuf, ps, pl);
            pathbuf[pl] = 0;
        }
        {
            size_t i;
            for (i = 0; pathbuf[i]; i++)
                if ((unsigned char)pathbuf[i] <= ' ')
                    goto bad;
        }
    }
    JS_FreeCString(ctx, s);
    obj = JS_NewObject(ctx);
    if (JS_IsException(obj))
        return obj;
    JS_SetPropertyStr(ctx, obj, "secure", JS_NewBool(ctx, secure));
    JS_SetPropertyStr(ctx, obj, "host", JS_NewString(ctx, hostbuf));
    JS_SetPropertyStr(ctx, obj, "port", JS_NewInt32(ctx, port));
    JS_SetPropertyStr(ctx, obj, "path", JS_NewString(ctx, pathbuf));
    return obj;
bad:
    JS_FreeCString(ctx, s);
    return JS_ThrowSyntaxError(ctx, "Invalid WebSocket URL");
}
