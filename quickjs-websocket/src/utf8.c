/* UTF-8 validation and the encode_utf8()/decode_utf8() helpers */
#include "qjsws.h"
#include "utf8.h"

/* strict RFC 3629 validation: no overlongs, no surrogates, <= U+10FFFF */
int utf8_valid(const uint8_t *p, size_t len)
{
    const uint8_t *end = p + len;
    while (p < end) {
        if (!(*p & 0x80)) {
            /* ASCII fast path: 8 bytes at a time */
            while (end - p >= 8) {
                uint64_t w;
                memcpy(&w, p, 8);
                if (w & 0x8080808080808080ULL)
                    break;
                p += 8;
            }
            while (p < end && !(*p & 0x80))
                p++;
            continue;
        }
        uint8_t c = *p;
        if (c >= 0xc2 && c <= 0xdf) {
            if (end - p < 2 || (p[1] & 0xc0) != 0x80)
                return 0;
            p += 2;
        } else if (c >= 0xe0 && c <= 0xef) {
            if (end - p < 3 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
                return 0;
            if (c == 0xe0 && p[1] < 0xa0)
                return 0; /* overlong */
            if (c == 0xed && p[1] > 0x9f)
                return 0; /* surrogate */
            p += 3;
        } else if (c >= 0xf0 && c <= 0xf4) {
            if (end - p < 4 || (p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 ||
                (p[3] & 0xc0) != 0x80)
                return 0;
            if (c == 0xf0 && p[1] < 0x90)
                return 0; /* overlong */
            if (c == 0xf4 && p[1] > 0x8f)
                return 0; /* > U+10FFFF */
            p += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/*
 * Incremental validation: a text message is checked chunk by chunk as it
 * arrives, so an invalid sequence fails the connection at once (not when
 * the message ends) and the work overlaps reception.  *st carries a
 * sequence left open at the end of a chunk: 0 at a character boundary,
 * else need | lo << 8 | hi << 16 -- continuation bytes still expected and
 * the range the next one must lie in (RFC 3629: E0 A0..BF, ED 80..9F,
 * F0 90..BF, F4 80..8F; otherwise 80..BF).
 */
#define U8_STATE(need, lo, hi) ((uint32_t)(need) | (uint32_t)(lo) << 8 | (uint32_t)(hi) << 16)

static uint32_t u8_lead(uint8_t c)
{
    if (c >= 0xc2 && c <= 0xdf)
        return U8_STATE(1, 0x80, 0xbf);
    if (c == 0xe0)
        return U8_STATE(2, 0xa0, 0xbf);
    if (c == 0xed)
        return U8_STATE(2, 0x80, 0x9f);
    if (c >= 0xe1 && c <= 0xef)
        return U8_STATE(2, 0x80, 0xbf);
    if (c == 0xf0)
        return U8_STATE(3, 0x90, 0xbf);
    if (c == 0xf4)
        return U8_STATE(3, 0x80, 0x8f);
    if (c >= 0xf1 && c <= 0xf3)
        return U8_STATE(3, 0x80, 0xbf);
    return 0; /* not a lead byte */
}

/* one continuation byte of an open sequence: 1 ok (*s advanced), 0 invalid */
static int u8_cont(uint32_t *s, uint8_t b)
{
    uint32_t need = *s & 3;
    if (b < ((*s >> 8) & 0xff) || b > (*s >> 16))
        return 0;
    *s = need > 1 ? U8_STATE(need - 1, 0x80, 0xbf) : 0;
    return 1;
}

int utf8_stream(uint32_t *st, const uint8_t *p, size_t len)
{
    const uint8_t *end = p + len, *cut = end;
    uint32_t s = *st;
    size_t i;
    /* finish the sequence the previous chunk left open */
    while (s && p < end) {
        if (!u8_cont(&s, *p++))
            return 0;
    }
    if (s || p == end) {
        *st = s;
        return 1;
    }
    /* a sequence left open by this chunk starts within its last 3 bytes */
    for (i = 1; i <= 3 && i <= (size_t)(end - p); i++) {
        uint8_t b = *(end - i);
        if (b < 0x80)
            break; /* ASCII: nothing open */
        if (b >= 0xc0) { /* the last lead byte */
            size_t n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
            if (n > i)
                cut = end - i;
            break;
        }
    }
    if (!utf8_valid(p, (size_t)(cut - p)))
        return 0;
    if (cut < end) {
        s = u8_lead(*cut);
        if (!s)
            return 0;
        for (p = cut + 1; p < end; p++) {
            if (!u8_cont(&s, *p))
                return 0;
        }
    }
    *st = s;
    return 1;
}

/*
 * A JS string as UTF-8 the way browsers send it: as a USVString, each lone
 * surrogate replaced by U+FFFD.  QuickJS' JS_ToCStringLen() keeps a lone
 * surrogate as the 3-byte sequence ED A0..BF xx (invalid UTF-8); U+FFFD is
 * EF BF BD, also 3 bytes, so the length never changes.  Only a 16-bit
 * string can hold a surrogate, and only then can 0xED appear at all
 * (8-bit strings come out as ASCII or C2/C3 pairs).
 *
 * Pure ASCII strings (the common case) cost one comparison: for them
 * JS_ToCStringLen() returns a pointer into the string itself (QuickJS
 * 2025-04-26: its text starts 16 bytes into the JSString), where no other
 * result can point while the string is alive -- so the equality is proof,
 * whatever the layout; a different layout only loses the shortcut.  Every
 * other string gets one memchr() for 0xED, and a copy only if it holds a
 * lone surrogate.
 */
#define QJS_STRING_TEXT_OFFSET 16
int usv_utf8(JSContext *ctx, JSValueConst v, usv_str *u)
{
    size_t len;
    const char *s = JS_ToCStringLen(ctx, &len, v);
    const uint8_t *e;
    uint8_t *d;
    size_t i;
    u->p = s;
    u->len = len;
    u->copy = NULL;
    if (!s)
        return -1;
    if (JS_VALUE_GET_TAG(v) == JS_TAG_STRING &&
        s == (const char *)JS_VALUE_GET_PTR(v) + QJS_STRING_TEXT_OFFSET)
        return 0; /* pure ASCII */
    e = len >= 3 ? memchr(s, 0xed, len - 2) : NULL;
    while (e && (e[1] & 0xe0) != 0xa0) /* ED 80..9F: U+D000..U+D7FF, fine */
        e = memchr(e + 1, 0xed, (size_t)((const uint8_t *)s + len - 2 - (e + 1)));
    if (!e)
        return 0;
    d = js_malloc(ctx, len ? len : 1);
    if (!d) {
        JS_FreeCString(ctx, s);
        u->p = NULL;
        return -1;
    }
    memcpy(d, s, len);
    JS_FreeCString(ctx, s);
    /* 0xED is always a lead byte here (QuickJS' output is well-formed apart
     * from the surrogates), so a plain scan cannot hit a continuation */
    for (i = (size_t)(e - (const uint8_t *)s); i + 2 < len; i++) {
        if (d[i] == 0xed && (d[i + 1] & 0xe0) == 0xa0) {
            d[i] = 0xef;
            d[i + 1] = 0xbf;
            d[i + 2] = 0xbd;
            i += 2;
        }
    }
    u->p = (const char *)d;
    u->copy = d;
    return 0;
}

void usv_free(JSContext *ctx, usv_str *u)
{
    if (u->copy)
        js_free(ctx, u->copy);
    else if (u->p)
        JS_FreeCString(ctx, u->p);
    u->p = NULL;
    u->copy = NULL;
}

/* encode_utf8(str) -> ArrayBuffer (used by the naive string send path) */
JSValue js_encode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    usv_str u;
    JSValue r;
    UNUSED(this_val);
    UNUSED(argc);
    if (usv_utf8(ctx, argv[0], &u) < 0)
        return JS_EXCEPTION;
    r = JS_NewArrayBufferCopy(ctx, (const uint8_t *)u.p, u.len);
    usv_free(ctx, &u);
    return r;
}

/* decode_utf8(ArrayBuffer) -> string, or null when not valid UTF-8 */
JSValue js_decode_utf8(JSContext *ctx, JSValueConst this_val, int argc, JSValueConst *argv)
{
    size_t size;
    uint8_t *p = JS_GetArrayBuffer(ctx, &size, argv[0]);
    UNUSED(this_val);
    UNUSED(argc);
    if (!p)
        return JS_EXCEPTION;
    if (!utf8_valid(p, size))
        return JS_NULL;
    return JS_NewStringLen(ctx, (const char *)p, size);
}
