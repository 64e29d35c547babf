/* UTF-8 validation and decoding (no JS): see utf8_core.h */
#include "utf8_core.h"

#include <stdlib.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define U8_SIMD 1
#include <tmmintrin.h>
#endif

/* the end of an ASCII run shorter than 16 bytes: 8 and 4 bytes at a time, then
 * byte by byte (an 11-byte text: 2 word tests and 3 bytes instead of 11 bytes) */
static inline const uint8_t *ascii_tail(const uint8_t *p, const uint8_t *end)
{
    uint64_t w;
    uint32_t v;
    if (end - p >= 8) {
        memcpy(&w, p, 8);
        if (!(w & 0x8080808080808080ull))
            p += 8;
    }
    if (end - p >= 4) {
        memcpy(&v, p, 4);
        if (!(v & 0x80808080u))
            p += 4;
    }
    while (p < end && !(*p & 0x80))
        p++;
    return p;
}

/* strict RFC 3629 validation: no overlongs, no surrogates, <= U+10FFFF;
 * one character at a time, ASCII runs 16 bytes at a time */
static int utf8_valid_scalar(const uint8_t *p, size_t len)
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
            p = ascii_tail(p, end);
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

#ifdef U8_SIMD
/*
 * The same verdict, 16 bytes at a time with SSSE3 (a byte-pair classification
 * after Keiser and Lemire, "Validating UTF-8 In Less Than One Instruction Per
 * Byte", 2021; the tables below are derived here from RFC 3629).
 *
 * Every error of UTF-8 shows in a pair of neighbouring bytes (prev, cur),
 * except a missing or extra third or fourth byte.  For each pair, three table
 * lookups -- prev's high nibble, prev's low nibble, cur's high nibble -- each
 * give the set of error kinds that nibble allows; their AND is the set of
 * errors the pair commits.  Each kind is a product of nibble sets:
 *   TOO_SHORT   C..F ?  then 0..7 or C..F: a lead byte without a continuation
 *   TOO_LONG    0..7 ?  then 8..B: a continuation after ASCII
 *   OVERLONG_2  C 0..1  then 8..B: C0, C1
 *   OVERLONG_3  E 0     then 8..9: E0 80..9F
 *   SURROGATE   E D     then A..B: ED A0..BF
 *   TOO_LARGE   F 4..F  then 9..B: F4 90..BF, F5..FF
 *   OVERLONG_4  F 0,5..F then 8:   F0 80..8F, F5..FF 80..8F
 *   TWO_CONTS   8..B ?  then 8..B: two continuations in a row
 * Two continuations in a row are right exactly where the byte two back is
 * E0 or above or the byte three back F0 or above (a third or fourth byte):
 * that is computed apart and XORed with TWO_CONTS.  A sequence left open at
 * the end meets the zero padding of the last block (or the next block's
 * ASCII), which makes it TOO_SHORT.
 */
#define U8_TOO_SHORT 0x01
#define U8_TOO_LONG 0x02
#define U8_OVERLONG_3 0x04
#define U8_TOO_LARGE 0x08
#define U8_SURROGATE 0x10
#define U8_OVERLONG_2 0x20
#define U8_OVERLONG_4 0x40
#define U8_TWO_CONTS 0x80
#define U8_ANY (U8_TOO_SHORT | U8_TOO_LONG | U8_TWO_CONTS)

struct u8_simd {
    __m128i hi1, lo1, hi2, low4;
};

__attribute__((target("ssse3")))
static inline __m128i u8_block(const struct u8_simd *t, __m128i in, __m128i prev)
{
    __m128i prev1 = _mm_alignr_epi8(in, prev, 15);
    __m128i prev2 = _mm_alignr_epi8(in, prev, 14);
    __m128i prev3 = _mm_alignr_epi8(in, prev, 13);
    __m128i p_hi = _mm_and_si128(_mm_srli_epi16(prev1, 4), t->low4);
    __m128i p_lo = _mm_and_si128(prev1, t->low4);
    __m128i c_hi = _mm_and_si128(_mm_srli_epi16(in, 4), t->low4);
    __m128i pair = _mm_and_si128(_mm_and_si128(_mm_shuffle_epi8(t->hi1, p_hi), _mm_shuffle_epi8(t->lo1, p_lo)),
                                 _mm_shuffle_epi8(t->hi2, c_hi));
    /* 0x80 where the byte two back is >= E0 or the byte three back >= F0 */
    __m128i third = _mm_subs_epu8(prev2, _mm_set1_epi8((char)(0xe0 - 0x80)));
    __m128i fourth = _mm_subs_epu8(prev3, _mm_set1_epi8((char)(0xf0 - 0x80)));
    __m128i must = _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80));
    return _mm_xor_si128(pair, must);
}

