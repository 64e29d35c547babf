/* UTF-8 validation and decoding (no JS): see utf8_core.h */
#include "utf8_core.h"

#include <stdlib.h>

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

/* the ASCII run at p + *i, widened 16 bytes at a time into out + *o (units never
 * outrun bytes, so 16 more always fit); 1 when all 16 were ASCII */
static inline int ascii_step16(const uint8_t *p, size_t n, size_t *i, uint16_t *out, size_t *o)
{
    size_t k;
    if (*i + 16 > n)
        return 0;
    k = ascii_run16(p + *i);
    widen16(p + *i, out + *o);
    *i += k;
    *o += k;
    return k == 16;
}

/*
 * UTF-16 of valid UTF-8; returns the number of code units written.  out has
 * room for n units (never fewer bytes than units), so the 16 units widened
 * from the next 16 bytes always fit; units past an ASCII run are
 * overwritten by what follows.
 */
size_t decode_utf16(const uint8_t *p, size_t n, uint16_t *out)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint8_t c;
        if (ascii_step16(p, n, &i, out, &o))
            continue;
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

size_t utf16_units(const uint8_t *p, size_t n)
{
    size_t i, units = 0;
    /* a unit per character (every byte but the continuation bytes), two for 4-byte ones */
    for (i = 0; i < n; i++)
        units += ((p[i] & 0xc0) != 0x80) + (p[i] >= 0xf0);
    return units;
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
        if (ascii_step16(p, n, &i, out, &o))
            continue;
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
