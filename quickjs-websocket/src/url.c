/* WebSocket URL parsing (opt "urlparse": the native parse_url()) */
#include "qjsws.h"
#include "url.h"

/* parse_url(url) -> [secure, host, port, path, url as serialized]; throws SyntaxError */
JSValue js_parse_url(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, argv[0]);
    const char *p, *end, *hs, *he, *ps;
    char hostbuf[256], pathbuf[2048], urlbuf[2 * 256 + 2048 + 16];
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
    /* what the url attribute reports: IPv6 hosts in brackets, the port
     * only where it is not the scheme's default */
    {
        /* (no snprintf: it alone would cost more than the parse) */
        size_t hl = strlen(hostbuf), pl = strlen(pathbuf), n = 0;
        int v6 = memchr(hostbuf, ':', hl) != NULL;
        memcpy(urlbuf, secure ? "wss://" : "ws://", secure ? 6 : 5);
        n = secure ? 6 : 5;
        if (v6)
            urlbuf[n++] = '[';
        memcpy(urlbuf + n, hostbuf, hl);
        n += hl;
        if (v6)
            urlbuf[n++] = ']';
        if (port != (secure ? 443 : 80)) {
            char digits[8];
            int d = 0, v = port;
            urlbuf[n++] = ':';
            do {
                digits[d++] = (char)('0' + v % 10);
                v /= 10;
            } while (v);
            while (d)
                urlbuf[n++] = digits[--d];
        }
        memcpy(urlbuf + n, pathbuf, pl + 1); /* sizes: hostbuf, pathbuf bounded above */
    }
    /* an array: cheaper to make than an object with four named properties */
    obj = JS_NewArray(ctx);
    if (JS_IsException(obj))
        return obj;
    JS_SetPropertyUint32(ctx, obj, 0, JS_NewBool(ctx, secure));
    JS_SetPropertyUint32(ctx, obj, 1, JS_NewString(ctx, hostbuf));
    JS_SetPropertyUint32(ctx, obj, 2, JS_NewInt32(ctx, port));
    JS_SetPropertyUint32(ctx, obj, 3, JS_NewString(ctx, pathbuf));
    JS_SetPropertyUint32(ctx, obj, 4, JS_NewString(ctx, urlbuf));
    return obj;
bad:
    JS_FreeCString(ctx, s);
    return JS_ThrowSyntaxError(ctx, "Invalid WebSocket URL");
}
