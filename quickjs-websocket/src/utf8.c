/* UTF-8 validation and the encode_utf8()/decode_utf8() helpers */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

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

/*
 * Received text as a JS string (opt strrecv).  JS_NewStringLen() decodes one
 * character at a time through a growing buffer (a call per character), which
 * is most of the time it takes to deliver a long text message that is not
 * pure ASCII.  Here valid UTF-8 is decoded to UTF-16 eight ASCII bytes at a
 * time into one buffer, which becomes the string through the public
 * JS_ReadObject(): its record for a string is a version byte, an empty atom
 * table, a tag, the length (LEB128, times 2, plus 1 for 16-bit) and the raw
 * UTF-16, copied once into the new string.  That layout is not taken on
 * trust: text_string_init() writes a known 16-bit string with
 * JS_WriteObject() and reads the version and the tag off it; if it does not
 * look as expected, every string goes through JS_NewStringLen() instead.
 * Pure ASCII and short texts go to JS_NewStringLen() anyway (for ASCII it is
 * a single copy already).  The UTF-16 buffer is kept by the connection for
 * the next long text (a fresh one would be page-faulted in again every
 * time: a quarter of the cost of a 16 MiB message); it is released when a
 * text needs less than an eighth of it, and with the connection.
 */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the record's UTF-16 is little-endian");

static int text_fast;            /* the layout was confirmed */
static uint8_t text_bc_version;
static uint8_t text_bc_tag;

void text_string_init(JSContext *ctx)
{
    static const char euro[] = "\xe2\x82\xac"; /* U+20AC: a 16-bit string */
    JSValue v = JS_NewStringLen(ctx, euro, 3);
    size_t n = 0;
    uint8_t *b;

    if (JS_IsException(v))
        return;
    b = JS_WriteObject(ctx, &n, v, 0);
    JS_FreeValue(ctx, v);
    if (!b) {
        JS_FreeValue(ctx, JS_GetException(ctx));
        return;
    }
    /* expected: version, 0 atoms, tag, (1 << 1) | 1, AC 20 */
    if (n == 6 && b[1] == 0 && b[3] == 3 && b[4] == 0xac && b[5] == 0x20) {
        text_bc_version = b[0];
        text_bc_tag = b[2];
        text_fast = 1;
    }
    js_free(ctx, b);
}

static int all_ascii(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i + 16 <= n) {
        size_t k = ascii_run16(p + i);
        if (k < 16)
            return 0;
        i += k;
    }
    for (; i < n; i++)
        if (p[i] & 0x80)
            return 0;
    return 1;
}

/* the UTF-16 units at t->buf + TEXT_HEAD_MAX made a string, through the record */
static JSValue text_record(JSContext *ctx, text_scratch *t, size_t units)
{
    uint8_t *head, leb[8];
    size_t h = 0, hl;
    uint64_t v;
    for (v = (uint64_t)units << 1 | 1; v >= 0x80; v >>= 7)
        leb[h++] = (uint8_t)(v | 0x80);
    leb[h++] = (uint8_t)v;
    hl = 3 + h;
    head = t->buf + TEXT_HEAD_MAX - hl; /* the record ends where the UTF-16 begins */
    head[0] = text_bc_version;
    head[1] = 0; /* no atoms */
    head[2] = text_bc_tag;
    memcpy(head + 3, leb, h);
    return JS_ReadObject(ctx, head, hl + 2 * units, 0);
}

JSValue text_string(JSContext *ctx, text_scratch *t, const uint8_t *p, size_t len)
{
    size_t need;

    if (!OPT(OPT_STRRECV) || !text_fast || len < TEXT_FAST_MIN || all_ascii(p, len))
        return JS_NewStringLen(ctx, (const char *)p, len);
    /* at most one UTF-16 unit per byte (a 4-byte sequence makes 2); on 32-bit
     * 2 x len can pass SIZE_MAX (a text near the 2^31 - 1 limit) */
    if (len > (SIZE_MAX - TEXT_HEAD_MAX) / 2)
        return JS_ThrowOutOfMemory(ctx);
    need = TEXT_HEAD_MAX + 2 * len;
    if (t->cap < need || need < t->cap / 8) {
        free(t->buf);
        t->buf = malloc(need);
        t->cap = t->buf ? need : 0;
        if (!t->buf)
            return JS_ThrowOutOfMemory(ctx);
    }
    return text_record(ctx, t, decode_utf16(p, len, (uint16_t *)(t->buf + TEXT_HEAD_MAX)));
}

/* streamed texts (text_stream(), utf8_core.c): only with strrecv and the record layout */
int text_stream_on(void)
{
    return OPT(OPT_STRRECV) && text_fast;
}

JSValue text_stream_string(JSContext *ctx, text_scratch *t, const uint8_t *p, size_t n)
{
    if (!t->wide) /* pure ASCII: an 8-bit string, one copy */
        return JS_NewStringLen(ctx, (const char *)p, n);
    return text_record(ctx, t, t->units);
}
