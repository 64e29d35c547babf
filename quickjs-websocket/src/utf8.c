/* UTF-8 validation and the encode_utf8()/decode_utf8() helpers */
#include "qjsws.h"
#include "utf8.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* How many bytes from p on are ASCII, looking at no more than 16 of them (a
 * shorter answer means the byte there is not); on x86-64, one SSE2 compare. */
static inline size_t ascii_run16(const uint8_t *p)
{
#ifdef __SSE2__
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)p));
    return m ? (size_t)__builtin_ctz(m) : 16;
#else
    uint64_t w[2];
    size_t k;
    memcpy(w, p, 16);
    if (!((w[0] | w[1]) & 0x8080808080808080ull))
        return 16;
    for (k = 0; !(p[k] & 0x80); k++)
        ;
    return k;
#endif
}

/* strict RFC 3629 validation: no overlongs, no surrogates, <= U+10FFFF */
int utf8_valid(const uint8_t *p, size_t len)
{
    const uint8_t *end = p + len;
    while (p < end) {
        if (!(*p & 0x80)) {
            /* ASCII fast path: 16 bytes at a time */
            while (end - p >= 16) {
                size_t k = ascii_run16(p);
                p += k;
                if (k < 16)
                    break;
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
#define TEXT_HEAD_MAX 16   /* version, atom count, tag, LEB128 length */

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

/* 16 bytes widened to 16 UTF-16 code units (only the ASCII ones are kept) */
static inline void widen16(const uint8_t *p, uint16_t *out)
{
#ifdef __SSE2__
    __m128i v = _mm_loadu_si128((const __m128i *)p), z = _mm_setzero_si128();
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi8(v, z));
    _mm_storeu_si128((__m128i *)(out + 8), _mm_unpackhi_epi8(v, z));
#else
    int k;
    for (k = 0; k < 16; k++)
        out[k] = p[k];
#endif
}

/* one valid multi-byte character at p (lead byte >= 0xC2) to UTF-16 at out;
 * returns the bytes it took, *units the code units it wrote */
static inline size_t decode_char(const uint8_t *p, uint16_t *out, size_t *units)
{
    uint8_t c = p[0];
    if (c < 0xe0) {
        out[0] = (uint16_t)((c & 0x1f) << 6 | (p[1] & 0x3f));
        *units = 1;
        return 2;
    }
    if (c < 0xf0) {
        out[0] = (uint16_t)((c & 0x0f) << 12 | (p[1] & 0x3f) << 6 | (p[2] & 0x3f));
        *units = 1;
        return 3;
    }
    {
        uint32_t cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
                      (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
        cp -= 0x10000;
        out[0] = (uint16_t)(0xd800 | cp >> 10);
        out[1] = (uint16_t)(0xdc00 | (cp & 0x3ff));
        *units = 2;
        return 4;
    }
}

/*
 * UTF-16 of valid UTF-8; returns the number of code units written.  out has
 * room for n units (never fewer bytes than units), so the 16 units widened
 * from the next 16 bytes always fit; units past an ASCII run are
 * overwritten by what follows.
 */
static size_t decode_utf16(const uint8_t *p, size_t n, uint16_t *out)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint8_t c;
        if (i + 16 <= n) {
            size_t k = ascii_run16(p + i);
            widen16(p + i, out + o);
            i += k;
            o += k;
            if (k == 16)
                continue;
        }
        c = p[i];
        if (c < 0x80) {
            out[o++] = c;
            i++;
        } else {
            size_t u;
            i += decode_char(p + i, out + o, &u);
            o += u;
        }
    }
    return o;
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
    /* at most one UTF-16 unit per byte (a 4-byte sequence makes 2) */
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

/*
 * A long text that arrives in several chunks (opt strrecv) is validated and
 * decoded in the same pass, chunk by chunk as it arrives, while its bytes
 * are still in the cache: text_stream() takes the whole message so far (the
 * receive accumulator) and goes on from where the last call stopped.  While
 * the message is pure ASCII it only checks; at its first other byte, what
 * came before is widened and decoding starts.  A sequence cut by the end of
 * a chunk is left for the next call, once its start has been checked
 * (fail fast: 0 as soon as no continuation can make the text valid).
 */
int text_stream_on(void)
{
    return OPT(OPT_STRRECV) && text_fast;
}

void text_stream_start(text_scratch *t)
{
    t->done = t->units = 0;
    t->wide = 0;
}

/* room for cap units, keeping those decoded so far */
static int text_room(text_scratch *t, size_t cap)
{
    size_t need = TEXT_HEAD_MAX + 2 * cap;
    uint8_t *nb;
    if (t->cap >= need)
        return 1;
    nb = realloc(t->buf, need);
    if (!nb)
        return 0;
    t->buf = nb;
    t->cap = need;
    return 1;
}

int text_stream(text_scratch *t, const uint8_t *p, size_t n, size_t cap, int final)
{
    size_t i = t->done, o;
    uint16_t *out;

    if (!t->wide) {
        while (i + 16 <= n) {
            size_t k = ascii_run16(p + i);
            i += k;
            if (k < 16)
                break;
        }
        while (i < n && !(p[i] & 0x80))
            i++;
        t->done = t->units = i;
        if (i == n)
            return 1;
        /* the first byte that is not ASCII: widen what came before it */
        if (!text_room(t, cap))
            return -1;
        out = (uint16_t *)(t->buf + TEXT_HEAD_MAX);
        for (o = 0; o + 16 <= i; o += 16)
            widen16(p + o, out + o);
        for (; o < i; o++)
            out[o] = p[o];
        t->wide = 1;
    } else if (!text_room(t, cap)) {
        return -1;
    }
    out = (uint16_t *)(t->buf + TEXT_HEAD_MAX);
    o = t->units;
    while (i < n) {
        uint32_t st;
        size_t need, j;
        uint8_t c;
        if (i + 16 <= n) { /* units never outrun bytes, so 16 more always fit */
            size_t k = ascii_run16(p + i);
            widen16(p + i, out + o);
            i += k;
            o += k;
            if (k == 16)
                continue;
        }
        c = p[i];
        if (c < 0x80) {
            out[o++] = c;
            i++;
            continue;
        }
        st = u8_lead(c);
        if (!st)
            return 0;
        need = st & 3;
        if (n - i - 1 < need) { /* cut by the end of what has come */
            for (j = i + 1; j < n; j++)
                if (!u8_cont(&st, p[j]))
                    return 0;
            if (final)
                return 0;
            break;
        }
        for (j = 1; j <= need; j++)
            if (!u8_cont(&st, p[i + j]))
                return 0;
        {
            size_t u;
            i += decode_char(p + i, out + o, &u);
            o += u;
        }
    }
    t->done = i;
    t->units = o;
    return 1;
}

JSValue text_stream_string(JSContext *ctx, text_scratch *t, const uint8_t *p, size_t n)
{
    if (!t->wide) /* pure ASCII: an 8-bit string, one copy */
        return JS_NewStringLen(ctx, (const char *)p, n);
    return text_record(ctx, t, t->units);
}