__attribute__((target("ssse3")))
static int utf8_valid_ssse3(const uint8_t *p, size_t len)
{
    const struct u8_simd t = {
        /* prev's high nibble */
        _mm_setr_epi8(U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG,
                      U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG,
                      (char)U8_TWO_CONTS, (char)U8_TWO_CONTS, (char)U8_TWO_CONTS, (char)U8_TWO_CONTS,
                      U8_TOO_SHORT | U8_OVERLONG_2, U8_TOO_SHORT,
                      U8_TOO_SHORT | U8_OVERLONG_3 | U8_SURROGATE,
                      U8_TOO_SHORT | U8_TOO_LARGE | U8_OVERLONG_4),
        /* prev's low nibble */
        _mm_setr_epi8((char)(U8_ANY | U8_OVERLONG_2 | U8_OVERLONG_3 | U8_OVERLONG_4),
                      (char)(U8_ANY | U8_OVERLONG_2), (char)U8_ANY, (char)U8_ANY,
                      (char)(U8_ANY | U8_TOO_LARGE), (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4),
                      (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4), (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4),
                      (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4), (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4),
                      (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4), (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4),
                      (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4),
                      (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4 | U8_SURROGATE),
                      (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4), (char)(U8_ANY | U8_TOO_LARGE | U8_OVERLONG_4)),
        /* cur's high nibble */
        _mm_setr_epi8(U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT,
                      U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT,
                      (char)(U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_OVERLONG_3 | U8_OVERLONG_4),
                      (char)(U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_OVERLONG_3 | U8_TOO_LARGE),
                      (char)(U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_SURROGATE | U8_TOO_LARGE),
                      (char)(U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS | U8_SURROGATE | U8_TOO_LARGE),
                      U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT),
        _mm_set1_epi8(0x0f),
    };
    /* after a block, the bytes that still need more: its last three at most */
    const __m128i open_max = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                           (char)0xef, (char)0xdf, (char)0xbf);
    __m128i prev = _mm_setzero_si128(), err = _mm_setzero_si128(), open = _mm_setzero_si128();
    uint8_t tail[16];
    size_t i = 0;

    for (; i + 16 <= len; i += 16) {
        __m128i in;
        /* ASCII 64 bytes at a time: nothing to check but what the last block left open */
        while (i + 64 <= len) {
            __m128i a = _mm_loadu_si128((const __m128i *)(p + i)), b = _mm_loadu_si128((const __m128i *)(p + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(p + i + 32)), d = _mm_loadu_si128((const __m128i *)(p + i + 48));
            if (_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))))
                break;
            err = _mm_or_si128(err, open);
            open = _mm_setzero_si128();
            prev = d;
            i += 64;
        }
        if (i + 16 > len)
            break;
        in = _mm_loadu_si128((const __m128i *)(p + i));
        if (!_mm_movemask_epi8(in)) {
            err = _mm_or_si128(err, open); /* ASCII cannot finish a sequence */
            open = _mm_setzero_si128();
        } else {
            err = _mm_or_si128(err, u8_block(&t, in, prev));
            open = _mm_subs_epu8(in, open_max);
        }
        prev = in;
        if ((i & 1023) == 1008 && _mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) != 0xffff)
            return 0;
    }
    if (i < len) {
        memset(tail, 0, sizeof tail);
        memcpy(tail, p + i, len - i);
        err = _mm_or_si128(err, u8_block(&t, _mm_loadu_si128((const __m128i *)tail), prev));
    } else {
        err = _mm_or_si128(err, open);
    }
    return _mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) == 0xffff;
}

static int u8_have_ssse3(void)
{
    static int have = -1;
    if (have < 0)
        have = __builtin_cpu_supports("ssse3") ? 1 : 0;
    return have;
}
#endif

/* below this, the SIMD set-up costs more than it saves */
#define U8_SIMD_MIN 32

int utf8_valid(const uint8_t *p, size_t len)
{
#ifdef U8_SIMD
    if (len >= U8_SIMD_MIN && u8_have_ssse3())
        return utf8_valid_ssse3(p, len);
#endif
    return utf8_valid_scalar(p, len);
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

/* room for cap units, keeping those decoded so far; 0 when out of memory, or
 * when the size does not fit a size_t (32-bit: a frame declared at the 2^31 - 1
 * limit needs 16 + 2 x (2^31 - 1) bytes, which wrapped to 14 before) */
static int text_room(text_scratch *t, size_t cap)
{
    size_t need;
    uint8_t *nb;
    if (cap > (SIZE_MAX - TEXT_HEAD_MAX) / 2)
        return 0;
    need = TEXT_HEAD_MAX + 2 * cap;
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
